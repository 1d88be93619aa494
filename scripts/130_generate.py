"""Stage generate@FAMILY: one run family (a model x prompt styles x context modes x replicates) over every
available question, on the passages frozen by the contexts stage, through the response cache (replay by default:
no model, no key, same bytes).

Recording several families of the same backend in one pass (`--family qwen qwen_replicates`, with
FINRAG_LLM_MODE=auto) interleaves their calls question by question, so a local model evaluates each question's
passages once for all of them; each family's outputs are written exactly as its own stage writes them. With
`--executor ray` the missing calls are answered by Ray actors first (finrag.llm.executor), then written the same
way from the cache."""

from __future__ import annotations

import argparse
import os
from functools import partial
from pathlib import Path

from _stage import main
from finrag.core.contracts import Question
from finrag.core.io import read_jsonl, write_json, write_jsonl
from finrag.core.tracking import stage_run
from finrag.generate.params import GenerateParams
from finrag.generate.run import (
    backend_settings,
    generate_answers,
    plan_calls,
    plan_runs,
    run_stats,
    select_families,
    shared_backend,
)
from finrag.llm.backends.base import make_backend
from finrag.llm.cache import CachedLLM
from finrag.llm.executor import (
    ENV_ADDRESS,
    ENV_EXECUTOR,
    EXECUTORS,
    ExecutorError,
    executor_name,
    record_on_ray,
)
from finrag.retrieve.contexts import load_frozen_contexts


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--family", required=True, nargs="+", help="one family (the DVC stage) or several sharing a backend"
    )
    ap.add_argument(
        "--executor",
        choices=EXECUTORS,
        help=f"where missing calls run (with FINRAG_LLM_MODE=auto): local (default) or ray (actors, each loading the "
        f"model once; {ENV_ADDRESS}: auto, a cluster address, or unset for a local instance); default "
        f"{ENV_EXECUTOR} or local",
    )
    ap.add_argument("--workers", type=int, default=2, help="ray: actors (each loads the model once)")
    ap.add_argument(
        "--threads-per-worker", type=int, default=1, help="ray: CPU threads of each actor's model"
    )
    args = ap.parse_args()
    try:
        executor = executor_name(args.executor)
    except ExecutorError as exc:
        raise SystemExit(str(exc)) from None
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
    absent = [(q.qid, s.contexts_key) for q in questions for s in specs
              if s.asks(q.qid) and (q.qid, s.contexts_key) not in contexts]  # fmt: skip
    if absent:
        raise SystemExit(
            f"{len(absent)} question/context pairs have no frozen context (first {absent[0]}): re-run contexts "
            "(or context_conditions)"
        )
    settings = backend_settings(p.as_dict(), backend_name, overrides)
    backend = make_backend(backend_name, **settings)
    mode = os.environ.get("FINRAG_LLM_MODE", p.cache_mode)
    label = "+".join(args.family)
    llm = CachedLLM(backend, p.cache_dir, mode=mode, stage=f"generate_{label}")
    if executor == "ray":
        if "prices" in settings or "cap_usd" in settings:
            raise SystemExit(
                f"--executor ray is for local models and servers: {backend_name} has prices, and the spending cap "
                "is counted by one process"
            )
        if "n_threads" in settings:
            settings["n_threads"] = args.threads_per_worker  # a speed setting, not in the cache key
        calls = [call for *_, call in plan_calls(questions, contexts, specs, p.decoding)]
        try:
            print(
                "ray:",
                record_on_ray(
                    llm,
                    calls,
                    partial(make_backend, backend_name, **settings),
                    workers=args.workers,
                    cpus_per_worker=args.threads_per_worker,
                    address=os.environ.get(ENV_ADDRESS) or None,
                ),
            )
        except ExecutorError as exc:
            raise SystemExit(str(exc)) from None
    with stage_run(f"generate_{label}", {**fams, "setup": setup}) as tracker:
        answers = generate_answers(questions, contexts, llm, specs, p.decoding)
        tracker.metrics(llm.stats())
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
