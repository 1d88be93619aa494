"""`finrag` command line: thin wrappers over the library, JSON on stdout, one clear line on stderr on error."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(add_completion=False, no_args_is_help=True, help="finrag: right answers for the right reasons?")


def _fail(message: str, code: int = 2) -> None:
    typer.echo(f"finrag: {message}", err=True)
    raise typer.Exit(code)


def _emit(obj) -> None:
    sys.stdout.write(json.dumps(obj, ensure_ascii=False) + "\n")


@app.command()
def parse(path: Annotated[Path, typer.Argument(help="a PDF or an EDGAR HTML filing")]) -> None:
    """Print one JSON object per page: {"doc", "page", "text", "section"}."""
    from finrag.ingest.parse import IngestError, parse_filing

    try:
        pages = parse_filing(path)
    except IngestError as exc:
        _fail(str(exc))
    for p in pages:
        _emit({"doc": p.doc_id, "page": p.page, "text": p.text, "section": p.section})


@app.command()
def report(check: Annotated[bool, typer.Option("--check", help="fail if documents disagree with results/")] = False):
    """Render README.md / TECHNICAL_REPORT.md sections from results/ (or check them)."""
    from finrag.config import repo_root
    from finrag.report.render import RenderError, run

    try:
        results = run(repo_root(), check=check)
    except RenderError as exc:
        _fail(f"report: {exc}", code=1)
    bad = [r for r in results if not r.ok]
    for r in bad:
        typer.echo(r.diff or r.document, err=True)
    if bad:
        _fail("report check failed: " + ", ".join(r.document for r in bad) + " disagree with results/", code=1)
    typer.echo("report: " + ("documents match results/" if check else "rendered"), err=True)


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
