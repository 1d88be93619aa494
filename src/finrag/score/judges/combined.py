"""The combined judge: numeric for claims with figures, llm for the rest ("route"), or both must agree ("strict")."""

from __future__ import annotations

from collections.abc import Sequence

from finrag.core.contracts import ClaimVerdict, Verdict
from finrag.score.judges.base import BaseJudge, batch_args
from finrag.score.judges.numeric import has_figures


class CombinedJudge(BaseJudge):
    """numeric for claims with figures, llm for the rest ("route"); or both must agree on support ("strict")."""

    name = "combined"

    def __init__(self, numeric: BaseJudge, llm: BaseJudge, mode: str = "route"):
        if mode not in ("route", "strict"):
            raise ValueError(f"combined judge mode must be 'route' or 'strict', not {mode!r}")
        self.numeric, self.llm, self.mode = numeric, llm, mode

    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "") -> ClaimVerdict:
        return self.judge_batch([claim], list(passages), claim_ids=[claim_id])[0]

    def judge_batch(self, claims, passages, claim_ids=None) -> list[ClaimVerdict]:
        ids, per = batch_args(claims, passages, claim_ids)
        v: ClaimVerdict | Verdict
        if self.mode == "route":
            num_idx = [i for i, c in enumerate(claims) if has_figures(c)]
            llm_idx = [i for i in range(len(claims)) if i not in set(num_idx)]
            out: dict[int, ClaimVerdict] = {}
            for judge, idx, route in ((self.numeric, num_idx, "numeric"), (self.llm, llm_idx, "llm")):
                if idx:
                    vs = judge.judge_batch(
                        [claims[i] for i in idx], [per[i] for i in idx], [ids[i] for i in idx]
                    )
                    for i, v in zip(idx, vs, strict=True):
                        out[i] = v.model_copy(
                            update={"judge": self.name, "detail": {**v.detail, "route": route}}
                        )
            return [out[i] for i in range(len(claims))]
        a = self.numeric.judge_batch(claims, per, ids)
        b = self.llm.judge_batch(claims, per, ids)
        res = []
        for va, vb in zip(a, b, strict=True):
            if "contradicted" in (va.verdict, vb.verdict):
                v = "contradicted"
            elif va.verdict == vb.verdict == "supported":
                v = "supported"
            else:
                v = "unsupported"
            res.append(
                ClaimVerdict(
                    claim_id=va.claim_id,
                    verdict=v,
                    judge=self.name,
                    evidence=va.evidence if va.verdict == v else vb.evidence,
                    detail={"numeric": va.model_dump(), "llm": vb.model_dump(), "mode": "strict"},
                )
            )
        return res
