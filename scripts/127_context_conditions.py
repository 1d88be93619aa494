"""Stage context_conditions: the contexts of the study-validity conditions, from files in git (no matrix, no
model): the oracle passages in a seeded order (position as a factor, beside the frozen gold-first order) and the
top 5 of two stronger retrieval rows (retrieval quality as a dose). One contexts file per condition, and each
condition's evidence recall (the dose actually delivered), for the FinanceBench questions."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Context, Question
from finrag.core.io import read_jsonl, write_json, write_jsonl
from finrag.core.provenance import provenance
from finrag.retrieve.conditions import (
    ContextConditionsParams,
    condition_files,
    contexts_from_run,
    shuffled_oracle,
)
from finrag.retrieve.contexts import context_summary, load_frozen_contexts


def run() -> None:
    p = ContextConditionsParams.load()
    available = [q for q in read_jsonl(Path(p.questions), Question) if q.available]
    # the retrieval levels and the summary are over the FinanceBench questions (the trick questions have no gold
    # evidence); the oracle orders cover every available question, so a family can ask the trick questions on the
    # shuffled oracle too (the draw is per question: the FinanceBench orders do not move)
    questions = [q for q in available if q.kind == "financebench"]
    asked = {q.qid for q in available}
    frozen = [c for c in read_jsonl(Path(p.contexts), Context) if c.qid in asked]
    files = condition_files(Path(p.out_dir), [*p.oracle_orders, *p.levels])
    built: dict[str, list[Context]] = {}
    for name, order in p.oracle_orders.items():
        built[name] = shuffled_oracle(frozen, order.seed)
    for name, level in p.levels.items():
        built[name] = contexts_from_run(
            read_jsonl(Path(level.run)), [q.qid for q in questions], p.k, level.setup
        )
    summary: dict = {"questions": len(questions), "conditions": {}}
    for name, contexts in built.items():
        write_jsonl(files[name], (c.model_dump(mode="json") for c in contexts))
        setup, thawed = load_frozen_contexts(files[name], Path(p.chunks_dir))
        summary["conditions"][name] = context_summary(questions, thawed, setup)
    # the frozen modes on the same questions, for the dose's first level and the gold-first order
    setup, thawed = load_frozen_contexts(Path(p.contexts), Path(p.chunks_dir))
    summary["frozen"] = context_summary(questions, thawed, setup)
    summary["_provenance"] = provenance(
        "127_context_conditions", p, inputs=[p.contexts, *(lv.run for lv in p.levels.values())]
    )
    write_json(Path(p.metrics_out), summary)


if __name__ == "__main__":
    main(run)
