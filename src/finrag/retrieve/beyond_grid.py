"""Search rows beyond the pre-registered grid, scored: each registered method, with and without the company +
period filter, on the same FinanceBench questions as the grid (recall@k and right report@k with intervals, by
question type and reasoning type). The grid itself stays as it was registered.

This module scores runs and never searches (finrag.retrieve.beyond_grid_search does), so the stages that score
rows read only runs, which are in git: CI replays them without the embedding matrices."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from finrag.core.contracts import Chunk, Question
from finrag.core.io import read_json, read_jsonl, write_json
from finrag.core.provenance import provenance
from finrag.retrieve.finance_params import RetrieveFinanceParams
from finrag.retrieve.grid import breakdowns, evaluate_grid, read_run, write_run

METRIC = "evidence_recall_at_5"  # what the bar plot shows
FILTER_LABELS = {"none": "unfiltered", "company_period": "company + period filter"}

Rankings = Mapping[str, Sequence[tuple[Chunk, float]]]  # qid -> ranked (chunk, score)
RowKey = tuple[str, str]  # (filter, method)


def rows_questions(p: RetrieveFinanceParams) -> list[Question]:
    """The questions every row is scored on: available, of the scored kinds."""
    return [q for q in read_jsonl(Path(p.questions), Question) if q.available and q.kind in p.score_kinds]


def rows_chunks(p: RetrieveFinanceParams, retrieve_params: Mapping) -> list[Chunk]:
    return read_jsonl(Path(retrieve_params["chunks_dir"]) / f"{p.chunker}.jsonl", Chunk)


def row_run_path(runs_dir: Path, key: RowKey) -> Path:
    flt, method = key
    return runs_dir / flt / f"{method}.jsonl"


def write_row_runs(runs_dir: Path, runs: Mapping[RowKey, Rankings]) -> None:
    """One run file per (filter, method): top-k chunk ids and scores (grid.write_run's format)."""
    for key, ranked in runs.items():
        write_run(row_run_path(runs_dir, key), ranked)


def read_row_runs(
    runs_dir: Path, p: RetrieveFinanceParams, chunks: Sequence[Chunk]
) -> dict[RowKey, dict[str, list[Chunk]]]:
    """The runs of every row `p` names; a missing file says which stage writes it."""
    by_id = {c.chunk_id: c for c in chunks}
    out: dict[RowKey, dict[str, list[Chunk]]] = {}
    for flt in p.filters:
        for method in p.methods:
            path = row_run_path(runs_dir, (flt, method))
            if not path.is_file():
                raise FileNotFoundError(f"{path} not found: run the search stage of {p.section} first")
            out[(flt, method)] = read_run(path, by_id)
    return out


def score_rows(questions: Sequence[Question], runs: Mapping[RowKey, Mapping[str, Sequence[Chunk]]]) -> dict:
    """Score every (filter, method) row over `questions`; the table rows name the filter as `filter`."""
    grid_runs = {(flt, "-", method): dict(ranked) for (flt, method), ranked in runs.items()}
    rows, table, _ = evaluate_grid(questions, grid_runs, variance=False)
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
    p: RetrieveFinanceParams,
    questions: Sequence[Question],
    runs: Mapping[RowKey, Mapping[str, Sequence[Chunk]]],
    selected_metrics_file: Path,
) -> dict:
    """The rows of `p.methods` x `p.filters` on one chunker's chunks (the embedder named when `p` has one, as
    `retrieve_finance_dense` does), beside the selected setup's own figures (read from `retrieve_filtered`'s
    metrics, not recomputed)."""
    embedder = getattr(p, "embedder", None)
    result: dict = {
        "chunker": p.chunker,
        **({"embedder": embedder} if embedder else {}),
        **score_rows(questions, runs),
    }
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
    p: RetrieveFinanceParams,
    questions: Sequence[Question],
    runs: Mapping[RowKey, Mapping[str, Sequence[Chunk]]],
    selected_metrics_file: Path,
    stage: str,
    title: str,
) -> None:
    """A finance-rows stage: the report with its provenance to `p.metrics_out`, the bar plot to `p.plot_out`."""
    result = finance_report(p, questions, runs, selected_metrics_file)
    result["_provenance"] = provenance(stage, p, inputs=[p.questions, str(selected_metrics_file)])
    write_json(Path(p.metrics_out), result)
    refs = {k: v[METRIC] for k, v in result["reference"].items()}
    bar_plot(result["setups"], refs, Path(p.plot_out), METRIC, title=title)


def filtered_report(
    questions: Sequence[Question],
    selected: Mapping[str, str],
    filtered: Mapping[str, Sequence[Chunk]],
    unfiltered: Mapping[str, Sequence[Chunk]],
) -> dict:
    """The selected setup with and without the company + period filter, scored on the same questions."""
    chunker, embedder, method = selected["chunker"], selected["embedder"], selected["method"]
    runs = {("filtered", embedder, method): dict(filtered), (chunker, embedder, method): dict(unfiltered)}
    _, table, _ = evaluate_grid(questions, runs, variance=False)
    result = {
        "setup": {"chunker": chunker, "embedder": embedder, "method": method},
        "filtered": next(s for s in table if s["chunker"] == "filtered"),
        "unfiltered": next(s for s in table if s["chunker"] == chunker),
    }
    result["filtered"]["chunker"] = chunker
    return result


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
