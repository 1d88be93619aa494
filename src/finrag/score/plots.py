"""Plots of the scoring stage, from the tables of finrag.score.tables (matplotlib, Agg).

Deterministic bytes: no timestamp / version metadata (metadata={"Software": None}), a fixed size and dpi, and the
scatter's jitter drawn from a fixed seed, so `dvc repro` on an unchanged input writes identical files.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from finrag.core.plots import pyplot, save_png

PLOT_FILES = {
    "runs": "scoring_runs_correct_grounded.png",
    "two_by_two": "scoring_correct_x_grounded.png",
    "scatter": "scoring_recall_vs_groundedness.png",
}
JITTER_SEED = 20261129


def _err(p: dict) -> tuple[float, float, float]:
    """(value, lower error, upper error) of a proportion dict; zeros where undefined."""
    v, (lo, hi) = p.get("p"), p.get("ci") or [None, None]
    if v is None or lo is None or hi is None:
        return 0.0, 0.0, 0.0
    return v, max(0.0, v - lo), max(0.0, hi - v)


def plot_runs(rows: Sequence[Mapping], path: str | Path) -> Path:
    """Bars per system (generator / context / prompt): share correct and share fully grounded, Wilson 95% CIs."""
    plt = pyplot()
    labels = [f"{r.get('series', r['generator'])}\n{r['context_mode']} / {r['prompt_style']}" for r in rows]
    x = np.arange(len(rows))
    width = 0.38
    fig, ax = plt.subplots(figsize=(max(6.0, 1.1 * len(rows) + 2), 4.2))
    for off, metric, name in (
        (-width / 2, "correct", "correct"),
        (width / 2, "fully_grounded", "fully grounded"),
    ):
        vals = [_err(r[metric]) for r in rows]
        ax.bar(
            x + off,
            [v[0] for v in vals],
            width,
            yerr=np.array([[v[1] for v in vals], [v[2] for v in vals]]),
            capsize=3,
            label=name,
        )
    ax.set_xticks(x, labels, fontsize=7, rotation=30, ha="right")
    ax.set_ylim(0, 1.05)
    ax.set_ylabel("share of answers (95% Wilson CI)")
    ax.set_title("Correct and fully grounded answers per system")
    ax.legend(fontsize=8)
    if not rows:
        ax.text(0.5, 0.5, "no answers scored", ha="center", va="center", transform=ax.transAxes)
    fig.tight_layout()
    return save_png(fig, Path(path))


def plot_two_by_two(cells: Sequence[Mapping], path: str | Path) -> Path:
    """One small heatmap per generator x context: shares of correct x fully grounded (counts annotated)."""
    plt = pyplot()
    n = max(1, len(cells))
    fig, axes = plt.subplots(1, n, figsize=(2.6 * n + 0.6, 2.9), squeeze=False)
    for ax, c in zip(axes[0], cells, strict=False):
        m = np.array(c["matrix"], dtype=float)
        share = m / c["n"] if c["n"] else m
        ax.imshow(share, vmin=0, vmax=1, cmap="Blues")
        for i in range(2):
            for j in range(2):
                colour = "white" if share[i, j] > 0.5 else "black"
                ax.text(j, i, f"{int(m[i, j])}\n{share[i, j]:.0%}", ha="center", va="center", fontsize=8,
                        color=colour)  # fmt: skip
        ax.set_xticks([0, 1], ["grounded", "not grounded"], fontsize=7)
        ax.set_yticks([0, 1], ["correct", "not correct"], fontsize=7)
        ax.set_title(f"{c['generator']}\n{c['context_mode']} (n={c['n']})", fontsize=8)
    if not cells:
        axes[0][0].text(0.5, 0.5, "no answers scored", ha="center", va="center")
        axes[0][0].set_axis_off()
    fig.tight_layout()
    return save_png(fig, Path(path))


def plot_recall_groundedness(
    points: Mapping[str, Sequence[Sequence[float]]], correlation: Sequence[Mapping], path: str | Path
) -> Path:
    """Evidence recall of the passages seen vs groundedness, one colour per generator; both are often 0 or 1, so
    points are jittered (fixed seed) and the legend gives Spearman's rho with its 95% CI."""
    plt = pyplot()
    rng = np.random.default_rng(JITTER_SEED)
    rho = {c["generator"]: c for c in correlation}
    fig, ax = plt.subplots(figsize=(5.6, 4.2))
    for gen in sorted(points):
        pts = np.array(points[gen], dtype=float).reshape(-1, 2)
        jit = rng.uniform(-0.025, 0.025, size=pts.shape)
        c = rho.get(gen, {})
        label = gen
        if c.get("spearman_rho") is not None:
            lo, hi = c["ci"]
            ci = f" [{lo:.2f}, {hi:.2f}]" if lo is not None and hi is not None else ""
            label += f" (rho={c['spearman_rho']:.2f}{ci}, n={c['n']})"
        ax.scatter(pts[:, 0] + jit[:, 0], pts[:, 1] + jit[:, 1], s=10, alpha=0.5, label=label)
    ax.set_xlim(-0.08, 1.08)
    ax.set_ylim(-0.08, 1.08)
    ax.set_xlabel("evidence recall of the passages seen")
    ax.set_ylabel("groundedness (share of claims supported)")
    ax.set_title("Retrieval quality vs groundedness (jittered)")
    if points:
        ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    return save_png(fig, Path(path))


def write_plots(tables: Mapping, out_dir: str | Path) -> list[Path]:
    """Write the three plots under `out_dir`; returns their paths."""
    out = Path(out_dir)
    return [
        plot_runs(tables.get("runs", []), out / PLOT_FILES["runs"]),
        plot_two_by_two(tables.get("two_by_two", []), out / PLOT_FILES["two_by_two"]),
        plot_recall_groundedness(
            tables.get("scatter_points", {}), tables.get("correlation", []), out / PLOT_FILES["scatter"]
        ),
    ]
