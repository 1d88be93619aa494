"""What each judge costs on the study's own claims, for the selection rule's bound ("scores every study claim within
N CPU-hours"): judges without a model are timed on a seeded sample of the study's answers (CPU time of the process,
all threads, and wall time); a model judge's cost is read from its recorded calls (their latency times the model's
threads), since replay calls no model. A measurement: its file is re-written only when its code changes."""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import ClassVar

from finrag.core.contracts import Answer
from finrag.core.io import read_jsonl
from finrag.core.params import Spec, StageParams
from finrag.score.claims import passage_texts, split_claims


class JudgeCostParams(StageParams):
    section: ClassVar[str] = "judge_cost"
    answers_dir: str
    families: list[str]  # every answer family the study's judge scores
    judges: dict[str, Spec]  # judge name -> its params (the agreement stage's)
    model_judges: dict[str, Spec]  # judge name -> {template_id, model, threads}: cost from the recorded calls
    cache_dir: str
    sample_answers: int
    seed: int
    out: str


WARM_UP_CLAIM = "Revenue was $1.0 million in fiscal 2020."


def study_claims(answers: Iterable[Answer]) -> list[tuple[list[str], list[str]]]:
    """Every answer's claims (the score stage's split) with the passages it saw: one judge batch per answer, as the
    score stage asks (a judge may then reuse its work on the passages across an answer's claims)."""
    return [
        (texts, passage_texts(a.passages))
        for a in answers
        if (texts := [c.text for c in split_claims(a.text)])
    ]


def time_judge(judge, batches: Sequence[tuple[list[str], list[str]]]) -> dict:
    """CPU seconds (this process, every thread) and wall seconds to judge every batch's claims."""
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for claims, passages in batches:
        judge.judge_batch(claims, [passages] * len(claims), [f"cost{i}" for i in range(len(claims))])
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    n = sum(len(c) for c, _ in batches)
    return {"claims_timed": n, "cpu_seconds": round(cpu, 2), "wall_seconds": round(wall, 2),
            "cpu_seconds_per_claim": round(cpu / n, 5) if n else None}  # fmt: skip


def recorded_model_cost(cache_dir: Path, template_id: str, model: str, threads: int) -> dict:
    """A model judge's cost per claim from its recorded calls (the shards under `cache_dir`, the agreement stage's
    cache): mean latency times the threads the model ran on. The days the calls were recorded come with it: calls
    recorded in other sessions ran on other machines (the CPU is not in the cache), so the figure is theirs."""
    calls = [
        e
        for f in sorted(Path(cache_dir).rglob("*.jsonl"))
        for e in read_jsonl(f, torn_tail=True)
        if e.get("request", {}).get("template_id") == template_id
        and e.get("request", {}).get("model") == model
    ]
    if not calls:
        return {"recorded_calls": 0, "cpu_seconds_per_claim": None}
    latencies = [float(e.get("latency_s") or 0.0) for e in calls]
    days = sorted({str(e.get("created") or "")[:10] for e in calls} - {""})
    mean = sum(latencies) / len(latencies)
    return {"recorded_calls": len(latencies), "mean_latency_s": round(mean, 3), "threads": threads,
            "cpu_seconds_per_claim": round(mean * threads, 3), "recorded_days": days}  # fmt: skip


def measure(p: JudgeCostParams, make_judge) -> dict:
    answers = [
        a for fam in p.families for f in sorted((Path(p.answers_dir) / fam).glob("*.jsonl")) for a in read_jsonl(f, Answer)
    ]  # fmt: skip
    n_claims = sum(len(c) for c, _ in study_claims(answers))
    sample = random.Random(p.seed).sample(answers, min(p.sample_answers, len(answers)))
    timed = study_claims(sample)
    if not timed:
        raise ValueError(
            f"judge_cost: the {len(sample)} sampled answers of {p.families} make no claim: nothing to time"
        )
    out: dict = {"study_answers": len(answers), "study_claims": n_claims, "judges": {}}
    for name, params in p.judges.items():
        judge = make_judge(name, **dict(params))
        # load its model outside the timing, on a claim that is not in the sample (a judge that caches would
        # otherwise time a claim it has already seen)
        judge.judge_batch([WARM_UP_CLAIM], [[WARM_UP_CLAIM]], ["warm-up"])
        out["judges"][name] = time_judge(judge, timed)
    for name, spec in p.model_judges.items():
        out["judges"][name] = recorded_model_cost(
            Path(p.cache_dir), spec["template_id"], spec["model"], int(spec["threads"])
        )
    for row in out["judges"].values():
        per = row["cpu_seconds_per_claim"]
        row["cpu_hours_for_study"] = round(per * n_claims / 3600, 3) if per is not None else None
    return out
