"""The Ollama chat backend (its client has no retries of its own, so tenacity retries it)."""

from __future__ import annotations

import logging
from typing import Any

from finrag.llm.backends.base import (
    Backend,
    Completion,
)
from finrag.llm.errors import LLMError

log = logging.getLogger(__name__)


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
