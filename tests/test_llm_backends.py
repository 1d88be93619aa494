"""LLM backends against local simulators only (no network): request shapes, citations, retries, spending cap,
key secrecy; the extractive backend; the packaged GGUF plumbing (without llama.cpp)."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging

import pytest

from finrag.core.contracts import Passage
from finrag.llm import local_model
from finrag.llm.backends.anthropic import AnthropicBackend, _anthropic_text_and_citations
from finrag.llm.backends.base import BACKENDS, DECODING_DEFAULTS, make_backend, normalize_decoding
from finrag.llm.backends.extractive import ExtractiveBackend, best_line
from finrag.llm.backends.llamacpp import LlamaCppBackend
from finrag.llm.backends.ollama import OllamaBackend
from finrag.llm.backends.openai_compat import OpenAICompatBackend
from finrag.llm.cache import CachedLLM
from finrag.llm.errors import BackendUnavailable, LLMError, SpendingCapExceeded
from finrag.llm.prompts.render import as_documents, render
from finrag.llm.simulators import AnthropicSimulator, OllamaSimulator, OpenAISimulator

PRICES = {"input_per_mtok": 1.0, "output_per_mtok": 5.0}
KEY = "sk-ant-api03-SECRET-do-not-leak-0123456789abcdef"
PASSAGES = [
    Passage(
        n=1, chunk_id="a", doc_id="3M_2018_10K", pages=[59], text="Net sales rose 3.5% to $32.8 billion."
    ),
    Passage(
        n=2,
        chunk_id="b",
        doc_id="3M_2018_10K",
        pages=[60],
        text="Operating cash flow was strong.\nPurchases of property, plant and equipment were $1,577 million "
        "in 2018. Dividends were $3,193 million.",
    ),
]
QUESTION = "How much did 3M spend on purchases of property, plant and equipment in 2018?"


@pytest.fixture
def key_env(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    return KEY


def anthropic(sim, **kw) -> AnthropicBackend:
    kw.setdefault("prices", PRICES)
    kw.setdefault("cap_usd", 5.0)
    return AnthropicBackend("claude-haiku-4-5", http_client=sim.http_client(), **kw)


def test_registry_names():
    assert BACKENDS.names() == ["anthropic", "extractive", "llamacpp", "ollama", "openai_compat"]
    assert isinstance(make_backend("extractive"), ExtractiveBackend)


def test_backend_from_a_params_block():
    from finrag.llm.backends.base import backend_from_spec

    assert isinstance(backend_from_spec({"backend": "extractive"}), ExtractiveBackend)
    assert isinstance(backend_from_spec(None, default="extractive"), ExtractiveBackend)
    with pytest.raises(ValueError, match="needs 'backend'"):
        backend_from_spec({"model": "m"})


def test_decoding_defaults_are_spelled_out_and_typos_fail():
    d = normalize_decoding({"temperature": 0.7, "stop": "###"})
    assert set(d) == set(DECODING_DEFAULTS) and d["temperature"] == 0.7 and d["stop"] == ["###"]
    with pytest.raises(ValueError, match="temprature"):
        normalize_decoding({"temprature": 0.2})


def test_anthropic_document_mode_maps_char_citations_to_passages(key_env):
    sim = AnthropicSimulator()
    messages, _ = render("plain", QUESTION, PASSAGES, document_mode=True)
    docs = as_documents(PASSAGES)
    comp = anthropic(sim).complete(messages, decoding={"max_tokens": 300}, documents=docs)
    body = sim.requests[-1]
    assert body["system"].startswith("You are a careful financial analyst")
    blocks = body["messages"][-1]["content"]
    assert [b["type"] for b in blocks] == ["document", "document", "text"]
    assert blocks[1]["source"] == {"type": "text", "media_type": "text/plain", "data": PASSAGES[1].text}
    assert blocks[1]["citations"] == {"enabled": True} and blocks[1]["title"].startswith("[2]")
    assert body["max_tokens"] == 300 and "temperature" not in body
    (cit,) = comp.citations
    assert cit.passage == 2
    assert PASSAGES[1].text[cit.start : cit.end] == cit.cited_text
    assert cit.cited_text.startswith("Purchases of property, plant and equipment were $1,577 million")
    assert "$1,577 million" in comp.text
    assert comp.usage["input_tokens"] > 0 and comp.usage["output_tokens"] > 0
    expect = (comp.usage["input_tokens"] * 1.0 + comp.usage["output_tokens"] * 5.0) / 1e6
    assert comp.cost_usd == pytest.approx(expect)
    json.dumps(comp.raw)  # JSON-able


def test_anthropic_retries_a_429_then_succeeds(key_env):
    sim = AnthropicSimulator(fail=[429])
    messages, _ = render("plain", QUESTION, PASSAGES)
    comp = anthropic(sim, max_retries=2).complete(messages, decoding={})
    assert len(sim.requests) == 2 and sim.n_ok == 1
    assert comp.citations[0].passage == 2  # text mode: [n] marker parsed


def test_anthropic_gives_up_after_max_retries_with_one_line_error(key_env):
    sim = AnthropicSimulator(fail=[529, 529, 529])
    messages, _ = render("plain", QUESTION, PASSAGES)
    with pytest.raises(LLMError, match=r"status 529") as err:
        anthropic(sim, max_retries=1).complete(messages, decoding={})
    assert len(sim.requests) == 2 and "\n" not in str(err.value)


def test_spending_cap_refuses_before_calling(key_env):
    sim = AnthropicSimulator()
    messages, _ = render("plain", QUESTION, PASSAGES)
    with pytest.raises(SpendingCapExceeded, match="cap_usd"):
        anthropic(sim, cap_usd=0.001).complete(messages, decoding={"max_tokens": 1000})  # 1000 x $5/M > cap
    assert sim.requests == []
    # A cap that allows exactly one call: the second is refused before it is sent.
    backend = anthropic(sim, cap_usd=0.0)
    one = backend.estimate_cost(messages, None, 100)
    backend.cap_usd = one * 1.0001
    comp = backend.complete(messages, decoding={"max_tokens": 100})
    assert 0 < comp.cost_usd <= one, "the pre-call estimate must bound the real cost from above"
    with pytest.raises(SpendingCapExceeded):
        backend.complete(messages, decoding={"max_tokens": 100})
    assert len(sim.requests) == 1


def test_spending_cap_counts_what_the_cache_already_recorded(key_env, tmp_path):
    sim = AnthropicSimulator()
    messages, _ = render("plain", QUESTION, PASSAGES)
    first = anthropic(sim)
    CachedLLM(first, tmp_path, mode="auto").complete(messages, {}, item_id="q1")
    spent = first.spent_usd
    second = anthropic(sim, cap_usd=spent * 1.01)  # a fresh process with the same cache
    llm = CachedLLM(second, tmp_path, mode="auto")
    assert second.spent_usd == pytest.approx(spent)
    with pytest.raises(SpendingCapExceeded):
        llm.complete(messages, {}, replicate=1, item_id="q1")


def test_api_key_never_reaches_raw_logs_cache_or_errors(key_env, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    messages, _ = render("plain", QUESTION, PASSAGES, document_mode=True)
    docs = as_documents(PASSAGES)
    ok_sim = AnthropicSimulator()
    llm = CachedLLM(anthropic(ok_sim), tmp_path, mode="record")
    comp, _, _ = llm.complete(messages, {}, template_id="plain@1", item_id="q1", documents=docs)
    bad_sim = AnthropicSimulator(fail=[500, 500], echo_auth_in_errors=True)
    with pytest.raises(LLMError) as err:
        anthropic(bad_sim, max_retries=1).complete(messages, decoding={}, documents=docs)
    assert KEY in ok_sim.auth_headers[0], (
        "the simulator must have seen the key for this test to mean anything"
    )
    assert "[redacted]" in str(err.value), "the echoed key was scrubbed, not merely absent"
    outputs = [
        str(err.value),
        repr(err.value),
        caplog.text,
        comp.model_dump_json(),
        repr(llm.backend),
        json.dumps(vars(llm.backend), default=repr),
        *(p.read_text() for p in tmp_path.rglob("*") if p.is_file()),
    ]
    assert all(KEY not in o for o in outputs)


@pytest.mark.parametrize("padding", [0, 240, 270, 290, 320])
def test_a_key_echoed_near_the_length_cut_of_an_error_never_leaks(key_env, padding):
    messages, _ = render("plain", QUESTION, PASSAGES)
    sim = AnthropicSimulator(fail=[500, 500], echo_auth_in_errors=True, error_padding=padding)
    with pytest.raises(LLMError) as err:
        anthropic(sim, max_retries=1).complete(messages, decoding={})
    text = str(err.value)
    assert all(KEY[i : i + 12] not in text for i in range(len(KEY) - 11)), "no 12-character piece of the key"
    assert err.value.__context__ is None and err.value.__cause__ is None  # the SDK error holds the headers


def test_the_key_the_client_holds_is_scrubbed_even_after_the_environment_changed(key_env, monkeypatch):
    messages, _ = render("plain", QUESTION, PASSAGES)
    sim = AnthropicSimulator(echo_auth_in_errors=True)
    backend = anthropic(sim, max_retries=0)
    backend.complete(messages, decoding={})  # the client is built with KEY
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-another-key")
    sim.fail = [500]
    with pytest.raises(LLMError) as err:
        backend.complete(messages, decoding={})
    assert KEY not in str(err.value) and "[redacted]" in str(err.value)


def test_anthropic_citation_offsets_that_miss_their_text_move_to_the_nearest_occurrence():
    doc = "Revenue was $5 million in 2018.\nRevenue was $5 million in 2019, up from 2018."
    second = doc.index("Revenue", 10)

    def raw(start, end, cited):
        cit = {"type": "char_location", "document_index": 0, "start_char_index": start, "end_char_index": end,
               "cited_text": cited}  # fmt: skip
        return {"content": [{"type": "text", "text": "It was $5 million.", "citations": [cit]}]}

    # offsets one off the 2019 sentence: the nearest occurrence (2019), not the first (2018)
    _, (c,) = _anthropic_text_and_citations(
        raw(second + 1, second + 23, "Revenue was $5 million"), [{"text": doc}]
    )
    assert (c.start, c.end) == (second, second + 22) and doc[c.start : c.end] == c.cited_text
    # padded cited text: trimmed, so offsets and text agree
    _, (c,) = _anthropic_text_and_citations(raw(0, 24, " Revenue was $5 million "), [{"text": doc}])
    assert (c.start, c.cited_text) == (0, "Revenue was $5 million") and doc[c.start : c.end] == c.cited_text
    # text not in the document: no offsets rather than wrong ones
    _, (c,) = _anthropic_text_and_citations(raw(0, 10, "Net income was"), [{"text": doc}])
    assert (c.start, c.end) == (None, None)


def test_best_sentence_keeps_decimal_points_inside_figures():
    text = "Costs fell. Net sales rose 3.5% to $32.8 billion. Other."
    s, e = best_line("How much did net sales rise?", text, unit="sentence")
    assert text[s:e] == "Net sales rose 3.5% to $32.8 billion."


def test_an_empty_stop_string_is_dropped():
    assert normalize_decoding({"stop": ""})["stop"] == []
    assert normalize_decoding({"stop": ["", "\n\n"]})["stop"] == ["\n\n"]


def test_anthropic_without_key_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    sim = AnthropicSimulator()
    messages, _ = render("plain", QUESTION, PASSAGES)
    with pytest.raises(BackendUnavailable, match="ANTHROPIC_API_KEY is not set"):
        anthropic(sim).complete(messages, decoding={})
    assert AnthropicBackend("claude-haiku-4-5").identity() == {
        "backend": "anthropic",
        "model": "claude-haiku-4-5",
        "model_revision_or_weights_sha256": "claude-haiku-4-5",
    }


def test_anthropic_sampling_parameters(key_env):
    sim = AnthropicSimulator()
    messages, _ = render("plain", QUESTION, PASSAGES)
    with pytest.raises(ValueError, match="top_p"):
        anthropic(sim).complete(messages, decoding={"top_p": 0.9})
    anthropic(sim, send_sampling=True).complete(messages, decoding={"temperature": 0.3, "top_k": 5})
    assert sim.requests[-1]["temperature"] == 0.3 and sim.requests[-1]["top_k"] == 5


def test_openai_compat_request_and_retry():
    sim = OpenAISimulator(fail=[503])
    backend = OpenAICompatBackend("qwen2.5-7b", base_url="http://sim.local/v1", http_client=sim.http_client())
    messages, _ = render("decline", QUESTION, PASSAGES)
    comp = backend.complete(
        messages, decoding={"temperature": 0.2, "seed": 7, "max_tokens": 64, "min_p": 0.05}
    )
    body = sim.requests[-1]
    assert len(sim.requests) == 2
    assert (body["temperature"], body["seed"], body["max_tokens"], body["min_p"]) == (0.2, 7, 64, 0.05)
    assert body["messages"] == messages
    assert comp.text.endswith("[2]") and [c.passage for c in comp.citations] == [2]
    assert comp.usage["input_tokens"] > 0 and comp.finish_reason == "stop" and comp.cost_usd == 0.0


def test_ollama_sends_every_option_and_retries_with_tenacity():
    sim = OllamaSimulator(fail=[503])
    backend = OllamaBackend("qwen2.5:0.5b", host="http://sim.local:11434", transport=sim.transport("httpx"))
    messages, _ = render("plain", QUESTION, PASSAGES)
    comp = backend.complete(messages, decoding={"seed": 3, "max_tokens": 50})
    assert len(sim.requests) == 2
    opts = sim.requests[-1]["options"]
    assert (
        opts["seed"] == 3 and opts["num_predict"] == 50 and opts["temperature"] == 0.0 and opts["top_k"] == 0
    )
    assert sim.requests[-1]["stream"] is False
    assert "$1,577 million" in comp.text and comp.usage["output_tokens"] > 0


def test_ollama_persistent_error_is_llm_error():
    sim = OllamaSimulator(fail=[500] * 3)
    backend = OllamaBackend("m", transport=sim.transport("httpx"), max_retries=1)
    with pytest.raises(LLMError, match="ollama call failed"):
        backend.complete([{"role": "user", "content": "hi"}], decoding={})
    assert len(sim.requests) == 2


def test_documents_refused_by_backends_without_document_mode():
    backend = OllamaBackend("m", transport=OllamaSimulator().transport("httpx"))
    with pytest.raises(ValueError, match="no document mode"):
        backend.complete([{"role": "user", "content": "q"}], decoding={}, documents=as_documents(PASSAGES))


def test_extractive_best_line_of_passage_one_is_deterministic():
    passages = [PASSAGES[1], PASSAGES[0].model_copy(update={"n": 2})]
    passages[0] = passages[0].model_copy(update={"n": 1})
    messages, _ = render("plain", QUESTION, passages)
    a = ExtractiveBackend().complete(messages, decoding={})
    b = ExtractiveBackend().complete(messages, decoding={"temperature": 1.0})
    assert a.text == b.text
    line = "Purchases of property, plant and equipment were $1,577 million in 2018. Dividends were $3,193 million."
    assert a.text == f"{line} [1]"
    (cit,) = a.citations
    assert (cit.passage, passages[0].text[cit.start : cit.end]) == (1, line)
    none_msgs, _ = render("plain", QUESTION, [])
    assert ExtractiveBackend().complete(none_msgs, decoding={}).citations == []


def test_llamacpp_identity_needs_no_model_and_missing_library_is_one_line(tmp_path):
    ident = LlamaCppBackend().identity()
    assert ident == {
        "backend": "llamacpp",
        "model": "qwen2.5-coder-0.5b-instruct-q4_k_m",
        "model_revision_or_weights_sha256": local_model.PACKAGED_SHA256,
    }
    # speed settings stay out of the cache key: calls recorded with them replay without them
    assert LlamaCppBackend(n_threads=1, n_batch=64, flash_attn=True, ram_cache_mb=256).identity() == ident
    gguf = tmp_path / "tiny.gguf"
    gguf.write_bytes(b"GGUF-not-really")
    sha = hashlib.sha256(b"GGUF-not-really").hexdigest()
    assert LlamaCppBackend(str(gguf)).identity()["model_revision_or_weights_sha256"] == sha
    # the same weights under another file name (another machine) have the same identity, hence the same keys
    renamed = tmp_path / "copy-of-qwen.gguf"
    renamed.write_bytes(b"GGUF-not-really")
    assert LlamaCppBackend(str(renamed)).identity() == LlamaCppBackend(str(gguf)).identity()
    assert LlamaCppBackend(str(gguf)).identity()["model"] == f"gguf-{sha[:16]}"
    # a chat template other than the GGUF's own changes the prompt, so it is part of the key
    assert LlamaCppBackend(chat_format="chatml").identity()["settings"] == {"chat_format": "chatml"}
    if importlib.util.find_spec("llama_cpp") is None:
        with pytest.raises(BackendUnavailable, match="llama-cpp-python is not installed") as err:
            LlamaCppBackend(str(gguf)).complete([{"role": "user", "content": "q"}], decoding={})
        assert "\n" not in str(err.value)


def test_llamacpp_refuses_an_answer_that_n_ctx_would_have_cut_short():
    class FakeLlama:
        def __init__(self, prompt_tokens):
            self.prompt_tokens = prompt_tokens

        def create_chat_completion(self, **kw):
            return {
                "choices": [{"message": {"content": "ok"}, "finish_reason": "stop"}],
                "usage": {"prompt_tokens": self.prompt_tokens, "completion_tokens": 1},
            }

    backend = LlamaCppBackend(n_ctx=1024)
    backend._llm = FakeLlama(800)  # 800 + 256 > 1024: llama-cpp-python would have lowered max_tokens
    with pytest.raises(LLMError, match="exceeds n_ctx 1024"):
        backend.complete([{"role": "user", "content": "q"}], decoding={"max_tokens": 256})
    backend._llm = FakeLlama(700)
    assert backend.complete([{"role": "user", "content": "q"}], decoding={"max_tokens": 256}).text == "ok"


def test_join_parts_is_atomic_and_verified(tmp_path):
    parts = []
    for i, chunk in enumerate([b"GGUF" + b"a" * 100, b"b" * 50, b"c" * 7]):
        p = tmp_path / f"part{i}.bin"
        p.write_bytes(chunk)
        parts.append(p)
    whole = b"".join(p.read_bytes() for p in parts)
    good = hashlib.sha256(whole).hexdigest()
    dest = tmp_path / "models" / "m.gguf"
    assert local_model.join_parts(parts, dest, good, len(whole)).read_bytes() == whole
    bad_dest = tmp_path / "models" / "bad.gguf"
    with pytest.raises(local_model.ModelUnavailable, match="expected"):
        local_model.join_parts(list(reversed(parts)), bad_dest, good, len(whole))
    assert not bad_dest.exists() and not list(bad_dest.parent.glob(".bad.gguf.*"))
    with pytest.raises(local_model.ModelUnavailable, match="does not match"):
        local_model.verify_gguf(dest, "0" * 64)


def test_packaged_parts_when_installed():
    try:
        parts = local_model.packaged_parts()
    except local_model.ModelUnavailable as exc:
        assert "uv sync --extra llm" in str(exc)
        pytest.skip(f"packaged model parts not installed: {exc}")
    assert [p.name for p in parts] == [f"part0{i}.bin" for i in range(1, 7)]
    assert sum(p.stat().st_size for p in parts) == local_model.PACKAGED_SIZE


@pytest.mark.slow
def _skip_without_packaged_model():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python not installed (uv sync --extra llm)")
    try:
        local_model.packaged_parts()
    except local_model.ModelUnavailable as exc:
        pytest.skip(str(exc))


def test_llamacpp_packaged_model_greedy_and_prefix_reuse():
    """Real local model (skipped unless `uv sync --extra llm` was run): deterministic, and the second style of
    the same question re-evaluates only the prompt suffix (KV-cache prefix reuse)."""
    _skip_without_packaged_model()
    import llama_cpp

    backend = LlamaCppBackend(
        n_ctx=1024, n_threads=1
    )  # 1 thread: a shared 2-core box stalls 2-thread barriers
    plain, _ = render("plain", QUESTION, PASSAGES)
    decline, _ = render("decline", QUESTION, PASSAGES)
    dec = {"max_tokens": 4, "seed": 1}
    first = backend.complete(plain, decoding=dec)
    before = llama_cpp.llama_perf_context(backend.load()._ctx.ctx).n_p_eval
    second = backend.complete(decline, decoding=dec)
    evaluated = llama_cpp.llama_perf_context(backend.load()._ctx.ctx).n_p_eval - before
    again = backend.complete(plain, decoding=dec)
    assert first.text == again.text and first.usage["output_tokens"] > 0
    assert 0 < evaluated < second.usage["input_tokens"] / 2, (evaluated, second.usage)
    assert backend.identity()["model_revision_or_weights_sha256"] == local_model.PACKAGED_SHA256


def test_llamacpp_ram_cache_restores_an_interleaved_prefix_and_keeps_the_reply():
    """Real local model: RAGAS alternates two few-shot prompts, which defeats plain prefix reuse; with
    `ram_cache_mb` the third call (family A again) re-reads only its new suffix, and replies as without it."""
    _skip_without_packaged_model()
    import llama_cpp

    head_a = "Split the answer into statements. " + " ".join(
        f"Example {i}: the sky is blue." for i in range(40)
    )
    head_b = "Judge each statement against the context. " + " ".join(
        f"Case {i}: verdict 1." for i in range(40)
    )
    a1 = [{"role": "user", "content": head_a + " Answer: revenue rose 5%."}]
    b1 = [{"role": "user", "content": head_b + " Statement: revenue rose 5%."}]
    a2 = [{"role": "user", "content": head_a + " Answer: margins fell."}]
    dec = {"max_tokens": 4, "seed": 1}

    def third_call(ram_cache_mb: int):
        backend = LlamaCppBackend(n_ctx=1024, n_threads=1, n_batch=128, ram_cache_mb=ram_cache_mb)
        backend.complete(a1, decoding=dec)
        backend.complete(b1, decoding=dec)
        before = llama_cpp.llama_perf_context(backend.load()._ctx.ctx).n_p_eval
        reply = backend.complete(a2, decoding=dec)
        cache = backend.load().cache
        if cache is not None:  # the capacity bounds what the states really hold (scores included)
            held = sum(st.scores.nbytes + st.llama_state_size for st in cache.cache_state.values())
            assert 0 < held <= ram_cache_mb << 20 and len(cache.cache_state) == 3
        return reply, llama_cpp.llama_perf_context(backend.load()._ctx.ctx).n_p_eval - before

    cached, read_cached = third_call(256)
    plain, read_plain = third_call(0)
    assert cached.text == plain.text
    assert read_cached < read_plain / 4, (read_cached, read_plain, cached.usage)


def test_packaged_models_table_and_unknown_name():
    """Two packaged GGUFs by name; the backend's identity carries the model's own sha256; unknown names fail."""
    second = local_model.packaged_model("qwen2.5-coder-1.5b-instruct-q4_k_m")
    assert second.size == 1_117_320_768 and len(second.dists) == 22
    b = LlamaCppBackend(model="qwen2.5-coder-1.5b-instruct-q4_k_m")
    assert b.identity()["model_revision_or_weights_sha256"] == second.sha256 != local_model.PACKAGED_SHA256
    with pytest.raises(local_model.ModelUnavailable, match="no packaged model named"):
        LlamaCppBackend(model="gpt-9")
