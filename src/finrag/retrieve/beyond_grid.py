"""Search rows beyond the pre-registered grid: each registered method, with and without the company + period
filter, scored on the same FinanceBench questions as the grid (recall@k and right report@k with intervals, by
question type and reasoning type). The grid itself stays as it was registered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from finrag.core.contracts import Chunk, Document, Question
from finrag.core.io import read_json, read_jsonl
from finrag.retrieve.grid import breakdowns, evaluate_grid
from finrag.retrieve.methods import build_search_context, run_method

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


def finance_report(
    chunker: str,
    methods: Sequence[str],
    filters: Sequence[str],
    questions_file: Path,
    documents_file: Path,
    selected_metrics_file: Path,
    retrieve_params: Mapping,
    score_kinds: Sequence[str],
    embedder: str | None = None,
) -> dict:
    """The rows of `methods` x `filters` on one chunker's chunks (with `embedder`'s vectors from the embed stage's
    matrix when a method needs them), beside the selected setup's own figures (read from `retrieve_filtered`'s
    metrics, not recomputed)."""
    questions = [q for q in read_jsonl(questions_file, Question) if q.available and q.kind in score_kinds]
    chunks = read_jsonl(Path(retrieve_params["chunks_dir"]) / f"{chunker}.jsonl", Chunk)
    docs = read_jsonl(documents_file, Document)
    vectors = None
    if embedder is not None:
        path = Path(retrieve_params["embeddings_dir"]) / chunker / f"{embedder}.npy"
        if not path.exists():
            raise FileNotFoundError(
                f"{path} is missing: `dvc pull` it or run `dvc repro embed@{chunker}-{embedder}`"
            )
        vectors = np.load(path)
    result: dict = {
        "chunker": chunker,
        **({"embedder": embedder} if embedder else {}),
        **evaluate_rows(chunks, docs, questions, methods, filters, retrieve_params, vectors=vectors,
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


def bar_plot(
    setups: Sequence[dict], references: Mapping[str, float], path: Path, metric: str,
    title: str = "Finance-aware search beyond the grid (FinanceBench evidence pages)",
) -> None:  # fmt: skip
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
