"""The batch executor: the local path and Ray actors fill the response cache with the same entries in the same
order, and the stage's answers (written by replaying the cache) are the same either way. The Ray test starts a
real local Ray instance with 2 CPUs (about 20 s on 2 cores)."""

from __future__ import annotations

import os

# Under `uv run`, Ray's uv hook starts each worker with `uv run` again (a re-sync per worker, which fails in a clean
# CI clone); the workers should use this process's environment. Set before Ray is imported.
os.environ.setdefault("RAY_ENABLE_UV_RUN_RUNTIME_ENV", "0")

import json  # noqa: E402
from functools import partial

import pytest

from finrag.core.contracts import Evidence
from finrag.generate.run import RunSpec, generate_answers, plan_calls
from finrag.llm.backends.base import make_backend
from finrag.llm.backends.extractive import ExtractiveBackend
from finrag.llm.cache import CachedLLM
from finrag.llm.executor import (
    ExecutorError,
    ModelCall,
    batches_of,
    executor_name,
    missing_calls,
    record_on_ray,
)
from finrag.retrieve.contexts import ContextBuilder
from test_generate import CHUNKS, Q, fake_rank

DEC = {"temperature": 0.0, "max_tokens": 64, "seed": 0}
SPECS = [RunSpec("ex-plain-retrieved", "plain", "retrieved"), RunSpec("ex-quote-oracle", "quote@2", "oracle")]


def _study():
    builder = ContextBuilder(CHUNKS, fake_rank, k=3)
    qs = [Q]
    for i, (doc, page) in enumerate([("B", 0), ("A", 1), ("B", 1), ("A", 3)]):
        qs.append(Q.model_copy(update={"qid": f"q{i + 2}", "question": f"What did {doc} report on page {page}?",
                                       "doc_ids": [doc], "evidence": [Evidence(doc_id=doc, page=page)]}))  # fmt: skip
    contexts = {(q.qid, m): builder.build(q, m) for q in qs for m in ("retrieved", "oracle")}
    return qs, contexts


def _entries(cache_dir):
    """Every cache line as recorded, without what differs from run to run (timing, creation time)."""
    out = []
    for f in sorted(cache_dir.rglob("*.jsonl")):
        for line in f.read_text(encoding="utf-8").splitlines():
            e = json.loads(line)
            for k in ("created", "latency_s", "response_sha256"):  # timing, and the checksum over it
                e.pop(k, None)
            e["response"].pop("latency_s", None)
            out.append((f.name, e))
    return out


def _answers(out):
    return {run: [a.model_dump(exclude={"latency_s"}) for a in answers] for run, answers in out.items()}


def test_executor_names_and_batches(monkeypatch):
    assert executor_name(None) == "local"
    monkeypatch.setenv("FINRAG_EXECUTOR", "Ray")
    assert executor_name(None) == "ray"
    with pytest.raises(ExecutorError, match="expected one of local, ray"):
        executor_name("spark")
    calls = [ModelCall([{"role": "user", "content": str(i)}], DEC, group=g) for i, g in enumerate("aaabbc")]
    todo = [(c, {}, str(i)) for i, c in enumerate(calls)]
    assert [[k for _, _, k in b] for b in batches_of(todo, 2)] == [["0", "1"], ["2"], ["3", "4"], ["5"]]


def test_missing_calls_skip_what_is_cached_and_repeats(tmp_path):
    qs, contexts = _study()
    llm = CachedLLM(ExtractiveBackend(), tmp_path, mode="auto", stage="t")
    calls = [c for *_, c in plan_calls(qs, contexts, SPECS, DEC)]
    assert len(missing_calls(llm, [*calls, calls[0]])) == len(calls)  # a repeated request is asked once
    generate_answers(qs[:2], contexts, llm, SPECS, DEC, progress=False)
    assert len(missing_calls(llm, calls)) == len(calls) - 4


def test_ray_refuses_to_replay(tmp_path):
    llm = CachedLLM(ExtractiveBackend().identity(), tmp_path, mode="replay", stage="t")
    with pytest.raises(ExecutorError, match="FINRAG_LLM_MODE=auto"):
        record_on_ray(llm, [], ExtractiveBackend)


def test_ray_actors_record_what_the_local_path_records(tmp_path):
    pytest.importorskip("ray", reason="the ray extra is not installed (uv sync --extra ray)")
    qs, contexts = _study()
    local = CachedLLM(ExtractiveBackend(), tmp_path / "local", mode="auto", stage="generate_x")
    by_local = generate_answers(qs, contexts, local, SPECS, DEC, progress=False)

    on_ray = CachedLLM(ExtractiveBackend(), tmp_path / "ray", mode="auto", stage="generate_x")
    # one question already recorded: a resumed run asks Ray only for the rest
    generate_answers(qs[:1], contexts, on_ray, SPECS, DEC, progress=False)
    calls = [c for *_, c in plan_calls(qs, contexts, SPECS, DEC)]
    summary = record_on_ray(
        on_ray, calls, partial(make_backend, "extractive"), workers=2, batch_size=1, progress=False
    )
    assert summary["missing"] == summary["recorded"] == len(calls) - 2
    assert _entries(tmp_path / "ray") == _entries(tmp_path / "local")  # same entries, same files, same order

    replay = CachedLLM(ExtractiveBackend().identity(), tmp_path / "ray", mode="replay", stage="generate_x")
    by_ray = generate_answers(qs, contexts, replay, SPECS, DEC, progress=False)
    assert replay.calls == 0 and _answers(by_ray) == _answers(by_local)
    # nothing missing: Ray is not even started
    assert record_on_ray(on_ray, calls, partial(make_backend, "extractive"), progress=False)["missing"] == 0
