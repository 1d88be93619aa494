"""The extractive backend: no model, it answers with the passage line that shares most words with the question.

A floor for every generative model, and the answer the service gives when no model is configured. `terms` and
`best_line` are its text helpers (also used by the simulators)."""

from __future__ import annotations

import logging
import re

from finrag.core.contracts import Citation
from finrag.core.text import EXTRACTIVE_STOP
from finrag.llm.backends.base import (
    Backend,
    Completion,
)
from finrag.llm.prompts.parse import parse_prompt

log = logging.getLogger(__name__)


_WORD = re.compile(r"[a-z0-9][a-z0-9.%$-]*[a-z0-9%]|[a-z0-9]", re.I)


def terms(text: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(text) if w.lower() not in EXTRACTIVE_STOP}


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
