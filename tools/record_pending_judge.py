"""Record the calibrated judge on the 1.5B model (`llm_logprob_qwen1.5b`) into `llm_cache/pending/` before it is
declared in params.yaml (see llm_cache/pending/README.md). Runs the agreement stage's own code in auto mode with
its params patched in memory: only this run and its backend, the numeric judge (cheap) instead of the trained ones,
no selection, outputs under /tmp. Resumable: a recorded call is a cache hit on the next start.

    FINRAG_MIRROR=... FINRAG_NO_MLFLOW=1 FINRAG_LLM_MODE=auto .venv/bin/python tools/record_pending_judge.py

Why not declare the run first: its calls would then be a dependency of the agreement and judge_cost stages, and
every committed batch would leave them stale until the whole sample (about 900 calls, ~14 s each on 2 AVX2
cores) is in."""

from __future__ import annotations

import copy
import runpy
import sys
from pathlib import Path

from finrag.core import config

SIZES = {"findver": 300, "attributionbench": 300, "expertqa": 300, "finrag": 0}
RUN = {"judge": "llm_logprob", "backend": "qwen1.5b_logprobs", "params": {"top_logprobs": 20},
       "calibrate": "crossfit", "sample_sizes": SIZES}  # fmt: skip
_params_file = config._params_file


def patched(path: str) -> dict:
    data = copy.deepcopy(_params_file(path))
    a = data["agreement"]
    a["judges"] = ["numeric"]
    a.pop("selection", None)
    a.update(
        metrics_out="/tmp/finrag_pending/judge_agreement.json", forest_plot="/tmp/finrag_pending/forest.png"
    )
    a["matrix_plot"] = None
    mj = a["model_judges"]
    # the 1.5B judge's own backend, keeping every prompt token's logits (llama-cpp-python's log-probabilities)
    backend = {**mj["backends"]["qwen1.5b"], "logits_all": True}
    mj.update(
        cache_dir="llm_cache/pending", backends={"qwen1.5b_logprobs": backend}, pairs=[], pairs_among=[]
    )
    mj["runs"] = {"llm_logprob_qwen1.5b": RUN}
    return data


if __name__ == "__main__":
    config._params_file = patched
    Path("/tmp/finrag_pending").mkdir(parents=True, exist_ok=True)
    sys.path.insert(0, str(Path("scripts").resolve()))
    sys.argv = ["scripts/170_agreement.py"]
    runpy.run_path("scripts/170_agreement.py", run_name="__main__")
