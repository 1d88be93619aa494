"""LLM backends behind one interface: `backend.complete(messages, decoding=..., documents=...) -> Completion`.

Every backend reports text, citations (passage numbers, with character offsets when the API gives them), usage,
latency, cost and its JSON-able raw response, and an `identity()` (backend, model, revision or weights sha256)
that goes into cache keys. Identity never needs the model loaded or the network, so replay works offline.

Network backends (anthropic, ollama, openai_compat) are tested only against the local simulators in
simulators.py. Retries: anthropic and openai_compat use their SDK's own retries (`max_retries`, exponential
backoff from 0.5 s to 8 s honouring Retry-After, on 408/409/429/5xx and connection errors); ollama's client has
none, so tenacity retries it on 429/5xx/connection errors. API keys are read from the environment at call time,
are never stored on the backend object, and are scrubbed from raw responses and error messages.
"""

from __future__ import annotations

import logging
import math
import os
import re
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from finrag.core.contracts import Citation
from finrag.core.registry import Registry
from finrag.llm.errors import BackendUnavailable, LLMError, SpendingCapExceeded
from finrag.llm.prompts import bracket_citations, parse_prompt

log = logging.getLogger(__name__)

BACKENDS: Registry[type[Backend]] = Registry("llm backend")

# Every decoding parameter, with its default spelled out: the whole dict goes into the cache key, so an
# unspecified parameter can never silently take a backend's (changing) default.
DECODING_DEFAULTS: dict[str, Any] = {
    "temperature": 0.0,
    "top_p": 1.0,
    "top_k": 0,  # 0 = off
    "min_p": 0.0,
    "repeat_penalty": 1.0,
    "max_tokens": 512,
    "seed": 0,
    "stop": [],
}

_REDACTED = "[redacted]"


class Completion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    text: str
    citations: list[Citation] = Field(default_factory=list)
    usage: dict[str, int] = Field(default_factory=lambda: {"input_tokens": 0, "output_tokens": 0})
    latency_s: float = 0.0
    cost_usd: float = 0.0
    model: str = ""
    finish_reason: str = ""
    raw: dict = Field(default_factory=dict)


def normalize_decoding(decoding: dict | None) -> dict:
    """All decoding parameters with defaults filled in; an unknown name (a typo) is an error."""
    decoding = dict(decoding or {})
    unknown = sorted(set(decoding) - set(DECODING_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown decoding parameter(s) {unknown}; known: {sorted(DECODING_DEFAULTS)}")
    out = {**DECODING_DEFAULTS, **{k: v for k, v in decoding.items() if v is not None}}
    out["temperature"] = float(out["temperature"])
    out["top_p"] = float(out["top_p"])
    out["min_p"] = float(out["min_p"])
    out["repeat_penalty"] = float(out["repeat_penalty"])
    out["top_k"] = int(out["top_k"])
    out["max_tokens"] = int(out["max_tokens"])
    out["seed"] = int(out["seed"])
    stop = out["stop"]
    stop = [stop] if isinstance(stop, str) else [str(s) for s in stop]
    out["stop"] = [s for s in stop if s]  # an empty stop string would end every generation at once
    if out["max_tokens"] < 1:
        raise ValueError("decoding.max_tokens must be >= 1")
    return out


def check_messages(messages: list[dict]) -> list[dict]:
    if not messages:
        raise ValueError("messages is empty")
    for i, m in enumerate(messages):
        if m.get("role") not in {"system", "user", "assistant"} or not isinstance(m.get("content"), str):
            raise ValueError(f"message {i} must be {{role: system|user|assistant, content: str}}")
    return [{"role": m["role"], "content": m["content"]} for m in messages]


def scrub(obj: Any, secrets: list[str]) -> Any:
    """Replace every occurrence of each secret in a JSON-able object (keys and values)."""
    secrets = [s for s in secrets if s]
    if not secrets:
        return obj
    if isinstance(obj, str):
        for s in secrets:
            obj = obj.replace(s, _REDACTED)
        return obj
    if isinstance(obj, dict):
        return {scrub(k, secrets): scrub(v, secrets) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [scrub(v, secrets) for v in obj]
    return obj


def api_error(prefix: str, exc: BaseException, secrets: list[str], limit: int = 300) -> LLMError:
    """A one-line LLMError for a failed API call: the SDK's message is scrubbed of every secret *before* it is
    collapsed and cut (cutting first could leave part of a key that no longer matches the whole), and the SDK
    exception is not chained (its request object holds the headers). Raise it outside the `except` block."""
    detail = scrub(str(getattr(exc, "message", None) or exc), secrets)
    detail = " ".join(detail.split())[:limit]
    return LLMError(scrub(f"{prefix}: {detail}", secrets))


_WORD = re.compile(r"[a-z0-9][a-z0-9.%$-]*[a-z0-9%]|[a-z0-9]", re.I)
# fmt: off
_STOP = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "company", "did", "do", "does", "fiscal", "for",
    "from", "has", "have", "how", "in", "is", "it", "its", "of", "on", "or", "per", "that", "the",
    "their", "this", "to", "was", "were", "what", "when", "which", "who", "will", "with", "year",
})
# fmt: on


def terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in _STOP}


def best_line(question: str, text: str, unit: str = "line") -> tuple[int, int]:
    """(start, end) of the line (or sentence) of `text` sharing most terms with the question; ties -> first."""
    if unit == "line":
        spans = [(m.start(), m.end()) for m in re.finditer(r"[^\n]+", text)]
    else:
        # a sentence ends at . ! ? followed by a space or the end, not at the point of "3.5%" or "$32.8"
        spans = [
            (m.start(), m.end())
            for m in re.finditer(r"(?:[^\n.!?]|[.!?](?![\s]|$))+(?:[.!?](?=\s|$))?", text)
        ]
    q = terms(question)
    best, best_score = None, -1
    for s, e in spans:
        seg = text[s:e]
        if not seg.strip():
            continue
        s += len(seg) - len(seg.lstrip())
        e -= len(seg) - len(seg.rstrip())
        score = len(q & terms(text[s:e]))
        if score > best_score:
            best, best_score = (s, e), score
    return best or (0, 0)


class Backend(ABC):
    """Base class: validates inputs, times the call, and fills [n] citations when the API gave none."""

    name: ClassVar[str] = ""
    supports_documents: ClassVar[bool] = False
    model: str = ""

    def revision(self) -> str:
        return ""

    def settings(self) -> dict:
        """Backend settings, other than decoding, that change what the model answers (a chat template, whether
        sampling parameters are sent): part of the cache key when set. Speed settings (threads, batch) are not."""
        return {}

    def identity(self) -> dict:
        out: dict[str, Any] = {
            "backend": self.name,
            "model": self.model,
            "model_revision_or_weights_sha256": self.revision(),
        }
        settings = self.settings()
        if settings:  # only when set, so keys recorded without any setting stay valid
            out["settings"] = settings
        return out

    def _warn_unpinned_revision(self) -> None:
        """Once per backend: a server's model name alone may not name fixed weights (a re-pulled tag, another
        server), and the cache key would not tell them apart."""
        if not self.revision() and not getattr(self, "_warned_revision", False):
            self._warned_revision = True
            log.warning(
                "%s: revision is not pinned; name the served weights (a digest, hash or tag) so that other weights "
                "under the model name '%s' never share cache keys",
                self.name,
                self.model,
            )

    def complete(
        self, messages: list[dict], *, decoding: dict, documents: list[dict] | None = None
    ) -> Completion:
        msgs = check_messages(messages)
        dec = normalize_decoding(decoding)
        docs = list(documents) if documents else None
        if docs and not self.supports_documents:
            raise ValueError(
                f"backend '{self.name}' has no document mode: render passages into the prompt instead "
                "(prompts.render(..., document_mode=False))"
            )
        self.prepare()
        t0 = time.perf_counter()
        comp = self._complete(msgs, dec, docs)
        comp.latency_s = round(time.perf_counter() - t0, 4)
        if not comp.citations:
            comp.citations = bracket_citations(comp.text)
        return comp

    def prepare(self) -> None:
        """Import SDKs / load the model before the timer starts, so latency_s measures the call alone."""
        return None

    @abstractmethod
    def _complete(self, messages: list[dict], decoding: dict, documents: list[dict] | None) -> Completion: ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}(model={self.model!r})"


def _price(prices: dict | None, backend: str) -> tuple[float, float]:
    if not prices or "input_per_mtok" not in prices or "output_per_mtok" not in prices:
        raise LLMError(
            f"{backend}: prices.input_per_mtok and prices.output_per_mtok must be set (USD per million tokens)"
        )
    return float(prices["input_per_mtok"]), float(prices["output_per_mtok"])


def _unsupported(backend: str, decoding: dict, names: list[str]) -> None:
    for n in names:
        if decoding[n] != DECODING_DEFAULTS[n]:
            raise ValueError(
                f"backend '{backend}' does not support decoding.{n}={decoding[n]!r}; leave it at its default"
            )


@BACKENDS.register("anthropic")
class AnthropicBackend(Backend):
    """Claude through the official `anthropic` SDK (Messages API); document mode gives char-level citations.

    Spending cap: before each call the cost is bounded from above with the input size (characters /
    chars_per_token, a deliberate over-estimate) plus max_tokens; a call that could push `spent_usd` past
    `cap_usd` is refused without contacting the API. The current Messages API (SDK 2.x) takes no sampling
    parameters and no seed: decoding is still part of the cache key, and `send_sampling: true` sends
    temperature/top_p/top_k in the request body for models that accept them.
    """

    name = "anthropic"
    supports_documents = True

    def __init__(
        self,
        model: str = "claude-haiku-4-5",
        *,
        prices: dict | None = None,
        cap_usd: float = 1.0,
        spent_usd: float = 0.0,
        max_retries: int = 4,
        timeout_s: float = 120.0,
        api_key_env: str = "ANTHROPIC_API_KEY",
        base_url: str | None = None,
        http_client: Any = None,
        chars_per_token: float = 3.0,
        revision: str = "",
        send_sampling: bool = False,
    ):
        self.model = model
        self.prices = prices
        self.send_sampling = bool(send_sampling)
        self._warned_sampling = False
        self.cap_usd = float(cap_usd)
        self.spent_usd = float(spent_usd)
        self.max_retries = int(max_retries)
        self.timeout_s = float(timeout_s)
        self.api_key_env = api_key_env
        self.base_url = base_url
        self.chars_per_token = float(chars_per_token)
        self._revision = revision
        self._http_client = http_client
        self._sdk = None

    def revision(self) -> str:
        # Anthropic model ids are dated snapshots or aliases: pin a snapshot
        return self._revision or self.model

    def settings(self) -> dict:
        return {"send_sampling": True} if self.send_sampling else {}

    def _secrets(self) -> list[str]:
        """The key in the environment now and the one the client was built with (they may differ)."""
        return [os.environ.get(self.api_key_env, ""), str(getattr(self._sdk, "api_key", "") or "")]

    def prepare(self) -> None:
        import anthropic  # noqa: F401  (the SDK import is slow: keep it out of latency_s)

    def _client(self):
        if self._sdk is None:
            import anthropic

            if not os.environ.get(self.api_key_env):
                raise BackendUnavailable(
                    f"{self.api_key_env} is not set: the anthropic backend needs an API key (or replay the cache)"
                )
            self._sdk = anthropic.Anthropic(
                api_key=os.environ[self.api_key_env],
                base_url=self.base_url,
                max_retries=self.max_retries,
                timeout=self.timeout_s,
                http_client=self._http_client,
            )
        return self._sdk

    def cost(self, usage: dict) -> float:
        pin, pout = _price(self.prices, self.name)
        inp = (
            usage.get("input_tokens", 0)
            + 1.25 * usage.get("cache_creation_input_tokens", 0)
            + 0.1 * usage.get("cache_read_input_tokens", 0)
        )
        return (inp * pin + usage.get("output_tokens", 0) * pout) / 1e6

    def estimate_cost(self, messages: list[dict], documents: list[dict] | None, max_tokens: int) -> float:
        chars = sum(len(m["content"]) for m in messages) + sum(
            len(d["text"]) + len(d.get("title", "")) + 64 for d in documents or []
        )
        return self.cost(
            {"input_tokens": math.ceil(chars / self.chars_per_token) + 16, "output_tokens": max_tokens}
        )

    def _request(self, messages: list[dict], decoding: dict, documents: list[dict] | None) -> dict:
        _unsupported(self.name, decoding, ["min_p", "repeat_penalty"])
        system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
        chat: list[dict] = [dict(m) for m in messages if m["role"] != "system"]
        if documents:
            last_user = max(i for i, m in enumerate(chat) if m["role"] == "user")
            blocks = [
                {
                    "type": "document",
                    "source": {"type": "text", "media_type": "text/plain", "data": d["text"]},
                    "title": d.get("title") or f"[{d.get('n', i + 1)}]",
                    "citations": {"enabled": True},
                }
                for i, d in enumerate(documents)
            ]
            chat[last_user] = {
                "role": "user",
                "content": [*blocks, {"type": "text", "text": chat[last_user]["content"]}],
            }
        req: dict[str, Any] = {"model": self.model, "max_tokens": decoding["max_tokens"], "messages": chat}
        if system:
            req["system"] = system
        if decoding["stop"]:
            req["stop_sequences"] = decoding["stop"]
        sampling = {"temperature": decoding["temperature"]}
        if (
            decoding["top_p"] != 1.0
        ):  # Claude models that took sampling refused temperature and top_p together
            sampling["top_p"] = decoding["top_p"]
        if decoding["top_k"] > 0:
            sampling["top_k"] = decoding["top_k"]
        if self.send_sampling:
            req["extra_body"] = sampling
        else:
            _unsupported(self.name, decoding, ["top_p", "top_k"])
            if not self._warned_sampling:
                log.warning(
                    "anthropic: the Messages API of SDK %s takes no sampling parameters; temperature=%s is kept in "
                    "the cache key only (set send_sampling: true for models that still accept it)",
                    _sdk_version(),
                    decoding["temperature"],
                )
                self._warned_sampling = True
        return req

    def _complete(self, messages: list[dict], decoding: dict, documents: list[dict] | None) -> Completion:
        import anthropic

        req = self._request(messages, decoding, documents)
        estimate = self.estimate_cost(messages, documents, decoding["max_tokens"])
        if self.spent_usd + estimate > self.cap_usd:
            raise SpendingCapExceeded(
                f"anthropic spending cap: ${self.spent_usd:.4f} spent + up to ${estimate:.4f} for this call "
                f"would exceed cap_usd=${self.cap_usd:.2f}; raise the cap in params.yaml to go on"
            )
        client = self._client()
        failure = None
        try:
            msg = client.messages.create(**req)  # retried by the SDK (max_retries) on 408/409/429/5xx
        except anthropic.APIError as exc:
            status = getattr(exc, "status_code", None)
            failure = api_error(
                f"anthropic call failed ({type(exc).__name__}, status {status})", exc, self._secrets()
            )
        if failure is not None:
            raise failure
        raw = scrub(msg.model_dump(mode="json"), self._secrets())
        usage_raw = raw.get("usage") or {}
        usage = {k: int(usage_raw.get(k) or 0) for k in ("input_tokens", "output_tokens")}
        for k in ("cache_creation_input_tokens", "cache_read_input_tokens"):
            if usage_raw.get(k):
                usage[k] = int(usage_raw[k])
        cost = self.cost(usage)
        self.spent_usd += cost
        text, cits = _anthropic_text_and_citations(raw, documents)
        return Completion(
            text=text,
            citations=cits,
            usage=usage,
            cost_usd=round(cost, 8),
            model=raw.get("model", self.model),
            finish_reason=raw.get("stop_reason") or "",
            raw=raw,
        )


def _sdk_version() -> str:
    import anthropic

    return getattr(anthropic, "__version__", "?")


def _anthropic_text_and_citations(raw: dict, documents: list[dict] | None) -> tuple[str, list[Citation]]:
    """Join text blocks; map char_location citations (0-based, end exclusive) to passage offsets."""
    parts, cits = [], []
    for block in raw.get("content") or []:
        if block.get("type") != "text":
            continue
        parts.append(block.get("text", ""))
        for c in block.get("citations") or []:
            if c.get("type") != "char_location":
                continue
            i = int(c["document_index"])
            doc = documents[i] if documents and 0 <= i < len(documents) else None
            n = int(doc.get("n", i + 1)) if doc else i + 1
            start, end, cited = int(c["start_char_index"]), int(c["end_char_index"]), c.get("cited_text", "")
            if doc is not None and doc["text"][start:end] != cited and cited.strip():
                # offsets and text disagree (whitespace trimmed by the API): take the occurrence of the cited text
                # nearest the given start, and keep offsets and text consistent; none found -> offsets dropped
                want = cited.strip()
                hits = [m.start() for m in re.finditer(re.escape(want), doc["text"])]
                if hits:
                    found = min(hits, key=lambda h: (abs(h - start), h))
                    start, end, cited = found, found + len(want), want
                else:
                    log.warning("anthropic: cited text not found in document %d; its offsets are dropped", i)
                    cits.append(Citation(passage=n, start=None, end=None, cited_text=cited))
                    continue
            cits.append(Citation(passage=n, start=start, end=end, cited_text=cited))
    return "".join(parts), cits


@BACKENDS.register("openai_compat")
class OpenAICompatBackend(Backend):
    """Any OpenAI-compatible chat server (vLLM, llama.cpp server) through the official `openai` SDK."""

    name = "openai_compat"

    def __init__(
        self,
        model: str,
        *,
        base_url: str = "http://127.0.0.1:8000/v1",
        api_key_env: str = "OPENAI_API_KEY",
        revision: str = "",
        prices: dict | None = None,
        max_retries: int = 4,
        timeout_s: float = 600.0,
        http_client: Any = None,
    ):
        self.model = model
        self.base_url = base_url
        self.api_key_env = api_key_env
        self._revision = revision
        self.prices = prices
        self.max_retries = int(max_retries)
        self.timeout_s = float(timeout_s)
        self._http_client = http_client
        self._sdk = None

    def revision(self) -> str:
        return self._revision

    def _secrets(self) -> list[str]:
        """The key in the environment now and the one the client was built with (they may differ)."""
        key = str(getattr(self._sdk, "api_key", "") or "")
        return [os.environ.get(self.api_key_env, ""), "" if key == "no-key" else key]

    def prepare(self) -> None:
        self._warn_unpinned_revision()
        self._client()

    def _client(self):
        if self._sdk is None:
            import openai

            self._sdk = openai.OpenAI(
                api_key=os.environ.get(self.api_key_env) or "no-key",  # local servers ignore it
                base_url=self.base_url,
                max_retries=self.max_retries,
                timeout=self.timeout_s,
                http_client=self._http_client,
            )
        return self._sdk

    def _complete(self, messages: list[dict], decoding: dict, documents: list[dict] | None) -> Completion:
        import openai

        extra: dict[str, Any] = {}
        if decoding["top_k"] > 0:
            extra["top_k"] = decoding["top_k"]
        if decoding["min_p"] != 0.0:
            extra["min_p"] = decoding["min_p"]
        if decoding["repeat_penalty"] != 1.0:  # vLLM and llama.cpp server name it differently
            extra["repetition_penalty"] = extra["repeat_penalty"] = decoding["repeat_penalty"]
        failure = None
        try:
            resp = self._client().chat.completions.create(
                model=self.model,
                messages=messages,
                temperature=decoding["temperature"],
                top_p=decoding["top_p"],
                max_tokens=decoding["max_tokens"],
                seed=decoding["seed"],
                stop=decoding["stop"] or None,
                extra_body=extra or None,
            )
        except openai.APIError as exc:
            failure = api_error(f"openai_compat call failed ({type(exc).__name__})", exc, self._secrets())
        if failure is not None:
            raise failure
        raw = scrub(resp.model_dump(mode="json"), self._secrets())
        choice = (raw.get("choices") or [{}])[0]
        u = raw.get("usage") or {}
        usage = {
            "input_tokens": int(u.get("prompt_tokens") or 0),
            "output_tokens": int(u.get("completion_tokens") or 0),
        }
        cost = 0.0
        if self.prices:
            pin, pout = _price(self.prices, self.name)
            cost = (usage["input_tokens"] * pin + usage["output_tokens"] * pout) / 1e6
        return Completion(
            text=(choice.get("message") or {}).get("content") or "",
            usage=usage,
            cost_usd=round(cost, 8),
            model=raw.get("model") or self.model,
            finish_reason=choice.get("finish_reason") or "",
            raw=raw,
        )


@BACKENDS.register("ollama")
class OllamaBackend(Backend):
    """A model served by Ollama through the official `ollama` client (/api/chat); retried with tenacity.

    Pin `revision` to the model's digest (`ollama show --modelfile` / `ollama list`) so the cache key names the
    exact weights; every decoding option and the context length (`num_ctx`, in the cache key: Ollama cuts a
    longer prompt silently) are sent explicitly, so Ollama's Modelfile defaults never apply.
    """

    name = "ollama"

    def __init__(
        self,
        model: str,
        *,
        host: str = "http://127.0.0.1:11434",
        revision: str = "",
        num_ctx: int = 16384,
        max_retries: int = 3,
        timeout_s: float = 600.0,
        transport: Any = None,
    ):
        self.model = model
        self.host = host
        self._revision = revision
        self.num_ctx = int(num_ctx)
        self.max_retries = int(max_retries)
        self.timeout_s = float(timeout_s)
        self._transport = transport
        self._sdk = None

    def revision(self) -> str:
        return self._revision

    def settings(self) -> dict:
        return {"num_ctx": self.num_ctx}

    def prepare(self) -> None:
        self._warn_unpinned_revision()
        self._client()
        import tenacity  # noqa: F401

    def _client(self):
        if self._sdk is None:
            import ollama

            kw = {"transport": self._transport} if self._transport is not None else {}
            self._sdk = ollama.Client(host=self.host, timeout=self.timeout_s, **kw)
        return self._sdk

    def _complete(self, messages: list[dict], decoding: dict, documents: list[dict] | None) -> Completion:
        import httpx
        import ollama
        from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

        def transient(exc: BaseException) -> bool:
            if isinstance(exc, ollama.ResponseError):
                return exc.status_code == 429 or exc.status_code >= 500
            return isinstance(exc, httpx.TransportError | ConnectionError)

        options = {
            "temperature": decoding["temperature"],
            "top_p": decoding["top_p"],
            "top_k": decoding["top_k"],
            "min_p": decoding["min_p"],
            "repeat_penalty": decoding["repeat_penalty"],
            "num_predict": decoding["max_tokens"],
            "seed": decoding["seed"],
            "stop": decoding["stop"],
        }
        options["num_ctx"] = self.num_ctx
        try:
            for attempt in Retrying(
                stop=stop_after_attempt(self.max_retries + 1),
                wait=wait_exponential(multiplier=0.5, max=8.0),
                retry=retry_if_exception(transient),
                reraise=True,
            ):
                with attempt:
                    resp = self._client().chat(
                        model=self.model, messages=messages, options=options, stream=False
                    )
        except (ollama.ResponseError, httpx.HTTPError, ConnectionError) as exc:
            detail = " ".join(str(exc).split())[:300]
            raise LLMError(f"ollama call failed ({type(exc).__name__}): {detail}") from None
        raw = resp.model_dump(mode="json")
        return Completion(
            text=(raw.get("message") or {}).get("content") or "",
            usage={
                "input_tokens": int(raw.get("prompt_eval_count") or 0),
                "output_tokens": int(raw.get("eval_count") or 0),
            },
            model=raw.get("model") or self.model,
            finish_reason=raw.get("done_reason") or "",
            raw=raw,
        )


def ram_cache(llama_cpp, capacity_bytes: int):
    """llama-cpp-python's LlamaRAMCache, with its capacity counting every byte a saved state holds.

    Why: LlamaRAMCache counts only the llama.cpp state (KV cells, ~12 KB a token for the 0.5B), but each saved
    LlamaState also carries a copy of the scores array (n_batch x n_vocab floats: ~311 MB for Qwen at
    n_batch 512), so a 2 GB "capacity" kept ~70 states and grew the process past 23 GB here before it evicted.
    """

    class CountingRAMCache(llama_cpp.LlamaRAMCache):
        @property
        def cache_size(self) -> int:
            return sum(
                state.llama_state_size + state.scores.nbytes + state.input_ids.nbytes
                for state in self.cache_state.values()
            )

    return CountingRAMCache(capacity_bytes=capacity_bytes)


@BACKENDS.register("llamacpp")
class LlamaCppBackend(Backend):
    """In-process llama.cpp (llama-cpp-python) on a GGUF file: the packaged Qwen2.5-Coder-0.5B by default.

    Speed: one Llama object is kept, so consecutive calls reuse the longest common token prefix already in the
    KV cache (llama-cpp-python does this in `generate`); order calls so system prompt + passages repeat (see
    prompts.py). `ram_cache_mb` > 0 also keeps KV states of earlier prefixes (LlamaRAMCache) for interleaved
    orders. The weights are verified (sha256) before loading; the seed is set per call from decoding.
    `extra_bufts` (llama.cpp's AMX / repacked weight buffers) is off by default: a VM that advertises AMX
    without enabling it dies with SIGILL on the AMX path (see local_model.model_params_override).
    `flash_attn` cut prompt evaluation by ~13% on a 2k-token prompt here; like `n_threads` it is a speed setting,
    kept out of the cache key, so it is switched on per family before recording starts, never in the middle.
    """

    name = "llamacpp"

    def __init__(
        self,
        model_path: str | None = None,
        *,
        model: str | None = None,
        sha256: str | None = None,
        n_ctx: int = 4096,
        n_threads: int = 2,
        n_batch: int = 512,
        ram_cache_mb: int = 0,
        chat_format: str | None = None,
        extra_bufts: bool = False,
        flash_attn: bool = False,
        verbose: bool = False,
    ):
        from finrag.llm import local_model

        self.model_path = model_path
        self._sha: str | None
        if model_path is None:  # a packaged model, by name (default: Qwen2.5-Coder-0.5B)
            spec = local_model.packaged_model(model or local_model.PACKAGED_MODEL_NAME)
            self.model, self._sha = spec.name, spec.sha256
        else:  # without a name: named by the weights' hash when first needed (_name_by_hash)
            self.model = model or ""
            self._sha = sha256
        self.n_ctx, self.n_threads, self.n_batch = int(n_ctx), int(n_threads), int(n_batch)
        self.ram_cache_mb = int(ram_cache_mb)
        self.chat_format = chat_format
        self.extra_bufts = bool(extra_bufts)
        self.flash_attn = bool(flash_attn)
        self.verbose = verbose
        self._llm = None

    def revision(self) -> str:
        if self._sha is None:
            from finrag.core.io import sha256_file

            path = Path(self.model_path)  # type: ignore[arg-type]
            if not path.is_file():
                raise BackendUnavailable(f"GGUF model file not found: {path}")
            self._sha = sha256_file(path)
        return self._sha

    def load(self):
        """The Llama object (loaded once; the weights' sha256 is checked first)."""
        if self._llm is not None:
            return self._llm
        from finrag.llm import local_model

        llama_cpp = local_model.import_llama_cpp()
        self._name_by_hash()
        if self.model_path is None:
            path = local_model.packaged_gguf(name=self.model)
        else:
            path = local_model.verify_gguf(self.model_path, self._sha)
        with local_model.model_params_override(llama_cpp, use_extra_bufts=self.extra_bufts):
            self._llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                n_threads_batch=self.n_threads,
                n_batch=self.n_batch,
                flash_attn=self.flash_attn,
                chat_format=self.chat_format,
                verbose=self.verbose,
            )
        if self.ram_cache_mb > 0:
            self._llm.set_cache(ram_cache(llama_cpp, self.ram_cache_mb << 20))
        return self._llm

    def settings(self) -> dict:
        return {"chat_format": self.chat_format} if self.chat_format else {}

    def _name_by_hash(self) -> None:
        """A GGUF given by path alone is named by its weights' hash (a file name differs between machines)."""
        if not self.model:
            self.model = f"gguf-{self.revision()[:16]}"

    def identity(self) -> dict:
        self._name_by_hash()
        return super().identity()

    def prepare(self) -> None:
        self.load()

    def _complete(self, messages: list[dict], decoding: dict, documents: list[dict] | None) -> Completion:
        llm = self.load()
        try:
            resp = llm.create_chat_completion(
                messages=messages,
                temperature=decoding["temperature"],
                top_p=decoding["top_p"],
                top_k=decoding["top_k"],
                min_p=decoding["min_p"],
                repeat_penalty=decoding["repeat_penalty"],
                max_tokens=decoding["max_tokens"],
                seed=decoding["seed"],
                stop=decoding["stop"] or None,
            )
        except ValueError as exc:  # e.g. "Requested tokens (5000) exceed context window of 4096"
            raise LLMError(f"llamacpp: {' '.join(str(exc).split())} (raise n_ctx)") from None
        raw = dict(resp)
        raw["model"] = self.model  # llama-cpp-python puts the local file path here: keep machines' paths out
        choice = raw["choices"][0]
        u = raw.get("usage") or {}
        if int(u.get("prompt_tokens", 0)) + decoding["max_tokens"] > self.n_ctx:
            # llama-cpp-python would quietly lower max_tokens to fit n_ctx, so the answer would depend on n_ctx,
            # which is not in the cache key: refuse instead
            raise LLMError(
                f"llamacpp: prompt of {u.get('prompt_tokens')} tokens + max_tokens {decoding['max_tokens']} "
                f"exceeds n_ctx {self.n_ctx} (raise n_ctx)"
            )
        return Completion(
            text=choice["message"].get("content") or "",
            usage={
                "input_tokens": int(u.get("prompt_tokens", 0)),
                "output_tokens": int(u.get("completion_tokens", 0)),
            },
            model=self.model,
            finish_reason=choice.get("finish_reason") or "",
            raw=raw,
        )


@BACKENDS.register("extractive")
class ExtractiveBackend(Backend):
    """No model: answers with the line of passage [1] sharing most terms with the question, citing [1].

    Deterministic floor for the study (and a fast stand-in in tests): what does 'copy the top passage' score?
    """

    name = "extractive"
    supports_documents = True
    model = "best-line-of-passage-1"

    def revision(self) -> str:
        return "1"

    def _complete(self, messages: list[dict], decoding: dict, documents: list[dict] | None) -> Completion:
        question, passages = parse_prompt(messages, documents)
        first = next((p for p in passages if p["n"] == 1), passages[0] if passages else None)
        n_in = sum(len(m["content"].split()) for m in messages) + sum(
            len(d["text"].split()) for d in documents or []
        )
        if first is None or not first["text"].strip():
            text, cits = "I cannot answer this from the provided passages.", []
        else:
            s, e = best_line(question, first["text"])
            line = first["text"][s:e]
            text = f"{line} [{first['n']}]"
            cits = [Citation(passage=first["n"], start=s, end=e, cited_text=line)]
        return Completion(
            text=text,
            citations=cits,
            usage={"input_tokens": n_in, "output_tokens": len(text.split())},
            model=self.model,
            finish_reason="stop",
            raw={"tokenizer": "whitespace"},
        )


def make_backend(name: str, **kwargs) -> Backend:
    """Build a registered backend from its params.yaml section (`llm.backends.<name>`)."""
    return BACKENDS.get(name)(**kwargs)


def backend_from_spec(spec: Mapping | None, default: str | None = None) -> Backend:
    """A backend from a params block `{backend: NAME, ...settings}`: the settings go to the backend; `default`
    names it when the block does not."""
    cfg = dict(spec or {})
    name = cfg.pop("backend", None) or default
    if not name:
        raise ValueError(f"a model block needs 'backend' (one of {BACKENDS.names()}): {dict(spec or {})}")
    return make_backend(name, **cfg)
