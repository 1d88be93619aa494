"""The LLM correctness grader through the response cache: asked only where the deterministic grader is unsure,
recorded once and replayed, an unreadable reply counted and never guessed."""

from __future__ import annotations

import pytest

from finrag.llm.backends.base import Backend, Completion
from finrag.llm.cache import CachedLLM
from finrag.score.grader import grade
from finrag.score.model_grader import CachedLLMGrader, cached_llm, read_grade

GOLD = "Amcor is a global leader in packaging production for various use cases."
UNSURE = "Amcor is a global packaging company."  # content score near the threshold: uncertain
QUESTION = "What industry does AMCOR primarily operate in?"


class Scripted(Backend):
    name = "scripted-grader"
    model = "script"

    def __init__(self, reply: str):
        self.reply, self.n = reply, 0

    def _complete(self, messages, decoding, documents):
        self.n += 1
        return Completion(text=self.reply, model=self.model)


def test_read_grade():
    assert read_grade("Correct.") == "correct"
    assert read_grade("The answer is incorrect") == "incorrect"  # not the 'correct' inside it
    assert read_grade("refusal") == "refusal"
    assert read_grade("I am not sure") is None


def test_recorded_once_then_replayed(tmp_path):
    backend = Scripted("incorrect")
    rec = CachedLLMGrader(CachedLLM(backend, tmp_path, mode="auto", stage="score"))
    first = grade(GOLD, UNSURE, QUESTION, llm_grader=rec)
    assert first.method == "llm" and first.verdict == "incorrect" and backend.n == 1
    # a clear case never reaches the model
    clear = grade("$1577.00", "$1,577 million", "Capex (in USD millions)?", llm_grader=rec)
    assert clear.method == "numeric" and backend.n == 1 and rec.stats["asked"] == 1
    replay = CachedLLMGrader(CachedLLM(backend.identity(), tmp_path, mode="replay", stage="score"))
    again = grade(GOLD, UNSURE, QUESTION, llm_grader=replay)
    assert again.verdict == "incorrect" and backend.n == 1


def test_unreadable_reply_keeps_the_deterministic_verdict(tmp_path):
    plain = grade(GOLD, UNSURE, QUESTION)
    g = CachedLLMGrader(CachedLLM(Scripted("hmm, hard to say"), tmp_path, mode="auto", stage="score"))
    res = grade(GOLD, UNSURE, QUESTION, llm_grader=g)
    assert res.verdict == plain.verdict and res.method == plain.method
    assert "unreadable" in res.detail and g.stats == {"asked": 1, "unreadable": 1}


def test_cached_llm_from_a_params_block(tmp_path):
    llm = cached_llm({"backend": "extractive"}, tmp_path, "replay", "score")
    assert llm.identity["backend"] == "extractive" and llm.mode == "replay" and llm.stage == "score"
    with pytest.raises(ValueError, match="needs 'backend'"):
        cached_llm({"model": "x"}, tmp_path, "replay", "score")
