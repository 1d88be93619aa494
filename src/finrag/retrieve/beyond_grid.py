"""Search rows beyond the pre-registered grid: each registered method, with and without the company + period
filter, scored on the same FinanceBench questions as the grid (recall@k and right report@k with intervals, by
question type and reasoning type). The grid itself stays as it was registered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from finrag.core.contracts import Chunk, Document, Question
from finrag.core.io import read_json, read_jsonl, write_json
from finrag.core.provenance import provenance
from finrag.retrieve import finance  # noqa: F401  (registers the finance-aware search methods)
from finrag.retrieve.finance_params import RetrieveFinanceParams
from finrag.retrieve.grid import breakdowns, evaluate_grid
from finrag.retrieve.methods import build_search_context, load_vectors, run_method

METRIC = "evidence_recall_at_5"  # what the bar plot shows
FILTER_LABELS = {"none": "unfiltered", "company_period": "company + period filter"}


def evaluate_rows(
    chunks: Sequence[Chunk],
    documents: Sequence[Document],
    questions: Sequence[Question],
    methods: Sequence[str],
    filters: Sequence[str],
    retrieve_params: Mapping,
    progress: bool = True,
    vectors: np.ndarray | None = None,
    embedder: str | None = None,
) -> dict:
    """Run every (filter, method) row over `questions` and score it; the table rows name the filter as `filter`.
    Dense and hybrid bases need the chunks' `vectors` and the `embedder` that made them (for the queries)."""
    ctx = build_search_context(chunks, vectors, embedder, retrieve_params, methods=list(methods))
    runs = {}
    for flt in filters:
        docs = documents if flt == "company_period" else None
        for method in methods:
            ranked = run_method(
                ctx, method, questions, int(retrieve_params["k"]), documents=docs, progress=progress
            )
            runs[(flt, "-", method)] = {qid: [c for c, _ in hits] for qid, hits in ranked.items()}
    rows, table, _ = evaluate_grid(questions, runs, variance=False)
    rows = rows.rename(columns={"chunker": "filter"})
    factors = ["filter", "method"]
    setups = [{"filter": s.pop("chunker"), **{k: v for k, v in s.items() if k != "embedder"}} for s in table]
    return {
        "questions_scored": len(questions),
        "setups": setups,
        "by_question_type": breakdowns(rows, factors, "question_type"),
        "by_reasoning": breakdowns(rows, factors, "reasoning"),
    }


def finance_report(p: RetrieveFinanceParams, retrieve_params: Mapping, selected_metrics_file: Path) -> dict:
    """The rows of `p.methods` x `p.filters` on one chunker's chunks (with the embedder's matrix when `p` names one,
    as `retrieve_finance_dense` does), beside the selected setup's own figures (read from `retrieve_filtered`'s
    metrics, not recomputed)."""
    embedder = getattr(p, "embedder", None)
    questions = [
        q for q in read_jsonl(Path(p.questions), Question) if q.available and q.kind in p.score_kinds
    ]
    chunks = read_jsonl(Path(retrieve_params["chunks_dir"]) / f"{p.chunker}.jsonl", Chunk)
    docs = read_jsonl(Path(p.documents), Document)
    vectors = load_vectors(p.chunker, embedder, retrieve_params) if embedder else None
    result: dict = {
        "chunker": p.chunker,
        **({"embedder": embedder} if embedder else {}),
        **evaluate_rows(chunks, docs, questions, p.methods, p.filters, retrieve_params, vectors=vectors,
                        embedder=embedder),
    }  # fmt: skip
    selected = read_json(selected_metrics_file)
    s = selected["setup"]
    name = f"{s['chunker']}/{s['embedder']}/{s['method']}"
    result["reference"] = {
        f"selected {name}{suffix}": {
            k: v for k, v in selected[part].items() if k.startswith(("evidence", "right"))
        }
        for part, suffix in (("unfiltered", ""), ("filtered", " + filter"))
    }
    return result


def write_finance_report(
    p: RetrieveFinanceParams, retrieve_params: Mapping, selected_metrics_file: Path, stage: str, title: str
) -> None:
    """A finance-rows stage: the report with its provenance to `p.metrics_out`, the bar plot to `p.plot_out`."""
    result = finance_report(p, retrieve_params, selected_metrics_file)
    result["_provenance"] = provenance(stage, p, inputs=[p.questions, str(selected_metrics_file)])
    write_json(Path(p.metrics_out), result)
    refs = {k: v[METRIC] for k, v in result["reference"].items()}
    bar_plot(result["setups"], refs, Path(p.plot_out), METRIC, title=title)


def bar_plot(
    setups: Sequence[dict], references: Mapping[str, float], path: Path, metric: str, title: str
) -> None:
    """One bar per row (with its 95% interval); dashed lines for the reference setups."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{s['method']} ({FILTER_LABELS.get(s['filter'], s['filter'])})" for s in setups]
    values = [s[metric] for s in setups]
    lo = [s[metric] - s[f"{metric}_ci"][0] for s in setups]
    hi = [s[f"{metric}_ci"][1] - s[metric] for s in setups]
    fig, ax = plt.subplots(figsize=(8, 0.45 * len(setups) + 1.6))
    y = list(range(len(setups)))
    ax.barh(y, values, xerr=[lo, hi], color="#4c72b0", capsize=3)
    for name, v in references.items():
        ax.axvline(v, linestyle="--", color="#c44e52", linewidth=1)
        ax.text(v, len(setups) - 0.4, f" {name}", color="#c44e52", fontsize=7, rotation=90, va="top")
    ax.set_yticks(y, labels, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlim(0, 1)
    ax.set_xlabel(metric.replace("_", " "))
    ax.set_title(title)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.png")
    fig.savefig(tmp, dpi=120, metadata={"Software": None})
    plt.close(fig)
    tmp.replace(path)
