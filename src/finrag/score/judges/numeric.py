"""The numeric judge: figures, years and names of a claim must be in the passages (or one arithmetic step away).

A transparent, free check for claims that state figures; claims without figures fall back to content-word overlap.
It cannot read meaning: it is a lower bound on what a careful reader would accept for figures and a weak baseline
otherwise (the agreement stage measures how weak).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import cast

import numpy as np

from finrag.core.contracts import ClaimVerdict, Verdict
from finrag.retrieve.search import COMPANY_ALIASES
from finrag.score.claims import content_stems, split_sentences, stem, strip_citations
from finrag.score.judges.base import BaseJudge

_GENERIC_CAPS = {
    "company", "companies", "inc", "corp", "corporation", "ltd", "llc", "plc", "group", "holdings", "fiscal",
    "year", "quarter", "total", "net", "note", "notes", "item", "form", "part", "table", "usd", "us", "u.s",
    "january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
    "november", "december", "i", "based", "according",
    # metric abbreviations a question defines and a filing rarely spells (the figure is still checked)
    "dpo", "dso", "dio", "ccc", "cogs", "ppne", "roa", "roe", "roic", "fcf", "fx", "capex", "opex", "yoy",
}  # fmt: skip
_CAP_WORD = re.compile(r"(?<![\w'’])([A-Z][A-Za-z0-9&.\-]*[A-Za-z0-9]|[A-Z])(['’]s)?(?![\w])")
# period labels ("FY2018", "Q2", "FY23", "YTD"): not names; a year in them is checked as a year
_PERIOD_LABEL = re.compile(r"(?:FY|CY|FQ|Q[1-4]|H[12]|[12]H|YTD|TTM|LTM)(?:'?\d{2}|\d{4})?", re.IGNORECASE)


def entity_terms(claim: str) -> list[str]:
    """Capitalised names in a claim that the passages must also contain ("Apple", "Stock Nanny", "EBITDA").

    A sentence-initial word counts only when it looks like a name (possessive, internal capital, digits), since
    "Revenue grew" is an ordinary word there; stop words, months and generic filing words never count.
    """
    from finrag.score.claims import stop_words

    stops = stop_words()
    out: list[str] = []
    for _, _, sent in split_sentences(claim):
        for m in _CAP_WORD.finditer(sent):
            word, poss = m.group(1), m.group(2)
            lw = word.lower().rstrip(".")
            if lw in stops or lw in _GENERIC_CAPS or len(lw) < 2 or _PERIOD_LABEL.fullmatch(word):
                continue
            initial = sent[: m.start()].strip(" \"'“(") == ""
            if initial and not (poss or re.search(r"[A-Z0-9]", word[1:]) or word.isupper()):
                continue
            if initial and lw.endswith("ly"):
                continue
            if word not in out:
                out.append(word)
    return out


def _squash(name: str) -> str:
    return re.sub(r"[^a-z0-9]", "", name.lower())


# a company's short name in a claim ("JnJ", "J&J", "AMEX") -> the words its filings use (search.COMPANY_ALIASES)
_ALIAS_OF = {_squash(alias): key for key, aliases in COMPANY_ALIASES.items() for alias in aliases}


def _entity_present(word: str, ptext_lower: str, pstems: set[str]) -> bool:
    lw = word.lower().rstrip(".")
    if re.search(rf"(?<![a-z0-9]){re.escape(lw)}", ptext_lower):
        return True
    key = _ALIAS_OF.get(_squash(re.sub(r"['’]s$", "", lw)))
    if key and (
        all(re.search(rf"(?<![a-z0-9]){re.escape(w)}", ptext_lower) for w in key.split())
        or key.replace(" ", "") in ptext_lower  # a file name: "AMERICANEXPRESS_2022_10K"
    ):
        return True
    return all(stem(p) in pstems for p in re.split(r"[-&.]", lw) if len(p) >= 3) and len(lw) >= 3


@dataclass
class _Seg:
    passage: int
    start: int
    end: int
    text: str
    table: bool
    stems: set


class _Segments(list[_Seg]):
    """The segments in order, with their (passage, start) keys for bisection."""

    keys: list[tuple[int, int]]


def _segments(passages: Sequence[str]) -> _Segments:
    """Table rows (lines with "|") and prose sentences of every passage, with offsets, for local context. Cached
    per passage list: an answer's claims are judged one after another against the same passages (never mutated)."""
    return _segments_of(tuple(passages))


@lru_cache(maxsize=64)
def _segments_of(passages: tuple[str, ...]) -> _Segments:
    segs = _Segments()
    for pi, text in enumerate(passages):
        for line in re.finditer(r"[^\n]+", text):
            if line.group().count("|") >= 2:
                segs.append(
                    _Seg(pi, line.start(), line.end(), line.group(), True, content_stems(line.group()))
                )
                continue
            for s, e, t in split_sentences(line.group()):
                segs.append(_Seg(pi, line.start() + s, line.start() + e, t, False, content_stems(t)))
    segs.keys = [(s.passage, s.start) for s in segs]
    return segs


def _seg_of(segs: _Segments, passage: int, pos: int) -> int:
    """Index of the segment holding character `pos` of passage `passage` (segments are in order), or -1."""
    i = bisect.bisect_right(segs.keys, (passage, pos)) - 1
    if i >= 0 and segs[i].passage == passage and segs[i].start <= pos < segs[i].end:
        return i
    return -1


_HEDGE = re.compile(
    r"\b(?:approximately|approx\.?|about|around|roughly|nearly|almost|close to|some)\s+\S*$|~\s*\S*$", re.I
)


def _norm_year(v: float) -> int:
    v = int(round(abs(v)))
    return 2000 + v if v < 100 else v


def _sig_digits(raw: str) -> int:
    m = re.search(r"\d[\d,.\u00a0\u202f]*", raw)
    if not m:
        return 0
    digits = re.sub(r"\D", "", m.group()).lstrip("0")
    if not re.search(r"[.,]\d{1,2}$", m.group()):
        digits = digits.rstrip("0")
    return len(digits)


def _fmt(v: float) -> str:
    return f"{v:,.4f}".rstrip("0").rstrip(".") if abs(v) < 1e3 else f"{v:,.0f}"


class NumericJudge(BaseJudge):
    """Figures, years and names of the claim must be in the passages (or one arithmetic step away).

    Params: rel_tol (relative tolerance on top of the claim's own rounding), rounding (accept a passage figure
    that rounds to the claim's figure at the claim's stated precision), scales (factors a table figure may be
    stated in, e.g. "1,500" in millions), implicit_scale_min_digits (a bare figure with at least this many
    significant digits may be taken at another scale without an "in millions" cue), arithmetic (allow one step:
    sum, difference, ratio, percent change of two passage figures), arithmetic_scope ("passage": operands from
    one passage; "all"), max_operands (per scope, most relevant first), context_min (a passage figure counts only
    when its table row / sentence shares at least this many content words with the claim), arithmetic_context_min
    (the same for the operands of an arithmetic step; 2, because with one shared word chance pairs of figures
    supported many claims judged against another question's passages: docs/design_notes.md, "Chance support";
    None = context_min), overlap_threshold (the no-figure fallback), check_years, check_entities,
    detect_contradiction, contradiction_overlap.
    """

    name = "numeric"

    def __init__(
        self,
        rel_tol: float = 0.001,
        approx_rel_tol: float = 0.01,
        rounding: bool = True,
        scales: Sequence[float] = (1e3, 1e6, 1e9),
        implicit_scale_min_digits: int = 3,
        arithmetic: bool = True,
        arithmetic_scope: str = "passage",
        max_operands: int = 60,
        context_min: int = 1,
        arithmetic_context_min: int | None = 2,
        overlap_threshold: float = 0.6,
        check_years: bool = True,
        check_entities: bool = True,
        detect_contradiction: bool = True,
        contradiction_overlap: float = 0.8,
        lang: str | None = None,
    ):
        if arithmetic_scope not in ("passage", "all"):
            raise ValueError(f"arithmetic_scope must be 'passage' or 'all', not {arithmetic_scope!r}")
        self.rel_tol = rel_tol
        self.approx_rel_tol = approx_rel_tol
        self.rounding = rounding
        self.scales = tuple(float(s) for s in scales)
        self.implicit_scale_min_digits = implicit_scale_min_digits
        self.arithmetic = arithmetic
        self.arithmetic_scope = arithmetic_scope
        self.max_operands = max_operands
        self.context_min = context_min
        self.arithmetic_context_min = (
            context_min if arithmetic_context_min is None else arithmetic_context_min
        )
        self.overlap_threshold = overlap_threshold
        self.check_years = check_years
        self.check_entities = check_entities
        self.detect_contradiction = detect_contradiction
        self.contradiction_overlap = contradiction_overlap
        self.lang = lang
        # relative tolerance in force for the figure being matched (rel_tol, or approx_rel_tol after a hedge);
        # set per figure in judge(): one NumericJudge is not meant to be shared across threads
        self._rel = rel_tol

    # -- figure helpers
    def _half_unit(self, f) -> float:
        """Half the last stated digit of a claim figure: "$1.5 billion" may stand for 1.45-1.55 billion."""
        if not self.rounding:
            return 0.0
        unit = 10.0 ** (-f.decimals)
        if f.is_bps:
            return 0.5 * unit / 100.0
        if f.is_percent or f.is_pp:
            return 0.5 * unit
        return 0.5 * unit * (f.scale or 1.0)

    def _tol(self, target: float, half: float) -> float:
        return max(self._rel * abs(target), half)

    def _alternatives(self, f) -> list[tuple[float, str]]:
        """A non-percent figure's possible values: as read, and at another scale when it is a bare table figure."""
        alts = [(abs(f.value), "")]
        if f.scale_explicit or f.is_ratio_unit:
            return alts
        base = abs(f.value) / (f.scale or 1.0)
        if f.scale != 1.0:
            alts.append((base, "without the stated scale"))
        if _sig_digits(f.raw) >= self.implicit_scale_min_digits or f.scale != 1.0:
            for k in self.scales:
                if k != f.scale:
                    alts.append((base * k, f"read as x{k:g}"))
        return alts

    @staticmethod
    def _pct(f) -> float | None:
        v = f.percent_value()
        return abs(v) if v is not None else None

    def _direct(self, c, cands: list) -> dict | None:
        half = self._half_unit(c)
        if c.is_ratio_unit:
            cv = cast(float, self._pct(c))
            for p in cands:
                pv = self._pct(p["fig"])
                if pv is not None and abs(cv - pv) <= self._tol(pv, half):
                    return {"match": "direct", "passage_raw": p["fig"].raw, **p["where"]}
            return None
        c_alts = self._alternatives(c)
        for p in cands:
            if p["fig"].is_ratio_unit:
                continue
            for pv, how in self._alternatives(p["fig"]):
                for cv, chow in c_alts:
                    h = half if not chow else half * (cv / abs(c.value) if c.value else 1.0)
                    if abs(cv - pv) <= self._tol(pv, h):
                        kind = "direct" if not (how or chow) else "scaled"
                        out = {"match": kind, "passage_raw": p["fig"].raw, **p["where"]}
                        if how or chow:
                            out["scale_note"] = "; ".join(
                                x
                                for x in (f"passage {how}" if how else "", f"claim {chow}" if chow else "")
                                if x
                            )
                        return out
        return None

    def _arith(self, c, cands: list) -> dict | None:
        """One step over two passage figures; vectorised over all pairs in scope."""
        groups: dict = {}
        for p in cands:
            key = p["where"]["passage"] if self.arithmetic_scope == "passage" else 0
            groups.setdefault(key, []).append(p)
        half = self._half_unit(c)
        for _, group in sorted(groups.items()):
            group = sorted(group, key=lambda p: -p["relevance"])[: self.max_operands]
            if c.is_ratio_unit:
                target = cast(float, self._pct(c))
                amounts = [p for p in group if not p["fig"].is_ratio_unit]
                pcts = [p for p in group if p["fig"].is_ratio_unit]
                ops = []
                if len(amounts) >= 2:
                    a = np.array([p["fig"].value for p in amounts])
                    with np.errstate(divide="ignore", invalid="ignore"):
                        chg = (a[:, None] - a[None, :]) / np.abs(a[None, :]) * 100.0
                        ratio = a[:, None] / a[None, :] * 100.0
                    ops += [
                        ("percent change", chg, amounts, "({a} - {b}) / {b} x 100 = {r}%"),
                        ("ratio", ratio, amounts, "{a} / {b} x 100 = {r}%"),
                    ]
                if len(pcts) >= 2:
                    a = np.array([self._pct(p["fig"]) for p in pcts])
                    ops.append(("difference", a[:, None] - a[None, :], pcts, "{a}% - {b}% = {r} points"))
                found = self._first_hit(ops, target, self._tol(target, half))
            else:
                amounts = [p for p in group if not p["fig"].is_ratio_unit]
                if len(amounts) < 2:
                    continue
                a = np.array([p["fig"].value for p in amounts])
                ops = [
                    ("difference", a[:, None] - a[None, :], amounts, "{a} - {b} = {r}"),
                    ("sum", a[:, None] + a[None, :], amounts, "{a} + {b} = {r}"),
                ]
                if not c.currency and not c.scale_explicit and abs(c.value) < 1e3:
                    with np.errstate(divide="ignore", invalid="ignore"):
                        ops.append(("ratio", a[:, None] / a[None, :], amounts, "{a} / {b} = {r}"))
                found = None
                for cv, chow in self._alternatives(c):
                    h = half if not chow else half * (cv / abs(c.value) if c.value else 1.0)
                    found = self._first_hit(ops, cv, self._tol(cv, h))
                    if found:
                        if chow:
                            found["scale_note"] = f"claim {chow}"
                        break
            if found:
                return found
        return None

    @staticmethod
    def _first_hit(ops: list, target: float, tol: float) -> dict | None:
        for opname, mat, operands, fmt in ops:
            m = np.abs(np.abs(mat) - target) <= tol
            np.fill_diagonal(m, False)
            m &= np.isfinite(mat)
            hits = np.argwhere(m)
            if hits.size:
                i, j = (int(x) for x in hits[0])
                a, b = operands[i], operands[j]
                r = float(mat[i, j])
                return {
                    "match": "arithmetic",
                    "operation": opname,
                    "computation": fmt.format(a=_fmt(a["fig"].value), b=_fmt(b["fig"].value), r=_fmt(r)),
                    "operands": [a["fig"].raw, b["fig"].raw],
                    "passage": a["where"]["passage"],
                    "segments": sorted({a["where"]["segment"], b["where"]["segment"]}),
                }
        return None

    # -- contradiction
    def _contradiction(
        self, c, claim_stems: set, claim_years: set[int], segs: list[_Seg], pfigs: list
    ) -> dict | None:
        """A passage sentence saying nearly everything the claim says, or the claim's table row, with a different
        figure of the same kind and none equal to the claim's: reliable enough to call a contradiction."""
        by_seg: dict[int, list] = {}
        for p in pfigs:
            by_seg.setdefault(p["where"]["segment"], []).append(p)
        for si, figs in sorted(by_seg.items()):
            seg = segs[si]
            same_kind = [p for p in figs if p["fig"].is_ratio_unit == c.is_ratio_unit]
            if not same_kind or self._direct(c, same_kind):
                continue
            if seg.table:
                first = same_kind[0]["fig"].start - seg.start
                label = content_stems(seg.text[: max(first, 0)])
                ok = len(label) >= 2 and label <= claim_stems
            else:
                shared = claim_stems & seg.stems
                seg_years = {_norm_year(f.value) for f in _figs(seg.text) if f.is_year}
                ok = (
                    len(shared) >= 2
                    and len(shared) >= self.contradiction_overlap * len(claim_stems)
                    and claim_years <= seg_years
                    and len(same_kind) == 1
                )
            if ok:
                return {
                    "segment": si,
                    "passage": seg.passage,
                    "text": seg.text[:300],
                    "passage_figures": [p["fig"].raw for p in same_kind],
                }
        return None

    # -- the verdict
    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "") -> ClaimVerdict:  # noqa: C901 (the numeric checks in the order they apply)
        text = strip_citations(claim)
        passages = [p for p in passages]
        figs = _figs(text, self.lang)
        values = [f for f in figs if not f.is_year]
        years = [f for f in figs if f.is_year]
        claim_stems = content_stems(text)
        ptext = "\n".join(passages)
        pstems = content_stems(ptext)
        detail: dict = {"method": "numeric", "figures": []}
        problems: list[str] = []

        if self.check_entities:
            missing = [e for e in entity_terms(text) if not _entity_present(e, ptext.lower(), pstems)]
            if missing:
                detail["entities_missing"] = missing
                problems.append(f"names not in the passages: {', '.join(missing)}")
        claim_years = {_norm_year(y.value) for y in years}
        if self.check_years and years:
            pyears = {_norm_year(f.value) for p in passages for f in _figs(p, self.lang) if f.is_year}
            pyears |= {int(y) for y in re.findall(r"(?<!\d)((?:19|20)\d\d)(?!\d)", ptext)}
            ymiss = sorted(claim_years - pyears)
            if ymiss:
                detail["years_missing"] = ymiss
                problems.append(f"years not in the passages: {', '.join(map(str, ymiss))}")

        if not values:
            # no figure to check: the numeric judge abstains and the content-word overlap decides
            overlap = len(claim_stems & pstems) / len(claim_stems) if claim_stems else 0.0
            detail.update(
                method="overlap_fallback" if not years else "years_only+overlap_fallback",
                abstained=True,
                overlap=round(overlap, 4),
                threshold=self.overlap_threshold,
            )
            if overlap < self.overlap_threshold:
                problems.append(f"content-word overlap {overlap:.2f} < {self.overlap_threshold}")
            verdict: Verdict = "unsupported" if problems else "supported"
            return ClaimVerdict(
                claim_id=claim_id,
                verdict=verdict,
                judge=self.name,
                evidence="; ".join(problems),
                detail=detail,
            )

        segs = _segments(passages)
        pfigs = []
        for pi, p in enumerate(passages):
            for f in _figs(p, self.lang):
                if f.is_year:
                    continue
                si = _seg_of(segs, pi, f.start)
                rel = len(claim_stems & segs[si].stems) if si >= 0 else 0
                pfigs.append({"fig": f, "relevance": rel, "where": {"passage": pi, "segment": si}})
        cands = [p for p in pfigs if p["relevance"] >= self.context_min]
        arith_cands = [p for p in pfigs if p["relevance"] >= self.arithmetic_context_min]
        if (
            not claim_stems
        ):  # "Answer: $59,268": a bare figure has no words to place it; it must appear as stated
            cands, arith_cands = pfigs, []
        detail["n_passage_figures"] = len(pfigs)
        detail["n_in_context"] = len(cands)
        evidence: list[str] = []
        contradictions = []
        for c in values:
            rec = {"raw": c.raw, "value": c.value}
            hedged = bool(_HEDGE.search(text[max(0, c.start - 25) : c.start]))
            self._rel = self.approx_rel_tol if hedged else self.rel_tol
            if hedged:
                rec["hedged"] = True
            hit = self._direct(c, cands) or (self._arith(c, arith_cands) if self.arithmetic else None)
            self._rel = self.rel_tol
            if hit:
                rec.update(hit)
                segids = hit.get("segments") or [hit["segment"]]
                evidence.extend(
                    segs[s].text[:300] for s in segids if s >= 0 and segs[s].text[:300] not in evidence
                )
            else:
                rec["match"] = "none"
                if any(self._direct(c, [p]) for p in pfigs):
                    rec["note"] = (
                        "found only in a passage row/sentence that shares no content word with the claim"
                    )
                problems.append(f"{c.raw} not found in the passages")
                if self.detect_contradiction:
                    con = self._contradiction(c, claim_stems, claim_years, segs, pfigs)
                    if con:
                        rec["contradicted_by"] = con
                        contradictions.append(con)
            detail["figures"].append(rec)
        if contradictions:
            verdict = "contradicted"
            ev = "; ".join(c["text"] for c in contradictions)
        elif problems:
            verdict = "unsupported"
            ev = "; ".join(problems)
        else:
            verdict = "supported"
            ev = " … ".join(evidence)
        if problems:
            detail["problems"] = problems
        return ClaimVerdict(
            claim_id=claim_id, verdict=verdict, judge=self.name, evidence=ev[:1000], detail=detail
        )


def _figs(text: str, lang: str | None = None):
    from finrag.score.numbers import extract_figures

    return _figs_cached(text, lang) if len(text) < 200_000 else extract_figures(text, lang=lang)


@lru_cache(maxsize=8192)  # passages are judged against many claims: extract their figures once
def _figs_cached(text: str, lang: str | None):
    from finrag.score.numbers import extract_figures

    return tuple(extract_figures(text, lang=lang))


def has_figures(claim: str) -> bool:
    """Does the claim state an amount or a rate (years do not count)?"""
    return any(not f.is_year for f in _figs(strip_citations(claim)))
