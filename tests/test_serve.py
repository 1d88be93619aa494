"""The service (finrag.serve) on a tiny study tree: the selected system's answers as evaluated and live, bad input
(422), a replay miss (409), a full queue (503 + Retry-After), timeouts (504), API keys (401/429), Prometheus
metrics, the OpenAPI schema, and no recorded call lost when the process is killed."""

from __future__ import annotations

import json
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import yaml
from fastapi.testclient import TestClient
from prometheus_client import generate_latest

from factories import page_chunk
from finrag.core.contracts import Chunk, Document, Evidence, Question
from finrag.core.io import write_json, write_jsonl
from finrag.retrieve.contexts import ContextBuilder, freeze_contexts
from finrag.score.judge_trust import judge_trust
from finrag.serve.app import create_app
from finrag.serve.system import SelectedSystem, ServeError, ServeParams

REPO = Path(__file__).resolve().parents[1]


def _chunk(doc: str, page: int, text: str) -> Chunk:
    return page_chunk(doc, page, text, chunk_id=f"{doc}:{page}")


CHUNKS = [
    _chunk("ACME_2019_10K", 0, "ACME Corp annual report 2019. Table of contents."),
    _chunk(
        "ACME_2019_10K",
        1,
        "Net income of ACME was $700 million in fiscal 2019, up from $600 million in 2018.",
    ),
    _chunk("ACME_2019_10K", 2, "Revenue of ACME was $5,000 million in fiscal 2019."),
    _chunk("BETA_2019_10K", 0, "Beta Inc reported revenue of $900 million in fiscal 2019."),
    _chunk("BETA_2019_10K", 1, "Beta Inc capital expenditure was $120 million in 2019."),
]
QUESTIONS = [
    Question(
        qid="fb1", question="What was ACME's net income in fiscal 2019?", answer="$700 million",
        doc_ids=["ACME_2019_10K"], company="ACME", period="2019", question_type="metrics-generated",
        evidence=[Evidence(doc_id="ACME_2019_10K", page=1)],
    ),
    Question(
        qid="fb2", question="What was Beta's revenue in fiscal 2019?", answer="$900 million",
        doc_ids=["BETA_2019_10K"], company="Beta", period="2019", question_type="metrics-generated",
        evidence=[Evidence(doc_id="BETA_2019_10K", page=0)],
    ),
]  # fmt: skip
DOCUMENTS = [
    Document(doc_id="ACME_2019_10K", company="ACME", form="10-K", period="2019"),
    Document(doc_id="BETA_2019_10K", company="Beta", form="10-K", period="2019"),
]
AGREEMENT = {
    "judges": {
        "numeric": {
            "benchmarks": {
                "findver": {
                    "binary": {"kappa": 0.16, "kappa_ci": [0.06, 0.26], "n": 358, "balanced_accuracy": 0.58}
                },
                "expertqa": {"binary": {"kappa": 0.06, "kappa_ci": [-0.02, 0.14], "n": 400}},
            }
        }
    },
    "selected_judge": {"selected": "study"},
}


def _rank(query: str, k: int, allowed):
    """The frozen ranking of the tiny study: the question's own company first."""
    order = [1, 2, 0, 3, 4] if "ACME" in query else [3, 4, 0, 1, 2]
    return [(i, 1.0 / (r + 1)) for r, i in enumerate(order) if allowed is None or i in allowed][:k]


def build_study(root: Path, embedder: str = "mpnet", vectors: bool = False) -> Path:
    """A study tree with the files the service reads: params, the selected system and setup, questions, chunks,
    frozen contexts, documents, the judge's agreement, an empty response cache; with `vectors`, the chunks
    embedded by the real packaged `embedder` (the embed stage's output)."""
    # the tiny study is judged by the numeric judge (no trained verifier in it); the service with the study's own
    # judge, the trained verifier, is tested on the real study in test_serve_faithful.py
    params = yaml.safe_load((REPO / "params.yaml").read_text(encoding="utf-8"))
    params["score"]["judge"] = {"name": "numeric", "params": params["agreement"]["judge_params"]["numeric"]}
    (root / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False), encoding="utf-8")
    write_jsonl(root / "data/questions/all.jsonl", QUESTIONS)
    write_jsonl(root / "data/chunks/page.jsonl", CHUNKS)
    write_jsonl(root / "data/corpus/documents.jsonl", DOCUMENTS)
    builder = ContextBuilder(CHUNKS, _rank, k=5)
    frozen = freeze_contexts(
        QUESTIONS, ["retrieved", "oracle"], builder, f"page/{embedder}/dense", progress=False
    )
    write_jsonl(root / "results/contexts.jsonl", frozen)
    setup = {"chunker": "page", "embedder": embedder, "method": "dense"}
    write_json(root / "results/selected_setup.json", setup)
    if vectors:
        import numpy as np

        from finrag.retrieve.embedding import make_embedder

        (root / "data/embeddings/page").mkdir(parents=True)
        vecs = make_embedder(embedder).embed_passages([c.text for c in CHUNKS])
        np.save(root / f"data/embeddings/page/{embedder}.npy", vecs)
    system = {
        "backend": "extractive", "context_mode": "retrieved", "generator": "extractive/best-line-of-passage-1",
        "model": "best-line-of-passage-1", "prompt_style": "plain", "run_ids": ["extractive-retrieved"],
        "series": "extractive-retrieved",
    }  # fmt: skip
    write_json(root / "results/metrics/eval_main.json", {"final_system": {"system": system}})
    write_json(root / "results/metrics/judge_agreement.json", AGREEMENT)
    (root / "llm_cache").mkdir()
    return root


@pytest.fixture
def study(tmp_path, monkeypatch) -> Path:
    monkeypatch.delenv("FINRAG_LLM_MODE", raising=False)
    monkeypatch.delenv("FINRAG_SERVE_BACKEND", raising=False)
    monkeypatch.delenv("FINRAG_API_KEYS", raising=False)
    monkeypatch.delenv("FINRAG_SERVE_QDRANT", raising=False)
    return build_study(tmp_path)


def _system(root: Path, **serve) -> SelectedSystem:
    return SelectedSystem(root, ServeParams(**serve))


def _client(root: Path, **serve) -> TestClient:
    return TestClient(create_app(_system(root, **serve)))


# ------------------------------------------------------------------------------------------------ the system


def test_an_evaluated_question_gets_its_frozen_passages_and_the_studys_record(study):
    system = _system(study)
    assert system.setup_name == "page/mpnet/dense" and system.family_name == "extractive"
    out = system.answer("What was ACME's net income in fiscal 2019?")
    assert out["source"] == "evaluation" and out["qid"] == "fb1"
    assert out["system"]["run_id"] == "extractive-retrieved"
    assert [p["chunk_id"] for p in out["passages"]] == ["ACME_2019_10K:1", "ACME_2019_10K:2", "ACME_2019_10K:0", "BETA_2019_10K:0", "BETA_2019_10K:1"]  # fmt: skip
    assert "$700 million" in out["answer"]
    assert out["correctness"]["correct"] is True and out["correctness"]["gold"] == "$700 million"
    assert out["record"]["qid"] == "fb1" and out["record"]["run_id"] == "extractive-retrieved"
    assert out["groundedness"] == out["record"]["groundedness"] and out["n_claims"] >= 1
    supported = [c for c in out["claims"] if c["verdict"] == "supported"]
    assert supported, out["claims"]
    for c in supported:  # the span the judge quoted lies in the passage it names
        if c["passage"] is not None:
            text = out["passages"][c["passage"] - 1]["text"]
            assert (
                c["evidence"].split(" … ")[0].strip() in text[c["start"] : c["end"] + 1]
                or text[c["start"] : c["end"]]
            )
    for cit in out["citations"]:
        assert cit["status"] == "ok" and cit["doc_id"] == "ACME_2019_10K"
    assert out["judge"]["judge"] == "numeric"
    assert {r["benchmark"] for r in out["judge"]["agreement"]} == {"findver", "expertqa"}
    assert "0.060 (expertqa)" in out["judge"]["note"] and "'study'" in out["judge"]["note"]
    assert set(out["timing_ms"]) == {"retrieval", "generation", "judging"}


def test_a_question_not_asked_as_evaluated_is_answered_live_with_the_fallback_search_named(study):
    system = _system(study)
    assert system.retrieval["method"] == "bm25" and "mpnet.npy is absent" in system.retrieval["fallback"]
    live = system.answer("How much did Beta spend on capital expenditure in 2019?", top_k=2)
    assert live["source"] == "live" and live["qid"] is None and live["correctness"] is None
    assert len(live["passages"]) == 2 and live["passages"][0]["doc_id"] == "BETA_2019_10K"
    assert "$120 million" in live["answer"]
    assert live["record"]["n_claims"] == live["n_claims"]
    # a benchmark question with another k is graded against its gold, but flagged as not evaluated
    other_k = system.answer("What was ACME's net income in fiscal 2019?", top_k=2)
    assert other_k["source"] == "live" and other_k["correctness"]["note"]
    filtered = system.answer("What was Beta's revenue in fiscal 2019?", use_filter=True)
    assert filtered["retrieval"]["filtered"] is True
    assert {p["doc_id"] for p in filtered["passages"]} == {"BETA_2019_10K"}


@pytest.mark.slow
def test_live_search_is_dense_over_the_embed_stages_vectors_in_faiss_or_qdrant(tmp_path, monkeypatch):
    monkeypatch.delenv("FINRAG_LLM_MODE", raising=False)
    monkeypatch.delenv("FINRAG_SERVE_QDRANT", raising=False)
    root = build_study(tmp_path, embedder="minilm", vectors=True)
    question = "How much did Beta Inc spend on capital expenditure?"
    faiss = _system(root)
    assert faiss.retrieval["fallback"] is None and faiss.retrieval["store"] == {"kind": "faiss"}
    dense = faiss.answer(question, top_k=3)
    assert dense["retrieval"]["method"] == "dense" and dense["passages"][0]["chunk_id"] == "BETA_2019_10K:1"
    monkeypatch.setenv("FINRAG_SERVE_QDRANT", str(tmp_path / "qdrant"))
    qdrant = _system(root)
    assert qdrant.retrieval["store"] == {"kind": "qdrant", "path": str(tmp_path / "qdrant")}
    again = qdrant.answer(question, top_k=3)
    assert [p["chunk_id"] for p in again["passages"]] == [p["chunk_id"] for p in dense["passages"]]
    assert [round(p["score"], 4) for p in again["passages"]] == [
        round(p["score"], 4) for p in dense["passages"]
    ]


def test_a_qid_must_exist_and_match_its_text(study):
    system = _system(study)
    with pytest.raises(ServeError) as e:
        system.answer("anything", qid="nope")
    assert e.value.status == 404
    with pytest.raises(ServeError) as e:
        system.answer("What was Beta's revenue in fiscal 2019?", qid="fb1")
    assert e.value.status == 422


def test_replay_refuses_a_miss_with_409_and_replays_what_auto_recorded(study, monkeypatch):
    q = "Which company reported revenue of $900 million?"
    recorded = _system(study).answer(q)  # auto: recorded under llm_cache/serve
    assert recorded["cache"]["hit"] is False
    monkeypatch.setenv("FINRAG_LLM_MODE", "replay")
    replay = _system(study)
    again = replay.answer(q)
    assert again["cache"]["hit"] is True and again["answer"] == recorded["answer"]
    assert replay.llm.calls == 0
    with pytest.raises(ServeError) as e:
        replay.answer("A question nobody asked before?")
    assert e.value.status == 409 and "replays only" in e.value.message


def test_missing_study_files_are_named():
    with pytest.raises(FileNotFoundError, match="eval_main.json is missing"):
        SelectedSystem(Path("/nonexistent-finrag-root"), ServeParams(), params_file=REPO / "params.yaml")


def test_trust_rows_are_read_from_the_agreement_file_and_say_when_nothing_was_measured():
    t = judge_trust(AGREEMENT, "numeric")
    assert [r["kappa"] for r in t["agreement"]] == [0.06, 0.16] and t["agreement"][1]["kappa_ci"] == [
        0.06,
        0.26,
    ]
    assert "slight" in t["note"]
    assert judge_trust({}, "numeric")["note"].startswith("no measured agreement")


# ------------------------------------------------------------------------------------------------ the app


def test_answer_endpoint_returns_the_answer_with_scores_and_memoises_it(study):
    with _client(study) as client:
        r = client.post("/v1/answer", json={"question": "What was ACME's net income in fiscal 2019?"})
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["source"] == "evaluation" and body["fully_grounded"] in (True, False)
        assert r.headers["x-finrag-memo"] == "miss"
        r2 = client.post("/v1/answer", json={"question": "What was ACME's net income in fiscal 2019?"})
        assert r2.headers["x-finrag-memo"] == "hit" and r2.json() == body
        qs = client.get("/v1/questions").json()["questions"]
        assert [q["qid"] for q in qs] == ["fb1", "fb2"]
        info = client.get("/v1/system").json()
        assert info["setup"]["method"] == "dense" and info["retrieval"]["method"] == "bm25"
        metrics = client.get("/metrics").text
        assert 'finrag_answer_memo_total{result="hit"} 1.0' in metrics
        assert 'finrag_stage_seconds_count{stage="judging"} 1.0' in metrics
        assert 'finrag_requests_total{endpoint="/v1/answer",status="200"} 2.0' in metrics
        assert 'finrag_llm_cache_total{result="miss"} 1.0' in metrics
        assert 'finrag_model_calls_total{backend="extractive"} 1.0' in metrics
        assert "finrag_spend_usd_total" in metrics
        page = client.get("/")
        assert page.status_code == 200 and 'id="ask"' in page.text
        assert client.get("/static/app.js").status_code == 200


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"question": ""}, "must not be empty"),
        ({"question": "   "}, "must not be empty"),
        ({"question": "x" * 2001}, "at most 2000"),
        ({"question": "q?", "top_k": 0}, "top_k"),
        ({"question": "q?", "top_k": 51}, "above the maximum 50"),
        ({"question": "q?", "top_k": "5"}, "top_k"),
        ({"question": 5}, "question"),
        ({"question": "q?", "filter": "yes"}, "filter"),
        ({"top_k": 5}, "question"),
        ({"question": "q?", "extra": 1}, "extra"),
    ],
)
def test_bad_input_gets_422_with_a_clear_message_and_the_service_stays_up(study, payload, message):
    with _client(study) as client:
        r = client.post("/v1/answer", json=payload)
        assert r.status_code == 422 and message in r.json()["error"], r.text
        bad_json = client.post(
            "/v1/answer", content=b"{not json", headers={"content-type": "application/json"}
        )
        assert bad_json.status_code == 422 and "error" in bad_json.json()
        assert client.get("/healthz").json() == {"status": "ok"}
        assert (
            client.post(
                "/v1/answer", json={"question": "What was Beta's revenue in fiscal 2019?"}
            ).status_code
            == 200
        )


def test_replay_miss_is_409_over_http(study, monkeypatch):
    monkeypatch.setenv("FINRAG_LLM_MODE", "replay")
    with _client(study) as client:
        r = client.post("/v1/answer", json={"question": "Something never recorded?"})
        assert r.status_code == 409 and "replays only" in r.json()["error"]


class _SlowSystem:
    """Stands in for SelectedSystem.answer with a gate, to fill the queue."""

    def __init__(self, system: SelectedSystem, gate: threading.Event, delay: float = 0.0):
        self._system, self.gate, self.delay = system, gate, delay

    def __call__(self, question, top_k=None, use_filter=None, qid=None):
        self.gate.wait(10)
        time.sleep(self.delay)
        return self._system.__class__.answer(self._system, question, top_k, use_filter, qid)


def test_a_full_queue_turns_requests_away_with_503_and_retry_after(study):
    import asyncio

    system = _system(study, queue={"workers": 1, "max_waiting": 1, "retry_after_s": 3})
    gate = threading.Event()
    system.answer = _SlowSystem(system, gate)  # type: ignore[method-assign]
    app = create_app(system)

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            qs = [f"Question number {i}?" for i in range(4)]
            tasks = [asyncio.create_task(client.post("/v1/answer", json={"question": q})) for q in qs]
            await asyncio.sleep(0.3)
            gate.set()
            return await asyncio.gather(*tasks)

    app.state.service.load()
    responses = asyncio.run(scenario())
    codes = sorted(r.status_code for r in responses)
    assert codes == [200, 200, 503, 503], [r.text for r in responses]
    busy = next(r for r in responses if r.status_code == 503)
    assert busy.headers["retry-after"] == "3" and "busy" in busy.json()["error"]


def test_an_answer_past_its_deadline_gets_504_and_the_worker_is_kept_until_it_ends(study):
    system = _system(study, timeout_s=0.2)
    gate = threading.Event()
    gate.set()
    system.answer = _SlowSystem(system, gate, delay=0.6)  # type: ignore[method-assign]
    with TestClient(create_app(system)) as client:
        r = client.post("/v1/answer", json={"question": "Slow question?"})
        assert r.status_code == 504 and "serve.timeout_s" in r.json()["error"]
        assert 'finrag_rejected_total{reason="timeout"} 1.0' in client.get("/metrics").text


def test_api_keys_are_required_when_set_and_rate_limited_per_key(study, monkeypatch):
    monkeypatch.setenv("FINRAG_API_KEYS", "k1, k2")
    with _client(study, rate_limit_per_minute=2) as client:
        q = {"question": "What was Beta's revenue in fiscal 2019?"}
        assert client.post("/v1/answer", json=q).status_code == 401
        assert client.post("/v1/answer", json=q, headers={"Authorization": "Bearer wrong"}).status_code == 401
        assert client.post("/v1/answer", json=q, headers={"Authorization": "Bearer k1"}).status_code == 200
        assert client.post("/v1/answer", json=q, headers={"X-API-Key": "k1"}).status_code == 200
        limited = client.post("/v1/answer", json=q, headers={"X-API-Key": "k1"})
        assert limited.status_code == 429 and int(limited.headers["retry-after"]) >= 1
        assert client.post("/v1/answer", json=q, headers={"X-API-Key": "k2"}).status_code == 200
        assert client.get("/healthz").status_code == 200  # probes need no key
        assert client.get("/v1/questions").status_code == 401


def test_readiness_waits_for_the_system_and_reports_a_failed_load(study):
    gate = threading.Event()

    def loader():
        gate.wait(10)
        return _system(study)

    with TestClient(create_app(loader)) as client:
        assert client.get("/healthz").status_code == 200
        r = client.get("/readyz")
        assert r.status_code == 503 and r.json()["status"] == "loading"
        assert client.post("/v1/answer", json={"question": "q?"}).status_code == 503
        gate.set()
        for _ in range(100):
            if client.get("/readyz").status_code == 200:
                break
            time.sleep(0.05)
        assert client.get("/readyz").json()["status"] == "ready"

    def broken():
        raise FileNotFoundError("results/metrics/eval_main.json is missing")

    with TestClient(create_app(broken, ServeParams(), background_load=False)) as client:
        r = client.get("/readyz")
        assert r.status_code == 503 and "eval_main.json is missing" in r.json()["error"]
        assert "failed to load" in client.post("/v1/answer", json={"question": "q?"}).json()["error"]


def test_openapi_schema_documents_the_answer_request(study):
    with _client(study) as client:
        schema = client.get("/openapi.json").json()
    paths = schema["paths"]
    assert {"/v1/answer", "/v1/questions", "/v1/system", "/healthz", "/readyz", "/metrics"} <= set(paths)
    request = schema["components"]["schemas"]["AnswerRequest"]
    assert request["required"] == ["question"] and request["additionalProperties"] is False
    assert request["properties"]["top_k"]["anyOf"][0]["minimum"] == 1
    assert set(paths["/v1/answer"]) == {"post"}


# ------------------------------------------------------------------------------------------------ a killed process


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_a_killed_server_loses_no_recorded_call(study):
    """Answer live in a real uvicorn process, SIGKILL it, and replay the same question from the cache."""
    port = _free_port()
    code = (
        "import sys, uvicorn; from pathlib import Path; from finrag.serve.app import create_app; "
        "from finrag.serve.system import SelectedSystem, ServeParams; "
        f"uvicorn.run(create_app(SelectedSystem(Path({str(study)!r}), ServeParams())), host='127.0.0.1', port={port}, log_level='error')"
    )
    env = {**os.environ, "FINRAG_LLM_MODE": "auto"}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, cwd=study)
    q = {"question": "What did Beta Inc spend on capital expenditure?"}
    try:
        for _ in range(200):
            try:
                if httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        r = httpx.post(f"http://127.0.0.1:{port}/v1/answer", json=q, timeout=30)
        assert r.status_code == 200 and r.json()["cache"]["hit"] is False
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    os.environ["FINRAG_LLM_MODE"] = "replay"
    try:
        again = _system(study).answer(q["question"])
    finally:
        del os.environ["FINRAG_LLM_MODE"]
    assert again["cache"]["hit"] is True and again["answer"] == r.json()["answer"]
    assert json.loads(json.dumps(again["record"])) == r.json()["record"]


# ------------------------------------------------------------------------------------------------ other backends


def _with_simulated(monkeypatch, name: str, **inject):
    """FINRAG_SERVE_BACKEND=name, its settings from params.yaml, talking to a local simulator (no network)."""
    import finrag.llm.backends.base as backends

    real = backends.make_backend
    monkeypatch.setenv("FINRAG_SERVE_BACKEND", name)
    monkeypatch.setattr(backends, "make_backend", lambda n, **kw: real(n, **{**kw, **inject}))


def test_live_answers_through_ollama_are_recorded_then_replayed(study, monkeypatch):
    from finrag.llm.simulators import OllamaSimulator

    sim = OllamaSimulator()
    _with_simulated(monkeypatch, "ollama", transport=sim.transport("httpx"))
    system = _system(study)
    assert system.backend_name == "ollama" and not system.is_selected_backend
    out = system.answer("What was ACME's net income in fiscal 2019?")
    # a benchmark question through another backend is live (not the evaluated answer), still graded
    assert out["source"] == "live" and out["system"]["backend"] == "ollama" and len(sim.requests) == 1
    assert out["correctness"]["note"] and out["judge"]["judge"] == "numeric"
    monkeypatch.setenv("FINRAG_LLM_MODE", "replay")
    again = _system(study).answer("What was ACME's net income in fiscal 2019?")
    assert again["cache"]["hit"] is True and again["answer"] == out["answer"] and len(sim.requests) == 1


def test_a_paid_backend_over_its_spending_cap_gets_503(study, monkeypatch):
    from finrag.llm.simulators import AnthropicSimulator

    sim = AnthropicSimulator()
    _with_simulated(monkeypatch, "anthropic", http_client=sim.http_client(), cap_usd=0.0)
    with _client(study) as client:
        r = client.post("/v1/answer", json={"question": "What was Beta's revenue in fiscal 2019?"})
        assert r.status_code == 503 and "spending cap" in r.json()["error"]
        assert not sim.requests  # refused before the API is contacted
        assert client.get("/healthz").status_code == 200


def test_a_failing_backend_gets_502_and_the_service_stays_up(study, monkeypatch):
    from finrag.llm.simulators import OpenAISimulator

    sim = OpenAISimulator(fail=[500] * 10)
    _with_simulated(monkeypatch, "openai_compat", http_client=sim.http_client(), max_retries=1)
    with _client(study) as client:
        r = client.post("/v1/answer", json={"question": "What was Beta's revenue in fiscal 2019?"})
        assert r.status_code == 502 and "backend failed" in r.json()["error"]
        assert client.get("/readyz").status_code == 200


def test_a_restart_after_live_answers_is_not_blocked_by_the_judges_logit_file(study):
    """The verifier's live logits once lay among the response cache's shards, and the next start refused them
    as a corrupt cache entry: they now live under judge_cache/serve/, and a file left by an earlier version is
    moved there when the service starts."""
    from finrag.serve.system import LIVE_LOGITS, live_logits_path

    old = study / "llm_cache" / "serve" / "verifier_logits.jsonl"
    old.parent.mkdir(parents=True)
    old.write_text('{"key": "abc", "logit": 0.5}\n', encoding="utf-8")
    os.environ["FINRAG_LLM_MODE"] = "auto"
    try:
        first = _system(study).answer("What did Beta Inc spend on capital expenditure?")
        assert not old.exists() and (study / LIVE_LOGITS).exists()
        # a second start (after live answers were recorded) loads the response cache and replays the answer
        again = _system(study).answer("What did Beta Inc spend on capital expenditure?")
    finally:
        del os.environ["FINRAG_LLM_MODE"]
    assert again["cache"]["hit"] is True and again["answer"] == first["answer"]
    assert live_logits_path(study, "llm_cache") == study / LIVE_LOGITS
    assert (study / LIVE_LOGITS).read_text(encoding="utf-8").count("\n") == 1


# ------------------------------------------------------------------------------------------------ text at the boundary


def _errors(caplog) -> list:
    return [rec for rec in caplog.records if rec.levelno >= logging.ERROR]


def _one_line_json(r: httpx.Response) -> dict:
    """The reply is one line of strict UTF-8 JSON (no lone surrogate, no control character as itself)."""
    text = r.content.decode("utf-8")  # strict: a lone surrogate could not have been encoded
    assert "\n" not in text.strip() and "\x00" not in text, text
    return json.loads(text)


@pytest.mark.parametrize(
    ("raw", "where", "why"),
    [
        (rb'{"question": "What was \ud800 revenue?"}', "question", "lone surrogate U+D800 at character 9"),
        (rb'{"question": "\udfff"}', "question", "lone surrogate U+DFFF"),
        (rb'{"question": "What\u0000 was it?"}', "question", "control character U+0000 at character 4"),
        (rb'{"question": "bell \u0007?"}', "question", "control character U+0007"),
        (rb'{"question": "esc \u001b[2J?"}', "question", "control character U+001B"),
        (rb'{"question": "del \u007f?"}', "question", "control character U+007F"),
        (
            rb'{"question": "What was ACME net income?", "qid": "fb2\ud800"}',
            "qid",
            "surrogate",
        ),
        (rb'{"question": "What was ACME net income?", "qid": "fb\u00002"}', "qid", "U+0000"),
        (b'{"question": "caf\xe9?"}', "body", "not valid UTF-8"),  # a Latin-1 byte, not UTF-8
        # a surrogate encoded as raw bytes: json.loads decodes them ("surrogatepass") to a lone surrogate
        (b'{"question": "\xed\xa0\x80?"}', "question", "lone surrogate U+D800 at character 0"),
    ],
)
def test_a_lone_surrogate_or_a_control_character_in_a_text_field_is_422_before_any_work(
    study, caplog, raw, where, why
):
    system = _system(study)
    with TestClient(create_app(system)) as client, caplog.at_level("ERROR", logger="finrag.serve.app"):
        r = client.post("/v1/answer", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 422, r.text
        error = _one_line_json(r)["error"]
        assert error.startswith(f"{where}: ") and why in error, error
        assert system.llm.calls == 0 and not _errors(caplog)  # refused before the hashing, no 500 logged
        assert 'finrag_rejected_total{reason="invalid"} 1.0' in client.get("/metrics").text
        ok = client.post("/v1/answer", json={"question": "What was Beta's revenue in fiscal 2019?"})
        assert ok.status_code == 200


def test_tab_newline_and_carriage_return_are_text_and_answered(study):
    with _client(study) as client:
        r = client.post("/v1/answer", json={"question": "What was\tBeta's revenue\r\nin fiscal 2019?"})
        assert r.status_code == 200 and r.json()["qid"] == "fb2", r.text


@pytest.mark.parametrize(
    "raw",
    [
        rb'{"question": "q?", "\ud800": 1}',  # an unknown field named by a lone surrogate
        rb'{"question": "q?", "bad\u0000key\ud83d": "\ud800"}',  # ... by a NUL and a surrogate, with a bad value
        rb'{"question": 5, "extra\u0001": "\udc80"}',  # two errors, one echoing a control character
        rb'{"question": ["\ud800"], "top_k": "\ud800"}',  # wrong types whose values cannot be encoded
    ],
)
def test_the_422_reply_never_fails_on_the_input_it_would_echo(study, caplog, raw):
    with _client(study) as client, caplog.at_level("ERROR", logger="finrag.serve.app"):
        r = client.post("/v1/answer", content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 422, r.text
        body = _one_line_json(r)
        assert body["error"] and "internal error" not in body["error"]
        for e in body["detail"]:  # what was refused is never echoed: type, place and message only
            assert set(e) == {"type", "loc", "msg"}
        assert not _errors(caplog)


def test_the_422_reply_escapes_a_refused_field_name():
    from finrag.serve.app import _printable

    assert _printable("a\ud800b\x00c\nd\te") == "a\\ud800b\\u0000c\\u000ad\\u0009e"
    assert _printable("Fiscal 2019 — €5 million") == "Fiscal 2019 — €5 million"  # real text stays itself


def test_a_real_bug_is_still_a_500_in_the_log(study, caplog):
    system = _system(study)

    def broken(*_a, **_k):
        raise RuntimeError("a bug in the answering code")

    system.answer = broken  # type: ignore[method-assign]
    with TestClient(create_app(system)) as client, caplog.at_level("ERROR", logger="finrag.serve.app"):
        r = client.post("/v1/answer", json={"question": "A new question?"})
        assert r.status_code == 500 and r.json() == {"error": "internal error (see the server's log)"}
        assert any(
            rec.exc_info and "a bug in the answering code" in str(rec.exc_info[1]) for rec in caplog.records
        )
        assert client.get("/healthz").status_code == 200


def test_a_direct_caller_of_the_system_gets_422_for_bad_text(study):
    system = _system(study)
    for question, qid in (("What\ud800?", None), ("What?\x00", None), ("What?", "fb1\x1f")):
        with pytest.raises(ServeError) as e:
            system.answer(question, qid=qid)
        assert e.value.status == 422
    assert system.llm.calls == 0


# ------------------------------------------------------------------------------------------------ no queue for no work


def test_no_new_work_never_waits_in_or_is_refused_by_a_full_queue(study):
    """With the queue full (one answer computing, one waiting), a memoised answer, an unknown qid, a qid whose text
    does not match and a malformed request are answered at once; new work still gets 503 with Retry-After."""
    import asyncio

    system = _system(study, queue={"workers": 1, "max_waiting": 1, "retry_after_s": 3})
    gate = threading.Event()
    gate.set()
    system.answer = _SlowSystem(system, gate)  # type: ignore[method-assign]
    app = create_app(system)
    service = app.state.service
    memoised = {"question": "What was ACME's net income in fiscal 2019?", "qid": "fb1"}

    async def scenario():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:

            async def post(
                payload=None, **kw
            ):  # an answer that does not wait: within 2 s, the gate still shut
                return await asyncio.wait_for(client.post("/v1/answer", json=payload, **kw), 2)

            first = await post(memoised)
            assert first.status_code == 200 and first.headers["x-finrag-memo"] == "miss"
            idle_unknown = await post({"question": "anything", "qid": "nope"})
            assert idle_unknown.status_code == 404 and "unknown qid 'nope'" in idle_unknown.json()["error"]
            gate.clear()
            fill = [
                asyncio.create_task(client.post("/v1/answer", json={"question": f"New question {i}?"}))
                for i in range(2)
            ]
            for _ in range(100):
                if service.in_flight == 2:
                    break
                await asyncio.sleep(0.02)
            assert service.in_flight == 2  # full: workers + max_waiting
            busy = await post({"question": "Yet another new question?"})
            assert busy.status_code == 503 and busy.headers["retry-after"] == "3"
            hit = await post(memoised)
            assert hit.status_code == 200 and hit.headers["x-finrag-memo"] == "hit"
            assert hit.content == first.content
            unknown = await post({"question": "anything", "qid": "nope"})
            assert unknown.status_code == 404 and "unknown qid 'nope'" in unknown.json()["error"]
            mismatch = await post({"question": "What was Beta's revenue in fiscal 2019?", "qid": "fb1"})
            assert mismatch.status_code == 422 and "does not match qid" in mismatch.json()["error"]
            for bad in ({"question": ""}, {"question": "q?", "top_k": 0}, {"top_k": 5}):
                assert (await post(bad)).status_code == 422
            surrogate = await asyncio.wait_for(
                client.post(
                    "/v1/answer",
                    content=rb'{"question": "\ud800"}',
                    headers={"content-type": "application/json"},
                ),
                2,
            )
            assert surrogate.status_code == 422
            assert service.in_flight == 2 and not any(t.done() for t in fill)
            gate.set()
            return await asyncio.gather(*fill)

    filled = asyncio.run(scenario())
    assert [r.status_code for r in filled] == [200, 200]
    metrics = generate_latest(service.metrics.registry).decode()
    assert 'finrag_rejected_total{reason="queue_full"} 1.0' in metrics
    assert 'finrag_rejected_total{reason="not_found"} 2.0' in metrics


# ------------------------------------------------------------------------------------------------ the mixed load row


def test_every_malformed_body_of_the_mixed_load_row_gets_a_4xx_and_no_work(study):
    """The load test's malformed half (locustfile.MALFORMED) is what the service must refuse: each body a 4xx,
    no model call, no error logged; a good request after them is still answered."""
    from finrag.serve.malformed import MALFORMED

    system = _system(study)
    with TestClient(create_app(system)) as client:
        for kind, raw in MALFORMED.items():
            r = client.post("/v1/answer", content=raw, headers={"content-type": "application/json"})
            assert 400 <= r.status_code < 500, (kind, r.status_code, r.text)
        assert system.llm.calls == 0
        assert (
            client.post(
                "/v1/answer", json={"question": "What was Beta's revenue in fiscal 2019?"}
            ).status_code
            == 200
        )


def test_server_errors_counts_only_5xx_statuses_of_a_locust_run():
    from finrag.serve.loadtest import server_errors

    run = {
        "failure_kinds": [
            {"error": "CatchResponseError('not JSON: 500: internal error')", "occurrences": 3},
            {"error": "CatchResponseError('503: busy (queue full)')", "occurrences": 2},
            {"error": "CatchResponseError('unknown qid: 200: {}')", "occurrences": 5},  # a failure, not a 5xx
            {"error": "CatchResponseError('404: see 500: elsewhere')", "occurrences": 7},
        ]
    }
    assert server_errors(run) == 5
    assert server_errors({"failure_kinds": []}) == 0
