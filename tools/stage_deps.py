"""Each DVC stage's code deps, generated from what its script reaches, so an edit re-runs only what it touches.

Why: stages used to depend on whole package folders, so a comment in one module made hours of stages stale.
This walks each stage script's imports (module-level and inside functions, relative ones, lazy registry strings
"finrag.x.y:Name" including f-strings such as f"finrag.retrieve.finance:{base}_{rules}", and module names used as
strings, e.g. importlib.resources.files("finrag.llm.prompts")), adds every parent package's __init__.py, and the
data files of any package whose code reads files beside itself (templates, static pages). It over-approximates (an
import inside a function the stage never calls still counts): the safe side for dependencies.

    uv run python tools/stage_deps.py            # exit 1 and list the stages whose dvc.yaml code deps differ
    uv run python tools/stage_deps.py --write    # rewrite those deps in dvc.yaml (comments kept)

tests/test_stage_deps.py holds dvc.yaml to this list.
"""

from __future__ import annotations

import argparse
import ast
import functools
import re
import sys
from collections.abc import Iterable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
CODE_PREFIXES = ("scripts/", "src/")
MODULE = r"finrag(?:\.\w+)*"
LAZY = re.compile(rf"^({MODULE}):\w*")  # "finrag.x.y:Name", or the head of an f-string "finrag.x.y:{...}"
PLAIN = re.compile(rf"^({MODULE})$")
READS_BESIDE_ITSELF = re.compile(r"__file__|resources\.files\(")
SCRIPT = re.compile(r"python (scripts/\S+\.py)")


def module_file(mod: str) -> Path | None:
    """The file that defines `mod` under src/ (a module or a package's __init__.py), or None."""
    p = SRC / Path(*mod.split("."))
    if p.with_suffix(".py").exists():
        return p.with_suffix(".py")
    if (p / "__init__.py").exists():
        return p / "__init__.py"
    return None


def _module_strings(node: ast.AST) -> Iterable[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        m = LAZY.match(node.value) or PLAIN.match(node.value)
        if m:
            yield m.group(1)
    elif isinstance(node, ast.JoinedStr) and node.values:
        head = node.values[0]
        if isinstance(head, ast.Constant) and isinstance(head.value, str):
            m = LAZY.match(head.value)
            if m:
                yield m.group(1)


def imports_of(path: Path, pkg: str) -> set[str]:
    """Module names `path` may import: import statements anywhere, and module names written as strings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            if n.level:  # relative: drop `level` trailing parts of the importing module's package path
                parts = pkg.split(".") if path.name == "__init__.py" else pkg.split(".")[:-1]
                parts = parts[: len(parts) - (n.level - 1)]
                mod = ".".join(parts + ([n.module] if n.module else []))
            else:
                mod = n.module or ""
            out.add(mod)
            out |= {f"{mod}.{a.name}" for a in n.names}  # `from pkg import submodule`
        else:
            out.update(_module_strings(n))
    return {m for m in out if m == "finrag" or m.startswith("finrag.") or m == "_stage"}


def package_data(module_path: Path) -> set[Path]:
    """Non-Python files beside a module that reads files relative to itself: whole data folders (a folder with
    no Python in it) as one dep each, loose files one by one."""
    if not READS_BESIDE_ITSELF.search(module_path.read_text(encoding="utf-8")):
        return set()
    out: set[Path] = set()
    for child in module_path.parent.iterdir():
        if child.name == "__pycache__" or child.suffix == ".py":
            continue
        if child.is_dir():
            if not any(child.rglob("*.py")):
                out.add(child)
        elif child.is_file() and child.suffix not in {".pyc", ".pyi"}:
            out.add(child)
    return out


def closure(script: Path) -> set[Path]:
    """Every file the stage script can reach: itself, scripts/_stage.py, the src/ modules and their data."""
    files = {script}
    seen: set[str] = set()
    todo = list(imports_of(script, "scripts"))
    while todo:
        m = todo.pop()
        if m in seen:
            continue
        seen.add(m)
        f = ROOT / "scripts" / "_stage.py" if m == "_stage" else module_file(m)
        if f is None:
            continue  # an attribute imported with `from module import name`
        files.add(f)
        files |= package_data(f)
        if f.name == "__init__.py" and (f.parent / "__main__.py").exists():
            todo.append(
                f"{m}.__main__"
            )  # `python -m package` runs its __main__ (the timing stages start the service so)
        parts = m.split(".")
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]  # parent packages' __init__ run first
        todo += imports_of(f, m)
    return files


@functools.cache
def code_deps(script_rel: str) -> list[str]:
    return sorted(p.relative_to(ROOT).as_posix() for p in closure(ROOT / script_rel))


def _stage_bodies(doc: dict) -> Iterable[tuple[str, dict]]:
    for name, body in doc["stages"].items():
        yield name, body.get("do", body)  # a foreach stage: its template


def _is_code(dep: str) -> bool:
    return str(dep).startswith(CODE_PREFIXES)


def wanted(bodies: dict[str, dict], st: dict) -> list[str] | None:
    """A stage's generated code deps: what its script reaches, plus, for a timing stage, what the stages it times
    reach (`meta: {times: [...]}` in dvc.yaml), so that it is re-measured when the code it times changes."""
    m = SCRIPT.search(st["cmd"])
    if not m:
        return None
    files = set(code_deps(m.group(1)))
    for timed in (st.get("meta") or {}).get("times", []):
        base = str(timed).split("@", 1)[0]
        tm = SCRIPT.search(bodies[base]["cmd"]) if base in bodies else None
        if tm is None:
            raise KeyError(f"meta.times names '{timed}', which is no stage with a script")
        files |= set(code_deps(tm.group(1)))
    return sorted(files)


def differences(doc: dict) -> dict[str, tuple[list[str], list[str]]]:
    """stage -> (its code deps in dvc.yaml, the generated ones), for every stage where they differ."""
    out = {}
    bodies = dict(_stage_bodies(doc))
    for name, st in bodies.items():
        want = wanted(bodies, st)
        if want is None:
            continue
        have = [str(d) for d in st.get("deps", []) if _is_code(str(d))]
        if have != want:
            out[name] = (have, want)
    return out


def write(path: Path = ROOT / "dvc.yaml") -> list[str]:
    """Rewrite every stage's code deps in dvc.yaml to the generated list (code first, other deps kept after,
    in their order and with their comments). Returns the stages changed."""
    from ruamel.yaml import YAML

    yaml = YAML()
    yaml.preserve_quotes = True
    yaml.width = 4096
    yaml.indent(mapping=2, sequence=4, offset=2)
    doc = yaml.load(path.read_text(encoding="utf-8"))
    changed = differences(doc)
    for name, st in _stage_bodies(doc):
        if name not in changed:
            continue
        deps = st["deps"]
        others = [(i, d) for i, d in enumerate(deps) if not _is_code(str(d))]
        comments = {d: deps.ca.items.get(i) for i, d in others}
        new = changed[name][1] + [d for _, d in others]
        deps.clear()
        deps.ca.items.clear()
        deps.extend(new)
        for i, d in enumerate(new):
            if comments.get(d):
                deps.ca.items[i] = comments[d]
    with path.open("w", encoding="utf-8") as fh:
        yaml.dump(doc, fh)
    return list(changed)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--write", action="store_true", help="rewrite dvc.yaml's code deps")
    args = ap.parse_args()
    if args.write:
        changed = write()
        print(f"dvc.yaml: code deps rewritten for {len(changed)} stage(s): {', '.join(changed) or 'none'}")
        return 0
    import yaml

    diff = differences(yaml.safe_load((ROOT / "dvc.yaml").read_text(encoding="utf-8")))
    for name, (have, want) in diff.items():
        extra, missing = sorted(set(have) - set(want)), sorted(set(want) - set(have))
        print(f"{name}: not reached {extra or '-'}; missing {missing or '-'}")
    if diff:
        print("run: uv run python tools/stage_deps.py --write", file=sys.stderr)
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main())
