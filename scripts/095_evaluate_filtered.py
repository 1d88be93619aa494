"""Stage evaluate_filtered: the selected setup with and without the company + period filter, scored from the two
runs in git (reported next to the grid, not inside it). No matrix needed, so CI replays it."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Chunk, Question
from finrag.core.io import read_json, read_jsonl, write_json
from finrag.core.provenance import provenance
from finrag.retrieve.beyond_grid import filtered_report
from finrag.retrieve.evaluation_params import RetrieveFilteredParams
from finrag.retrieve.grid import read_run
from finrag.retrieve.params import RetrieveParams


def run() -> None:
    p = RetrieveFilteredParams.load()
    rp = RetrieveParams.load()
    sel = read_json(Path(p.selected))
    by_id = {c.chunk_id: c for c in read_jsonl(Path(rp.chunks_dir) / f"{sel['chunker']}.jsonl", Chunk)}
    scored = [q for q in read_jsonl(Path(rp.questions), Question) if q.available and q.kind in p.score_kinds]
    unfiltered = read_run(
        Path(rp.out_dir) / f"{sel['chunker']}-{sel['embedder']}" / f"{sel['method']}.jsonl", by_id
    )
    result = filtered_report(scored, sel, read_run(Path(p.run_out), by_id), unfiltered)
    # the stage label as recorded when one stage searched and scored (results/ keeps recorded labels)
    write_json(
        Path(p.metrics_out),
        {**result, "_provenance": provenance("09_retrieve_filtered", p, inputs=[p.selected])},
    )


if __name__ == "__main__":
    main(run)
