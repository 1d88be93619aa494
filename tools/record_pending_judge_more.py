"""Record a declared model-judge run (`agreement.model_judges.runs`) on every dev claim of the human-labelled
benchmarks, into `llm_cache/pending/` (see llm_cache/pending/README.md), so the run can declare `claims: all`
once every call is in:

    FINRAG_MIRROR=... FINRAG_NO_MLFLOW=1 .venv/bin/python tools/record_pending_judge_more.py llm_logprob

Claims the run already judges (its declared sample, in `llm_cache/agreement/`) are skipped; the rest go
round-robin over the benchmarks, each in the stage's nested stratified order, so a stop has covered a stratified
part of each. Resumable: a recorded call is a cache hit on the next start. Why not declare `claims: all` first:
the calls would be a dependency of the agreement and judge_cost stages, and every committed batch would leave them
stale until all are in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from finrag.core.config import mirror_dir
from finrag.ingest.human_claims import load_all
from finrag.llm.backends.base import backend_from_spec
from finrag.llm.cache import CachedLLM
from finrag.trust.judge_agreement import (
    agreement_sample,
    every_dev_claim,
    judge_items,
    model_judge,
    model_judge_sample,
    round_robin,
)
from finrag.trust.params import AgreementParams


def main(
    run: Annotated[str, typer.Argument(help="a run of agreement.model_judges.runs")],
    cache_dir: Annotated[Path, typer.Option(help="where the new calls go")] = Path("llm_cache/pending"),
    dry_run: Annotated[bool, typer.Option(help="count the claims, call nothing")] = False,
) -> None:
    os.environ.setdefault("FINRAG_NO_MLFLOW", "1")
    p = AgreementParams.load()
    mj = p.model_judges
    if mj is None or run not in mj.runs:
        raise typer.BadParameter(f"{run!r} is not a run of agreement.model_judges.runs")
    spec = mj.runs[run]
    loaded = load_all(mirror_dir(required=True), labels_dir=Path(p.finrag_labels))
    sample = agreement_sample(loaded, sizes=p.sample_sizes, seed=p.seed)
    declared = model_judge_sample(sample, spec.get("sample_sizes", mj.sample_sizes), seed=p.seed)
    # by what the prompt is made of: a claim two sets share is one call, already in llm_cache/agreement/
    done = {(it.claim, tuple(it.passages)) for it in declared}
    every = every_dev_claim(loaded)
    todo = round_robin([it for it in every if (it.claim, tuple(it.passages)) not in done])
    print(f"{run}: {len(every)} dev claims, {len(declared)} declared, {len(todo)} to record", flush=True)
    if dry_run or not todo:
        return
    backend = backend_from_spec(mj.backends.get(spec["backend"]), default=spec["backend"])
    judge = model_judge(spec, CachedLLM(backend, cache_dir, mode="auto", stage="agreement"))
    judge.name = run
    judge_items(todo, judge, chunk=1)


if __name__ == "__main__":
    typer.run(main)
