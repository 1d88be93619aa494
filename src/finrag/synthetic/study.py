"""The study's measurements on the synthetic Spanish corpus, where gold passages are known to the character.

* Retrieval: a gold passage counts as retrieved when at least half of its characters lie inside the spans of the
  top-k chunks (``Chunk.spans``); coverage is reported against the context size (tokens) for k = 1, 2, 3, 5.
* Answers: strict accuracy (every gold figure present, no figure foreign to the gold / calculation inputs / the
  question), lenient accuracy (gold figures present), faithfulness (every figure of the answer is in the context
  or the question; a calculation's result counts when its inputs are in the context), citation precision (share
  of cited chunks that cover a gold passage). Years are not counted as figures (``Figure.is_year``).
* Extractive baselines on every question: the best chunk, the best line of the best chunk, the first figure of
  that line; they never abstain.
* Abstention: the BM25 top score as a detector of answerable vs ``no_respondible`` (ROC AUC, scikit-learn).

Figures are read with ``finrag.score.numbers.extract_figures`` (Spanish + English formats, scale words).
Retrieval and chunking are injected (``search_fn``, ``chunks``) so this module depends on neither.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

from finrag.core.contracts import Answer, Chunk, Document, Page
from finrag.core.stats import proportion
from finrag.core.text import SYNTHETIC_BASELINE_STOP, fold_accents
from finrag.score.declining import is_abstention
from finrag.synthetic.formats import strip_markers
from finrag.synthetic.models import KINDS, GoldPassage, SyntheticQuestion

SearchFn = Callable[[str, int], list[tuple[int, float]]]

DEFAULT_PARAMS: dict = {
    "ks": [1, 2, 3, 5],
    "min_fraction": 0.5,  # share of a gold passage's characters that must be inside the retrieved spans
    "fact_rel_tol": 5e-4,  # a stated figure: equal up to rounding at ~4 significant digits
    "calc_rel_tol": 0.01,  # a computed figure: 1 % relative ...
    "calc_abs_tol": 0.06,  # ... or 0.06 in its own unit (rounding to one decimal)
    "abstain_threshold": None,  # BM25 top score below which the abstaining baseline declines; None: Youden's J
    "lang": "es",
    "progress": True,
}

# factors between a gold figure and how an answer may write it: "1.250 millones" = 1,25e9, "13,9 %" = 0,139
_SCALES = (1.0, 1e2, 1e3, 1e6, 1e9, 1e12)


# ------------------------------------------------------------------------------------------------ figures
@dataclass(frozen=True)
class Num:
    """The part of a parsed figure this module needs."""

    value: float
    raw: str
    is_year: bool = False


def extract_numbers(text: str, lang: str | None = "es") -> list[Num]:
    """Figures of a text via finrag.score.numbers (footnote markers removed first: '2.345,6¹' is 2.345,6)."""
    from finrag.score.numbers import extract_figures

    return [
        Num(float(f.value), f.raw, bool(getattr(f, "is_year", False)))
        for f in extract_figures(strip_markers(text or ""), lang=lang)
    ]


def values_match(x: float, gold: float, rel_tol: float = 5e-4, abs_tol: float = 0.0) -> bool:
    """Same figure up to sign, scale (thousands/millions/..., percent as a fraction) and tolerance.

    The sign is ignored because the corpus answers state direction in words ("disminuyeron un 3,4 %").
    ``abs_tol`` is in the gold figure's own unit and scales with it.
    """
    a, g = abs(x), abs(gold)
    if g == 0.0:
        return a <= abs_tol
    for s in _SCALES:
        for cand in (g * s, g / s):
            tol = max(rel_tol * cand, abs_tol * cand / g)
            if abs(a - cand) <= tol:
                return True
    return False


def _tols(q: SyntheticQuestion, params: Mapping) -> tuple[dict, dict]:
    fact = {"rel_tol": params["fact_rel_tol"]}
    calc = {"rel_tol": params["calc_rel_tol"], "abs_tol": params["calc_abs_tol"]}
    return fact, (calc if q.kind == "calculo" else fact)


def judge_figures(
    answer_values: Sequence[float],
    gold: Sequence[float],
    allowed: Sequence[float] = (),
    gold_tol: Mapping | None = None,
    allowed_tol: Mapping | None = None,
) -> dict:
    """Core of the accuracy rules on plain numbers: missing gold figures and foreign answer figures.

    lenient = no gold figure missing; strict = lenient and no answer figure outside gold + allowed.
    """
    gold_tol = dict(gold_tol or {})
    allowed_tol = dict(allowed_tol or {})
    missing = [g for g in gold if not any(values_match(v, g, **gold_tol) for v in answer_values)]
    foreign = [
        v
        for v in answer_values
        if not any(values_match(v, g, **gold_tol) for g in gold)
        and not any(values_match(v, a, **allowed_tol) for a in allowed)
    ]
    lenient = not missing
    return {"lenient": lenient, "strict": lenient and not foreign, "missing": missing, "foreign": foreign}


def score_answer(
    q: SyntheticQuestion,
    answer: str,
    params: Mapping | None = None,
    extract: Callable[[str], list[Num]] | None = None,
) -> dict:
    """Strict / lenient correctness of one answer; for no_respondible, correct = abstains (strict: no figures)."""
    p = {**DEFAULT_PARAMS, **(params or {})}
    ext = extract or (lambda t: extract_numbers(t, p["lang"]))
    figs = [f for f in ext(answer) if not f.is_year]
    qvals = [f.value for f in ext(q.question)]
    abstained = is_abstention(answer)
    fact_tol, gold_tol = _tols(q, p)
    if not q.answerable:
        foreign = [f.value for f in figs if not any(values_match(f.value, v, **fact_tol) for v in qvals)]
        return {
            "lenient": abstained,
            "strict": abstained and not foreign,
            "abstained": abstained,
            "missing": [],
            "foreign": foreign,
            "n_figures": len(figs),
        }
    res = judge_figures(
        [f.value for f in figs],
        q.gold_figures,
        allowed=[*q.support_figures, *qvals],
        gold_tol=gold_tol,
        allowed_tol=fact_tol,
    )
    return {**res, "abstained": abstained, "n_figures": len(figs)}


def faithfulness(
    answer: str,
    context: Sequence[str],
    q: SyntheticQuestion,
    params: Mapping | None = None,
    extract: Callable[[str], list[Num]] | None = None,
) -> dict:
    """Is every figure of the answer in the context or the question? A calculation's gold result counts as
    grounded when all its inputs are in the context. Returns {faithful, n_figures, ungrounded}."""
    p = {**DEFAULT_PARAMS, **(params or {})}
    ext = extract or (lambda t: extract_numbers(t, p["lang"]))
    figs = [f for f in ext(answer) if not f.is_year]
    pool = [f.value for t in context for f in ext(t)] + [f.value for f in ext(q.question)]
    fact_tol, gold_tol = _tols(q, p)
    derived: list[float] = []
    if q.kind == "calculo" and all(
        any(values_match(c, s, **fact_tol) for c in pool) for s in q.support_figures
    ):
        derived = list(q.gold_figures)
    ungrounded = [
        f.value
        for f in figs
        if not any(values_match(f.value, c, **fact_tol) for c in pool)
        and not any(values_match(f.value, d, **gold_tol) for d in derived)
    ]
    return {"faithful": not ungrounded, "n_figures": len(figs), "ungrounded": ungrounded}


# ------------------------------------------------------------------------------------------------ coverage
def covered_chars(passage: GoldPassage, chunks: Sequence[Chunk]) -> int:
    """Characters of the passage inside the union of the chunks' spans (same document and page)."""
    ivs = sorted(
        (max(s.start, passage.start), min(s.end, passage.end))
        for c in chunks
        if c.doc_id == passage.doc_id
        for s in c.spans
        if s.page == passage.page and s.start < passage.end and s.end > passage.start
    )
    total, cur_s, cur_e = 0, None, None
    for s, e in ivs:
        if cur_e is None or s > cur_e:
            if cur_e is not None:
                total += cur_e - cast(int, cur_s)
            cur_s, cur_e = s, e
        else:
            cur_e = max(cur_e, e)
    if cur_e is not None:
        total += cur_e - cast(int, cur_s)
    return total


def passage_retrieved(passage: GoldPassage, chunks: Sequence[Chunk], min_fraction: float = 0.5) -> bool:
    """At least ``min_fraction`` of the passage's characters are inside the chunks' spans (exactly half counts)."""
    length = passage.end - passage.start
    return length > 0 and covered_chars(passage, chunks) >= min_fraction * length


def question_coverage(q: SyntheticQuestion, chunks: Sequence[Chunk], min_fraction: float = 0.5) -> dict:
    """How many of the question's gold passages the chunks retrieve; ``all`` is the headline measure."""
    hits = [passage_retrieved(p, chunks, min_fraction) for p in q.gold_passages]
    n = len(hits)
    return {
        "n_gold": n,
        "n_hit": sum(hits),
        "all": n > 0 and all(hits),
        "frac": (sum(hits) / n) if n else 0.0,
    }


def citation_precision(
    cited: Sequence[Chunk], gold: Sequence[GoldPassage], min_fraction: float = 0.5
) -> float | None:
    """Share of cited chunks that retrieve at least one gold passage; None when nothing is cited or no gold."""
    if not cited or not gold:
        return None
    good = sum(1 for c in cited if any(passage_retrieved(g, [c], min_fraction) for g in gold))
    return good / len(cited)


def count_tokens(text: str) -> int:
    """Approximate context size: words and punctuation marks (tokenizer-free, so the same for every model)."""
    return len(re.findall(r"\w+|[^\w\s]", text))


# ------------------------------------------------------------------------------------------------ baselines
def _fold(text: str) -> str:
    return fold_accents(text.lower())


def _terms(text: str) -> set[str]:
    return {
        t
        for t in re.findall(r"\w+", _fold(strip_markers(text)))
        if t not in SYNTHETIC_BASELINE_STOP and (len(t) > 1 or t.isdigit())
    }


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÁÉÍÓÚÑ¿¡])")


def candidate_lines(body: str) -> list[str]:
    """The 'lines' of a chunk: table rows and footnote lines as they are, prose lines split into sentences
    (a paragraph is one text line here, unlike a PDF line); headings and table rules are not candidates."""
    out: list[str] = []
    for line in body.splitlines():
        s = line.strip()
        if not s or s.startswith("#") or re.fullmatch(r"\|?[\s:|-]+\|?", s):
            continue
        out.extend(x.strip() for x in _SENTENCE_END.split(s) if x.strip()) if not s.startswith(
            "|"
        ) else out.append(s)
    return out


def best_line(body: str, question: str, extract: Callable[[str], list[Num]] | None = None) -> str:
    """The candidate line sharing most question terms, among lines stating a figure other than a year when
    there are any (the questions ask for figures; a table's header row of years is not an answer); first on
    ties. Without ``extract``, any digit counts as a figure."""
    qt = _terms(question)
    lines = candidate_lines(body)
    if extract is None:
        with_digits = [s for s in lines if re.search(r"\d", strip_markers(s))]
    else:
        with_digits = [s for s in lines if any(not f.is_year for f in extract(s))]
    best, best_score = "", -1
    for s in with_digits or lines:
        score = len(qt & _terms(s))
        if score > best_score:
            best, best_score = s, score
    return best


def first_figure(line: str, question: str, extract: Callable[[str], list[Num]]) -> str:
    """The first figure of the line that is neither a year nor a figure of the question ('' if none)."""
    qvals = [f.value for f in extract(question)]
    for f in extract(line):
        if f.is_year or any(values_match(f.value, v, rel_tol=1e-9) for v in qvals):
            continue
        return f.raw
    return ""


def extractive_answers(
    q: SyntheticQuestion, best: Chunk | None, extract: Callable[[str], list[Num]]
) -> dict[str, str]:
    """The three extractive baselines' answers for a question given its top-ranked chunk."""
    if best is None:
        return {"mejor_chunk": "", "mejor_linea": "", "primera_cifra": ""}
    line = best_line(best.body, q.question, extract)
    return {
        "mejor_chunk": best.body,
        "mejor_linea": line,
        "primera_cifra": first_figure(line, q.question, extract),
    }


# ------------------------------------------------------------------------------------------------ abstention
def abstention_roc(top_scores: Sequence[float], answerable: Sequence[bool]) -> dict:
    """ROC AUC of the top retrieval score as a detector of answerable questions, with Youden's threshold.

    The threshold is chosen on the same questions it is evaluated on (in-sample, optimistic); the AUC is not.
    """
    import numpy as np
    from sklearn.metrics import roc_auc_score, roc_curve

    y = np.asarray([1 if a else 0 for a in answerable])
    s = np.asarray(top_scores, dtype=float)
    out = {"n": int(y.size), "n_answerable": int(y.sum()), "n_unanswerable": int(y.size - y.sum())}
    if y.size == 0 or y.min() == y.max():
        return {**out, "auc": float("nan"), "threshold": None, "tpr": None, "fpr": None}
    auc = float(roc_auc_score(y, s))
    fpr, tpr, thr = roc_curve(y, s)
    j = int(np.argmax(tpr - fpr))
    return {**out, "auc": auc, "threshold": float(thr[j]), "tpr": float(tpr[j]), "fpr": float(fpr[j])}


# ------------------------------------------------------------------------------------------------ study
def _check_gold(questions: Sequence[SyntheticQuestion], pages: Sequence[Page]) -> None:
    by_key = {(p.doc_id, p.page): p.text for p in pages}
    for q in questions:
        for g in q.gold_passages:
            text = by_key.get((g.doc_id, g.page))
            if text is None or text[g.start : g.end] != g.text:
                raise ValueError(
                    f"{q.qid}: gold passage {g.doc_id} p{g.page} [{g.start}:{g.end}] does not match "
                    "the pages given (corpus and questions from different generations?)"
                )


def _rate(records: list[dict], key: str) -> dict:
    vals = [r[key] for r in records if r.get(key) is not None]
    return proportion(sum(bool(v) for v in vals), len(vals))


def _mean(vals: Sequence[float]) -> float:
    vals = [v for v in vals if v is not None]
    return float(sum(vals) / len(vals)) if vals else float("nan")


def run_synthetic_study(
    docs: Sequence[Document],
    pages: Sequence[Page],
    questions: Sequence[SyntheticQuestion],
    chunks: Sequence[Chunk],
    search_fn: SearchFn,
    params: Mapping | None = None,
    answers: Mapping[str, Answer] | None = None,
    extract: Callable[[str], list[Num]] | None = None,
) -> dict:
    """All measurements of the synthetic study. ``search_fn(query, k) -> [(chunk_index, score)]`` best first.

    ``answers`` (qid -> Answer, optional) adds the generated answers' accuracy, faithfulness and citation
    precision. Returns a JSON-ready dict: summary tables plus ``per_question`` records.
    """
    from tqdm import tqdm

    p = {**DEFAULT_PARAMS, **(params or {})}
    ext = extract or (lambda t: extract_numbers(t, p["lang"]))
    _check_gold(questions, pages)
    ks = sorted({int(k) for k in p["ks"]})
    kmax = max(ks)
    minf = p["min_fraction"]
    per_q: list[dict] = []
    for q in tqdm(questions, desc="synthetic study", disable=not p["progress"]):
        ranked = list(search_fn(q.question, kmax))[:kmax]
        idx = [int(i) for i, _ in ranked]
        rec: dict = {
            "qid": q.qid,
            "kind": q.kind,
            "answerable": q.answerable,
            "top_score": float(ranked[0][1]) if ranked else 0.0,
        }
        for k in ks:
            top = [chunks[i] for i in idx[:k]]
            cov = question_coverage(q, top, minf)
            rec[f"cov_all@{k}"] = cov["all"] if q.answerable else None
            rec[f"cov_frac@{k}"] = cov["frac"] if q.answerable else None
            rec[f"tokens@{k}"] = sum(count_tokens(c.text) for c in top)
        best = chunks[idx[0]] if idx else None
        for name, text in extractive_answers(q, best, ext).items():
            sc = score_answer(q, text, p, ext)
            rec[f"{name}.strict"] = sc["strict"]
            rec[f"{name}.lenient"] = sc["lenient"]
            rec[f"{name}.faithful"] = faithfulness(text, [best.body] if best else [], q, p, ext)["faithful"]
            if name == "mejor_chunk":
                rec["mejor_chunk.citation_precision"] = citation_precision(
                    [best] if best else [], q.gold_passages, minf
                )
        per_q.append(rec)

    answerable = [r for r in per_q if r["answerable"]]
    coverage = []
    for k in ks:
        coverage.append(
            {
                "k": k,
                "coverage_all": _rate(answerable, f"cov_all@{k}"),
                "coverage_frac_mean": _mean([r[f"cov_frac@{k}"] for r in answerable]),
                "context_tokens_mean": _mean([r[f"tokens@{k}"] for r in per_q]),
            }
        )
    coverage_by_kind = {
        kind: {f"@{k}": _rate([r for r in answerable if r["kind"] == kind], f"cov_all@{k}") for k in ks}
        for kind in KINDS
        if kind != "no_respondible"
    }

    roc = abstention_roc([r["top_score"] for r in per_q], [r["answerable"] for r in per_q])
    threshold = p["abstain_threshold"]
    threshold_source = "params"
    if threshold is None:
        threshold, threshold_source = roc["threshold"], "youden_in_sample"
    if threshold is not None:
        for r, q in zip(per_q, questions, strict=True):
            declines = r["top_score"] < threshold
            r["mejor_linea+abstencion.strict"] = (not q.answerable) if declines else r["mejor_linea.strict"]
            r["mejor_linea+abstencion.lenient"] = (not q.answerable) if declines else r["mejor_linea.lenient"]
    roc = {**roc, "threshold_used": threshold, "threshold_source": threshold_source}

    names = ["mejor_chunk", "mejor_linea", "primera_cifra"] + (
        ["mejor_linea+abstencion"] if threshold is not None else []
    )
    baselines: dict[str, dict[str, Any]] = {}
    for name in names:
        baselines[name] = {
            "strict": _rate(per_q, f"{name}.strict"),
            "lenient": _rate(per_q, f"{name}.lenient"),
            "strict_answerable": _rate(answerable, f"{name}.strict"),
            "lenient_answerable": _rate(answerable, f"{name}.lenient"),
            "strict_by_kind": {
                kd: _rate([r for r in per_q if r["kind"] == kd], f"{name}.strict") for kd in KINDS
            },
        }
        if per_q and f"{name}.faithful" in per_q[0]:
            baselines[name]["faithful"] = _rate(per_q, f"{name}.faithful")
    if per_q:
        baselines["mejor_chunk"]["citation_precision_mean"] = _mean(
            [r["mejor_chunk.citation_precision"] for r in answerable]
        )

    out = {
        "n_documents": len(docs),
        "n_pages": len(pages),
        "n_chunks": len(chunks),
        "n_questions": len(questions),
        "kind_counts": {k: Counter(q.kind for q in questions).get(k, 0) for k in KINDS},
        "params": {k: v for k, v in p.items() if k != "progress"},
        "coverage": coverage,
        "coverage_by_kind": coverage_by_kind,
        "baselines": baselines,
        "abstention": roc,
        "answers": score_answers(questions, chunks, answers, p, ext) if answers else None,
        "per_question": per_q,
    }
    return out


def score_answers(
    questions: Sequence[SyntheticQuestion],
    chunks: Sequence[Chunk],
    answers: Mapping[str, Answer],
    params: Mapping | None = None,
    extract: Callable[[str], list[Num]] | None = None,
) -> dict:
    """Generated answers: strict/lenient accuracy, abstention, faithfulness, citation precision (Wilson CIs)."""
    p = {**DEFAULT_PARAMS, **(params or {})}
    ext = extract or (lambda t: extract_numbers(t, p["lang"]))
    by_id = {c.chunk_id: c for c in chunks}
    recs = []
    for q in questions:
        a = answers.get(q.qid)
        if a is None:
            continue
        sc = score_answer(q, a.text, p, ext)
        fa = faithfulness(a.text, [ps.text for ps in a.passages], q, p, ext)
        n_to_chunk = {ps.n: by_id.get(ps.chunk_id) for ps in a.passages}
        cited = [n_to_chunk.get(c.passage) for c in a.citations]
        cited = [c for c in cited if c is not None]
        recs.append(
            {
                "qid": q.qid,
                "kind": q.kind,
                "answerable": q.answerable,
                "strict": sc["strict"],
                "lenient": sc["lenient"],
                "abstained": sc["abstained"],
                "faithful": fa["faithful"] if fa["n_figures"] else None,
                "citation_precision": citation_precision(
                    cast("list[Chunk]", cited), q.gold_passages, p["min_fraction"]
                ),
            }
        )
    ans = [r for r in recs if r["answerable"]]
    unans = [r for r in recs if not r["answerable"]]
    return {
        "n": len(recs),
        "strict": _rate(recs, "strict"),
        "lenient": _rate(recs, "lenient"),
        "strict_by_kind": {kd: _rate([r for r in recs if r["kind"] == kd], "strict") for kd in KINDS},
        "abstained_when_unanswerable": _rate(unans, "abstained"),
        "abstained_when_answerable": _rate(ans, "abstained"),
        "faithful": _rate(recs, "faithful"),
        "citation_precision_mean": _mean([r["citation_precision"] for r in recs]),
        "per_question": recs,
    }
