"""The package layout holds: layers only point down, no import cycles (imports inside functions count too), no
private name imported across modules, and no module at the package root but `cli` and `sections` (issue 20).

Layers, lowest first: core < ingest < retrieve < llm < generate < score < trust < report; `synthetic` may use every
step but `report`; `serve` and `release` sit on top (they run the pipeline's pieces), `cli` above everything, beside
`sections` (every params.yaml section's model, each kept beside its step; no stage imports it)."""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
RANK = {
    "core": 0,
    "ingest": 1,
    "retrieve": 2,
    "llm": 3,
    "generate": 4,
    "score": 5,
    "trust": 6,
    "synthetic": 6.5,
    "report": 7,
    "serve": 8,
    "release": 8,
    "cli": 9,
    "sections": 9,
}


def _modules() -> dict[str, Path]:
    out = {}
    for p in (SRC / "finrag").rglob("*.py"):
        parts = list(p.relative_to(SRC).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out[".".join(parts)] = p
    return out


def _imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, names) for every `import` / `from ... import` in the file, at any depth."""
    found = []
    for n in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(n, ast.Import):
            found += [(a.name, []) for a in n.names]
        elif isinstance(n, ast.ImportFrom) and n.module and not n.level:
            found.append((n.module, [a.name for a in n.names]))
    return found


def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {m: set() for m in mods}
    for m, path in mods.items():
        for target, names in _imports(path):
            for t in [target, *(f"{target}.{n}" for n in names)]:
                if t in mods and t != m:
                    graph[m].add(t)
    return graph


def _step(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "core"


def test_every_package_has_a_layer():
    steps = {_step(m) for m in _modules()}
    assert steps <= set(RANK), f"packages without a layer: {steps - set(RANK)}"


def test_layers_only_point_down():
    bad = sorted(
        (a, b) for a, deps in _graph().items() for b in deps if RANK[_step(a)] < RANK[_step(b)]
    )  # fmt: skip
    assert not bad, "imports that point up a layer:\n" + "\n".join(f"  {a} -> {b}" for a, b in bad)


def test_no_import_cycles():
    try:
        graphlib.TopologicalSorter(_graph()).prepare()
    except graphlib.CycleError as exc:
        pytest.fail(f"import cycle: {' -> '.join(exc.args[1])}")


def test_no_private_name_is_imported_across_modules():
    mods = _modules()
    bad = [
        f"{m}: from {target} import {name}"
        for m, path in mods.items()
        for target, names in _imports(path)
        if target.startswith("finrag")
        for name in names
        if name.startswith("_") and not name.startswith("__")
    ]
    assert not bad, "\n".join(sorted(bad))


def test_the_root_holds_only_the_cli_and_the_sections_registry():
    root = {p.name for p in (SRC / "finrag").glob("*.py")}
    assert root == {"__init__.py", "cli.py", "sections.py"}, sorted(root)


def test_the_walker_sees_a_cycle_hidden_in_a_function(tmp_path):
    """The check itself can fail: two modules that import each other, one of them inside a function."""
    (tmp_path / "a.py").write_text("import b\n")
    (tmp_path / "b.py").write_text("def f():\n    import a\n")
    graph = {"a": {"b"}, "b": {t for t, _ in _imports(tmp_path / "b.py")}}
    with pytest.raises(graphlib.CycleError):
        graphlib.TopologicalSorter(graph).prepare()
