"""The Anthropic Messages API backend (with its document mode and native citations)."""

from __future__ import annotations

import logging
import math
import os
import re
from typing import Any

from finrag.core.contracts import Citation
from finrag.llm.backends.base import (
    Backend,
    Completion,
    api_error,
    price_per_mtok,
    reject_unsupported,
    scrub,
)
from finrag.llm.errors import BackendUnavailable, SpendingCapExceeded

log = logging.getLogger(__name__)


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
        pin, pout = price_per_mtok(self.prices, self.name)
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
        reject_unsupported(self.name, decoding, ["min_p", "repeat_penalty"])
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
            reject_unsupported(self.name, decoding, ["top_p", "top_k"])
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
