"""Did the model decline to answer, and how did it handle a made-up premise?

A refusal is a statement that the answer cannot be given ("not stated", "cannot be determined", "the context does
not provide", "no se indica", "as an AI I don't have access"). ``is_refusal`` judges the opening sentences (an
answer that first gives a figure and later adds "other details are not provided" is an answer); the grader looks
for a cue anywhere and then decides whether the answer still commits to a result.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

from finrag.llm.prompts.parse import is_decline
from finrag.score.numbers import Figure, extract_figures

__all__ = [
    "declined",
    "false_premise_response",
    "is_abstention",
    "is_refusal",
    "refusal_cue",
    "repeats_premise",
]

_INFO = (
    r"(?:information|info|data|details?|figures?|numbers?|evidence|context|text|document|documents|excerpts?|filing"
    r"|statements?|report|records?|mention|breakdown|specifics?|values?|amounts?|disclosure)"
)
_NEG_VERB = (
    r"(?:do(?:es)?\s+not|don['’]t|doesn['’]t|did\s+not|didn['’]t|is\s+not|isn['’]t|are\s+not|aren['’]t|was\s+not"
    r"|wasn['’]t|were\s+not|weren['’]t|has\s+not|hasn['’]t|have\s+not|haven['’]t)"
)
_PROVIDE = (
    r"(?:provide|provided|include|included|contain|contained|mention|mentioned|specify|specified|disclose|disclosed|say"
    r"|state|stated|give|given|offer|show|shown|list|listed|present|presented|detail|detailed|cover|covered|reference"
    r"|break\s+down|outline|outlined|report|reported|indicate|indicated|explicitly|directly|specifically"
    r"|explain|discuss|allow|permit|enable)"
)
_REFUSAL_EN = [
    rf"\b{_INFO}\s+(?:\w+\s+){{0,4}}?{_NEG_VERB}\s+(?:\w+\s+){{0,3}}?{_PROVIDE}\b",
    rf"\b{_NEG_VERB}\s+(?:\w+\s+){{0,2}}?(?:provide|include|contain|mention|specify|disclose|give)\w*\s+(?:\w+\s+){{0,3}}?"
    rf"{_INFO}",
    r"\bnot\s+(?:explicitly\s+|specifically\s+|directly\s+|clearly\s+|readily\s+)?(?:stated|provided|mentioned"
    r"|disclosed|available|included|given|specified|found|present|contained|shown|listed|detailed"
    r"|possible|feasible)\b",
    r"\b(?:cannot|can['’]t|can\s+not|could\s+not|couldn['’]t|unable\s+to|not\s+(?:be\s+)?able\s+to|impossible\s+to"
    r"|not\s+possible\s+to|no\s+way\s+to)\s+(?:\w+\s+){0,2}(?:determine|determined|calculate|calculated|provide"
    r"|answer|find|compute|computed|say|assess|confirm|ascertain|access|predict|identify|verify|tell|know|extract"
    r"|derive|give|offer|be\s+determined|be\s+calculated|comment|evaluate|conclude|specify|state)\b",
    r"\bI\s+(?:do\s+not|don['’]t)\s+know\b",
    r"\bI['’]?m\s+sorry\b|\bI\s+am\s+sorry\b|\bI\s+apologi[sz]e\b|\bunfortunately\b",
    r"\bas\s+an\s+AI\b|\bAI\s+(?:language\s+)?model\b",
    r"\bI\s+(?:do\s+not|don['’]t)\s+have\s+(?:\w+\s+){0,3}(?:access|real-time|the\s+ability|information|data"
    r"|specific|enough|sufficient|the\s+necessary|details)",
    r"\b(?:insufficient|not\s+enough|limited|no\s+(?:specific|direct|explicit|relevant|sufficient))\s+"
    rf"(?:\w+\s+){{0,2}}{_INFO}",
    rf"\bno\s+{_INFO}\s+(?:\w+\s+){{0,3}}(?:is|are|was|were)\s+(?:\w+\s+)?(?:provided|available|given|included"
    r"|mentioned|present|found)",
    rf"\b{_INFO}\s+(?:is|are)\s+(?:not\s+)?(?:missing|unavailable|lacking)\b",
    r"\bwithout\s+(?:the\s+|specific\s+|access\s+to\s+|more\s+|additional\s+|further\s+|actual\s+|detailed\s+)+"
    rf"(?:\w+\s+){{0,2}}{_INFO}",
    r"\bplease\s+(?:provide|refer|check|consult|share|supply)\b",
    r"\b(?:would|will)\s+need\s+(?:to\s+(?:have|see|know|access|review|look)|the|more|additional|access|specific)\b",
    r"\bneed(?:ed)?\s+(?:more|additional|further)\s+(?:information|data|details|context)\b",
]
_REFUSAL_ES = [
    r"\bno\s+se\s+(?:indica|menciona|especifica|proporciona|detalla|informa|incluye|puede\s+determinar|dispone"
    r"|desglosa|recoge|facilita|encuentra|presenta)\w*",
    r"\bno\s+(?:es\s+posible|puedo|podemos|se\s+puede|consta|figura|aparece|dispongo|tengo|hay\s+(?:suficiente\s+)?"
    r"(?:informaci[óo]n|datos))\b",
    r"\b(?:el|los)\s+(?:contexto|documento|texto|fragmentos?|informe)s?\s+no\s+(?:\w+\s+){0,2}(?:proporciona|incluye"
    r"|contiene|menciona|especifica|indica|detalla|permite)\w*",
    r"\blo\s+siento\b|\bno\s+s[ée]\b|\binformaci[óo]n\s+insuficiente\b|\bsin\s+(?:m[áa]s\s+)?(?:informaci[óo]n|datos)",
]
_REFUSAL_RE = re.compile("|".join(f"(?:{p})" for p in _REFUSAL_EN + _REFUSAL_ES), re.IGNORECASE)
_EXACT_REFUSALS = re.compile(
    r"^\W*(?:n/?a|unknown|not\s+(?:stated|available|known|applicable)|cannot\s+be\s+determined|none\s+given"
    r"|no\s+(?:answer|data)|desconocido|no\s+consta)\W*$",
    re.IGNORECASE,
)
_FLAG_RE = re.compile(
    r"\b(?:premise|assumption|question)\s+(?:\w+\s+){0,3}(?:is|appears|seems|may\s+be|might\s+be|contains?)\s+"
    r"(?:\w+\s+){0,2}(?:incorrect|wrong|false|mistaken|inaccurate|erroneous|flawed|not\s+(?:correct|accurate|supported))"
    r"|\b(?:incorrect|inaccurate|mistaken|erroneous|false)\s+(?:premise|assumption|figure|number|amount|claim|statement)"
    r"|\bcontrary\s+to\b|\bdoes\s+not\s+(?:match|align|agree|correspond)|\bdoesn['’]t\s+(?:match|align|agree)"
    r"|\b(?:no|not\s+any)\s+(?:evidence|indication|record)\s+(?:that|of)\b|\bnot\s+supported\s+by\b"
    r"|\b(?:figure|amount|number|value)\s+(?:\w+\s+){0,3}(?:does\s+not|doesn['’]t|did\s+not|didn['’]t)\s+"
    r"(?:appear|exist)|\bno\s+such\s+(?:figure|amount|number|value|item|charge|payment|transaction)\b"
    r"|\b(?:correct|actual|reported)\s+(?:figure|amount|number|value)\s+(?:is|was)\b"
    r"|\bla\s+premisa\b|\bno\s+es\s+correct[oa]\b|\bincorrect[oa]s?\b|\bno\s+coincide\b",
    re.IGNORECASE,
)
# Cues of a correction that an answer also uses in passing ("in fact", "rather than"): they count as flagging the
# premise only when the answer does not itself state the made-up figure.
_WEAK_FLAG_RE = re.compile(
    r"\b(?:actually|in\s+fact|in\s+reality)\b|\brather\s+than\b|\bnot\s+\$?\d|\bdiffers?\s+from\b"
    r"|\ben\s+realidad\b",
    re.IGNORECASE,
)

_SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z¿¡\"'(])|\n+")


def refusal_cue(text: str, n_sentences: int = 2) -> str | None:
    """The refusal phrase found in the opening ``n_sentences`` sentences of ``text``, or None."""
    t = str(text or "").strip()
    if not t:
        return "empty answer"
    if _EXACT_REFUSALS.match(t):
        return t
    head = " ".join(_SENT_SPLIT.split(t)[:n_sentences])
    m = _REFUSAL_RE.search(head)
    return m.group(0) if m else None


def is_refusal(text: str) -> bool:
    """True when the answer opens by declining: says the information is absent or the question unanswerable, in
    its first sentence, or in its second after a first that states no amount ("Based on the passages provided.
    The revenue is not stated."). A figure first and a caveat after is an answer."""
    if refusal_cue(text, n_sentences=1) is not None:
        return True
    sentences = [x for x in _SENT_SPLIT.split(str(text or "").strip()) if x.strip()]
    if len(sentences) < 2 or refusal_cue(sentences[1], n_sentences=1) is None:
        return False
    return not any(not f.is_year for f in extract_figures(sentences[0]))


def declined(final_answer: str) -> bool:
    """The study's `declined`: the final answer opens with a refusal, or uses the decline prompt's own phrase
    (the score stage and the service both read it from here)."""
    return is_refusal(final_answer) or is_decline(final_answer)


# The synthetic study's looser rule (Spanish and English): a refusal cue anywhere in the answer, not only in its
# opening. Its figures were measured with it, so it stays beside the study's rule rather than replaced by it.
_ABSTAIN_RE = re.compile(
    r"\bno\s+(?:consta|figura|aparece|se\s+(?:indica|menciona|especifica|informa|recoge|proporciona|detalla|"
    r"desglosa|puede|dispone)|est[áa]\s+disponible|dispon\w*|hay\s+(?:informaci[óo]n|datos)|es\s+posible|"
    r"puedo|contiene|incluye)"
    r"|\bsin\s+informaci[óo]n|\bnot\s+(?:available|stated|mentioned|provided|disclosed|found)"
    r"|\bcannot\s+(?:be\s+)?(?:determined?|answer(?:ed)?)|\bno\s+information|\binsufficient\b|\bdeclin",
    re.IGNORECASE,
)


def is_abstention(text: str) -> bool:
    """Does the answer decline anywhere ("No consta ...", "not stated ...")? The synthetic study's rule."""
    return bool(_ABSTAIN_RE.search(text or ""))


def false_premise_response(
    answer: str, premise_figures: Sequence[str | float | Figure] = ()
) -> Literal["flagged", "declined", "used"]:
    """How an answer treated a question built on a made-up figure.

    ``flagged``: it says the premise is wrong (contradicts, corrects or questions it); ``declined``: it refuses
    without challenging the premise; ``used``: anything else — it answered as if the made-up figure were real
    (whether or not it repeats the figure; :func:`repeats_premise` tells that apart). A correction that restates
    the made-up figure next to the true one ("it was $3.1bn, not $5bn") counts as flagged; a passing "in fact"
    in an answer that states the made-up figure as its own does not.
    """
    text = str(answer or "")
    if _FLAG_RE.search(text):
        return "flagged"
    repeated = bool(premise_figures) and repeats_premise(text, premise_figures)
    if _WEAK_FLAG_RE.search(text) and not repeated:
        return "flagged"
    if repeated and re.search(r"\b(?:not|no|never|instead|incorrect|wrong)\b", text, re.IGNORECASE):
        for f in extract_figures(text):
            window = text[max(0, f.start - 25) : f.start].lower()
            if f.value in _premise_values(premise_figures) and re.search(
                r"\b(?:not|never|instead\s+of)\s*$", window
            ):
                return "flagged"
    if is_refusal(text):
        return "declined"
    return "used"


def _premise_values(premise_figures: Sequence[str | float | Figure]) -> list[float]:
    vals: list[float] = []
    for p in premise_figures:
        if isinstance(p, Figure):
            vals.append(p.value)
        elif isinstance(p, int | float):
            vals.append(float(p))
        else:
            vals.extend(f.value for f in extract_figures(str(p)) if not f.is_year)
    return vals


def repeats_premise(
    answer: str, premise_figures: Sequence[str | float | Figure], rel_tol: float = 0.001
) -> bool:
    """True when the answer states one of the made-up figures (within ``rel_tol``: a made-up figure is repeated as
    written, not computed, so 1% would also catch a real "$5.25 billion" credit facility for a made-up "$5.2
    billion" net income)."""
    want = _premise_values(premise_figures)
    got = [f.value for f in extract_figures(str(answer or "")) if not f.is_year]
    return any(abs(g - w) <= rel_tol * max(abs(w), 1e-12) for w in want for g in got)
