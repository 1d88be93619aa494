"""The LLM backend contract and registry: `backend.complete(messages, decoding=..., documents=...) -> Completion`.

Every backend reports text, citations (passage numbers, with character offsets when the API gives them), usage,
latency, cost and its JSON-able raw response, and an `identity()` (backend, model, revision or weights sha256)
that goes into cache keys. Identity never needs the model loaded or the network, so replay works offline.

Network backends (anthropic, ollama, openai_compat) are tested only against the local simulators in
simulators.py. Retries: anthropic and openai_compat use their SDK's own retries (`max_retries`, exponential
backoff from 0.5 s to 8 s honouring Retry-After, on 408/409/429/5xx and connection errors); ollama's client has
none, so tenacity retries it on 429/5xx/connection errors. API keys are read from the environment at call time,
are never stored on the backend object, and are scrubbed from raw responses and error messages.

Each backend is one module of this package (anthropic, openai_compat, ollama, llamacpp, extractive), registered
here by one lazy line, so its SDK is imported only when the backend is built.
"""

from __future__ import annotations

import logging
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from finrag.core.contracts import Citation
from finrag.core.registry import Registry
from finrag.llm.errors import LLMError
from finrag.llm.prompts.parse import bracket_citations

log = logging.getLogger(__name__)

BACKENDS: Registry[type[Backend]] = Registry("llm backend")
BACKENDS.lazy("anthropic", "finrag.llm.backends.anthropic:AnthropicBackend")
BACKENDS.lazy("openai_compat", "finrag.llm.backends.openai_compat:OpenAICompatBackend")
BACKENDS.lazy("ollama", "finrag.llm.backends.ollama:OllamaBackend")
BACKENDS.lazy("llamacpp", "finrag.llm.backends.llamacpp:LlamaCppBackend")
BACKENDS.lazy("extractive", "finrag.llm.backends.extractive:ExtractiveBackend")

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

# Decoding parameters that enter the request (and so the cache key) only when set, so every key recorded before
# they existed stays valid: top_logprobs > 0 asks for the first token's most likely alternatives with their
# log-probabilities (the calibrated LLM judge reads its verdict from them).
OPTIONAL_DECODING: dict[str, Any] = {"top_logprobs": 0}

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
    known = set(DECODING_DEFAULTS) | set(OPTIONAL_DECODING)
    unknown = sorted(set(decoding) - known)
    if unknown:
        raise ValueError(f"unknown decoding parameter(s) {unknown}; known: {sorted(known)}")
    optional = {k: int(v) for k in OPTIONAL_DECODING if (v := decoding.pop(k, None))}
    if optional.get("top_logprobs", 0) < 0:
        raise ValueError("decoding.top_logprobs must be >= 0")
    out = {**DECODING_DEFAULTS, **{k: v for k, v in decoding.items() if v is not None}, **optional}
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


class Backend(ABC):
    """Base class: validates inputs, times the call, and fills [n] citations when the API gave none."""

    name: ClassVar[str] = ""
    supports_documents: ClassVar[bool] = False
    supports_logprobs: ClassVar[bool] = False  # can return the first token's top log-probabilities
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
        if dec.get("top_logprobs") and not self.supports_logprobs:
            raise LLMError(f"backend '{self.name}' cannot return log-probabilities (decoding.top_logprobs)")
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


def price_per_mtok(prices: dict | None, backend: str) -> tuple[float, float]:
    if not prices or "input_per_mtok" not in prices or "output_per_mtok" not in prices:
        raise LLMError(
            f"{backend}: prices.input_per_mtok and prices.output_per_mtok must be set (USD per million tokens)"
        )
    return float(prices["input_per_mtok"]), float(prices["output_per_mtok"])


def reject_unsupported(backend: str, decoding: dict, names: list[str]) -> None:
    for n in names:
        if decoding[n] != DECODING_DEFAULTS[n]:
            raise ValueError(
                f"backend '{backend}' does not support decoding.{n}={decoding[n]!r}; leave it at its default"
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
