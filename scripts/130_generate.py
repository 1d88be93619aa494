"""Stage generate@FAMILY: one run family (a model x prompt styles x context modes x replicates) over every
available question, on the passages frozen by the contexts stage, through the response cache (replay by default:
no model, no key, same bytes).

Recording several families of the same backend in one pass (`--family qwen qwen_replicates`, with
FINRAG_LLM_MODE=auto) interleaves their calls question by question, so a local model evaluates each question's
passages once for all of them; each family's outputs are written exactly as its own stage writes them."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from _stage import main
from finrag.core.contracts import Question
from finrag.core.io import read_jsonl, write_json, write_jsonl
from finrag.core.tracking import stage_run
from finrag.generate.params import GenerateParams
from finrag.generate.run import (
    backend_settings,
    generate_answers,
    plan_runs,
    run_stats,
    select_families,
    shared_backend,
)
from finrag.llm.backends.base import make_backend
from finrag.llm.cache import CachedLLM
from finrag.retrieve.contexts import load_frozen_contexts


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--family", required=True, nargs="+", help="one family (the DVC stage) or several sharing a backend"
    )
    ap.add_argument(
        "--shard",
        help="I/N: record only (FINRAG_LLM_MODE=auto) the calls of every N-th question from the I-th, on one thread, "
        "and write no answer file: N processes side by side fill one response cache (appends are locked); a plain "
        "run then replays them and writes the outputs",
    )
    args = ap.parse_args()
    shard = None
    if args.shard:
        i, n = (int(x) for x in args.shard.split("/"))
        if not 0 <= i < n:
            raise SystemExit(f"--shard {args.shard}: need 0 <= I < N")
        shard = (i, n)
    p = GenerateParams.load()
    try:
        fams = select_families(p.as_dict(), args.family)
    except ValueError as exc:
        raise SystemExit(str(exc)) from None
    backend_name, overrides = shared_backend(fams)
    questions = [q for q in read_jsonl(Path(p.questions), Question) if q.available]
    try:
        setup, contexts = load_frozen_contexts(Path(p.contexts), Path(p.chunks_dir))
        questions, specs = plan_runs(p.as_dict(), fams, questions, contexts, Path(p.chunks_dir))
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(str(exc)) from None
    if shard is not None:
        questions = questions[shard[0] :: shard[1]]
    absent = [(q.qid, s.contexts_key) for q in questions for s in specs
              if s.asks(q.qid) and (q.qid, s.contexts_key) not in contexts]  # fmt: skip
    if absent:
        raise SystemExit(
            f"{len(absent)} question/context pairs have no frozen context (first {absent[0]}): re-run contexts "
            "(or context_conditions)"
        )
    settings = backend_settings(p.as_dict(), backend_name, overrides)
    if shard is not None and ("prices" in settings or "cap_usd" in settings):
        raise SystemExit(
            f"--shard is for local models: {backend_name} has prices, and each shard would count the spending cap "
            "on its own"
        )
    if shard is not None and "n_threads" in settings:
        # a speed setting, not in the cache key: N one-thread processes share the cores
        settings["n_threads"] = 1
    backend = make_backend(backend_name, **settings)
    mode = os.environ.get("FINRAG_LLM_MODE", p.cache_mode)
    if shard is not None and mode == "replay":
        raise SystemExit(
            "--shard records calls: set FINRAG_LLM_MODE=auto (a replay writes outputs unsharded)"
        )
    label = "+".join(args.family)
    llm = CachedLLM(backend, p.cache_dir, mode=mode, stage=f"generate_{label}")
    with stage_run(f"generate_{label}", {**fams, "setup": setup}) as tracker:
        answers = generate_answers(questions, contexts, llm, specs, p.decoding)
        tracker.metrics(llm.stats())
    if shard is not None:
        print(
            f"shard {shard[0]}/{shard[1]}: {llm.stats()}; no answer file written (run the stage to write them)"
        )
        return
    for name in args.family:
        stats = {}
        runs_of_family = [s for s in specs if s.family == name]
        for spec in runs_of_family:
            write_jsonl(Path(p.answers_dir) / name / f"{spec.run_id}.jsonl", answers[spec.run_id])
            stats[spec.run_id] = run_stats(answers[spec.run_id])
        # the decoding every call of the family used (base merged with the family's own), so the report states
        # e.g. the replicates' sampling temperature from results/, not from params.yaml
        write_json(
            Path(p.stats_dir) / f"generation_{name}.json",
            {"family": name, "decoding": dict(runs_of_family[0].decoding) if runs_of_family else {},
             "runs": dict(sorted(stats.items()))},
        )  # fmt: skip


if __name__ == "__main__":
    main(run)
