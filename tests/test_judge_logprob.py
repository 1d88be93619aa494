"""The calibrated LLM judge: its verdict is read from first-token log-probabilities (no model here: a fake LLM
replies with a recorded-style response), its decoding key leaves every earlier cache key alone, and its threshold
is fitted out of fold on groups."""

from __future__ import annotations

import math

import numpy as np
import pytest

from finrag.core.contracts import LabelledClaim
from finrag.llm.backends.base import Backend, Completion, normalize_decoding
from finrag.llm.backends.llamacpp import LlamaCppBackend, json_safe
from finrag.llm.errors import LLMError
from finrag.score.judges.base import make_judge
from finrag.score.judges.llm_logprob import LogprobJudge, support_score, token_side
from finrag.trust.judge_agreement import crossfit_verdicts


def _raw(alternatives: dict[str, float]) -> dict:
    top = [{"token": t, "logprob": lp, "bytes": None} for t, lp in alternatives.items()]
    return {
        "choices": [
            {"message": {"content": top[0]["token"]}, "logprobs": {"content": [{"top_logprobs": top}]}}
        ]
    }


class FakeLLM:
    """CachedLLM's .complete: the reply's log-probabilities come from `reply(prompt)`."""

    def __init__(self, reply):
        self.reply, self.prompts, self.decodings = reply, [], []

    def complete(self, messages, decoding, replicate=0, template_id="", item_id=""):
        self.prompts.append(messages[-1]["content"])
        self.decodings.append(decoding)
        alts = self.reply(messages[-1]["content"])
        return Completion(text=next(iter(alts)), raw=_raw(alts)), f"k{len(self.prompts)}", False


@pytest.mark.parametrize(
    ("token", "side"),
    [("S", True), ("SUP", True), (" SUPPORT", True), ("Supported", True), ("**SUPPORTED", True), ("YES", True),
     ("UNS", False), ("UN", False), (" UNS", False), ("NOT", False), ("No", False), ("U", False),
     ("UND", None), ("The", None), ("", None), ("\n", None)],
)  # fmt: skip
def test_token_side(token, side):
    assert token_side(token) is side


def test_support_score_sums_each_side_and_bounds_a_missing_one():
    score, detail = support_score([{"token": "UNS", "logprob": math.log(0.5)}, {"token": "S", "logprob": math.log(0.2)},
                                   {"token": "SUP", "logprob": math.log(0.1)}, {"token": "The", "logprob": math.log(0.05)}])  # fmt: skip
    assert score == pytest.approx(math.log(0.3) - math.log(0.5))
    assert detail == {"yes_tokens": 2, "no_tokens": 1}
    only_no, _ = support_score([{"token": "UN", "logprob": -0.1}, {"token": "X", "logprob": -6.0}])
    assert only_no == pytest.approx(-6.0 + 0.1)  # P(yes) is at most the least likely listed token's
    assert support_score([{"token": "The", "logprob": -0.1}])[1]["no_label_token"] is True


def test_judge_cuts_the_score_at_its_threshold_and_groups_shared_passages():
    def reply(prompt):
        return (
            {"S": -0.2, "UNS": -1.8}
            if "sales" in prompt.split("Claim: ")[1].lower()
            else {"UNS": -0.3, "S": -1.5}
        )

    llm = FakeLLM(reply)
    judge = make_judge("llm_logprob", llm=llm)
    assert isinstance(judge, LogprobJudge)
    vs = judge.judge_batch(
        ["Sales rose.", "The CEO left.", "Net sales fell."], [["A"], ["B"], ["A"]], ["a", "b", "c"]
    )
    assert [v.verdict for v in vs] == ["supported", "unsupported", "supported"]
    assert [v.claim_id for v in vs] == ["a", "b", "c"]
    assert vs[0].detail["score"] == pytest.approx(1.6) and vs[0].detail["cache_key"]
    assert llm.prompts[0].startswith("Passages:\n\n[1] A") and llm.prompts[1].startswith("Passages:\n\n[1] A")
    assert llm.prompts[0].rstrip().endswith("Answer with one word: SUPPORTED or UNSUPPORTED.")
    assert llm.decodings[0] == {"temperature": 0.0, "max_tokens": 1, "top_logprobs": 20}
    strict = LogprobJudge(FakeLLM(reply), threshold=2.0)
    assert strict.judge("Sales rose.", ["A"]).verdict == "unsupported"


def test_top_logprobs_enters_the_decoding_only_when_asked():
    assert "top_logprobs" not in normalize_decoding({}) and normalize_decoding(
        {"top_logprobs": 0}
    ) == normalize_decoding({})
    assert normalize_decoding({"top_logprobs": 5})["top_logprobs"] == 5
    with pytest.raises(ValueError, match="unknown decoding"):
        normalize_decoding({"top_logprob": 5})


def test_a_backend_without_logprobs_refuses_them():
    class Plain(Backend):
        name = "plain"

        def _complete(self, messages, decoding, documents):
            return Completion(text="x")

    with pytest.raises(LLMError, match="cannot return log-probabilities"):
        Plain().complete([{"role": "user", "content": "q"}], decoding={"top_logprobs": 3})
    assert Plain().complete([{"role": "user", "content": "q"}], decoding={}).text == "x"


def test_llamacpp_asks_for_logprobs_only_with_logits_all():
    seen = {}

    class FakeLlama:
        def create_chat_completion(self, **kw):
            seen.update(kw)
            return {"choices": [{"message": {"content": "S"}, "finish_reason": "length",
                                 "logprobs": {"content": [{"top_logprobs": [{"token": "S", "logprob": np.float32(-0.5)}]}]}}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": 1}}  # fmt: skip

    backend = LlamaCppBackend(n_ctx=1024)
    backend._llm = FakeLlama()
    with pytest.raises(LLMError, match="logits_all"):
        backend.complete([{"role": "user", "content": "q"}], decoding={"max_tokens": 1, "top_logprobs": 4})
    backend = LlamaCppBackend(n_ctx=1024, logits_all=True)
    backend._llm = FakeLlama()
    out = backend.complete([{"role": "user", "content": "q"}], decoding={"max_tokens": 1, "top_logprobs": 4})
    assert seen["logprobs"] is True and seen["top_logprobs"] == 4
    lp = out.raw["choices"][0]["logprobs"]["content"][0]["top_logprobs"][0]["logprob"]
    assert type(lp) is float  # stored in the JSON response cache
    assert json_safe({"a": [np.int64(3)]}) == {"a": [3]}


def _items(n_groups: int, per_group: int = 3) -> tuple[list[LabelledClaim], list[float]]:
    items, scores = [], []
    for g in range(n_groups):
        for j in range(per_group):
            supported = (g + j) % 2 == 0
            items.append(LabelledClaim(item_id=f"{g}-{j}", benchmark="attributionbench" if g % 2 else "expertqa",
                                       claim=f"claim {g} {j}", passages=["p"], group_id=f"g{g}",
                                       human="supported" if supported else "unsupported"))  # fmt: skip
            scores.append((1.0 if supported else -1.0) + 0.01 * j)
    return items, scores


def test_crossfit_verdicts_use_a_threshold_from_the_other_folds():
    items, scores = _items(40)
    verdicts, cal = crossfit_verdicts(items, scores, folds=5)
    assert verdicts == [it.human for it in items]  # separable: every out-of-fold cut lies between the classes
    assert sum(cal["claims_per_fold"]) == len(items) and set(cal["threshold_by_fold"]) == {
        "0",
        "1",
        "2",
        "3",
        "4",
    }
    assert (
        all(-1.0 < t < 1.0 for t in cal["threshold_by_fold"].values()) and -1.0 < cal["threshold_all"] < 1.0
    )
    # the same claim in two benchmarks sits in one fold (its two groups are tied)
    twin = items[0].model_copy(
        update={"item_id": "twin", "benchmark": "attributionbench", "group_id": "other"}
    )
    v2, _ = crossfit_verdicts([*items, twin], [*scores, scores[0]], folds=5)
    assert v2[-1] == v2[0]
