"""The overlap judge: content-word overlap alone, the numeric judge's fallback as a baseline of its own."""

from __future__ import annotations

from collections.abc import Sequence

from finrag.core.contracts import ClaimVerdict, Verdict
from finrag.score.claims import content_stems, strip_citations
from finrag.score.judges.base import BaseJudge


class OverlapJudge(BaseJudge):
    """Supported when at least `threshold` of the claim's content words occur in the passages (a baseline)."""

    name = "overlap"

    def __init__(self, threshold: float = 0.6):
        self.threshold = threshold

    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "") -> ClaimVerdict:
        stems = content_stems(strip_citations(claim))
        overlap = len(stems & content_stems("\n".join(passages))) / len(stems) if stems else 0.0
        verdict: Verdict = "supported" if overlap >= self.threshold else "unsupported"
        return ClaimVerdict(
            claim_id=claim_id,
            verdict=verdict,
            judge=self.name,
            detail={"method": "overlap", "overlap": round(overlap, 4), "threshold": self.threshold},
        )
