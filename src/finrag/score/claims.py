"""Split an answer into checkable claims and score its groundedness.

The deterministic splitter is the baseline and the fallback of the LLM splitter: sentences first, then a sentence
that carries several figures joined by ";" or by "and" + a verb is cut in two, so that each claim can be checked
on its own figure. Hand-written (a few regular expressions) rather than a sentence-splitting dependency because
filings text needs its own abbreviations (Inc., Corp., U.S., No.) and decimals ($1.5) kept whole.

Groundedness = share of an answer's claims the judge finds supported; fully grounded = every claim supported.
An answer with no claims (a refusal, or only meta sentences such as "the passages do not say") is scored as a
refusal: groundedness None and fully_grounded False, never 1.0.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

from finrag.core.contracts import Claim
from finrag.core.text import CLAIM_STOP_EN
from finrag.llm.prompts.render import task_prompt

# ---------------------------------------------------------------- text utilities (shared with judge/citations)

CITE_MARKER = re.compile(r"\s*\[(\d{1,3}(?:\s*(?:[,;]|-|–)\s*\d{1,3})*)\]")
_ABBREV = {
    "inc", "corp", "co", "ltd", "llc", "plc", "no", "nos", "vs", "approx", "est", "mr", "ms", "mrs", "dr", "st",
    "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "fig", "figs", "e.g",
    "i.e", "u.s", "u.k", "u.s.a", "etc", "al", "cf", "p", "pp", "vol", "dept", "govt", "bros", "n.a", "s.a",
    "adj", "excl", "incl", "avg", "yr", "yrs", "qtr", "mgmt",
}  # fmt: skip
_BOUNDARY = re.compile(r"[.!?](?:[\"'”’)\]]*)(?:\s*\[\d[^\]]*\])*(?=\s+[\"'“(\[]?[A-Z0-9$€£])")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)$")


def split_sentences(text: str) -> list[tuple[int, int, str]]:
    """Sentences as (start, end, text) spans of `text`; newlines always end a sentence.

    A citation marker written after the full stop ("... billion. [2] Next") stays with its sentence.
    """
    out: list[tuple[int, int, str]] = []
    for line in re.finditer(r"[^\n]+", text):
        base, s = line.start(), line.group()
        cut = 0
        for m in _BOUNDARY.finditer(s):
            stop = m.start()
            w = _WORD_BEFORE.search(s[:stop])
            word = w.group(1).lower().rstrip(".") if w else ""
            if word in _ABBREV or (len(word) == 1 and word.isalpha()):
                continue
            _append(out, text, base + cut, base + m.end())
            cut = m.end()
        _append(out, text, base + cut, base + len(s))
    return out


def _append(out: list, text: str, start: int, end: int) -> None:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        out.append((start, end, text[start:end]))


def strip_citations(text: str) -> str:
    """The text without its [n] markers (a claim is checked on its words, not on its citations)."""
    return re.sub(r"\s+([.,;:!?])", r"\1", CITE_MARKER.sub("", text)).strip()


def parse_markers(text: str) -> list[int]:
    """Passage numbers cited in `text` as [n], [n, m], [n; m], [n-m] or [n][m], in order of first appearance."""
    seen: list[int] = []
    for m in CITE_MARKER.finditer(text):
        for part in re.split(r"\s*[,;]\s*", m.group(1)):
            rng = re.split(r"\s*[-–]\s*", part)
            nums = (
                range(int(rng[0]), int(rng[-1]) + 1) if len(rng) == 2 and int(rng[0]) <= int(rng[-1]) else rng
            )
            for n in nums:
                if int(n) not in seen:
                    seen.append(int(n))
    return seen


# English function words (a subset of the Glasgow list that scikit-learn ships): kept here because importing
# scikit-learn for a word list costs seconds on every judge start.


def stop_words() -> frozenset[str]:
    return CLAIM_STOP_EN


_SUFFIXES = ("ations", "ation", "ings", "ing", "ies", "ied", "es", "ed", "ly", "s")


_POSSESSIVE = re.compile(r"'s?$")


@lru_cache(maxsize=1 << 18)
def stem(word: str) -> str:
    """A crude, deterministic stem: enough to match "increased"/"increase", "revenues"/"revenue". Cached: the
    numeric judge stems the same passage words for every claim it checks against them."""
    w = word.lower().replace("’", "'")
    w = _POSSESSIVE.sub("", w)
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 4:
            w = w[: -len(suf)]
            break
    return w[:-1] if w.endswith("e") and len(w) > 4 else w


_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")


def content_stems(text: str) -> set[str]:
    """Stems of the content words of `text` (stop words, one- and two-letter words dropped); a fresh set, so a
    caller may change it."""
    return set(_content_stems(text))


@lru_cache(maxsize=1 << 16)
def _content_stems(text: str) -> frozenset[str]:
    """content_stems, cached: the same passage lines are read again for every claim judged against them."""
    stops = stop_words()
    out = set()
    for w in _WORD.findall(text):
        lw = w.lower().replace("’", "'")
        lw = _POSSESSIVE.sub("", lw)
        if len(lw) >= 3 and lw not in stops:
            out.add(stem(lw))
    return frozenset(out)


# ---------------------------------------------------------------- splitting

_REFUSAL = re.compile(
    r"\b(?:cannot|can't|can not|unable to|not possible to|not able to)\s+(?:be\s+)?"
    r"(?:answer|determine|find|provide|calculate|compute|identify|confirm|verify|answered|determined)"
    r"|\b(?:not enough|insufficient)\s+information\b",
    re.IGNORECASE,
)
# "the passages do not state ...", "there is no mention of X in the passages": a remark about the context, not a
# claim about the company. The negation must bear on the passages: "Based on the context, income was $5.1 billion,
# not $6.0 billion" and "According to the passages, 3M had no commercial paper" are claims.
_ABOUT_CONTEXT = re.compile(
    r"\b(?:passages?|context|excerpts?|provided\s+(?:documents?|text|information)|sources?\s+provided)\s+"
    r"(?:\w+\s+){0,3}?(?:do(?:es)?\s+not|don['’]t|doesn['’]t|did\s+not|didn['’]t|is\s+not|isn['’]t|are\s+not"
    r"|aren['’]t|lacks?|(?:contains?|has|have|gives?|provides?|makes?|mentions?|offers?)\s+no)\b"
    r"|\b(?:no|not)\b[^.;]{0,80}\b(?:in|from|by)\s+the\s+(?:provided\s+|given\s+)?(?:passages?|context|excerpts?)\b",
    re.IGNORECASE,
)
_SPLIT_VERBS = (
    r"(?:was|were|is|are|rose|fell|increased|decreased|grew|declined|totaled|totalled|reached|amounted|came|"
    r"stood|improved|dropped|reported|had|generated|recorded)"
)
_AND_SPLIT = re.compile(
    rf",?\s+(?:and|while|whereas)\s+(?=(?:\S+\s+){{0,6}}?{_SPLIT_VERBS}\b)", re.IGNORECASE
)


def is_meta_sentence(sentence: str) -> bool:
    """True for refusals and statements about the passages rather than the company (not claims); a sentence that
    states an amount is a claim whatever else it says ("not stated for 2019; 2018 revenue was $5 billion")."""
    if not (_REFUSAL.search(sentence) or _ABOUT_CONTEXT.search(sentence)):
        return False
    return not _has_amount(sentence)


_LABEL = re.compile(r"^\W*(?:final\s+)?(?:answer|reasoning|sources?|references?)\s*:\**\s*", re.IGNORECASE)
# prompt markup a small model copies into its answer ('<passage n="1" source="...">', "</answer>"): not a claim
_MARKUP = re.compile(r"</?(?:passage|answer|question|context|passages)\b[^>]*>", re.IGNORECASE)


def _says_nothing(text: str) -> bool:
    """A list marker ("1.", "2)") or a bare year ("2022", a table header line): no content word, no amount."""
    if re.fullmatch(r"\W*\(?\d{1,2}[.)]\W*", text):
        return True
    return not content_stems(text) and not _has_amount(text)


def _has_amount(text: str) -> bool:
    from finrag.score.numbers import extract_figures

    return any(not f.is_year for f in extract_figures(text))


def _split_compound(sentence: str) -> list[str]:
    """Cut at ";" or ", and <subject> <verb>" when every part carries its own figure (safe: nothing is lost)."""
    parts = [p.strip() for p in re.split(r";\s+", sentence) if p.strip()]
    if len(parts) > 1 and all(_has_amount(p) for p in parts):
        out: list[str] = []
        for p in parts:
            out.extend(_split_compound(p[0].upper() + p[1:]))
        return out
    for m in _AND_SPLIT.finditer(sentence):
        left, right = sentence[: m.start()].strip(), sentence[m.end() :].strip()
        if len(left.split()) >= 3 and len(right.split()) >= 3 and _has_amount(left) and _has_amount(right):
            return [left.rstrip(",")] + _split_compound(right[0].upper() + right[1:])
    return [sentence]


def split_claims(answer_text: str, split_compound: bool = True) -> list[Claim]:
    """Deterministic claims of an answer: its sentences, compound ones cut in two.

    Each Claim's text has its [n] markers stripped; `figures` holds the raw figures it states (years excluded).
    Meta sentences (refusals, "the passages do not state ...") are not claims.
    """
    from finrag.score.numbers import extract_figures

    claims: list[Claim] = []
    for _, _, sent in split_sentences(answer_text):
        text = _LABEL.sub("", _MARKUP.sub(" ", strip_citations(sent)).strip()).strip()
        if not re.search(r"[A-Za-z0-9]", text) or is_meta_sentence(text) or _says_nothing(text):
            continue
        pieces = _split_compound(text) if split_compound else [text]
        for piece in pieces:
            figs = [f.raw for f in extract_figures(piece) if not f.is_year]
            claims.append(Claim(claim_id=f"c{len(claims) + 1}", text=piece, figures=figs))
    return claims


# ---------------------------------------------------------------- LLM splitter hook

SPLIT_TEMPLATE_ID = "claims-split@1"


def llm_split_claims(
    answer_text: str,
    llm,
    decoding=None,
    item_id: str = "",
    template_id: str = SPLIT_TEMPLATE_ID,
) -> tuple[list[Claim], dict]:
    """Claims from an LLM (through finrag.llm.cache.CachedLLM-like `llm.complete`); deterministic on failure.

    Returns (claims, info): info says which splitter produced the claims and the cache key.
    """
    messages = task_prompt(template_id).messages(answer=strip_citations(answer_text))
    decoding = decoding if decoding is not None else {"temperature": 0.0, "max_tokens": 1024}
    completion, key, hit = llm.complete(
        messages, decoding, replicate=0, template_id=template_id, item_id=item_id
    )
    text = completion.text or ""
    lines = [m.group(1).strip() for m in re.finditer(r"(?m)^\s*\d{1,3}[.)]\s+(.+)$", text)]
    info = {"splitter": "llm", "cache_key": key, "cache_hit": hit}
    if not lines and re.fullmatch(r"\W*NONE\W*", text.strip(), re.IGNORECASE):
        return [], info
    if not lines:
        return split_claims(answer_text), {**info, "splitter": "deterministic", "llm_parse_failed": True}
    from finrag.score.numbers import extract_figures

    claims = [
        Claim(claim_id=f"c{i}", text=t, figures=[f.raw for f in extract_figures(t) if not f.is_year])
        for i, t in enumerate(lines, 1)
    ]
    return claims, info


# ---------------------------------------------------------------- scoring


def as_seen(passage) -> str:
    """A passage as the model saw it: its text under its source document's name (the prompt shows
    `source="BLOCK_2016_10K p. 68"`), so a company the filing names only in its title ("Block" in Square's 10-K)
    is not a missing name. Plain strings and dicts (benchmark passages) have no source and stay as they are."""
    if isinstance(passage, str):
        return passage
    if isinstance(passage, dict):
        return str(passage.get("text", ""))
    doc = getattr(passage, "doc_id", "")
    return f"({doc})\n{passage.text}" if doc else str(passage.text)


def passage_texts(passages: Sequence) -> list[str]:
    """The texts the judge reads, from str, contracts.Passage or {"text": ...} items (see `as_seen`)."""
    return [as_seen(p) for p in passages]


def score_answer(
    answer_text: str,
    passages: Sequence,
    judge,
    claims: list[Claim] | None = None,
) -> dict:
    """Judge every claim of an answer against its passages: groundedness, fully grounded, per-claim verdicts."""
    claims = split_claims(answer_text) if claims is None else claims
    texts = passage_texts(passages)
    verdicts = (
        judge.judge_batch([c.text for c in claims], texts, claim_ids=[c.claim_id for c in claims])
        if claims
        else []
    )
    n = len(claims)
    counts = {
        v: sum(1 for x in verdicts if x.verdict == v) for v in ("supported", "unsupported", "contradicted")
    }
    return {
        "n_claims": n,
        "n_supported": counts["supported"],
        "n_unsupported": counts["unsupported"],
        "n_contradicted": counts["contradicted"],
        "groundedness": counts["supported"] / n if n else None,
        "fully_grounded": bool(n) and counts["supported"] == n,
        "refusal": n == 0,
        "judge": getattr(judge, "name", type(judge).__name__),
        "claims": [
            {**c.model_dump(), "verdict": v.verdict, "evidence": v.evidence, "detail": v.detail}
            for c, v in zip(claims, verdicts, strict=True)
        ],
    }
