"""Render README.md / TECHNICAL_REPORT.md sections from results/ — one source of truth, as pyserini's pages.

Documents carry marked regions:

    <!-- finrag:begin NAME -->
    ... generated, never edited by hand ...
    <!-- finrag:end NAME -->

Each NAME is computed by its view (`finrag.report.views`: every choice made in Python from results/, as typed
values) and written out by `templates/NAME.md.j2`, which only substitutes. A missing results file fails the
section with one line naming the file. `check` re-renders in memory and fails when a document differs from what
results/ says.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from finrag.core.io import atomic_open
from finrag.report.fmt import FILTERS, ci, claims_judged, fmt, pct, pctci  # noqa: F401 - re-exported
from finrag.report.views import VIEWS, Results

TEMPLATES = Path(__file__).parent / "templates"
REGION = re.compile(
    r"(<!-- finrag:begin (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- finrag:end (?P=name) -->)", re.DOTALL
)
DOCUMENTS = (
    "README.md",
    "TECHNICAL_REPORT.md",
    "docs/results.md",
    "docs/setup.md",
    "docs/service.md",
)
# the rendered sections each document must hold, in order: a section deleted, renamed or taken out of the
# markers' reach (a broken marker) would otherwise leave stale text that nothing checks
SECTIONS = {
    "README.md": ("study", "terms", "findings", "picture", "earlier", "limitations"),
    "TECHNICAL_REPORT.md": (
        "conclusions",
        "ingest_detail",
        "retrieval_detail",
        "scoring_detail",
        "conditions_detail",
        "grader_detail",
        "agreement_detail",
        "predictions",
        "synthetic_detail",
        "limitations",
    ),
    "docs/results.md": (
        "headline",
        "status",
        "ingest",
        "retrieval",
        "scoring",
        "conditions",
        "grader",
        "agreement",
        "ablations",
        "judge_error",
        "predictions",
        "synthetic",
    ),
    "docs/setup.md": ("replay",),
    "docs/service.md": ("serve",),
}
# documents that are not rendered but whose relative links must resolve too (tests/test_report_readme.py)
LINKED = ("README.md", "TECHNICAL_REPORT.md", "docs/*.md")
MARKER = re.compile(r"<!--[^\n]*?finrag:\s*(?:begin|end)")  # any marker-like comment, well-formed or not
LINK = re.compile(r"\]\(([^)\s]+)\)")


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
    env.filters.update(FILTERS)
    return env


class RenderError(RuntimeError):
    """A template could not be rendered from results/ (a key missing or of the wrong type)."""


def render_section(name: str, results: dict | Results) -> str:
    """Section `name`: its view computed from results/, substituted into its template."""
    if name not in VIEWS:
        raise RenderError(f"section '{name}': no view computes it (finrag.report.views)")
    template = _env().get_template(f"{name}.md.j2")
    try:
        body = template.render(v=VIEWS[name](Results.of(results)))
    except Exception as exc:  # noqa: BLE001 - reported as one line naming the section
        raise RenderError(f"section '{name}': {type(exc).__name__}: {exc}") from exc
    return body if body.endswith("\n") else body + "\n"


def render_document(text: str, results: dict | Results) -> str:
    def repl(m: re.Match) -> str:
        return m.group(1) + render_section(m.group("name"), results) + m.group(4)

    return REGION.sub(repl, text)


def structure_problems(name: str, text: str, root: Path | None = None) -> list[str]:
    """What is wrong with a document's markers and links, independent of the figures: every expected section
    present once, in order, with well-formed begin/end markers and nothing else that looks like a marker; every
    link into results/ pointing at a file that exists."""
    problems = []
    found = [m.group("name") for m in REGION.finditer(text)]
    expected = list(SECTIONS.get(name, found))
    if found != expected:
        missing = [x for x in expected if x not in found]
        extra = [x for x in found if x not in expected]
        dup = sorted({x for x in found if found.count(x) > 1})
        detail = "; ".join(
            part
            for part in (
                f"missing {missing}" if missing else "",
                f"unknown {extra}" if extra else "",
                f"repeated {dup}" if dup else "",
                "out of order" if not (missing or extra or dup) else "",
            )
            if part
        )
        problems.append(f"{name}: rendered sections are {found}, expected {expected} ({detail})")
    outside = REGION.sub("", text)
    stray = [m.group(0) for m in MARKER.finditer(outside)]
    if stray:
        problems.append(f"{name}: {len(stray)} marker(s) outside a well-formed section, first {stray[0]!r}")
    if root is not None:
        for link in broken_links(root, name, text):
            problems.append(f"{name}: links {link}, which does not exist (run the stage that writes it)")
    return problems


def broken_links(root: Path, name: str, text: str) -> list[str]:
    """Relative links of document `name` (a path under root) whose target file or folder does not exist."""
    out = []
    for link in LINK.findall(text):
        target = link.split("#", 1)[0]
        if not target or re.match(r"[a-z][a-z0-9+.-]*:", target):  # an anchor on the page, or a URL
            continue
        if not ((root / name).parent / target).exists():
            out.append(link)
    return out


@dataclass
class CheckResult:
    document: str
    ok: bool
    diff: str


def planned_families(root: Path) -> list[str] | None:
    """The generation families params.yaml defines (the status table says which are not recorded yet)."""
    import yaml

    path = root / "params.yaml"
    if not path.is_file():
        return None
    return sorted(
        (yaml.safe_load(path.read_text(encoding="utf-8")).get("generate") or {}).get("families") or {}
    )


def run(root: Path, check: bool = False) -> list[CheckResult]:
    results = load_results(root / "results")
    results["planned_families"] = planned_families(root)
    out = []
    for name in DOCUMENTS:
        path = root / name
        if not path.exists():
            out.append(CheckResult(name, False, f"{name} is missing"))
            continue
        current = path.read_text(encoding="utf-8")
        problems = structure_problems(name, current, root)
        if problems:  # rendering cannot repair these: the document itself must be fixed
            out.append(CheckResult(name, False, "\n".join(problems) + "\n"))
            continue
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
