"""A backend for any OpenAI-compatible chat-completions server (vLLM, llama.cpp server, LM Studio, ...)."""

from __future__ import annotations

import logging
import os
from typing import Any

from finrag.llm.backends.base import (
    Backend,
    Completion,
    api_error,
    price_per_mtok,
    scrub,
)

log = logging.getLogger(__name__)


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
            pin, pout = price_per_mtok(self.prices, self.name)
            cost = (usage["input_tokens"] * pin + usage["output_tokens"] * pout) / 1e6
        return Completion(
            text=(choice.get("message") or {}).get("content") or "",
            usage=usage,
            cost_usd=round(cost, 8),
            model=raw.get("model") or self.model,
            finish_reason=choice.get("finish_reason") or "",
            raw=raw,
        )
