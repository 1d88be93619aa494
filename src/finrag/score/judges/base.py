"""The judge contract and registry: is a claim supported by the passages it was given?

Every judge has `judge(claim, passages) -> ClaimVerdict` and `judge_batch(claims, passages) -> list[ClaimVerdict]`
and is made by name from the `JUDGES` registry (`make_judge("numeric", **params)`). Each judge lives in its own
module and is registered here by one lazy line (lm-evaluation-harness style), so a judge with heavy imports (ragas,
the trained verifier) costs nothing until asked for:

- `numeric` (numeric.py): a transparent, free check for claims that state figures. Every figure (years aside) must
  be found in the passages after normalisation, or be computable from two passage figures by one arithmetic step;
  every year and every named entity of the claim must appear in the passages. Claims without figures fall back to
  a content-word overlap threshold (stated in `detail.method`). It cannot read meaning: it is a lower bound on what
  a careful reader would accept for figures and a weak baseline otherwise; the agreement stage measures how weak.
- `overlap` (overlap.py): the fallback alone (content-word overlap), as a baseline.
- `llm` (llm.py): a model reads the claim(s) and numbered passages and answers one word per claim, through the
  cached LLM layer (finrag.llm.cache.CachedLLM-like `.complete`).
- `llm_logprob` (llm_logprob.py): the same model's verdict read from its first-token log-probabilities and cut at
  a threshold fitted on the human-labelled dev claims (the calibrated LLM judge).
- `combined` (combined.py): "route" (default): numeric for claims with figures, llm for the rest, so each claim
  goes to the judge that is strong where it is; "strict": supported only when both say supported (contradicted
  if either says so).
- `ragas` (ragas.py): RAGAS faithfulness over the same cached LLMs.
- `verifier`, `study` (finrag.score.verifier.judges): the trained claim verifier and the combined study judge.
"""

from __future__ import annotations

from collections.abc import Sequence

from finrag.core.contracts import ClaimVerdict
from finrag.core.io import sha256_text
from finrag.core.registry import Registry

JUDGES: Registry = Registry("judge")
JUDGES.lazy("numeric", "finrag.score.judges.numeric:NumericJudge")
JUDGES.lazy("overlap", "finrag.score.judges.overlap:OverlapJudge")
JUDGES.lazy("llm", "finrag.score.judges.llm:LLMJudge")
JUDGES.lazy("combined", "finrag.score.judges.combined:CombinedJudge")
JUDGES.lazy("llm_logprob", "finrag.score.judges.llm_logprob:LogprobJudge")
JUDGES.lazy(
    "ragas", "finrag.score.judges.ragas:RagasFaithfulnessJudge"
)  # ragas itself loads only when one is built
JUDGES.lazy("verifier", "finrag.score.verifier.judges:VerifierJudge")
JUDGES.lazy("study", "finrag.score.verifier.judges:StudyJudge")
VERDICTS = ("supported", "unsupported", "contradicted")


def _is_shared(passages) -> bool:
    """judge_batch takes one passage list for all claims, or one list per claim."""
    return not passages or isinstance(passages[0], str)


def batch_args(claims, passages, claim_ids) -> tuple[list[str], list[list[str]]]:
    """judge_batch's arguments spelled out: the claim ids (c1, c2, ... by default) and one passage list per claim."""
    ids = list(claim_ids) if claim_ids is not None else [f"c{i + 1}" for i in range(len(claims))]
    per = [list(passages)] * len(claims) if _is_shared(passages) else [list(p) for p in passages]
    if len(per) != len(claims):
        raise ValueError(f"judge_batch: {len(claims)} claims but {len(per)} passage lists")
    return ids, per


class BaseJudge:
    name = "base"

    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "") -> ClaimVerdict:
        raise NotImplementedError

    def judge_batch(
        self,
        claims: Sequence[str],
        passages: Sequence[str] | Sequence[Sequence[str]],
        claim_ids: Sequence[str] | None = None,
    ) -> list[ClaimVerdict]:
        """Judge many claims: `passages` is one list shared by all claims, or one list per claim."""
        ids, per = batch_args(claims, passages, claim_ids)
        return [self.judge(c, p, claim_id=i) for c, p, i in zip(claims, per, ids, strict=True)]


class MemoJudge:
    """A judge that remembers each (claim, passages) verdict, so a claim judged twice on the same passages (by
    the score stage, then by the chance check's own-passage half) costs one judgement. Only for judges whose
    verdict on a claim does not depend on the other claims of its batch (the numeric judge); other attributes
    pass through to the wrapped judge."""

    def __init__(self, inner):
        self.inner = inner
        self._seen: dict[tuple[str, str], ClaimVerdict] = {}

    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "c1") -> ClaimVerdict:
        return self.judge_batch([claim], list(passages), [claim_id])[0]

    def judge_batch(self, claims, passages, claim_ids=None) -> list[ClaimVerdict]:
        ids, per = batch_args(claims, passages, claim_ids)
        digests = {tuple(p): sha256_text("\x00".join(p)) for p in per}  # the shared list is hashed once
        keys = [(c, digests[tuple(p)]) for c, p in zip(claims, per, strict=True)]
        first: dict[tuple[str, str], int] = {}  # each unseen key once, at its first position
        for i, k in enumerate(keys):
            if k not in self._seen:
                first.setdefault(k, i)
        todo = list(first.values())
        if todo:
            found = self.inner.judge_batch(
                [claims[i] for i in todo], [per[i] for i in todo], [ids[i] for i in todo]
            )
            self._seen.update((keys[i], v) for i, v in zip(todo, found, strict=True))
        return [self._seen[k].model_copy(update={"claim_id": i}) for k, i in zip(keys, ids, strict=True)]

    def __getattr__(self, name):
        return getattr(self.inner, name)


def make_judge(name: str, llm=None, **params) -> BaseJudge:
    """A judge by registry name. `llm` (a CachedLLM) is needed by "llm", "ragas" and "combined"; params go to
    the class.

    combined takes `numeric: {...}`, `llm_judge: {...}` sub-dicts and `mode`.
    """
    cls = JUDGES.get(name)
    if name in ("llm", "ragas", "llm_logprob"):
        return cls(llm, **params)
    if name == "combined":
        num = JUDGES.get("numeric")(**(params.pop("numeric", None) or {}))
        lj = JUDGES.get("llm")(llm, **(params.pop("llm_judge", None) or {}))
        return cls(num, lj, **params)
    return cls(**params)
