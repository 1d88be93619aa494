"""Which modules each DVC stage's script imports (directly or not, function-level imports and lazy registry
"module:Class" strings included) that the stage's `deps` in dvc.yaml do not cover: a change to one of them would
not re-run the stage, and `dvc repro` could keep a stale result (issue 20). Prints one line per stage; exit 1
when any stage has a gap. Over-approximates (an import inside a function the stage never calls still counts),
which is the safe side for dependencies. Run: `uv run python tools/stage_deps.py`."""

import ast
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
LAZY = re.compile(r"^(finrag(?:\.\w+)+):\w+$")


def module_file(mod):
    p = SRC / Path(*mod.split("."))
    if (p.with_suffix(".py")).exists():
        return p.with_suffix(".py")
    if (p / "__init__.py").exists():
        return p / "__init__.py"
    return None


def imports_of(path, pkg):
    tree = ast.parse(path.read_text())
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            if n.level:  # relative: drop `level` trailing parts of the importing module's package path
                parts = pkg.split(".") if path.name == "__init__.py" else pkg.split(".")[:-1]
                parts = parts[: len(parts) - (n.level - 1)]
                mod = ".".join(parts + ([n.module] if n.module else []))
            else:
                mod = n.module
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in n.names}
        elif isinstance(n, ast.Constant) and isinstance(n.value, str):
            m = LAZY.match(n.value)
            if m:
                out.add(m.group(1))
    return {m for m in out if m and (m == "finrag" or m.startswith("finrag.") or m == "_stage")}


def closure(script):
    seen, todo, files = set(), [], set()
    files.add(script)
    for m in imports_of(script, "scripts"):
        todo.append(m)
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        f = ROOT / "scripts/_stage.py" if m == "_stage" else module_file(m)
        if f is None:
            continue
        files.add(f)
        # parent packages' __init__ run on import
        parts = m.split(".")
        for i in range(1, len(parts)):
            pf = module_file(".".join(parts[:i]))
            if pf and ".".join(parts[:i]) not in seen:
                todo.append(".".join(parts[:i]))
        for sub in imports_of(f, m):
            todo.append(sub)
    return files


def covered(rel: str, deps: list[str]) -> bool:
    return any(rel == d.rstrip("/") or rel.startswith(d.rstrip("/") + "/") for d in deps)


def gaps() -> dict[str, list[str]]:
    """stage -> the files its script imports (directly or not) that its deps do not cover."""
    dvc = yaml.safe_load((ROOT / "dvc.yaml").read_text())
    out = {}
    for name, body in dvc["stages"].items():
        st = body.get("do", body)  # a foreach stage: its template
        sm = re.search(r"python (scripts/\S+\.py)", st["cmd"])
        if not sm:
            continue
        deps = [re.sub(r"\$\{[^}]+\}", "*", d) for d in st.get("deps", [])]
        rels = (f.relative_to(ROOT).as_posix() for f in closure(ROOT / sm.group(1)))
        out[name] = sorted(r for r in rels if not covered(r, deps))
    return out


def main() -> int:
    found = gaps()
    for name, missing in found.items():
        print(f"{name}: {len(missing)} not covered" + (f": {', '.join(missing)}" if missing else ""))
    return 1 if any(found.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
