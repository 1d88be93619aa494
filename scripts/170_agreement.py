"""Stage agreement: every judge against human-labelled claims (FinDVer, AttributionBench, ExpertQA, and
finrag's own labels when any exist), with kappa intervals; judges that call a model (LLM, RAGAS, a second model)
on a nested subsample through the response cache, and against each other (AI vs AI); the forest plot."""

from __future__ import annotations

import os
from pathlib import Path

from _stage import main
from finrag.core.config import mirror_dir
from finrag.core.io import read_json, write_json, write_jsonl
from finrag.core.provenance import provenance
from finrag.core.tracking import stage_run
from finrag.ingest.human_claims import binary, load_all
from finrag.llm.backends.base import backend_from_spec
from finrag.llm.cache import CachedLLM
from finrag.report.forest import agreement_matrix, forest_plot
from finrag.score.judges.base import make_judge
from finrag.trust.judge_agreement import (
    agreement_sample,
    ai_pairs_by_benchmark,
    crossfit_verdicts,
    evaluate_judge_on,
    judge_items,
    model_judge,
    model_judge_sample,
    pair_rows,
    record_model_judges,
    run_claims,
    sampled_rerun_of,
    select_judge,
    select_judge_by_transfer,
    summary_table,
    transfer_kappas,
)
from finrag.trust.params import AgreementParams
from finrag.trust.seed_lesson import judge_parts, resampling_units, seed_lesson


def _human_rows(name: str, res: dict) -> list[dict]:
    return [{**row, "judge": name, "pair": f"human vs {name}"} for row in summary_table(res)]


def _model_judges(p: AgreementParams, items: list, loaded: dict, result: dict, records: dict) -> None:
    mj = p.model_judges
    if mj is None or not mj.runs:
        return
    subset = model_judge_sample(items, mj.sample_sizes, seed=p.seed)
    mode = os.environ.get("FINRAG_LLM_MODE", mj.cache_mode)
    result["model_judges"] = {"sample_sizes": mj.sample_sizes, "n_items": len(subset), "runs": {}}
    backends: dict = {}

    def build(name: str, run: dict) -> tuple:
        """The run's judge over a fresh CachedLLM (its own request counts); backends, and so the loaded model and
        its KV cache, are shared between runs."""
        bname = run["backend"]
        if bname not in backends:
            backends[bname] = backend_from_spec(mj.backends.get(bname), default=bname)
        llm = CachedLLM(backends[bname], mj.cache_dir, mode=mode, stage="agreement")
        judge = model_judge(run, llm)
        judge.name = name
        return judge, llm

    run_items = {name: run_claims(run, subset, items, loaded, seed=p.seed) for name, run in mj.runs.items()}
    if (
        mode != "replay"
    ):  # recording only, claim order chosen for the model's KV cache; the pass below replays
        record_model_judges(run_items, mj.runs, lambda name: build(name, mj.runs[name])[0])
    for name, run in mj.runs.items():
        items_run = run_items[name]
        judge, llm = build(name, run)
        verdicts = judge_items(items_run, judge, chunk=8)
        calibration = None
        if run.get("calibrate") == "crossfit":  # a scoring judge: its cut fitted out of fold on these claims
            cut, calibration = crossfit_verdicts(items_run, [v.detail["score"] for v in verdicts])
            verdicts = [v.model_copy(update={"verdict": c}) for v, c in zip(verdicts, cut, strict=True)]
        res = evaluate_judge_on(items_run, judge, verdicts=verdicts, seed=p.seed)
        if calibration is not None:
            res["calibration"] = calibration
        records[name] = res.pop("records")
        res["model"] = llm.identity["model"]
        res["decoding"] = run.get("decoding")  # None for the log-probability judges (no reply is decoded)
        res["sampled_rerun_of"] = sampled_rerun_of(name, mj.runs)
        res["every_dev_claim"] = run.get("claims") == "all"
        # only what replays identically: requests made (recorded or replayed alike) and the judge's parse counts
        st = llm.stats()
        res["requests"] = st["calls"] + st["hits"]
        res["judge_stats"] = {
            k: v for k, v in (getattr(judge, "stats", {}) or {}).items() if "hit" not in k and k != "calls"
        }
        result["model_judges"]["runs"][name] = res
        result["summary"].extend(_human_rows(name, res))
    result["model_judges"]["pairs"] = {}
    result["model_judges"]["pairs_drawn"] = [f"{a} vs {b}" for a, b in mj.pairs]
    result["model_judges"]["pairs_among"] = list(mj.pairs_among)
    for a, b in mj.all_pairs():
        if a not in records or b not in records:
            raise ValueError(f"agreement.model_judges.pairs / pairs_among: unknown judge in [{a}, {b}]")
        pair_res = ai_pairs_by_benchmark(records, a, b, seed=p.seed)
        result["model_judges"]["pairs"][f"{a}~{b}"] = pair_res
        for r in pair_res:
            result["summary"].extend(pair_rows(a, b, r))
    if mj.pairs_among and p.selection:
        models = {name: res["model"] for name, res in result["model_judges"]["runs"].items()}
        result["model_judges"]["seed_lesson"] = seed_lesson(
            records,
            mj.pairs_among,
            resampling_units([*items, *(it for its in run_items.values() for it in its)]),
            judge_parts(mj.pairs_among, mj.shared_parts, models),
            p.selection.benchmarks,
            seed=p.seed,
        )


def _rates(res: dict) -> dict:
    """Per benchmark: binary kappa with its interval, and how often a claim the experts refuted is supported."""
    out = {}
    for bench, b in sorted(res["benchmarks"].items()):
        (_, _), (fp, tn) = b["binary"]["confusion_matrix"]
        out[bench] = {
            "kappa": b["binary"]["kappa"],
            "kappa_ci": b["binary"]["kappa_ci"],
            "n": b["binary"]["n"],
            "supported_when_refuted": fp / (fp + tn) if fp + tn else None,
        }
    return out


def ablation(spec: dict, p: AgreementParams, items: list, full: dict | None) -> dict:
    """A judge with some params changed, on the same claims, beside the judge as configured."""
    name = spec["judge"]
    judge = make_judge(name, **{**p.judge_params.get(name, {}), **spec.get("params", {})})
    res = evaluate_judge_on(items, judge, seed=p.seed)
    res.pop("records")
    if full is None:
        raise ValueError(f"agreement.ablations: judge {name!r} is not among agreement.judges")
    return {"judge": name, "changed": spec.get("params", {}), "with": _rates(full), "without": _rates(res)}


def run() -> None:
    p = AgreementParams.load()
    mirror = mirror_dir(required=True)
    loaded = load_all(mirror, labels_dir=Path(p.finrag_labels))
    items = agreement_sample(loaded, sizes=p.sample_sizes, seed=p.seed)
    result: dict = {
        "loaded": {b: ld.summary() for b, ld in sorted(loaded.items())},
        "sample_sizes": p.sample_sizes,
        "judges": {},
        "summary": [],
    }
    records: dict[str, list] = {}
    with stage_run("agreement", p) as tracker:
        for name in p.judges:
            judge = make_judge(name, **p.judge_params.get(name, {}))
            res = evaluate_judge_on(items, judge, seed=p.seed)
            records[name] = res.pop("records")
            result["judges"][name] = res
            result["summary"].extend(_human_rows(name, res))
        result["ablations"] = {
            name: ablation(spec, p, items, result["judges"].get(spec["judge"]))
            for name, spec in p.ablations.items()
        }
        _model_judges(p, items, loaded, result, records)
        tracker.metrics({"items": len(items)})
    drawn = {tuple(pair) for pair in (p.model_judges.pairs if p.model_judges else [])}
    forest_rows = [
        {
            "label": f"{r['pair']}: {r['benchmark']}"
            + (f"/{r['subset']}" if r["subset"] != "all" else "")
            + (f" ({r['level']})" if r["level"] != "binary" else ""),
            "kappa": r["kappa"],
            "kappa_ci": r["kappa_ci"],
            "kind": "human" if r["pair"].startswith("human") else "ai",
        }
        for r in result["summary"]
        if (r["subset"] == "all" or r["benchmark"] == "findver") and r["level"] in ("binary", "answer")
        and (r["pair"].startswith("human") or tuple(r["pair"].split(" vs ")) in drawn)
    ]  # fmt: skip
    forest_plot(forest_rows, Path(p.forest_plot))
    if p.matrix_plot and p.model_judges is not None and p.model_judges.pairs_among:
        agreement_matrix(result["summary"], p.model_judges.pairs_among, Path(p.matrix_plot))
    if p.selection:
        result["selected_judge"] = select_judge(
            result["summary"], p.selection.candidates, p.selection.benchmarks
        )
        if p.selection.rule == "transfer":  # the rule in force; the first (dev) rule's pick kept beside it
            sel = p.selection
            assert sel.transfer is not None and sel.cost is not None, (
                "the transfer rule needs transfer and cost"
            )
            loso = read_json(Path(sel.transfer.source))["leave_one_source_out"]
            costs = read_json(Path(sel.cost.source))["judges"]
            result["selected_judge"] = {
                **select_judge_by_transfer(
                    transfer_kappas(loso, sel.transfer.keys, sel.benchmarks),
                    {n: (costs.get(n) or {}).get("cpu_hours_for_study") for n in sel.candidates},
                    sel.candidates,
                    sel.cost.cpu_hours_max,
                    sel.service,
                ),
                "by_first_rule": result["selected_judge"],
            }
    if (
        p.verdicts_out
    ):  # per-claim verdicts of every judge (binary), for the judge-error stage's PPI validation
        write_jsonl(
            Path(p.verdicts_out),
            (
                {"judge": name, "benchmark": r["benchmark"], "item_id": r["item_id"], "human": binary(r["human"]),
                 "verdict": binary(r["judge"])}
                for name, recs in records.items()
                for r in recs
            ),
        )  # fmt: skip
    result["_provenance"] = provenance(
        "12_agreement", p, datasets=["findver", "attributionbench", "expertqa"]
    )
    write_json(Path(p.metrics_out), result)


if __name__ == "__main__":
    main(run)
