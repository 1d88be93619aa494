"""Retrieval metrics of the grid: evidence-page recall@k, right-report@k, MRR, with bootstrap CIs and variance shares.

Units are evidence PAGES, not chunks: chunkers cut pages differently, so a chunk-level qrel would favour one
chunker; every chunker's chunk records the page(s) it spans, so "does a top-k chunk cover an evidence page" is
comparable across the grid (as FinanceBench's page-level evidence allows).

- recall@k: share of the question's distinct evidence pages (doc_id, page) covered by the top-k chunks; the page
  is `Evidence.aligned_page` when set (evidence re-located in our parse), else `Evidence.page`;
- right_report@k: 1 if any top-k chunk comes from one of the question's documents (`doc_ids`, else the evidence
  documents) — the coarser "did retrieval find the right filing";
- mrr: 1 / rank of the first chunk covering an evidence page, 0 if none in the top `mrr_cutoff` (20).
Questions without evidence pages (trick questions) get NaN and are left out of the means.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from finrag.core.contracts import Chunk, Passage, Question
from finrag.core.stats import eta_squared, mean_ci

KS: tuple[int, ...] = (1, 3, 5, 10, 20)
GRID_FACTORS: tuple[str, ...] = ("method", "chunker", "embedder")


def evidence_pages(q: Question) -> set[tuple[str, int]]:
    """Distinct (doc_id, page) of a question's evidence, preferring the aligned page."""
    return {(e.doc_id, e.aligned_page if e.aligned_page is not None else e.page) for e in q.evidence}


def _covers(chunk: Chunk, pages: set[tuple[str, int]]) -> set[tuple[str, int]]:
    return {(chunk.doc_id, p) for p in chunk.pages} & pages


def question_metrics(
    q: Question, ranked: Sequence[Chunk], ks: Sequence[int] = KS, mrr_cutoff: int = 20
) -> dict:
    """Metrics of one question's ranked chunks (best first)."""
    gold = evidence_pages(q)
    docs = set(q.doc_ids) or {d for d, _ in gold}
    row: dict = {"n_evidence_pages": len(gold), "n_ranked": len(ranked)}
    hit_ranks = [r for r, c in enumerate(ranked, start=1) if _covers(c, gold)]
    first_hit = hit_ranks[0] if hit_ranks else None
    nan = float("nan")
    for k in ks:
        top = ranked[:k]
        covered = set().union(*(_covers(c, gold) for c in top)) if top else set()
        row[f"recall@{k}"] = len(covered) / len(gold) if gold else nan
        row[f"right_report@{k}"] = float(any(c.doc_id in docs for c in top)) if docs else nan
    row["first_hit_rank"] = first_hit if first_hit is not None else nan
    if not gold:
        row["mrr"] = nan
    else:
        row["mrr"] = 1.0 / first_hit if first_hit is not None and first_hit <= mrr_cutoff else 0.0
    return row


def evaluate_rankings(
    questions: Sequence[Question],
    rankings: Mapping[str, Sequence[Chunk]],
    setup: Mapping[str, object] | None = None,
    ks: Sequence[int] = KS,
    mrr_cutoff: int = 20,
) -> pd.DataFrame:
    """One row per question: setup columns (method, chunker, embedder, ...), qid, kind, question_type,
    reasoning, then the metrics. A question absent from `rankings` counts as an empty ranking (all zeros)."""
    rows = []
    for q in questions:
        row = dict(setup or {})
        row.update(
            qid=q.qid,
            kind=q.kind,
            question_type=q.question_type or "n/a",
            reasoning=q.reasoning or "n/a",
        )
        row.update(question_metrics(q, list(rankings.get(q.qid, [])), ks=ks, mrr_cutoff=mrr_cutoff))
        rows.append(row)
    return pd.DataFrame(rows)


def metric_columns(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c.startswith(("recall@", "right_report@")) or c == "mrr"]


def aggregate(
    rows: pd.DataFrame,
    group_cols: Sequence[str] = GRID_FACTORS,
    by: str | None = None,
    metrics: Sequence[str] | None = None,
) -> pd.DataFrame:
    """Mean of each metric with a percentile-bootstrap 95% CI (finrag.core.stats.mean_ci), per setup and optionally
    per breakdown column `by` (question_type, reasoning). Long format: one row per group x metric; NaNs (no
    evidence) are dropped before averaging and `n` says how many questions remain."""
    metrics = list(metrics or metric_columns(rows))
    keys = [c for c in group_cols if c in rows.columns] + ([by] if by else [])
    groups = rows.groupby(keys, dropna=False, sort=True) if keys else [((), rows)]
    out = []
    for key, g in groups:
        key = key if isinstance(key, tuple) else (key,)
        for m in metrics:
            vals = g[m].dropna().to_numpy(dtype=float)
            ci = mean_ci(vals)
            out.append(
                {
                    **dict(zip(keys, key, strict=True)),
                    "metric": m,
                    "mean": ci["mean"],
                    "ci_low": ci["ci"][0],
                    "ci_high": ci["ci"][1],
                    "n": ci["n"],
                }
            )
    return pd.DataFrame(out)


def grid_variance(
    rows: pd.DataFrame,
    response: str = "recall@5",
    factors: Sequence[str] = GRID_FACTORS,
    block: str | None = "qid",
) -> dict:
    """Share of the variance of `response` explained by each grid factor (eta squared, main-effects ANOVA).

    Unit: one observation per setup x question (not per-setup means). Per-setup means would leave the ANOVA only
    n_setups - 1 - sum(levels - 1) residual degrees of freedom (a handful in a 3-4-level grid) and fold question
    difficulty into nothing; per setup x question gives real residual df, and with `block="qid"` the question is
    a factor too, so the report can say how much of the spread is the question itself versus design choices.
    Factors that do not apply to a setup (the embedder of "bm25": empty, None or "none") are filled by
    replicating that row for every level of the factor, since the factor has, truthfully, no effect there;
    without it the factor would be collinear with the method. Returns eta2 per factor (+ block, residual),
    `n_obs` and `unit`.
    """
    factors = [f for f in factors if f in rows.columns]
    df = rows.dropna(subset=[response]).copy()
    for f in factors:
        missing = df[f].isna() | df[f].astype(str).str.lower().isin(["", "none", "n/a"])
        levels = sorted(df.loc[~missing, f].astype(str).unique())
        if missing.any() and levels:
            rep = df[missing].drop(columns=[f]).merge(pd.DataFrame({f: levels}), how="cross")
            df = pd.concat([df[~missing], rep], ignore_index=True)
        df[f] = df[f].astype(str)
    used = [f for f in factors if df[f].nunique() > 1]
    if block and block in df.columns and df[block].nunique() > 1:
        used.append(block)
    if not used or len(df) < 3:
        return {"n_obs": len(df), "unit": "setup x question", "note": "fewer than two levels in every factor"}
    df = df.rename(columns={response: "y"})
    out = eta_squared(df, "y", used)
    out.update(n_obs=len(df), unit="setup x question", response=response, factors=used)
    return out


def evidence_recall(q: Question, passages: Sequence[Passage]) -> float | None:
    """Share of the question's evidence pages covered by the passages a model saw; None without evidence."""
    if not evidence_pages(q):
        return None
    chunks = [
        Chunk(chunk_id=p.chunk_id, doc_id=p.doc_id, pages=list(p.pages), spans=[], text=p.text, body=p.text)
        for p in passages
    ]
    k = max(1, len(chunks))
    return float(question_metrics(q, chunks, ks=(k,))[f"recall@{k}"])
