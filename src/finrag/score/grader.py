"""Deterministic correctness grader: is a model's answer right, wrong, or a refusal, given the gold answer?

Rules (each is a documented choice, validated against FinanceBench's human labels in ``finrag.trust.grader_agreement``):

* **Refusal** — the answer contains a refusal cue (``declining.refusal_cue``) and neither gives the gold
  figure / gold yes-no nor commits to a result of its own (a computed "= 12.5", "Therefore, ... is ...")
  -> ``refusal``; but when the gold itself says the filing does not state it ("The filing does not say",
  "Not disclosed"), declining is the right answer -> ``correct`` (the declining axis still counts it). An answer that caveats and then commits ("not stated; therefore the ratio is 12.5") is graded
  as an answer.
* **Numeric gold** — every gold figure (years excluded) must be matched by some answer figure: same kind
  (percent with percent, basis points converted to percent; a bare decimal may match a percent gold x100, e.g.
  0.654 vs 65.4%, and a percent a bare ratio gold /100) and value within 1% relative tolerance — or equal at the
  gold's written precision (trailing zeros are formatting: "$0.40" has one decimal; a gold "0.01" is matched by
  0.0143), or equal at the answer's coarser precision when that is within 5% (0.6% for 0.62%). Figures carry
  their scale: "$1,577 million", "$1.577 billion", "$1,577,000,000" and a bare "1577" under a question saying
  "in USD millions" are all 1.577e9 (a default scale may also be ignored: "1.73" in an answer that says "(in
  thousands)" elsewhere is still 1.73).
* **Extra answer figures are allowed** (answers show their working); years and figures quoted from the question
  are not answer figures (they cannot match a gold figure the question does not already contain). Two limits:
  for a single-figure gold, when the answer's closing sentence states a figure of the same kind, the gold must
  be matched there (a right intermediate cannot rescue a wrong conclusion); and a gold *change* (the gold or the
  question speaks of an increase, decline, difference ...) may be matched by the difference of two nearby answer
  figures (the levels it is computed from); any other gold may not.
* **Which gold figures count**: those of the gold's first sentence (later sentences explain it). A gold whose
  first sentence is essentially its figures (at most one content word beyond the question) is *numeric*: all
  its figures must match. Otherwise the words decide (below); matching all the figures lowers the bar, and
  missing them all while the answer states figures of the same kind makes the answer incorrect whatever its words
  (not for a yes/no gold, whose figures only explain its yes/no). The headline is the first sentence as the claim
  splitter cuts it, so an abbreviation ("Adj. EBITDA", "Inc.") does not end it. Citation markers ("[1]") in the
  answer are not figures.
* **Signs** are compared by magnitude: "decreased by $229 million" answers a gold of -$229 million, and an
  accounting "(0.6)%" answers 0.62%; the FinanceBench labellers did not penalise sign conventions. But when
  both sides give the figure a sign and they differ, it is no match: a minus or parentheses, else the nearest
  direction word of the figure's clause ("fell", "rose"), else a signed noun ("loss", "income"). "Operating
  income was $87.1 million" does not answer "-$87.1 million", nor "rose by $64 million" a fall of $64 million;
  an unsigned "$87.1 million" still does (``figure_sign``).
* **Number formats** are read per text: a gold "2.431,7 millones de euros" and an answer "EUR 2,431.7 million"
  each in their own format (a text showing no telling number falls back to the joint reading); currency codes
  and "bn"/"mn" carry their meaning ("USD 7.2105 bn" is $7,210.5 million).
* **Off by a power of 1,000** (answer/gold within 1% of 1e3, 1e6, 1e-3 or 1e-6) -> ``incorrect`` with
  ``unit_mismatch=True``.
* **Yes/no gold** (gold opens with yes/no) — the answer's polarity must agree; when it agrees the answer is
  correct unless the gold's headline figures are all missed while the answer states figures of the same kind
  (a right "yes" with a wrong quick ratio is incorrect). An explicit "Yes"/"No" is a hard polarity; one read
  off negations/direction words of the verdict sentence (last relevant conclusion, else the first sentence
  unless it is a preamble) is soft. No readable polarity: the rest of the gold is graded as below.
* **Free-text gold** — content-word recall (gold words, Snowball-stemmed, minus stop words and words of the
  question; names and acronyms weigh twice) at or above ``recall_threshold`` (0.4) -> correct. In a band
  (+-0.15) around the threshold, and for a yes/no read softly, the result is *uncertain*; only then — never for
  a numeric gold — the optional ``llm_grader(gold, answer, question)`` is asked and its verdict is used
  (``method="llm"``, counted in the validation metrics).
* **Strict use** (the study's rule): an uncertain grade is its own outcome and is never counted correct
  (``finrag.score.evaluate``). A yes/no is read softly only from a sentence *about the question*: a statement, not a
  table header or row, sharing at least ``RELEVANCE_MIN`` of the question's topic words (its content words less
  its names and periods: sharing the company's name is not being about the question). A table header or row
  (``table_like``) that shares the gold's words, or that holds the gold figure beside others of its kind, is
  uncertain: it states no answer.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Literal, cast

import snowballstemmer
from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

from finrag.core.text import GRADER_STOP_ES, GRADER_STOP_EXTRA
from finrag.score.claims import split_sentences, strip_citations
from finrag.score.declining import refusal_cue
from finrag.score.numbers import (
    Figure,
    detect_number_lang,
    extract_figures,
    shown_number_lang,
    stated_scale,
)

__all__ = ["GradeResult", "Verdict", "answer_polarity", "content_recall", "grade", "match_figure"]

Verdict = Literal["correct", "incorrect", "refusal"]
Method = Literal["numeric", "text", "refusal", "llm"]
# (gold, answer, question) -> "correct" | "incorrect" | "refusal", or None when it cannot tell
LLMGrader = Callable[[str, str, str], str | None]

REL_TOL = 0.01
ROUNDING_CAP = 0.05  # a rounding-based match may not be further off than this (relative)
RECALL_THRESHOLD = 0.4  # content-word recall for a free-text gold (calibrated on FinanceBench's human labels)
RELEVANCE_MIN = 0.3  # share of the question's content words an opening needs before its polarity is read
NAME_WEIGHT = 2.0
DERIVED_WINDOW = 3  # a change may be matched by the difference of two answer figures at most this far apart
MIXED_RECALL_MIN = 0.25  # a gold of words + figures: all figures matched and at least this content recall
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
    eps = 1 + 1e-9
    if abs(a - g) <= 0.5 * 10 ** (-g_dec) * g_scale * eps:
        return True  # rounds to the gold as written: 0.0143 for a gold "0.01" given to two decimals
    # the answer rounded coarser than the gold (0.6 for 0.62): accepted only when that stays close
    return rel <= ROUNDING_CAP and abs(a - g) <= 0.5 * 10 ** (-a_dec) * a_scale * eps


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
    g_scale = g.scale if gk == "num" else (0.01 if g.is_bps else 1.0)  # a basis point is 0.01 percent
    cands: list[tuple[float, float]] = []  # (answer value, scale of its last digit)
    if gk == ak:
        cands.append((av, a.scale if ak == "num" else (0.01 if a.is_bps else 1.0)))
        if ak == "num" and not a.scale_explicit and a.scale != 1.0:
            cands.append((a.value / a.scale, 1.0))  # a default scale ("in thousands") may not apply to it
    elif gk == "pct" and ak == "num" and a.currency is None and not a.scale_explicit:
        cands.append((a.value / a.scale * 100.0, 100.0))  # 0.654 for 65.4%: its last digit is 0.1 percent
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

_STOPS = {"en": set(ENGLISH_STOP_WORDS) | GRADER_STOP_EXTRA, "es": GRADER_STOP_ES | GRADER_STOP_EXTRA}
_WORD = re.compile(r"[a-záéíóúñü]+(?:'[a-z]+)?", re.IGNORECASE)
_COMPOUNDS = [
    (re.compile(r"\bcash\s*-?\s*flows?\b", re.I), "cashflow"),
    (re.compile(r"\bu\.?s\.?\b", re.I), "usa"),
]
_STEMMERS = {"en": snowballstemmer.stemmer("english"), "es": snowballstemmer.stemmer("spanish")}


def _tokens(text: str, lang: str = "en") -> list[tuple[str, bool]]:
    """(stem, is_name) for each content word; a name is capitalised mid-sentence or an acronym ("China", "EPYC")."""
    t = text or ""
    for rx, rep in _COMPOUNDS:
        t = rx.sub(rep, t)
    key = "es" if lang == "es" else "en"
    stem, stop = _STEMMERS[key], _STOPS[key]
    out = []
    for m in _WORD.finditer(t):
        raw = m.group(0).split("'")[0]
        w = raw.lower()
        if w in stop or len(w) < 2:
            continue
        before = t[max(0, m.start() - 2) : m.start()]
        sentence_start = m.start() == 0 or bool(re.search(r"[.!?:\n]\s*$|^\s*$", before))
        is_name = (raw[:1].isupper() and not sentence_start) or (raw.isupper() and len(raw) >= 2)
        out.append((stem.stemWord(w), is_name))
    return out


def _content(text: str, lang: str = "en") -> set[str]:
    """Stemmed content words (Snowball), stop words and one-letter tokens dropped."""
    return {s for s, _ in _tokens(text, lang)}


def content_recall(gold: str, answer: str, question: str = "", lang: str = "en") -> float | None:
    """Weighted share of the gold's content words (stemmed; not stop words, not words of the question) found in
    the answer; names (capitalised mid-sentence, acronyms) weigh twice, because they carry the answer.

    When the gold adds fewer than two words to the question (a choice question: "which of operations, investing,
    financing ..." -> "Operations"), all its words count, but they must appear in the answer's opening sentences,
    where the answer states its choice. A gold with no content word at all ("Yes.", "N/A") gives None: there is
    nothing to compare, which must not read as full recall.
    """
    weights: dict[str, float] = {}
    for st, is_name in _tokens(gold, lang):
        weights[st] = max(weights.get(st, 1.0), NAME_WEIGHT if is_name else 1.0)
    q = _content(question, lang)
    g_only = {w: v for w, v in weights.items() if w not in q}
    if len(g_only) >= 2:
        target, pool = g_only, _content(answer, lang)
    elif weights:
        target, pool = weights, _content(" ".join(_SENT.split(answer.strip())[:2]), lang)
    else:
        return None
    return sum(v for w, v in target.items() if w in pool) / sum(target.values())


# --------------------------------------------------------------------------------------------------- polarity

_YES_START = re.compile(r"^\W*(?:yes|yeah|yep|correct|indeed|s[íi])\b", re.IGNORECASE)
_NO_START = re.compile(r"^\W*(?:no|nope)\b(?!\s+(?:doubt|matter|longer|less|more|one\b))", re.IGNORECASE)
_YESNO_Q = re.compile(
    r"(?:^|[,;:?.]\s*)(?:¿\s*)?(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|es|est[áa]n?"
    r"|tiene|tienen|ha|han|hay)\b",
    re.IGNORECASE,
)
_NEGATION = re.compile(
    r"\b(?:not|no|never|none|neither|nor|without|lacks?|lacking|cannot|unlikely)\b|n['’]t\b", re.IGNORECASE
)
_UP = re.compile(
    r"\b(?:improv\w*|increas\w*|gr[eo]w\w*|rise|rose|risen|rising|higher|up|expand\w*|accelerat\w*|gain\w*|positive"
    r"|healthy|strong\w*|raised?|consistent|stable)\b",
    re.IGNORECASE,
)
_DOWN = re.compile(
    r"\b(?:declin\w*|decreas\w*|drop\w*|fell|fall\w*|lower|down|shr[aiu]nk\w*|contract\w*|decelerat\w*|worse\w*"
    r"|deteriorat\w*|negative|weak\w*|reduc\w*|fluctuat\w*|inconsistent|unstable)\b",
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


def _strip_polarity(gold: str) -> str:
    return re.sub(r"^\W*(?:yes|no|s[íi])\b[\s,.;:!-]*", "", gold, flags=re.IGNORECASE)


def _relevance(text: str, question: str) -> float:
    """Share of the question's content words found in ``text``."""
    q = _content(question)
    return len(q & _content(text)) / len(q) if q else 1.0


def _topic_words(question: str) -> set[str]:
    """The question's content words that say what it asks about: not its names (the company, an acronym), not a
    period ("FY2022"). Sharing the company's name is not being about the question."""
    return {st for st, is_name in _tokens(question) if not is_name and not any(c.isdigit() for c in st)}


def about_question(sentence: str, question: str) -> bool:
    """Is the sentence about what the question asks: a statement (not a table header or row) sharing at least
    RELEVANCE_MIN of the question's topic words, and at least one?"""
    if table_like(sentence):
        return False
    topic = _topic_words(question)
    if not topic:
        return _relevance(sentence, question) >= RELEVANCE_MIN
    shared = topic & _content(sentence)
    return bool(shared) and len(shared) / len(topic) >= RELEVANCE_MIN


_NUMBERISH = re.compile(r"^[-−(]?[$€£]?[\d.,]+%?\)?$|^[$€£%—–-]$")
_VERB_HINT = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|did|does|do|will|would|can|could|paid|pays|reported|reports|"
    r"rose|fell|grew|remained|shows?|indicates?|amounts?\s+to|totals?)\b|\b\w{3,}ed\b",
    re.IGNORECASE,
)


def table_like(text: str) -> bool:
    """A table row or header, not a statement: mostly figures, or a short line without a verb and no sentence
    end ("Components of Fiscal 2023 Net Sales growth", "Net income ... $ 21,979 $ 9,159 $ 16,026")."""
    t = re.sub(r"\[\d{1,3}(?:\s*[,;]\s*\d{1,3})*\]", " ", text).strip()
    tokens = t.split()
    if not tokens:
        return False
    numeric = sum(bool(_NUMBERISH.match(x.rstrip(".,;:"))) for x in tokens)
    verb = bool(_VERB_HINT.search(t))
    if (
        numeric >= 3
        and numeric / len(tokens) >= 0.5
        or numeric >= 2
        and numeric / len(tokens) >= 0.3
        and not verb
    ):
        return True
    if 3 <= len(tokens) <= 12 and not re.search(r"[.!?]$", t) and not verb:
        words = [x for x in tokens if x[:1].isalpha()]
        capitalised = sum(x[:1].isupper() for x in words)
        return bool(words) and capitalised / len(words) >= 0.5
    return False


_CONCLUSION = re.compile(
    r"^\W*(?:therefore|thus|hence|so|in\s+conclusion|in\s+summary|overall|to\s+summari[sz]e|as\s+a\s+result|in\s+short"
    r"|based\s+on\s+(?:this|these|the\s+above|the\s+calculations?|this\s+analysis|the\s+analysis|this\s+information))\b",
    re.IGNORECASE,
)
_PREAMBLE = re.compile(
    r"^\W*(?:to\s+(?:determine|assess|answer|calculate|evaluate|find|analy[sz]e|understand)|in\s+order\s+to|let['’]s"
    r"|we\s+(?:need|must|can|will)|first|the\s+(?:quick|current|operating|gross)\s+\w+\s+(?:ratio|margin)\s+is\s+(?:a|calculated)"
    r"|[\w\s'’]{0,40}\bis\s+(?:calculated|defined|a\s+measure))",
    re.IGNORECASE,
)
_ANSWER_IS = re.compile(
    r"\banswer\s+is\s*:?\s*\**\s*(yes|no)\b(?!\s+(?:doubt|longer|more|less))", re.IGNORECASE
)
_EXPLICIT = re.compile(
    r"(?:^|[,:;]\s*|\banswer\s+is\s+)(yes|no)\b(?!\s+(?:doubt|longer|more|less))", re.IGNORECASE
)


def _soft(sentence: str, question: str) -> str:
    negated = bool(_NEGATION.search(sentence))
    q_up, q_down = bool(_UP.search(question)), bool(_DOWN.search(question))
    a_up, a_down = bool(_UP.search(sentence)), bool(_DOWN.search(sentence))
    if q_up != q_down and a_up != a_down:
        same = (q_up and a_up) or (q_down and a_down)
        return "yes" if same != negated else "no"
    return "no" if negated else "yes"


def answer_polarity(answer: str, question: str = "", strict: bool = True) -> tuple[str | None, bool]:
    """(polarity, hard): 'yes'/'no' from an explicit Yes/No (hard) or read off a verdict sentence (soft).

    The verdict sentence is the last conclusion ("Therefore, ...", "Overall, ...") or else the first sentence
    unless it is a preamble ("To determine ..., we need ..."). Reading it: a question about a direction ("has X
    improved?") is answered by the sentence's direction words (flipped by a negation); otherwise a negation
    means 'no'. No verdict sentence, or one not about the question, gives (None, False).
    """
    a = answer.strip()
    if _YES_START.match(a):
        return "yes", True
    if _NO_START.match(a):
        return "no", True
    stated = _ANSWER_IS.findall(a)
    if stated:  # "... Therefore, the answer is yes.": the model's own verdict, wherever it stands
        return ("yes" if stated[-1].lower() == "yes" else "no"), True
    sentences = [x.strip() for x in _SENT.split(a) if x.strip()]
    if not sentences:
        return None, False

    def about(x: str) -> bool:  # strict=False: the rule before 2026-12-07 (any content words of the question)
        return about_question(x, question) if strict else _relevance(x, question) >= RELEVANCE_MIN

    conclusions = [x for x in sentences if _CONCLUSION.match(x) and about(x)]
    verdict = conclusions[-1] if conclusions else sentences[0]
    m = _EXPLICIT.search(verdict) or (None if conclusions else _EXPLICIT.search(sentences[0]))
    if m:
        return ("yes" if m.group(1).lower() == "yes" else "no"), True
    if not conclusions and _PREAMBLE.match(verdict):
        return None, False
    if not _YESNO_Q.search(question or "") or not about(verdict):
        return (
            None,
            False,
        )  # no yes/no question, or a sentence not about it (off-topic, filing text, a table line)
    return _soft(verdict, question), False


# ------------------------------------------------------------------------------------------------------ grade

# a sentence that commits to an answer: a computed result, a conclusion, "the answer is"
_COMMIT = re.compile(
    r"(?:=|≈)\s*[-−~$€(]?\s*\d"
    r"|^\W*(?:therefore|thus|hence|so|in\s+conclusion|in\s+summary|overall|to\s+summari[sz]e|as\s+a\s+result)\b"
    r"|\b(?:the\s+)?answer\s+is\b|\bwe\s+can\s+(?:estimate|calculate|compute|infer|conclude|see)\b[^.]*\d",
    re.IGNORECASE,
)
_HYPOTHETICAL = re.compile(
    r"\b(?:if|example|instance|hypothetical\w*|suppose|assum\w*|let['’]s\s+say|would\s+need|you\s+would|you\s+can"
    r"|typically|generally|formula|would\s+be\s+calculated)\b",
    re.IGNORECASE,
)


def _committed(answer: str) -> bool:
    """Does some sentence without a refusal cue commit to a result (not a recipe, not a hypothetical)?"""
    for sent in _SENT.split(answer):
        if not sent.strip() or refusal_cue(sent, n_sentences=1) or _HYPOTHETICAL.search(sent):
            continue
        if _COMMIT.search(sent.strip()):
            return True
    return False


def _in_question(f: Figure, qfigs: list[Figure]) -> bool:
    for q in qfigs:
        if q.is_year or f.is_ratio_unit != q.is_ratio_unit:
            continue
        qv = q.percent_value() if q.is_ratio_unit else q.value / q.scale
        fv = f.percent_value() if f.is_ratio_unit else f.value / f.scale
        if qv is not None and fv is not None and math.isclose(abs(qv), abs(fv), rel_tol=1e-9, abs_tol=1e-12):
            return True
    return False


def _conclusion_figures(answer: str, afigs: list[Figure]) -> list[Figure]:
    """Figures of the answer's closing statement: the last sentence with figures, if among the last two."""
    spans, pos = [], 0
    for sent in _SENT.split(answer):
        i = answer.find(sent, pos)
        if i < 0 or not sent.strip():
            continue
        pos = i + len(sent)
        spans.append((i, pos))
    for lo, hi in spans[-2:][::-1]:
        inside = [f for f in afigs if lo <= f.start < hi]
        if inside:
            return inside
    return []


def _same_kind(g: Figure, a: Figure) -> bool:
    """Could ``a`` be a statement of the quantity ``g`` is (percent vs currency vs plain number)?"""
    if g.is_ratio_unit or a.is_ratio_unit:
        return g.is_ratio_unit and a.is_ratio_unit
    return (g.currency is None) == (a.currency is None) and not a.is_year


# a gold that says the answer is not in the filing ("The filing does not say", "Not disclosed")
_NOT_STATED_GOLD = re.compile(
    r"\b(?:(?:does|do|did)\s+not|doesn['’]t|don['’]t|didn['’]t)\s+(?:\w+\s+){0,2}?(?:say|state|disclose|provide"
    r"|mention|specify|report|give|include|break\s+down)\b"
    r"|\bnot\s+(?:\w+\s+)?(?:stated|disclosed|provided|mentioned|specified|reported|given|available|included)\b"
    r"|\b(?:cannot|can['’]t|could\s+not)\s+be\s+(?:determined|calculated|answered|found|derived)\b"
    r"|\bno\s+(?:such\s+)?(?:information|data|mention|disclosure|figure)\b"
    r"|\bno\s+se\s+(?:indica|menciona|especifica|informa|desglosa)\b|\bno\s+(?:consta|figura)\b",
    re.IGNORECASE,
)
_NONE_GOLD = re.compile(
    r"^\W*(?:there\s+(?:are|is|were|was)\s+)?(?:none|nothing|no\s+such\s+\w+|ninguno|nada)\W*$", re.I
)
_NONE_ANSWER = re.compile(
    r"\bnone\b|\bnothing\b|\b(?:there\s+(?:are|is|were|was)|has|have|had|with)\s+no\b|\bno\s+(?:\w+\s+){0,3}"
    r"(?:are|is|were|was)\s+(?:registered|listed|reported|outstanding|disclosed)\b"
    r"|\b(?:does|do|did)\s+not\s+(?:\w+\s+)?have\s+any\b|\bnot\s+have\s+any\b",
    re.IGNORECASE,
)
_CHANGE = re.compile(
    r"\b(?:increas|decreas|chang|differen|grew|grow|fell|fall|declin|rose|rise|risen|drop|improv|expan|contract"
    r"|shr[iu]nk|gain|lost|loss|yoy|year[- ]over[- ]year|y/y|vs\b|versus|compared|higher|lower|up\b|down\b"
    r"|aument|disminu|creci|ca[íi]d|variaci)\w*",
    re.IGNORECASE,
)


# Which way a figure points, read off the words next to it. Direction words ("fell", "rose") outrank the nouns
# that carry a sign ("loss", "income"): "net income fell by $64 million" is a fall.
_SIGN_DOWN = re.compile(
    r"\b(?:decreas\w*|declin\w*|fell|fall\w*|drop\w*|down|lower|reduc\w*|shr[aiu]nk\w*|contract\w*|negative"
    r"|disminu\w*|ca[íi]d[ao]s?|cay[óo]|baj[óoa]\w*|negativ[oa]s?)\b",
    re.IGNORECASE,
)
_SIGN_UP = re.compile(
    r"\b(?:increas\w*|rose|rise[sn]?|rising|gr[eo]w\w*|up|higher|improv\w*|expand\w*|positive"
    r"|aument\w*|creci\w*|subi[óo]|positiv[oa]s?)\b",
    re.IGNORECASE,
)
_SIGN_NEG_NOUN = re.compile(
    r"\b(?:loss|losses|lost|losing|deficit|outflows?|p[ée]rdidas?|perdi[óo]|d[ée]ficit)\b", re.IGNORECASE
)
_SIGN_POS_NOUN = re.compile(
    r"\b(?:income|profits?|profitable|earnings|earned|surplus|gains?|inflows?|beneficios?|ganancias?|gan[óo])\b",
    re.IGNORECASE,
)
_CLAUSE_END = re.compile(r"[;!?\n]|(?<!\d)\.(?!\d)|\bbut\b|\bwhile\b|\bwhereas\b", re.IGNORECASE)
SIGN_WINDOW_BEFORE = 60  # characters of the figure's own clause read before it ...
SIGN_WINDOW_AFTER = 25  # ... and after it ("a $64 million decrease")


def figure_sign(text: str, f: Figure) -> str | None:
    """'neg' / 'pos' when the figure or the words of its clause give it a sign, else None (unsigned).

    A minus or accounting parentheses make it negative; otherwise the nearest direction word of its clause
    ("fell", "increased"), else the nearest signed noun ("loss", "income"), decides.
    """
    if f.value < 0:
        return "neg"
    lo = max(0, f.start - SIGN_WINDOW_BEFORE)
    before = text[lo : f.start]
    cuts = list(_CLAUSE_END.finditer(before))
    if cuts:
        before = before[cuts[-1].end() :]
    after = text[f.end : f.end + SIGN_WINDOW_AFTER]
    cut = _CLAUSE_END.search(after)
    if cut:
        after = after[: cut.start()]
    for down_rx, up_rx in ((_SIGN_DOWN, _SIGN_UP), (_SIGN_NEG_NOUN, _SIGN_POS_NOUN)):
        cues = [(len(before) - m.end(), "neg") for m in down_rx.finditer(before)]
        cues += [(len(before) - m.end(), "pos") for m in up_rx.finditer(before)]
        cues += [(m.start(), "neg") for m in down_rx.finditer(after)]
        cues += [(m.start(), "pos") for m in up_rx.finditer(after)]
        if cues:
            return min(cues)[1]
    return None


def _sign_conflict(g: Figure, gold_text: str, a: Figure, answer_text: str) -> bool:
    """The gold and the answer both give the figure a sign, and the signs differ ("an operating loss of $87.1
    million" answered by "operating income was $87.1 million"; a fall of $64 million by "rose by $64 million").
    An unsigned side never conflicts: sign conventions alone are not penalised."""
    gs = figure_sign(gold_text, g)
    if gs is None:
        return False
    a_sign = figure_sign(answer_text, a)
    return a_sign is not None and a_sign != gs


def _match_all(
    gfigs: list[Figure],
    afigs: list[Figure],
    tol: float,
    derived: bool = False,
    texts: tuple[str, str] | None = None,
) -> tuple[list[tuple[Figure, Figure]], list[Figure], bool]:
    """Match each gold figure to an answer figure; with ``texts`` (gold, answer), a match whose signs conflict
    does not count."""
    matched, unmatched, mismatch = [], [], False
    for g in gfigs:
        hit = None
        for a in afigs:
            r = match_figure(g, a, tol)
            if r == "match" and texts is not None and _sign_conflict(g, texts[0], a, texts[1]):
                continue
            if r == "match":
                hit = a
                break
            mismatch = mismatch or r == "unit_mismatch"
        if hit is None and derived:
            hit = _derived_match(g, afigs, tol)
        if hit is not None:
            matched.append((g, hit))
        else:
            unmatched.append(g)
    return matched, unmatched, mismatch


def _derived_match(g: Figure, afigs: list[Figure], tol: float) -> Figure | None:
    """A gold change ("debt decreased by $229 million", "margin fell 0.8%") stated in the answer as the two levels
    it is computed from ("$150,868 million ... $150,639 million", "19.4% to 18.5%"): the difference of two nearby
    answer figures of the same kind matches the gold."""
    same = [
        a
        for a in afigs
        if a.is_ratio_unit == g.is_ratio_unit and (a.currency is None) == (g.currency is None)
    ]
    for i, a in enumerate(same):
        for b in same[i + 1 : i + 1 + DERIVED_WINDOW]:
            diff = abs(_kind(a)[1] - _kind(b)[1])
            if diff == 0:
                continue
            kind = "pct" if g.is_ratio_unit else "num"
            scale = 1.0 if kind == "pct" else min(a.scale, b.scale)
            d = Figure(value=diff, raw=f"{b.raw} - {a.raw}", start=a.start, end=b.end, is_percent=kind == "pct",
                       scale=scale, scale_explicit=True, currency=a.currency, decimals=max(a.decimals, b.decimals))  # fmt: skip
            if match_figure(g, d, tol) == "match":
                return d
    return None


def grade(  # noqa: C901 (the grading rules in the order they apply)
    gold: str,
    answer: str,
    question: str = "",
    *,
    lang: str | None = None,
    tol: float = REL_TOL,
    recall_threshold: float = RECALL_THRESHOLD,
    uncertain_band: float = 0.15,
    llm_grader: LLMGrader | None = None,
    strict: bool = True,
) -> GradeResult:
    """Grade ``answer`` against ``gold`` (see the module docstring). ``question`` supplies the default scale and
    the figures an answer may quote without credit. ``strict=False`` grades as before 2026-12-07 (a soft yes/no
    from any sentence sharing the question's words, table lines graded as statements): the "was" of each figure."""
    gold = "" if gold is None else str(gold).strip()
    answer = "" if answer is None else strip_citations(str(answer))  # "[1]" is a citation, not a figure
    question = "" if question is None else str(question)
    joint = lang or detect_number_lang(f"{gold}\n{answer}")
    # each text is read in its own number format when it shows one ("2.431,7 millones" against "EUR 2,431.7
    # million"); a text without a telling number falls back to the joint reading
    g_lang = lang or shown_number_lang(gold) or joint
    a_lang = lang or shown_number_lang(answer) or joint
    lang = joint
    q_scale = stated_scale(question)
    qfigs = extract_figures(question, lang)

    g_pol = gold_polarity(gold)
    body = _strip_polarity(gold) if g_pol else gold
    # the headline: later gold sentences explain it ("Adj. EBITDA", "Inc.", "U.S." do not end it)
    parts = split_sentences(body)
    key, key_end = (parts[0][2], parts[0][1]) if parts else (body, len(body))
    gfigs_all = [f for f in extract_figures(body, g_lang, q_scale) if not f.is_year]
    gfigs = [f for f in gfigs_all if f.start < key_end]
    a_all = extract_figures(answer, a_lang, q_scale)
    gold_in_q = any(_in_question(g, qfigs) for g in gfigs)
    afigs = [f for f in a_all if not f.is_year and (gold_in_q or not _in_question(f, qfigs))]
    a_pol, hard = answer_polarity(answer, question, strict) if g_pol else (None, False)
    # only a change may be matched by the difference of two levels
    change = bool(_CHANGE.search(gold) or _CHANGE.search(question))
    texts = (body, answer)
    matched, unmatched, mismatch = _match_all(gfigs, afigs, tol, derived=change, texts=texts)
    res = GradeResult(
        verdict="incorrect",
        method="numeric" if gfigs else "text",
        gold_figures=gfigs,
        answer_figures=afigs,
        matched=matched,
        gold_polarity=g_pol,
        answer_polarity=a_pol,
    )
    # words in the gold's own language: "2.431,7 millones de euros" is all figure
    key_words = _content(re.sub(r"[\d.,%$€()-]+", " ", key), g_lang) - _content(question, lang)
    numeric_gold = bool(gfigs) and len(key_words) <= 1

    # 1. refusals: a refusal cue and no committed answer
    cue = refusal_cue(answer, n_sentences=10_000)
    if cue is not None:
        # "Yes, I cannot answer this from the passages.": a bare yes/no inside a refusal sentence is no answer
        bare = (
            bool(_YES_START.match(answer) or _NO_START.match(answer)) and refusal_cue(answer, 1) is not None
        )
        answered = bool(gfigs and not unmatched) or bool(g_pol and hard and a_pol == g_pol and not bare)
        if not answered and not _committed(answer):
            gold_cue: re.Match[str] | str | None = (
                _NOT_STATED_GOLD.search(key) if not gfigs and not g_pol else None
            )
            if gold_cue is not None:  # "The filing does not say": declining is the right answer
                gold_cue = cast("re.Match[str]", gold_cue).group(0)
                res.verdict, res.method = "correct", "refusal"
                res.detail = f"the gold says it is not stated ({gold_cue!r}); so does the answer ({cue!r})"
                return res
            res.verdict, res.method, res.detail = "refusal", "refusal", f"refusal cue: {cue!r}"
            return res

    # 2. yes/no gold
    if g_pol and a_pol:
        if a_pol != g_pol:
            res.verdict, res.detail = (
                "incorrect",
                f"polarity {a_pol} vs gold {g_pol}" + ("" if hard else " (soft)"),
            )
            res.uncertain = not hard
            return _maybe_llm(res, gold, answer, question, llm_grader)
        contradicted = [g for g in unmatched if any(_same_kind(g, a) for a in afigs)]
        if gfigs and not matched and contradicted:
            res.verdict = "incorrect"
            res.unit_mismatch = mismatch
            res.detail = f"polarity {a_pol} agrees but the answer's figures differ from {[g.raw for g in contradicted]}"
            return res
        res.verdict, res.detail = "correct", f"polarity {a_pol} agrees" + ("" if hard else " (soft)")
        res.uncertain = not hard
        return res

    # 3. gold with figures in its headline
    if gfigs and numeric_gold:
        final = _conclusion_figures(answer, afigs) if len(gfigs) == 1 else []
        if not unmatched and final:
            f_matched, f_unmatched, _ = _match_all(gfigs, final, tol, derived=change, texts=texts)
            if f_unmatched and any(_same_kind(g, a) for g in f_unmatched for a in final):
                res.detail = (
                    f"gold figure(s) {[g.raw for g in f_unmatched]} appear only in the working; the conclusion "
                    f"states {[a.raw for a in final]}"
                )
                return res
        if not unmatched:
            res.verdict, res.detail = "correct", f"all {len(gfigs)} gold figure(s) matched"
            used = {m.start for _, m in matched}
            others = [a for a in afigs if a.start not in used]
            if (
                strict and table_like(answer) and others
            ):  # a table row: the gold figure among others, none chosen
                res.uncertain = True
                res.detail += f" in a table row beside {len(others)} other figure(s)"
            return res
        if mismatch and not matched:
            res.verdict, res.unit_mismatch = "incorrect", True
            res.detail = "answer is off by a power of 1,000"
            return res
        res.detail = (
            f"{len(unmatched)} of {len(gfigs)} gold figure(s) unmatched: {[g.raw for g in unmatched]}"
        )
        flipped = [g.raw for g in unmatched if any(match_figure(g, a, tol) == "match" for a in afigs)]
        if flipped:
            res.detail += f"; the answer states {flipped} with the opposite sign or direction"
        return res

    # 4. words decide; when the headline also has figures, matching them all lowers the bar for the words
    rec = content_recall(re.sub(r"[\d.,%$€()-]+", " ", key), answer, question, lang)
    res.method = "text"
    if rec is None:
        return _wordless_gold(res, body, answer, a_all, lang, gold, question, llm_grader)
    res.recall = rec
    if gfigs and not unmatched and rec >= MIXED_RECALL_MIN:
        res.verdict, res.method = "correct", "numeric"
        res.detail = f"all {len(gfigs)} headline figure(s) matched, content recall {rec:.2f}"
        return res
    contradicted = [g for g in unmatched if any(_same_kind(g, a) for a in afigs)]
    # the words may agree, the figures say otherwise (a yes/no gold's figures only explain its yes/no)
    if gfigs and not matched and contradicted and not g_pol:
        res.unit_mismatch = mismatch
        res.detail = f"the answer's figures differ from the headline's {[g.raw for g in contradicted]}"
        return res
    if (
        strict and table_like(answer) and rec >= recall_threshold
    ):  # a header or row shares words, it states no answer
        res.verdict, res.uncertain = "correct", True
        res.detail = f"content score {rec:.2f}, but the answer is a table header or row"
        return _maybe_llm(res, gold, answer, question, llm_grader)
    return _text_verdict(res, rec, recall_threshold, uncertain_band, gold, answer, question, llm_grader)


def _wordless_gold(
    res: GradeResult,
    body: str,
    answer: str,
    a_all: list[Figure],
    lang: str,
    gold: str,
    question: str,
    llm_grader: LLMGrader | None,
) -> GradeResult:
    """A gold with no content word to compare: "There are none" (the answer must say so), a year (the answer
    must state it), or nothing beyond its yes/no (uncertain, never full recall)."""
    if _NONE_GOLD.match(body):
        said = bool(_NONE_ANSWER.search(" ".join(_SENT.split(answer.strip())[:3])))
        res.verdict = "correct" if said else "incorrect"
        res.detail = f"gold says there are none; the answer {'says so' if said else 'does not'}"
        return res
    years = [f for f in extract_figures(body, lang) if f.is_year]
    if years:
        hit = all(any(abs(a.value - y.value) < 0.5 for a in a_all) for y in years)
        res.verdict = "correct" if hit else "incorrect"
        res.detail = (
            f"gold year(s) {[y.raw for y in years]} {'stated' if hit else 'not stated'} in the answer"
        )
        return res
    res.detail, res.uncertain = "the gold has no words or figures to compare beyond its yes/no", True
    return _maybe_llm(res, gold, answer, question, llm_grader)


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
    reply = llm_grader(gold, answer, question)
    if reply is None:  # the grader could not tell (an unreadable reply): the deterministic verdict stands
        res.detail += "; LLM grader reply unreadable, deterministic verdict kept"
        return res
    v = str(reply).strip().lower()
    if v not in ("correct", "incorrect", "refusal"):
        raise ValueError(f"llm_grader returned {v!r}; expected correct / incorrect / refusal")
    res.detail += f"; deterministic verdict {res.verdict} was uncertain, LLM grader said {v}"
    res.verdict, res.method = v, "llm"  # type: ignore[assignment]
    return res
