"""Local simulators of the network LLM APIs, for tests and offline end-to-end runs (no network, no key).

Each simulator answers with its API's documented JSON shape through an in-process mock transport handed to the
official SDK: the Anthropic Messages API (text blocks carrying `char_location` citations when documents are
sent, usage), OpenAI chat.completions, and Ollama /api/chat. The default answer is extractive and correct by
construction: the sentence of the passages sharing most terms with the question, cited at its exact character
offsets, so a synthetic corpus can check citations end to end. Scripted failures (e.g. `fail=[429]`) test retries.

    sim = AnthropicSimulator()
    backend = AnthropicBackend("claude-sim", prices=..., http_client=sim.http_client())
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import httpx
import httpx2

from finrag.llm.backends.extractive import best_line, terms
from finrag.llm.prompts.parse import DECLINE_PHRASE, parse_prompt

Reply = Callable[[dict], Any]


def _best_sentence(question: str, passages: list[dict]) -> tuple[int, int, int] | None:
    """(index into passages, start, end) of the sentence with most question terms; None when no overlap."""
    best, best_score = None, 0
    q = terms(question)
    for i, p in enumerate(passages):
        s, e = best_line(question, p["text"], unit="sentence")
        score = len(q & terms(p["text"][s:e]))
        if score > best_score:
            best, best_score = (i, s, e), score
    return best


class _Simulator:
    """Shared machinery: records requests, plays scripted failures, builds mock transports for both httpx's."""

    path_suffix = ""
    error_statuses = {429: "rate_limit_error", 500: "api_error", 503: "api_error", 529: "overloaded_error"}

    def __init__(
        self,
        *,
        model: str = "sim-model",
        fail: list[int] | None = None,
        reply: Reply | None = None,
        retry_after_s: float = 0.01,
        echo_auth_in_errors: bool = False,
        error_padding: int = 0,
    ):
        self.model = model
        self.fail = list(fail or [])
        self.reply = reply
        self.retry_after_s = retry_after_s
        self.echo_auth_in_errors = echo_auth_in_errors
        self.error_padding = int(error_padding)  # characters before the echoed key (to straddle a length cut)
        self.requests: list[dict] = []  # JSON bodies, in order (failed attempts included)
        self.auth_headers: list[str] = []  # what the client sent as its key (tests check it never leaks)
        self.n_ok = 0

    # -- transport plumbing ------------------------------------------------------------------------------------
    def _handle(self, request, mod) -> Any:
        body = json.loads(request.read() or b"{}")
        self.requests.append(body)
        self.auth_headers.append(
            request.headers.get("x-api-key") or request.headers.get("authorization") or ""
        )
        if not request.url.path.endswith(self.path_suffix):
            return mod.Response(404, json=self.error_body(404, f"no route {request.url.path}"))
        if self.fail:
            status = self.fail.pop(0)
            msg = f"simulated {status}" + " ." * (self.error_padding // 2)
            if self.echo_auth_in_errors:  # a misbehaving proxy: the key must still never surface
                msg += (
                    f" auth={request.headers.get('x-api-key', '')}{request.headers.get('authorization', '')}"
                )
            headers = {"retry-after-ms": str(int(self.retry_after_s * 1000))} if self.retry_after_s else {}
            return mod.Response(status, json=self.error_body(status, msg), headers=headers)
        self.n_ok += 1
        return mod.Response(200, json=self.respond(body))

    def transport(self, flavour: str = "httpx2"):
        mod = {"httpx2": httpx2, "httpx": httpx}[flavour]
        return mod.MockTransport(lambda request: self._handle(request, mod))

    def http_client(self) -> httpx2.Client:
        """An httpx2 client for the anthropic / openai SDKs."""
        return httpx2.Client(transport=self.transport("httpx2"))

    # -- API specifics -------------------------------------------------------------------------------------------
    def error_body(self, status: int, message: str) -> dict:
        return {"error": message}

    def respond(self, body: dict) -> dict:
        raise NotImplementedError

    @staticmethod
    def _tokens(obj: Any) -> int:
        text = obj if isinstance(obj, str) else json.dumps(obj)
        return max(1, math.ceil(len(text) / 4))

    def _text_answer(self, messages: list[dict]) -> str:
        """Answer to a prompt whose passages are inline (<passage n=..>): best sentence + [n]."""
        flat = [
            {
                "role": m["role"],
                "content": m["content"] if isinstance(m["content"], str) else _block_text(m["content"]),
            }
            for m in messages
        ]
        question, passages = parse_prompt(flat)
        hit = _best_sentence(question, passages)
        if hit is None:
            return DECLINE_PHRASE
        i, s, e = hit
        return f"{passages[i]['text'][s:e]} [{passages[i]['n']}]"


def _block_text(content: list[dict]) -> str:
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


class AnthropicSimulator(_Simulator):
    """POST /v1/messages. With document blocks, the answer's text block carries char_location citations."""

    path_suffix = "/v1/messages"

    def error_body(self, status: int, message: str) -> dict:
        return {
            "type": "error",
            "error": {"type": self.error_statuses.get(status, "api_error"), "message": message},
        }

    def respond(self, body: dict) -> dict:
        content = self.reply(body) if self.reply else self._content(body)
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        out_text = "".join(b.get("text", "") for b in content)
        return {
            "id": f"msg_sim_{self.n_ok:04d}",
            "type": "message",
            "role": "assistant",
            "model": body.get("model", self.model),
            "content": content,
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {
                "input_tokens": self._tokens(body.get("messages", [])) + self._tokens(body.get("system", "")),
                "output_tokens": self._tokens(out_text),
            },
        }

    def _content(self, body: dict) -> list[dict]:
        last = body["messages"][-1]
        blocks = (
            last["content"]
            if isinstance(last["content"], list)
            else [{"type": "text", "text": last["content"]}]
        )
        docs = [b for b in blocks if b.get("type") == "document"]
        if not docs:
            return [{"type": "text", "text": self._text_answer(body["messages"])}]
        question, _ = parse_prompt([{"role": "user", "content": _block_text(blocks)}])
        passages = [{"n": i + 1, "text": d["source"]["data"]} for i, d in enumerate(docs)]
        hit = _best_sentence(question, passages)
        if hit is None:
            return [{"type": "text", "text": DECLINE_PHRASE}]
        i, s, e = hit
        cited = passages[i]["text"][s:e]
        citation = {
            "type": "char_location",
            "cited_text": cited,
            "document_index": i,
            "document_title": docs[i].get("title"),
            "start_char_index": s,
            "end_char_index": e,
        }
        return [
            {"type": "text", "text": "According to the filing, "},
            {"type": "text", "text": cited, "citations": [citation]},
        ]


class OpenAISimulator(_Simulator):
    """POST {base_url}/chat/completions (base_url like http://sim/v1)."""

    path_suffix = "/chat/completions"

    def error_body(self, status: int, message: str) -> dict:
        return {"error": {"message": message, "type": "server_error", "code": status}}

    def respond(self, body: dict) -> dict:
        text = self.reply(body) if self.reply else self._text_answer(body["messages"])
        pin, pout = self._tokens(body["messages"]), self._tokens(text)
        return {
            "id": f"chatcmpl-sim{self.n_ok:04d}",
            "object": "chat.completion",
            "created": 1_700_000_000 + self.n_ok,
            "model": body.get("model", self.model),
            "system_fingerprint": "sim",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                    "logprobs": None,
                }
            ],
            "usage": {"prompt_tokens": pin, "completion_tokens": pout, "total_tokens": pin + pout},
        }


class OllamaSimulator(_Simulator):
    """POST /api/chat (non-streaming). Use `transport('httpx')`: the ollama client is built on httpx."""

    path_suffix = "/api/chat"

    def respond(self, body: dict) -> dict:
        text = self.reply(body) if self.reply else self._text_answer(body["messages"])
        return {
            "model": body.get("model", self.model),
            "created_at": "2024-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": text},
            "done": True,
            "done_reason": "stop",
            "total_duration": 1_000_000,
            "load_duration": 1000,
            "prompt_eval_count": self._tokens(body["messages"]),
            "prompt_eval_duration": 500_000,
            "eval_count": self._tokens(text),
            "eval_duration": 400_000,
        }
