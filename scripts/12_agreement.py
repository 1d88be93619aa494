"""Stage 12 agreement: every judge against human-labelled claims (FinDVer, AttributionBench, ExpertQA, and
finrag's own labels when any exist), with kappa intervals; the forest plot of every kappa."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.agreement import agreement_sample, evaluate_judge_on, summary_table
from finrag.config import mirror_dir, params
from finrag.humanlabels import load_all
from finrag.io import write_json
from finrag.provenance import provenance
from finrag.report.forest import forest_plot
from finrag.scoring.judge import make_judge
from finrag.tracking import stage_run


def run() -> None:
    p = params("agreement")
    mirror = mirror_dir(required=True)
    loaded = load_all(mirror, labels_dir=Path(p["finrag_labels"]))
    items = agreement_sample(loaded, sizes=p["sample_sizes"], seed=p["seed"])
    result: dict = {
        "loaded": {b: ld.summary() for b, ld in sorted(loaded.items())},
        "sample_sizes": p["sample_sizes"],
        "judges": {},
        "summary": [],
    }
    with stage_run("12_agreement", p) as tracker:
        for name in p["judges"]:
            judge = make_judge(name, **p.get("judge_params", {}).get(name, {}))
            res = evaluate_judge_on(items, judge, seed=p["seed"])
            res.pop("records", None)
            result["judges"][name] = res
            for row in summary_table(res):
                result["summary"].append({"judge": name, "pair": f"human vs {name}", **row})
        tracker.metrics({"items": len(items)})
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
        if r["subset"] == "all" or r["benchmark"] == "findver"
    ]
    forest_plot(forest_rows, Path(p["forest_plot"]))
    result["_provenance"] = provenance(
        "12_agreement", p, datasets=["findver", "attributionbench", "expertqa"]
    )
    write_json(Path(p["metrics_out"]), result)


if __name__ == "__main__":
    main(run)
