"""The model-backed parts of scoring, through the response cache: the optional LLM correctness grader (asked only
when the deterministic grader is uncertain) and the CachedLLM that the score stage's LLM judge and grader share.

Both replay like every other model call: the request (template version, decoding, replicate) is the cache key, so
`dvc repro` re-scores with zero model calls once a recording run has filled `llm_cache/score`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from finrag.core.contracts import Question
from finrag.core.io import sha256_text
from finrag.llm.backends.base import backend_from_spec
from finrag.llm.cache import CachedLLM
from finrag.llm.prompts.render import task_prompt
from finrag.score.record import ScoredAnswer

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


def grader_sensitivity(
    records: Sequence[ScoredAnswer],
    questions: Mapping[str, Question],
    grader: Callable[[str, str, str], str | None],
    run_rows: Sequence[Mapping],
    params: Mapping,
) -> dict:
    """The LLM grader as a labelled sensitivity row, never the study's grade: on the final-system rule's candidate
    runs, each strictly-uncertain grade is put to `grader(gold, answer, question)`, and each run's correct and
    correct-and-grounded shares are given both ways (uncertain = not correct, as the study counts; uncertain =
    the LLM grader's verdict), with the rule re-applied to the second. An unreadable reply keeps "not correct"."""
    from finrag.core.stats import proportion
    from finrag.score.tables import clean, run_groups, select_final

    selection = dict(params.get("selection") or {})
    candidates = set(selection.get("candidates") or ())
    rows, adjusted = [], []
    for key, recs in run_groups(records, params.get("main_kinds")).items():
        series = key[3]
        if candidates and series not in candidates:
            continue
        verdicts: dict[str, str | None] = {}
        for r in recs:
            if r.grade_outcome == "uncertain":
                q = questions[r.qid]
                verdicts[r.qid] = grader(q.answer, r.final_answer, q.question)
        with_llm = [r.correct or verdicts.get(r.qid) == "correct" for r in recs]
        both = [c and r.grounded_unflagged for c, r in zip(with_llm, recs, strict=True)]
        counts = {v: sum(1 for x in verdicts.values() if x == v) for v in ("correct", "incorrect", "refusal")}
        counts["unreadable"] = sum(1 for x in verdicts.values() if x is None)
        n = len(recs)
        row = {
            "series": series,
            "n": n,
            "uncertain": len(verdicts),
            "llm_verdicts": counts,
            "correct": proportion(sum(r.correct for r in recs), n),
            "correct_with_llm": proportion(sum(with_llm), n),
            "correct_and_grounded": proportion(sum(r.correct_and_grounded for r in recs), n),
            "correct_and_grounded_with_llm": proportion(sum(both), n),
        }
        rows.append(row)
        base = next(x for x in run_rows if x["series"] == series)
        adjusted.append({**base, "correct_and_grounded": row["correct_and_grounded_with_llm"]})
    return clean(
        {
            "runs": rows,
            "asked": sum(r["uncertain"] for r in rows),
            "final_system_with_llm": select_final(adjusted, selection),
        }
    )
