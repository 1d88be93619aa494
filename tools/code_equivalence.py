"""Compare every function, class and constant of src/finrag at a base commit with the working tree, modulo module moves,
renamed helpers, import statements, annotations, docstrings and typing.cast calls: a move or a typing pass that
changes no behaviour prints no DIFF line. Run: `uv run python tools/code_equivalence.py BASE_COMMIT [PATH_PREFIX,...]`."""

import ast
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the helpers the layout move (issue 20) renamed; extend it for another move
RENAMES = {
    "_u": "uniform",
    "_person": "person",
    "_calc": "calc",
    "_change": "change_pct",
    "_verb": "verb",
    "_split": "split3",
    "_annual_report": "annual_report",
    "_FundFacts": "FundFacts",
    "_isin": "isin",
    "_etf": "etf_prospectus",
    "_kid": "kid_document",
    "_research_note": "research_note",
    "_pair_candidate": "pair_candidate",
    "_normalise": "normalise",
    "_short": "short_hash",
    "_hash_file_cached": "hash_file_cached",
    "_stratum": "stratum_of",
    "_stopwords": "stop_words",
    "_batch_args": "batch_args",
}


def _drop_docstring(n: ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) -> None:
    first = n.body[0] if n.body else None
    if (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
    ):
        n.body = n.body[1:] or [ast.Pass()]


class Norm(ast.NodeTransformer):
    def visit_Import(self, n):
        return None

    def visit_ImportFrom(self, n):
        return None

    def visit_arg(self, n):
        n.annotation = None
        return n

    def visit_FunctionDef(self, n):
        n.returns = None
        n.name = RENAMES.get(n.name, n.name)
        _drop_docstring(n)
        self.generic_visit(n)
        return n

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, n):
        n.name = RENAMES.get(n.name, n.name)
        _drop_docstring(n)
        self.generic_visit(n)
        return n

    def visit_AnnAssign(self, n):
        self.generic_visit(n)
        if n.value is None:
            return None
        return ast.Assign(targets=[n.target], value=n.value, lineno=0)

    def visit_Call(self, n):
        self.generic_visit(n)
        f = n.func
        if (isinstance(f, ast.Name) and f.id == "cast") or (
            isinstance(f, ast.Attribute)
            and f.attr == "cast"
            and isinstance(f.value, ast.Name)
            and f.value.id in ("typing", "t")
        ):
            return n.args[1]
        return n

    def visit_Name(self, n):
        n.id = RENAMES.get(n.id, n.id)
        return n

    def visit_Attribute(self, n):
        self.generic_visit(n)
        n.attr = RENAMES.get(n.attr, n.attr)
        return n

    def visit_Constant(self, n):
        if isinstance(n.value, str):
            n.value = re.sub(r"finrag[./][\w./:]*", "MOD", n.value)
        return n


def defs(text):
    tree = ast.parse(text)
    out = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = RENAMES.get(node.name, node.name)
            out[name] = ast.dump(Norm().visit(node), annotate_fields=False, include_attributes=False)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            n2 = Norm().visit(node)
            if n2 is None:
                continue
            tg = n2.targets[0] if isinstance(n2, ast.Assign) else n2.target
            if isinstance(tg, ast.Name):
                out[RENAMES.get(tg.id, tg.id)] = ast.dump(
                    n2.value, annotate_fields=False, include_attributes=False
                )
    return out


def tree_files(rev):
    if rev is None:
        return {str(p.relative_to(ROOT)): p.read_text() for p in (ROOT / "src/finrag").rglob("*.py")}
    names = subprocess.run(
        ["git", "ls-tree", "-r", "--name-only", rev, "src/finrag"], cwd=ROOT, capture_output=True, text=True
    ).stdout.split()
    return {
        n: subprocess.run(["git", "show", f"{rev}:{n}"], cwd=ROOT, capture_output=True, text=True).stdout
        for n in names
        if n.endswith(".py")
    }


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    base = argv[0]
    only = argv[1].split(",") if len(argv) > 1 else None
    old = {}
    new = {}
    for f, t in tree_files(base).items():
        for k, v in defs(t).items():
            old.setdefault(k, []).append((f, v))
    for f, t in tree_files(None).items():
        for k, v in defs(t).items():
            new.setdefault(k, []).append((f, v))
    diff = 0
    for k, lst in sorted(old.items()):
        for f, v in lst:
            if only and not any(f.startswith(o) for o in only):
                continue
            cands = new.get(k, [])
            if not any(v == v2 for _, v2 in cands):
                diff += 1
                print(f"DIFF {f}::{k} -> {[c[0] for c in cands]}")
    print("defs differing:", diff)
    return 1 if diff else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
