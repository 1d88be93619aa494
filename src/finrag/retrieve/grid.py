"""The retrieval grid: run files -> per-setup metrics, variance shares, the selection rule, the heatmap.

A run file (data/runs/retrieval/CHUNKER-EMBEDDER/METHOD.jsonl) holds one line per question:
{"qid": ..., "hits": [{"chunk_id": ..., "score": ...}, ...]} (best first, top `k`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from finrag.core.contracts import Chunk, Question
from finrag.core.io import read_jsonl, write_jsonl
from finrag.retrieve.metrics import aggregate, evaluate_rankings, grid_variance

KS = (1, 3, 5, 10, 20)


def write_run(path: Path, rankings: Mapping[str, Sequence[tuple[Chunk, float]]]) -> None:
    write_jsonl(
        path,
        (
            {"qid": qid, "hits": [{"chunk_id": c.chunk_id, "score": round(float(s), 6)} for c, s in hits]}
            for qid, hits in rankings.items()
        ),
    )


def read_run(path: Path, chunks_by_id: Mapping[str, Chunk]) -> dict[str, list[Chunk]]:
    out = {}
    for rec in read_jsonl(path):
        out[rec["qid"]] = [chunks_by_id[h["chunk_id"]] for h in rec["hits"]]
    return out


def _clean(x):
    if isinstance(x, float) and math.isnan(x):
        return None
    return x


def setup_table(rows: pd.DataFrame, factors: Sequence[str]) -> list[dict]:
    """One record per setup: every metric's mean (keys like evidence_recall_at_5) with its CI, and n."""
    agg = aggregate(rows, group_cols=factors)
    out = []
    for key, g in agg.groupby(list(factors), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rec: dict = dict(zip(factors, key, strict=True))
        for _, r in g.iterrows():
            name = _metric_name(r["metric"])
            rec[name] = _clean(float(r["mean"]))
            rec[f"{name}_ci"] = [_clean(float(r["ci_low"])), _clean(float(r["ci_high"]))]
            rec["n"] = int(r["n"])
        out.append(rec)
    return out


def _metric_name(col: str) -> str:
    if col.startswith("recall@"):
        return f"evidence_recall_at_{col.split('@')[1]}"
    if col.startswith("right_report@"):
        return f"right_report_at_{col.split('@')[1]}"
    return col


def breakdowns(rows: pd.DataFrame, factors: Sequence[str], by: str, metric: str = "recall@5") -> list[dict]:
    agg = aggregate(rows, group_cols=factors, by=by, metrics=[metric])
    return [
        {**{f: r[f] for f in factors}, by: r[by], "mean": _clean(float(r["mean"])), "n": int(r["n"])}
        for _, r in agg.iterrows()
    ]


def headline(table: Sequence[dict], metric: str = "evidence_recall_at_5") -> dict:
    """The figures the README and the predictions quote: the best setup by `metric` and method means."""
    scored = [s for s in table if s.get(metric) is not None]
    best = max(scored, key=lambda s: s[metric]) if scored else None
    by_method: dict[str, list[float]] = {}
    for s in scored:
        by_method.setdefault(s["method"], []).append(s[metric])
    return {
        "best": best,
        "mean_recall_at_5_by_method": {m: sum(v) / len(v) for m, v in sorted(by_method.items())},
    }


def select_setup(setups: Sequence[dict], rule: Mapping) -> dict:
    """Apply the selection rule fixed in params.yaml: maximise `metric`; ties (within `tie_tolerance`) go to the
    cheaper setup by the order of `cost_order` (methods, then embedders, then chunkers, cheapest first)."""
    metric = rule["metric"]
    tol = float(rule.get("tie_tolerance", 0.0))
    cost = rule.get("cost_order", {})

    def cost_key(s: dict) -> tuple:
        return tuple(
            (cost.get(axis, []).index(s[axis]) if s[axis] in cost.get(axis, []) else 99)
            for axis in ("method", "embedder", "chunker")
        )

    scored = [s for s in setups if s.get(metric) is not None]
    if not scored:
        raise ValueError(f"no setup has a value for '{metric}'")
    best = max(s[metric] for s in scored)
    tied = [s for s in scored if s[metric] >= best - tol - 1e-12]  # equal means summed in another order tie
    chosen = min(tied, key=cost_key)
    return {
        "chunker": chosen["chunker"],
        "embedder": chosen["embedder"],
        "method": chosen["method"],
        "metric": metric,
        "value": chosen[metric],
        "best_value": best,
        "tied_setups": len(tied),
        "rule": dict(rule),
    }


def evaluate_grid(
    questions: Sequence[Question],
    runs: Mapping[tuple[str, str, str], Mapping[str, Sequence[Chunk]]],
    variance: bool = True,
) -> tuple[pd.DataFrame, list[dict], dict]:
    """Per-question rows of every setup, the per-setup table and the variance shares (eta squared)."""
    frames = []
    for (chunker, embedder, method), rankings in sorted(runs.items()):
        setup = {"chunker": chunker, "embedder": embedder, "method": method}
        frames.append(evaluate_rankings(questions, rankings, setup=setup, ks=KS))
    rows = pd.concat(frames, ignore_index=True)
    factors = ["chunker", "embedder", "method"]
    table = setup_table(rows, factors)
    # BM25 has no embedder: its rows are the same for each embedder level, so they are given once per level.
    shares = grid_variance(rows, response="recall@5", factors=factors, block="qid") if variance else {}
    return rows, table, shares


def heatmap(table: Sequence[dict], metric: str, path: Path, title: str) -> None:
    """Methods x (chunker, embedder) heatmap of one metric."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    df = pd.DataFrame(table)
    pivot = df.pivot_table(index="method", columns=["chunker", "embedder"], values=metric)
    fig, ax = plt.subplots(figsize=(1.1 * pivot.shape[1] + 2, 0.6 * pivot.shape[0] + 1.8))
    im = ax.imshow(pivot.to_numpy(), cmap="viridis", vmin=0, vmax=max(0.01, float(pivot.to_numpy().max())))
    ax.set_xticks(range(pivot.shape[1]), [f"{c}\n{e}" for c, e in pivot.columns], fontsize=8)
    ax.set_yticks(range(pivot.shape[0]), list(pivot.index))
    for i in range(pivot.shape[0]):
        for j in range(pivot.shape[1]):
            v = pivot.iat[i, j]
            if v == v:
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="white", fontsize=8)
    ax.set_title(title)
    fig.colorbar(im, ax=ax, shrink=0.8)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, metadata={"Software": None})  # no version/time stamp: same bytes on every run
    plt.close(fig)
