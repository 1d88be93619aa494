"""Claims from TAT-QA dev (a table plus paragraphs of a real annual report, questions with gold answers): each
question and its answer become a declarative claim, checked against the table and the paragraphs.

Negatives: a numeric answer moved by 5-60% (`value`), another question's answer about the same report
(`swap`), and the right claim shown with another report's table (`other_context`). TAT-QA's arithmetic
questions (differences, ratios, % change) give computed claims: the figure is in no cell, only derivable."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

from finrag.ingest.tatqa import render_table
from finrag.score.verifier.pairs import ClaimPair, perturb_value

TATQA_FILE = "tatqa/tatqa_dataset_dev.json"
_Q = re.compile(r"^(what|how much|how many)\s+(was|were|is|are)\s+(the\s+)?(.+?)\??$", re.IGNORECASE)


def _answer_text(q: dict) -> str:
    ans = q["answer"]
    text = ", ".join(str(a) for a in ans) if isinstance(ans, list) else str(ans)
    scale = q.get("scale") or ""
    if scale and scale != "percent":
        text = f"{text} {scale}"
    elif scale == "percent" and not text.endswith("%"):
        text = f"{text}%"
    return text


def question_claim(question: str, answer: str) -> str:
    """ "What was the total revenue in 2019?" + "$5.2 million" -> "The total revenue in 2019 was $5.2 million." """
    m = _Q.match(question.strip())
    if m:
        verb = m.group(2).lower()
        verb = "was" if verb in ("is", "was") else "were"
        return f"The {m.group(4)} {verb} {answer}."
    return f"{question.strip().rstrip('?')}: {answer}."


def _evidence(ctx: dict, q: dict) -> str:
    """The paragraphs the question rests on (TAT-QA's `rel_paragraphs` are paragraph orders; all paragraphs when it
    names none) and, for a table question, the table first, rendered as the re-ranker's TAT-QA data renders it."""
    order = sorted(ctx["paragraphs"], key=lambda p: int(p.get("order", 0)))
    by_order = {str(p.get("order")): p["text"] for p in order}
    rel = [by_order[str(o)] for o in q.get("rel_paragraphs", []) if str(o) in by_order]
    text_paras = rel or [p["text"] for p in order]
    if q.get("answer_from") == "text":
        return "\n".join(text_paras)
    return render_table(ctx["table"]["table"]) + "\n" + "\n".join(text_paras[:2])


def _number(ans) -> float | None:
    if isinstance(ans, (int, float)):
        return float(ans)
    if isinstance(ans, list) and len(ans) == 1:
        ans = ans[0]
    try:
        return float(str(ans).replace(",", "").replace("$", "").strip())
    except ValueError:
        return None


def tatqa_pairs(mirror: Path, rng: random.Random, max_questions: int | None = None) -> list[ClaimPair]:
    data = json.loads((Path(mirror) / TATQA_FILE).read_text(encoding="utf-8"))
    out: list[ClaimPair] = []
    for ci, ctx in enumerate(data):
        group = f"tatqa:{ctx['table'].get('uid', ci)}"
        qs = [q for q in ctx["questions"] if q.get("answer") not in (None, "", [])]
        for q in qs:
            ev = _evidence(ctx, q)
            claim = question_claim(q["question"], _answer_text(q))
            out.append(
                ClaimPair(claim=claim, evidence=ev, label=1, source="tatqa", kind="supported", group=group)
            )
            num = _number(q["answer"])
            kinds = ["swap", "other_context"] + ["value", "value"] * (num is not None and num != 0)
            kind = rng.choice(kinds)
            if kind == "value" and num is not None:
                dec = len(str(q["answer"]).split(".")[1]) if "." in str(q["answer"]) else 0
                shown = f"{perturb_value(rng, num, min(dec, 2)):,.{min(dec, 2)}f}"
                orig = str(q["answer"][0] if isinstance(q["answer"], list) else q["answer"])
                # the new figure in the old one's dress ("$", "%", parentheses stay): only the value differs
                q2 = dict(q, answer=[re.sub(r"[\d,]+(?:\.\d+)?", shown.lstrip("-"), orig, count=1)])
                neg = question_claim(q["question"], _answer_text(q2))
                out.append(
                    ClaimPair(claim=neg, evidence=ev, label=0, source="tatqa", kind="value", group=group)
                )
            elif kind == "swap":
                others = [o for o in qs if o is not q and _answer_text(o) != _answer_text(q)
                          and (o.get("answer_type") == q.get("answer_type"))]  # fmt: skip
                if others:
                    neg = question_claim(q["question"], _answer_text(rng.choice(others)))
                    out.append(
                        ClaimPair(claim=neg, evidence=ev, label=0, source="tatqa", kind="swap", group=group)
                    )
            else:
                other = data[rng.randrange(len(data))]
                if other is not ctx and other["questions"]:
                    ev2 = _evidence(other, rng.choice(other["questions"]))
                    out.append(ClaimPair(claim=claim, evidence=ev2, label=0, source="tatqa", kind="other_context",
                                         group=group))  # fmt: skip
        if max_questions is not None and len(out) >= 2 * max_questions:
            break
    return out
