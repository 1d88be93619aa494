"""Render README.md / TECHNICAL_REPORT.md sections from results/ — one source of truth, as pyserini's pages.

Documents carry marked regions:

    <!-- finrag:begin NAME -->
    ... generated, never edited by hand ...
    <!-- finrag:end NAME -->

Each NAME is rendered from `templates/NAME.md.j2` with every `results/metrics/*.json` in the context (keyed by
file stem). `check` re-renders in memory and fails when a document differs from what results/ says.
"""

from __future__ import annotations

import difflib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from finrag.io import atomic_open

TEMPLATES = Path(__file__).parent / "templates"
REGION = re.compile(
    r"(<!-- finrag:begin (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- finrag:end (?P=name) -->)", re.DOTALL
)
DOCUMENTS = ("README.md", "TECHNICAL_REPORT.md")


def fmt(x, digits: int = 2) -> str:
    """Numbers as the report prints them: fixed digits, 'n/a' for missing or NaN."""
    if x is None:
        return "n/a"
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        if math.isnan(x):
            return "n/a"
        return f"{x:,.{digits}f}"
    return str(x)


def pct(x, digits: int = 1) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{100 * x:.{digits}f}%"


def ci(pair, digits: int = 2) -> str:
    if not pair or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in pair):
        return "n/a"
    return f"[{pair[0]:.{digits}f}, {pair[1]:.{digits}f}]"


def pctci(pair, digits: int = 1) -> str:
    """A proportion's interval in percent, to sit beside pct()."""
    if not pair or any(v is None or (isinstance(v, float) and math.isnan(v)) for v in pair):
        return "n/a"
    return f"[{100 * pair[0]:.{digits}f}, {100 * pair[1]:.{digits}f}]"


def load_results(results_dir: Path) -> dict:
    ctx: dict = {}
    for p in [*sorted(results_dir.glob("*.json")), *sorted((results_dir / "metrics").glob("*.json"))]:
        with open(p, encoding="utf-8") as fh:
            ctx[p.stem] = json.load(fh)
    return ctx


def _env() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES)),
        undefined=StrictUndefined,
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(fmt=fmt, pct=pct, ci=ci, pctci=pctci)
    return env


class RenderError(RuntimeError):
    """A template could not be rendered from results/ (a key missing or of the wrong type)."""


def render_section(name: str, results: dict) -> str:
    template = _env().get_template(f"{name}.md.j2")
    try:
        body = template.render(results=results, **results)
    except Exception as exc:  # noqa: BLE001 - reported as one line naming the section
        raise RenderError(f"section '{name}': {type(exc).__name__}: {exc}") from exc
    return body if body.endswith("\n") else body + "\n"


def render_document(text: str, results: dict) -> str:
    def repl(m: re.Match) -> str:
        return m.group(1) + render_section(m.group("name"), results) + m.group(4)

    return REGION.sub(repl, text)


@dataclass
class CheckResult:
    document: str
    ok: bool
    diff: str


def run(root: Path, check: bool = False) -> list[CheckResult]:
    results = load_results(root / "results")
    out = []
    for name in DOCUMENTS:
        path = root / name
        if not path.exists():
            out.append(CheckResult(name, False, f"{name} is missing"))
            continue
        current = path.read_text(encoding="utf-8")
        rendered = render_document(current, results)
        same = rendered == current
        diff = ""
        if not same:
            diff = "".join(
                difflib.unified_diff(
                    current.splitlines(True),
                    rendered.splitlines(True),
                    f"{name} (committed)",
                    f"{name} (from results/)",
                )
            )
            if not check:
                with atomic_open(path) as fh:
                    fh.write(rendered)
        out.append(CheckResult(name, same or not check, diff))
    return out
