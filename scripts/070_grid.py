"""Stage grid: score the 36 retrieval runs against FinanceBench evidence -> retrieval_grid.json + heatmap."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Chunk, Question
from finrag.core.io import read_jsonl, write_json
from finrag.core.provenance import provenance
from finrag.core.tracking import stage_run
from finrag.retrieve.evaluation_params import GridParams
from finrag.retrieve.grid import breakdowns, evaluate_grid, headline, heatmap, read_run


def run() -> None:
    p = GridParams.load()
    questions = [
        q for q in read_jsonl(Path(p.questions), Question) if q.available and q.kind in p.score_kinds
    ]
    runs = {}
    for chunker in p.chunkers:
        by_id = {c.chunk_id: c for c in read_jsonl(Path(p.chunks_dir) / f"{chunker}.jsonl", Chunk)}
        for embedder in p.embedders:
            for method in p.methods:
                path = Path(p.runs_dir) / f"{chunker}-{embedder}" / f"{method}.jsonl"
                runs[(chunker, embedder, method)] = read_run(path, by_id)
    rows, table, variance = evaluate_grid(questions, runs)
    factors = ["chunker", "embedder", "method"]
    result = {
        "questions_scored": len(questions),
        "setups": table,
        "headline": headline(table),
        "variance_shares_recall_at_5": variance,
        "by_question_type": breakdowns(rows, factors, "question_type"),
        "by_reasoning": breakdowns(rows, factors, "reasoning"),
        "_provenance": provenance("07_grid", p, inputs=[p.questions]),
    }
    write_json(Path(p.metrics_out), result)
    heatmap(table, "evidence_recall_at_5", Path(p.plot_out), "Evidence recall@5 (FinanceBench)")
    with stage_run("grid", p) as tracker:
        tracker.metrics({"questions_scored": len(questions)})
        for s in table:
            name = f"{s['chunker']}/{s['embedder']}/{s['method']}"
            with stage_run(name, {k: s[k] for k in factors}, nested=True) as child:
                child.metrics({k: v for k, v in s.items() if isinstance(v, float)})


if __name__ == "__main__":
    main(run)
