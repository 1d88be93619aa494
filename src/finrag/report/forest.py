"""Forest plot of agreement: every kappa with its 95% interval; pairs with humans in one colour, AI-vs-AI in
another (AI raters agree with each other far more than with people, so the two must not be mixed)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

HUMAN_COLOUR = "#1f77b4"
AI_COLOUR = "#d62728"


def forest_plot(rows: Sequence[dict], path: Path, title: str = "Agreement (Cohen's kappa, 95% CI)") -> None:
    """rows: {label, kappa, kappa_ci: [lo, hi], kind: "human" | "ai"}; NaN kappas are listed but not drawn."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = list(rows)
    fig, ax = plt.subplots(figsize=(7.5, 0.32 * len(rows) + 1.4))
    for y, r in enumerate(reversed(rows)):
        k, ci = r["kappa"], r.get("kappa_ci") or [None, None]
        colour = HUMAN_COLOUR if r["kind"] == "human" else AI_COLOUR
        if k is not None and not math.isnan(k):
            if ci[0] is not None and not math.isnan(ci[0]):
                ax.plot(ci, [y, y], color=colour, lw=1.6)
            ax.plot([k], [y], "o", color=colour, ms=5)
    ax.set_yticks(range(len(rows)), [r["label"] for r in reversed(rows)], fontsize=8)
    ax.axvline(0, color="grey", lw=0.8, ls="--")
    ax.set_xlim(-0.4, 1.0)
    ax.set_xlabel("Cohen's kappa")
    ax.set_title(title, fontsize=10)
    handles = [
        plt.Line2D([], [], color=HUMAN_COLOUR, marker="o", label="judge vs human labels"),
        plt.Line2D([], [], color=AI_COLOUR, marker="o", label="AI vs AI"),
    ]
    ax.legend(handles=handles, loc="lower right", fontsize=8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(fig)
