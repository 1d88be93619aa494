"""Stage score: four separate measurements of every answer (correct, grounded, cited, declined) and the
study's tables with 95% intervals -> results/metrics/eval_main.json, per-answer records, plots."""

from __future__ import annotations

import os
from collections import defaultdict
from functools import partial
from pathlib import Path

from _stage import main
from finrag.core.io import read_json, write_json, write_jsonl
from finrag.core.provenance import provenance
from finrag.core.tracking import stage_run
from finrag.generate.run import generation_summary
from finrag.score.evaluate import load_answers, run_scoring
from finrag.score.judges.base import make_judge
from finrag.score.model_grader import CachedLLMGrader, cached_llm
from finrag.score.params import ScoreParams
from finrag.score.plots import write_plots
from finrag.score.tables import run_summary


def run() -> None:
    p = ScoreParams.load()
    family_of = {str(f): fam for fam in p.families for f in (Path(p.answers_dir) / fam).glob("*.jsonl")}
    files = sorted(family_of)
    answers = {f: load_answers([f]) for f in files}  # read once, for the scores and for generation.json
    # the model-backed parts (off by default): the LLM judge on a sample (and the LLM claim splitter on the same
    # answers), the LLM grader where the grader is unsure
    mode = os.environ.get("FINRAG_LLM_MODE", p.cache_mode)
    lspec, gspec, sspec = p.llm_judge or {}, p.llm_grader or {}, p.llm_splitter or {}
    factory = None
    if lspec.get("model"):
        factory = partial(make_judge, llm=cached_llm(lspec["model"], p.cache_dir, mode, "score"))
    splitter_llm = None
    if sspec.get("model"):
        splitter_llm = cached_llm(sspec["model"], p.cache_dir, mode, "score")
    grader = None
    if gspec.get("model"):
        grader = CachedLLMGrader(
            cached_llm(gspec["model"], p.cache_dir, mode, "score"), gspec.get("decoding")
        )
    sensitivity = None
    vspec = p.grader_sensitivity or {}
    if vspec.get("model"):
        sensitivity = CachedLLMGrader(
            cached_llm(vspec["model"], p.cache_dir, mode, "score"), vspec.get("decoding")
        )
    with stage_run("score", p) as tracker:
        result = run_scoring(
            [a for f in files for a in answers[f]],
            Path(p.questions),
            p.as_dict(),
            judge_factory=factory,
            llm_grader=grader,
            llm_splitter_llm=splitter_llm,
            agreement=read_json(Path(p.judge.selected_by)) if p.judge.selected_by else None,
            sensitivity_grader=sensitivity,
        )
        tables = result["tables"]
        if grader is not None:
            tables["llm_grader"] = {
                "model": grader.llm.identity["model"],
                "template_id": grader.template_id,
                **grader.stats,
            }
        if sensitivity is not None:
            tables["grader_sensitivity"].update(
                model=sensitivity.llm.identity["model"],
                template_id=sensitivity.template_id,
                unreadable=sensitivity.stats["unreadable"],
            )
        tracker.metrics({"answers": len(result["records"])})
    scatter = tables.pop("scatter_points")
    write_plots({**tables, "scatter_points": scatter}, Path(p.plots_dir))
    tables["summary"] = run_summary(result["records"])
    prov = provenance("14_score", p, inputs=files)
    tables["_provenance"] = prov
    write_json(Path(p.metrics_out), tables)
    # as dicts, not models: write_jsonl keeps a dict's sorted keys and json.dumps's number format
    write_jsonl(Path(p.records_out), (r.as_json() for r in result["records"]))
    by_family: dict[str, list] = defaultdict(list)
    for f in files:
        by_family[family_of[f]].extend(answers[f])
    write_json(Path(p.generation_out), {**generation_summary(by_family), "_provenance": prov})


if __name__ == "__main__":
    main(run)
