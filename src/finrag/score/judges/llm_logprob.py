"""The calibrated LLM judge: one claim a call, and the verdict read from the model's first-token log-probabilities
(SUPPORTED against UNSUPPORTED) instead of from the word it writes.

Why: a small model asked for a word says "supported" to nearly every claim (the 0.5B greedy judge: 898 of 900),
which makes it a constant rater; its log-probabilities still rank claims. The score is log P(supported) - log
P(not supported), summed over the first tokens that begin each answer ("S", "SUP", " SUPPORT" against "UN",
"UNS", "NOT"); a claim is supported when the score reaches a threshold, which the agreement stage fits by grouped
cross-fitting on the human-labelled dev claims (`threshold` here is the one fitted on all of them). The passages
come first in the prompt and the claim last, so claims on the same passages reuse the model's KV cache.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from scipy.special import logsumexp

from finrag.core.contracts import ClaimVerdict
from finrag.llm.prompts.render import task_prompt
from finrag.score.claims import strip_citations
from finrag.score.judges.base import BaseJudge, batch_args
from finrag.score.judges.llm import cached_call, passages_block

LOGPROB_TEMPLATE_ID = "judge-logprob@1"
DECODING = {"temperature": 0.0, "max_tokens": 1, "top_logprobs": 20}
YES = ("SUPPORTED", "YES")
NO = ("UNSUPPORTED", "NOT SUPPORTED", "NO")


def token_side(token: str) -> bool | None:
    """True when `token` begins a 'supported' answer, False when it begins a 'not supported' one, None otherwise
    (a token that is a prefix of both, or of neither, says nothing)."""
    t = " ".join(token.replace("*", " ").replace('"', " ").split()).upper()
    if not t:
        return None
    yes = any(w.startswith(t) or t.startswith(w) for w in YES)
    no = any(w.startswith(t) or t.startswith(w) for w in NO)
    return yes if yes != no else None


def support_score(top_logprobs: Sequence[Mapping]) -> tuple[float, dict]:
    """(log P(yes) - log P(no), details) from the first token's alternatives. A side with no token among them
    is bounded by the least likely token listed (its probability is at most that), so the score stays finite."""
    yes = [float(t["logprob"]) for t in top_logprobs if token_side(str(t["token"])) is True]
    no = [float(t["logprob"]) for t in top_logprobs if token_side(str(t["token"])) is False]
    floor = min((float(t["logprob"]) for t in top_logprobs), default=0.0)
    detail = {"yes_tokens": len(yes), "no_tokens": len(no)}
    if not yes and not no:
        return 0.0, {**detail, "no_label_token": True}
    return (float(logsumexp(yes)) if yes else floor) - (float(logsumexp(no)) if no else floor), detail


def first_token_alternatives(raw: Mapping) -> list[dict]:
    """The first generated token's top alternatives from an OpenAI-style chat response (llama-cpp-python's)."""
    try:
        content = raw["choices"][0]["logprobs"]["content"]
        return list(content[0]["top_logprobs"]) if content else []
    except (KeyError, IndexError, TypeError):
        return []


class LogprobJudge(BaseJudge):
    """SUPPORTED vs UNSUPPORTED from the first token's log-probabilities, one claim a call, through the response
    cache (`llm`: a finrag.llm.cache.CachedLLM over a backend that returns log-probabilities). Never says
    contradicted: it is a binary judge."""

    name = "llm_logprob"

    def __init__(
        self,
        llm,
        threshold: float = 0.0,
        top_logprobs: int = 20,
        max_passage_chars: int = 6000,
        template_id: str = LOGPROB_TEMPLATE_ID,
        replicate: int = 0,
    ):
        if llm is None:
            raise ValueError("the llm_logprob judge needs an LLM (a finrag.llm.cache.CachedLLM)")
        self.llm = llm
        self.threshold = float(threshold)
        self.decoding = {**DECODING, "top_logprobs": int(top_logprobs)}
        self.max_passage_chars = max_passage_chars
        self.template_id = template_id
        self.replicate = int(replicate)
        self.stats = {"calls": 0, "cache_hits": 0, "no_label_token": 0}

    def _messages(self, claim: str, passages: Sequence[str]) -> list[dict]:
        return task_prompt(self.template_id).messages(
            passages_block=passages_block(passages, self.max_passage_chars), claim=strip_citations(claim)
        )

    def score(self, claim: str, passages: Sequence[str]) -> tuple[float, dict]:
        """(support score, detail) for one claim, from the cache or one model call."""
        completion, key = cached_call(self, self._messages(claim, passages), "judge-logprob")
        score, detail = support_score(first_token_alternatives(completion.raw))
        self.stats["no_label_token"] += int(bool(detail.get("no_label_token")))
        return score, {**detail, "cache_key": key, "first_token": completion.text[:20]}

    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "") -> ClaimVerdict:
        score, detail = self.score(claim, list(passages))
        return ClaimVerdict(
            claim_id=claim_id,
            verdict="supported" if score >= self.threshold else "unsupported",
            judge=self.name,
            evidence="",
            detail={"method": "llm_logprob", "score": round(score, 6), "threshold": self.threshold, **detail},
        )

    def judge_batch(self, claims, passages, claim_ids=None) -> list[ClaimVerdict]:
        """One call a claim, ordered so claims on the same passages follow each other (KV-prefix reuse)."""
        ids, per = batch_args(claims, passages, claim_ids)
        order = sorted(range(len(claims)), key=lambda i: "\x00".join(per[i]))
        out: dict[int, ClaimVerdict] = {i: self.judge(claims[i], per[i], ids[i]) for i in order}
        return [out[i] for i in range(len(claims))]
