"""TAT-QA's tables as text, one rendering for every step that reads TAT-QA (the re-ranker's training passages,
the verifier's claims): its own module, so neither step's code reaches the other's."""

from __future__ import annotations

from collections.abc import Sequence


def render_table(rows: Sequence[Sequence[str]]) -> str:
    """A table as pipe-separated rows (the way chunkers render filings' tables), empty rows dropped."""
    lines = []
    for row in rows:
        cells = [" ".join(str(c).split()) for c in row]
        if any(cells):
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
