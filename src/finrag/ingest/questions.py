"""The study's question set: FinanceBench (with availability) plus the hand-written trick questions."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from finrag.core.contracts import Document, Question


def build_question_set(
    financebench: Sequence[Question], trick: Sequence[Question], documents: Sequence[Document]
) -> tuple[list[Question], dict]:
    """All questions, each flagged available when every document it names is in the corpus; never dropped."""
    in_corpus = {d.doc_id for d in documents}
    out = list(financebench)
    for q in trick:
        missing = [d for d in q.doc_ids if d not in in_corpus]
        if missing:
            q = q.model_copy(
                update={
                    "available": False,
                    "unavailable_reason": f"documents not in corpus: {', '.join(missing)}",
                }
            )
        out.append(q)
    seen = Counter(q.qid for q in out)
    dupes = sorted(k for k, n in seen.items() if n > 1)
    if dupes:
        raise ValueError(f"duplicate question ids: {', '.join(dupes[:5])}")
    metrics = {
        "questions": len(out),
        "available": sum(q.available for q in out),
        "by_kind": dict(sorted(Counter(q.kind for q in out).items())),
        "available_by_kind": dict(sorted(Counter(q.kind for q in out if q.available).items())),
    }
    return out, metrics
