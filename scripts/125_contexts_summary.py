"""Stage contexts_summary: how much of each question's evidence the frozen contexts show, per mode (the ceiling
for a grounded answer). It reads the contexts file in git, not the search, so CI replays it."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Question
from finrag.core.io import read_jsonl, write_json
from finrag.core.provenance import provenance
from finrag.retrieve.contexts import context_summary, load_frozen_contexts
from finrag.retrieve.evaluation_params import ContextsParams
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    p = ContextsParams.load()
    setup, contexts = load_frozen_contexts(Path(p.out), Path(RetrieveParams.load().chunks_dir))
    questions = [q for q in read_jsonl(Path(p.questions), Question) if q.available]
    summary = context_summary(questions, contexts, setup)
    # the stage label as recorded when one stage searched and measured (results/ keeps recorded labels)
    write_json(
        Path(p.metrics_out), {**summary, "_provenance": provenance("15_contexts", p, inputs=[p.selected])}
    )


if __name__ == "__main__":
    main(run)
