"""The one way stages draw and save a figure: matplotlib on its file-only backend, and PNGs without a version or
time stamp written atomically, so `dvc repro` on an unchanged input writes identical bytes."""

from __future__ import annotations

from pathlib import Path

from finrag.core.io import atomic_open

DPI = 120


def pyplot():
    """matplotlib's pyplot on the file-only backend (stages run without a display)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig, path: Path) -> Path:
    """Write the figure atomically, without the version stamp, so a re-run gives the same bytes; then close it."""
    with atomic_open(path, "wb") as fh:
        fig.savefig(fh, format="png", dpi=DPI, metadata={"Software": None})
    pyplot().close(fig)
    return path
