"""The model-backed parts of scoring, through the response cache: the optional LLM correctness grader (asked only
when the deterministic grader is uncertain) and the CachedLLM that the score stage's LLM judge and grader share.

Both replay like every other model call: the request (template version, decoding, replicate) is the cache key, so
`dvc repro` re-scores with zero model calls once a recording run has filled `llm_cache/score`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path

from finrag.core.io import sha256_text
from finrag.llm.backends.base import backend_from_spec
from finrag.llm.cache import CachedLLM
from finrag.llm.prompts.render import task_prompt

GRADE_TEMPLATE_ID = "grade-correctness@1"
_LABEL = re.compile(r"\b(correct|incorrect|refusal)\b", re.IGNORECASE)


def cached_llm(spec: Mapping, cache_dir: str | Path, mode: str, stage: str) -> CachedLLM:
    """A CachedLLM from a params block `{backend: NAME, ...settings}` (settings go to the backend)."""
    return CachedLLM(backend_from_spec(spec), cache_dir, mode=mode, stage=stage)


def read_grade(text: str) -> str | None:
    """The label of a grader reply: 'incorrect' wins over the 'correct' inside it; none found -> None."""
    found = {m.group(1).lower() for m in _LABEL.finditer(text or "")}
    for label in ("refusal", "incorrect", "correct"):
        if label in found:
            return label
    return None


class CachedLLMGrader:
    """`llm_grader(gold, answer, question)` for `finrag.score.grader.grade`, through a CachedLLM.

    An unreadable reply returns None: the deterministic verdict stands and the reply is counted, never guessed.
    """

    def __init__(self, llm, decoding: Mapping | None = None, template_id: str = GRADE_TEMPLATE_ID):
        self.llm = llm
        self.decoding = {"temperature": 0.0, "max_tokens": 8, **dict(decoding or {})}
        self.template_id = template_id
        self.stats = {"asked": 0, "unreadable": 0}

    def messages(self, gold: str, answer: str, question: str) -> list[dict]:
        return task_prompt(self.template_id).messages(question=question, gold=gold, answer=answer)

    def __call__(self, gold: str, answer: str, question: str) -> str | None:
        msgs = self.messages(gold, answer, question)
        item_id = "grade:" + sha256_text("\n".join(m["content"] for m in msgs))[:16]
        completion, _key, _hit = self.llm.complete(
            msgs, dict(self.decoding), template_id=self.template_id, item_id=item_id
        )
        self.stats["asked"] += 1
        label = read_grade(completion.text or "")
        if label is None:
            self.stats["unreadable"] += 1
        return label
