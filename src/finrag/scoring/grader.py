"""Deterministic correctness grader: is a model's answer right, wrong, or a refusal, given the gold answer?

Rules (each is a documented choice, validated against FinanceBench's human labels in ``finrag.grader_validation``):

* **Refusal** — the answer opens by declining (``declining.is_refusal``) and does not go on to give the gold
  figure or the gold yes/no -> ``refusal``. An answer that caveats and then attempts a number ("not stated;
  however we can estimate ...") is graded as an answer.
* **Numeric gold** — every gold figure (years excluded) must be matched by some answer figure: same sign (words
  like "decline"/"loss" or accounting parentheses stand in for a minus), same kind (percent with percent, basis
  points converted to percent; a bare decimal may match a percent gold x100, e.g. 0.654 vs 65.4%), and value within
  1% relative tolerance — or within half a unit of the gold's last written decimal, because a gold of "0.01"
  written to two decimals is matched by 0.0103. Figures carry their scale: "$1,577 million", "$1.577 billion" and
  a bare "1577" under a question saying "in USD millions" are all 1.577e9.
* **Extra answer figures are allowed** (answers show their working); years and figures quoted from the question
  are not answer figures (they cannot match a gold figure the question does not already contain).
* **Off by a power of 1,000** (answer/gold within 1% of 1e3, 1e6, 1e-3 or 1e-6) -> ``incorrect`` with
  ``unit_mismatch=True``.
* **Yes/no gold** (gold opens with yes/no) — the answer's polarity must agree; when it agrees the answer is
  correct unless it states a gold figure wrong (off by a power of 1,000). An explicit "Yes"/"No" at the start
  of the answer is a hard polarity; one read off negations/direction words in the first sentence is soft.
* **Free-text gold** — content-word recall (gold words, stemmed, minus stop words and words of the question)
  at or above ``recall_threshold`` -> correct. Gold figures, if any, count as content. In a band around the
  threshold the result is *uncertain*; only then, and only for free-text golds, the optional ``llm_grader`` is
  asked and its verdict is used (``method="llm"``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Literal

from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from finrag.scoring.declining import has_attempt, refusal_cue
from finrag.scoring.figures import Figure, extract_figures, stated_scale

__all__ = ["GradeResult", "Verdict", "answer_polarity", "content_recall", "grade", "match_figure"]

Verdict = Literal["correct", "incorrect", "refusal"]
Method = Literal["numeric", "text", "refusal", "llm"]
LLMGrader = Callable[[str, str, str], str]  # (gold, answer, question) -> "correct" | "incorrect" | "refusal"

REL_TOL = 0.01
ROUNDING_CAP = 0.05  # a rounding-based match may not be further off than this (relative)
POWERS = (1e3, 1e6, 1e-3, 1e-6)


@dataclass
class GradeResult:
    """The verdict and everything needed to audit it."""

    verdict: Verdict
    method: Method
    unit_mismatch: bool = False
    gold_figures: list[Figure] = field(default_factory=list)
    answer_figures: list[Figure] = field(default_factory=list)
    matched: list[tuple[Figure, Figure]] = field(default_factory=list)  # (gold, answer)
    detail: str = ""
    uncertain: bool = False
    recall: float | None = None
    gold_polarity: str | None = None
    answer_polarity: str | None = None

    @property
    def correct(self) -> bool:
        return self.verdict == "correct"

    def to_dict(self) -> dict:
        d = asdict(self)
        d["matched"] = [[g.raw, a.raw] for g, a in self.matched]
        d["gold_figures"] = [f.raw for f in self.gold_figures]
        d["answer_figures"] = [f.raw for f in self.answer_figures]
        return d


# ---------------------------------------------------------------------------------------------- figure matching

def _sig_decimals(f: Figure) -> int:
    """Decimals the writer meant: trailing zeros are formatting ("$1577.00", "0.40"), not precision."""
    if f.decimals == 0:
        return 0
    unscaled = abs(f.value / f.scale) if f.scale else abs(f.value)
    txt = f"{unscaled:.{f.decimals}f}".rstrip("0")
    return len(txt.split(".", 1)[1]) if "." in txt else 0


def _close(av: float, a_dec: int, a_scale: float, gv: float, g_dec: int, g_scale: float, tol: float) -> bool:
    """Magnitudes agree: within ``tol`` relative, or equal at the precision either side wrote (capped at 5%)."""
    a, g = abs(av), abs(gv)
    if g == 0:
        return a <= 0.5 * 10 ** (-g_dec) * g_scale + 1e-12
    rel = abs(a - g) / g
    if rel <= tol + 1e-12:
        return True
    if rel > ROUNDING_CAP:
        return False
    eps = 1 + 1e-9
    gold_rounded = abs(a - g) <= 0.5 * 10 ** (-g_dec) * g_scale * eps  # answer 0.0103 for a gold written 0.01
    answer_rounded = abs(a - g) <= 0.5 * 10 ** (-a_dec) * a_scale * eps  # answer 0.6 for a gold of 0.62
    return gold_rounded or answer_rounded


def _kind(f: Figure) -> tuple[str, float]:
    """(kind, value) with percent-like figures in percent units."""
    p = f.percent_value()
    return ("pct", p) if p is not None else ("num", f.value)


def match_figure(g: Figure, a: Figure, tol: float = REL_TOL) -> Literal["match", "unit_mismatch", "no"]:
    """Compare one gold figure with one answer figure by magnitude (see the module docstring for the rules)."""
    gk, gv = _kind(g)
    ak, av = _kind(a)
    g_dec = _sig_decimals(g)
    a_dec = a.decimals
    g_scale = g.scale if gk == "num" else 1.0
    cands: list[tuple[float, float]] = []  # (answer value, scale of its last digit)
    if gk == ak:
        cands.append((av, a.scale if ak == "num" else 1.0))
        if ak == "num" and not a.scale_explicit and a.scale != 1.0:
            cands.append((a.value / a.scale, 1.0))  # a default scale ("in thousands") may not apply to it
    elif gk == "pct" and ak == "num" and a.currency is None and not a.scale_explicit:
        cands.append((a.value / a.scale * 100.0, 100.0))  # 0.654 for 65.4%
        a_dec = max(0, a.decimals - 2)
    elif gk == "num" and ak == "pct" and g.currency is None and g.scale == 1.0 and not a.is_bps:
        cands.append((av / 100.0, 0.01))  # 1.03% for a gold ratio of 0.01
        a_dec = a.decimals
    else:
        return "no"
    for v, sc in cands:
        if _close(v, a_dec, sc, gv, g_dec, g_scale, tol):
            return "match"
    if gk == "num":
        for v, _sc in cands:
            if gv != 0 and v != 0:
                r = abs(v / gv)
                if any(abs(r - p) <= tol * p for p in POWERS):
                    return "unit_mismatch"
    return "no"


# ------------------------------------------------------------------------------------------------ text matching

_STOP = set(ENGLISH_STOP_WORDS) | {
    "fy",
    "fiscal",
    "year",
    "years",
    "company",
    "companies",
    "approximately",
    "roughly",
    "around",
    "about",
    "million",
    "millions",
    "billion",
    "billions",
    "mn",
    "bn",
    "usd",
    "total",
    "answer",
    "based",
    "primarily",
    "mainly",
    "el",
    "la",
    "los",
    "las",
    "de",
    "del",
    "en",
    "y",
    "que",
    "por",
    "con",
    "un",
    "una",
    "es",
    "se",
}
_WORD = re.compile(r"[a-záéíóúñü]+(?:[-'][a-záéíóúñü]+)*", re.IGNORECASE)
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s")


def _stem(w: str) -> str:
    w = w.lower().replace("'", "")
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    return w.rstrip("e") if len(w) > 4 else w


def _content(text: str) -> set[str]:
    return {_stem(w) for w in _WORD.findall(text) if w.lower() not in _STOP and len(w) > 1}


def content_recall(gold: str, answer: str, question: str = "") -> float:
    """Share of the gold's content words (stemmed; not stop words, not words of the question) in the answer."""
    g = _content(gold)
    q = _content(question)
    g_only = g - q or g
    if not g_only:
        return 1.0
    return len(g_only & _content(answer)) / len(g_only)


# --------------------------------------------------------------------------------------------------- polarity

_YES_START = re.compile(r"^\W*(?:yes|yeah|yep|correct|indeed|s[íi])\b", re.IGNORECASE)
_NO_START = re.compile(r"^\W*(?:no|nope)\b(?!\s+(?:doubt|matter|longer|less|more|one\b))", re.IGNORECASE)
_YESNO_Q = re.compile(
    r"^\W*(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|¿?(?:es|est[áa]|tiene|ha|hay))\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|without|lack\w*|n['’]t|cannot)\b|n['’]t\b", re.IGNORECASE
)
_UP = re.compile(
    r"\b(?:improv\w*|increas\w*|gr[eo]w\w*|rise|rose|risen|rising|higher|up|expand\w*|accelerat\w*|gain\w*|positive"
    r"|healthy|strong\w*|raised?)\b",
    re.IGNORECASE,
)
_DOWN = re.compile(
    r"\b(?:declin\w*|decreas\w*|drop\w*|fell|fall\w*|lower|down|shr[aiu]nk\w*|contract\w*|decelerat\w*|worse\w*"
    r"|deteriorat\w*|negative|weak\w*|reduc\w*)\b",
    re.IGNORECASE,
)
_SENT = re.compile(r"(?<=[.!?])\s+|\n+")


def gold_polarity(gold: str) -> str | None:
    """'yes' / 'no' when the gold opens with it."""
    if _YES_START.match(gold):
        return "yes"
    if _NO_START.match(gold):
        return "no"
    return None


def answer_polarity(answer: str, question: str = "") -> tuple[str | None, bool]:
    """(polarity, hard): 'yes'/'no' from an opening Yes/No (hard) or from the first sentence (soft)."""
    a = answer.strip()
    if _YES_START.match(a):
        return "yes", True
    if _NO_START.match(a):
        return "no", True
    first = next((s for s in _SENT.split(a) if s.strip()), "")
    # "Based on ..., Yes/No" openings
    m = re.search(r"(?:^|[,:;]\s*)(yes|no)\b[,.]", first, re.IGNORECASE)
    if m:
        return ("yes" if m.group(1).lower() == "yes" else "no"), True
    if not _YESNO_Q.match(question or ""):
        return None, False
    negated = bool(_NEGATION.search(first))
    q_up, q_down = bool(_UP.search(question)), bool(_DOWN.search(question))
    a_up, a_down = bool(_UP.search(first)), bool(_DOWN.search(first))
    if q_up != q_down and (a_up != a_down):
        same = (q_up and a_up) or (q_down and a_down)
        pol = same != negated
        return ("yes" if pol else "no"), False
    return ("no" if negated else "yes"), False


# ------------------------------------------------------------------------------------------------------ grade


def _in_question(f: Figure, qfigs: list[Figure]) -> bool:
    for q in qfigs:
        if q.is_year:
            continue
        qv = q.percent_value() if q.is_ratio_unit else q.value
        fv = f.percent_value() if f.is_ratio_unit else f.value
        if f.is_ratio_unit == q.is_ratio_unit and qv is not None and fv is not None:
            if math.isclose(abs(qv), abs(fv), rel_tol=1e-9, abs_tol=1e-12):
                return True
            # a bare number in the question is scale-free: "3 year average" vs "3"
            if math.isclose(abs(f.value / f.scale), abs(q.value / q.scale), rel_tol=1e-9) and not f.scale_explicit:
                return True
    return False


def _match_all(
    gfigs: list[Figure], afigs: list[Figure], answer: str, tol: float
) -> tuple[list[tuple[Figure, Figure]], list[Figure], bool]:
    matched, unmatched, mismatch = [], [], False
    for g in gfigs:
        hit = None
        for a in afigs:
            r = match_figure(g, a, answer, tol)
            if r == "match":
                hit = a
                break
            if r == "unit_mismatch":
                mismatch = True
        if hit is not None:
            matched.append((g, hit))
        else:
            unmatched.append(g)
    return matched, unmatched, mismatch


_ABSENCE_GOLD = re.compile(
    r"^\W*(?:0(?:\.0+)?|none|zero|nil|there\s+(?:are|were|is|was)\s+(?:none|no)\b|no\s+\w+|not\s+applicable)",
    re.IGNORECASE,
)


def grade(
    gold: str,
    answer: str,
    question: str = "",
    *,
    lang: str | None = None,
    tol: float = REL_TOL,
    recall_threshold: float = 0.5,
    uncertain_band: float = 0.15,
    llm_grader: LLMGrader | None = None,
) -> GradeResult:
    """Grade ``answer`` against ``gold`` (see the module docstring). ``question`` supplies the default scale and
    the figures an answer may quote without credit."""
    gold = "" if gold is None else str(gold).strip()
    answer = "" if answer is None else str(answer).strip()
    question = "" if question is None else str(question)
    q_scale = stated_scale(question)
    qfigs = extract_figures(question, lang)
    gfigs = [f for f in extract_figures(gold, lang, q_scale) if not f.is_year]
    a_all = extract_figures(answer, lang, q_scale)
    gold_in_q = [g for g in gfigs if _in_question(g, qfigs)]
    afigs = [f for f in a_all if not f.is_year and (not _in_question(f, qfigs) or gold_in_q)]
    g_pol = gold_polarity(gold) if _YESNO_Q.match(question) or not question else None
    a_pol, hard = answer_polarity(answer, question) if g_pol else (None, False)
    cue = refusal_cue(answer)
    matched, unmatched, mismatch = _match_all(gfigs, afigs, answer, tol)
    res = GradeResult(
        verdict="incorrect",
        method="numeric" if gfigs else "text",
        gold_figures=gfigs,
        answer_figures=afigs,
        matched=matched,
        gold_polarity=g_pol,
        answer_polarity=a_pol,
    )
    gold_text_only = re.sub(r"[\W\d_]+", " ", gold).strip()
    numeric_gold = bool(gfigs) and len(_content(gold_text_only) - _content(question)) <= 2

    # 1. refusals: declining in the opening, with nothing that answers the question after it
    if cue is not None:
        if _ABSENCE_GOLD.match(gold) and not has_attempt(answer):
            res.verdict, res.method = "correct", "refusal"
            res.detail = f"gold says none/zero and the answer says it is not there ({cue!r})"
            return res
        answered = (gfigs and not unmatched) or (g_pol and hard and a_pol == g_pol)
        if not answered and not (has_attempt(answer) and afigs):
            res.verdict, res.method, res.detail = "refusal", "refusal", f"refusal cue: {cue!r}"
            return res

    # 2. yes/no gold
    if g_pol and a_pol:
        if a_pol != g_pol:
            res.verdict, res.detail = "incorrect", f"polarity {a_pol} vs gold {g_pol}" + ("" if hard else " (soft)")
            res.uncertain = not hard
            return _maybe_llm(res, gold, answer, question, llm_grader)
        if mismatch and not matched:
            res.verdict, res.unit_mismatch = "incorrect", True
            res.detail = "polarity agrees but a gold figure is off by a power of 1,000"
            return res
        res.verdict, res.detail = "correct", f"polarity {a_pol} agrees" + ("" if hard else " (soft)")
        res.uncertain = not hard
        return res

    # 3. gold with figures
    if gfigs:
        if not unmatched:
            res.verdict, res.detail = "correct", f"all {len(gfigs)} gold figure(s) matched"
            return res
        if mismatch and not matched:
            res.verdict, res.unit_mismatch = "incorrect", True
            res.detail = "answer is off by a power of 1,000"
            return res
        if numeric_gold:
            res.detail = f"{len(unmatched)} of {len(gfigs)} gold figure(s) unmatched: {[g.raw for g in unmatched]}"
            return res
        # mixed gold: figures plus words -> words decide, figures count as content
        rec = content_recall(gold_text_only, answer, question)
        share = (rec + len(matched)) / (1 + len(gfigs))
        res.recall = rec
        res.method = "text"
        return _text_verdict(res, share, recall_threshold, uncertain_band, gold, answer, question, llm_grader)

    # 4. free-text gold
    rec = content_recall(gold, answer, question)
    res.recall = rec
    res.method = "text"
    return _text_verdict(res, rec, recall_threshold, uncertain_band, gold, answer, question, llm_grader)


def _text_verdict(
    res: GradeResult,
    score: float,
    thr: float,
    band: float,
    gold: str,
    answer: str,
    question: str,
    llm_grader: LLMGrader | None,
) -> GradeResult:
    res.verdict = "correct" if score >= thr else "incorrect"
    res.detail = f"content score {score:.2f} vs threshold {thr:.2f}"
    res.uncertain = abs(score - thr) < band
    return _maybe_llm(res, gold, answer, question, llm_grader)


def _maybe_llm(
    res: GradeResult, gold: str, answer: str, question: str, llm_grader: LLMGrader | None
) -> GradeResult:
    if llm_grader is None or not res.uncertain or res.unit_mismatch:
        return res
    v = str(llm_grader(gold, answer, question)).strip().lower()
    if v not in ("correct", "incorrect", "refusal"):
        raise ValueError(f"llm_grader returned {v!r}; expected correct / incorrect / refusal")
    res.detail += f"; deterministic verdict {res.verdict} was uncertain, LLM grader said {v}"
    res.verdict, res.method = v, "llm"  # type: ignore[assignment]
    return res
