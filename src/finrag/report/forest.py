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
    from finrag.core.plots import pyplot, save_png

    plt = pyplot()
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
    save_png(fig, path)


def kappa_matrix(summary: Sequence[dict], judges: Sequence[str], benchmark: str) -> list[list[float | None]]:
    """Binary kappa of every pair of raters ("human" first, then `judges`) on one benchmark, from the agreement
    stage's summary rows (human vs judge, and judge vs judge on the claims both judged); None where not measured."""
    raters = ["human", *judges]
    kappa: dict[frozenset, float | None] = {}
    for r in summary:
        if r["benchmark"] != benchmark or r["subset"] != "all" or r["level"] != "binary":
            continue
        a, _, b = r["pair"].partition(" vs ")
        kappa[frozenset((a, b))] = r["kappa"]
    return [[1.0 if a == b else kappa.get(frozenset((a, b))) for b in raters] for a in raters]


def agreement_matrix(summary: Sequence[dict], judges: Sequence[str], path: Path) -> None:
    """One heat map per benchmark: Cohen's kappa of every pair of raters (the human labels and each judge), so
    human-vs-AI and AI-vs-AI agreement sit side by side (the seed study's question, read at a glance)."""
    import numpy as np

    from finrag.core.plots import pyplot, save_png

    plt = pyplot()

    benchmarks = sorted({r["benchmark"] for r in summary if r["pair"].startswith("human vs ")} - {"all"})
    raters = ["human", *judges]
    fig, axes = plt.subplots(1, len(benchmarks), figsize=(4.6 * len(benchmarks), 4.4), squeeze=False)
    for ax, bench in zip(axes[0], benchmarks, strict=True):
        m = np.array(
            [[np.nan if v is None else v for v in row] for row in kappa_matrix(summary, judges, bench)]
        )
        ax.imshow(np.ma.masked_invalid(m), cmap="RdBu", vmin=-1, vmax=1)
        for i in range(len(raters)):
            for j in range(len(raters)):
                if i != j:
                    text = "n/a" if math.isnan(m[i, j]) else f"{m[i, j]:.2f}"
                    ax.text(j, i, text, ha="center", va="center", fontsize=6)
        ax.set_xticks(range(len(raters)), raters, rotation=60, ha="right", fontsize=7)
        ax.set_yticks(range(len(raters)), raters, fontsize=7)
        ax.set_title(f"{bench} (binary kappa)", fontsize=9)
    fig.tight_layout()
    save_png(fig, path)
