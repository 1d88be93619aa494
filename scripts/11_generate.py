"""Stage 11 generate@FAMILY: one run family (a model x prompt styles x context modes x replicates) over every
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
from finrag.config import params
from finrag.contexts import load_frozen_contexts
from finrag.contracts import Question
from finrag.generate import family_specs, generate_answers, run_stats, shared_backend
from finrag.io import read_jsonl, write_json, write_jsonl
from finrag.llm.backends import make_backend
from finrag.llm.cache import CachedLLM
from finrag.tracking import stage_run


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "--family", required=True, nargs="+", help="one family (the DVC stage) or several sharing a backend"
    )
    args = ap.parse_args()
    p = params("generate")
    unknown = [f for f in args.family if f not in p["families"]]
    if unknown:
        raise SystemExit(
            f"unknown family {unknown}; params.yaml generate.families has {sorted(p['families'])}"
        )
    fams = {name: p["families"][name] for name in args.family}
    backend_name, overrides = shared_backend(fams)
    try:
        setup, contexts = load_frozen_contexts(Path(p["contexts"]), Path(p["chunks_dir"]))
    except (ValueError, FileNotFoundError) as exc:
        raise SystemExit(str(exc)) from None
    questions = [q for q in read_jsonl(Path(p["questions"]), Question) if q.available]
    modes = sorted({mode for fam in fams.values() for mode in fam["contexts"]})
    absent = [(q.qid, m) for q in questions for m in modes if (q.qid, m) not in contexts]
    if absent:
        raise SystemExit(
            f"{len(absent)} question/mode pairs have no frozen context (first {absent[0]}): re-run contexts"
        )
    specs = [spec for name, fam in fams.items() for spec in family_specs(name, fam, p["decoding"])]
    backend = make_backend(backend_name, **{**p["backends"].get(backend_name, {}), **overrides})
    mode = os.environ.get("FINRAG_LLM_MODE", p["cache_mode"])
    label = "+".join(args.family)
    llm = CachedLLM(backend, p["cache_dir"], mode=mode, stage=f"generate_{label}")
    with stage_run(f"11_generate_{label}", {**fams, "setup": setup}) as tracker:
        answers = generate_answers(questions, contexts, llm, specs, p["decoding"])
        tracker.metrics(llm.stats())
    for name in args.family:
        stats = {}
        for spec in (s for s in specs if s.family == name):
            write_jsonl(Path(p["answers_dir"]) / name / f"{spec.run_id}.jsonl", answers[spec.run_id])
            stats[spec.run_id] = run_stats(answers[spec.run_id])
        write_json(
            Path(p["stats_dir"]) / f"generation_{name}.json",
            {"family": name, "runs": dict(sorted(stats.items()))},
        )


if __name__ == "__main__":
    main(run)
