"""Synthetic Spanish corpus: determinism, gold passages to the character, kind mix, and the study's measures."""

from __future__ import annotations

import math
import re
from collections import Counter

import pytest

from finrag.core.contracts import Answer, Chunk, Citation, Passage, Span
from finrag.synthetic.formats import figure_in_text, num, pct
from finrag.synthetic.generator import generate_corpus, read_corpus, serialize, write_corpus
from finrag.synthetic.models import KINDS, GoldPassage, SyntheticQuestion
from finrag.synthetic.questions import absent_ok, kind_targets
from finrag.synthetic.study import (
    abstention_roc,
    best_line,
    citation_precision,
    covered_chars,
    extract_numbers,
    faithfulness,
    first_figure,
    judge_figures,
    passage_retrieved,
    run_synthetic_study,
    score_answer,
    values_match,
)

SEED = 11


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(SEED)


# ------------------------------------------------------------------------------------------------ generator
def test_spanish_number_formats():
    assert num(13668.9) == "13.668,9"
    assert pct(2.2) == "2,2 %"
    assert num(1250, 0) == "1.250"
    assert num(-3.45, 2) == "-3,45"
    assert figure_in_text(1250.0, "un total de 1.250 millones de euros")
    assert not figure_in_text(250.0, "un total de 1.250 millones")  # inside a larger number
    assert not figure_in_text(13.6, "13.668,9")


def test_same_seed_same_bytes_different_seed_different(corpus):
    again = generate_corpus(SEED)
    assert serialize(*again) == serialize(*corpus)
    other = generate_corpus(SEED + 1)
    assert serialize(*other) != serialize(*corpus)


def test_write_corpus_is_byte_identical_and_reads_back(tmp_path, corpus):
    s1 = write_corpus(tmp_path / "a", seed=SEED)
    write_corpus(tmp_path / "b", seed=SEED)
    for name in ("documents.jsonl", "pages.jsonl", "questions.jsonl", "summary.json"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()
    docs, pages, questions = read_corpus(tmp_path / "a")
    assert serialize(docs, pages, questions) == serialize(*corpus)
    assert s1["n_questions"] == len(questions)
    assert s1["kind_counts"] == {k: Counter(q.kind for q in questions)[k] for k in KINDS}
    assert not list((tmp_path / "a").glob(".*.tmp"))  # atomic writes leave no temporaries


def test_documents_and_pages_follow_the_contracts(corpus):
    docs, pages, _ = corpus
    assert 25 <= len(docs) <= 40
    assert len({d.doc_id for d in docs}) == len(docs)
    forms = Counter(d.form for d in docs)
    assert set(forms) == {"INFORME_ANUAL", "FOLLETO_ETF", "KID", "NOTA_ANALISIS"}
    by_doc: dict[str, list] = {}
    for p in pages:
        by_doc.setdefault(p.doc_id, []).append(p)
    for d in docs:
        assert d.language == "es" and d.source_format == "text"
        dp = by_doc[d.doc_id]
        assert [p.page for p in dp] == list(range(d.n_pages))
        assert dp[0].text.startswith("# ")
        for p in dp:
            assert re.search(r"^## \S", p.text, re.M), p.text[:80]
            assert p.section and f"## {p.section}" in p.text
    all_text = "\n".join(p.text for p in pages)
    assert re.search(r"^\| Concepto \| 2024 \| 2023 \|$", all_text, re.M)
    assert re.search(r"^¹ Excluye ", all_text, re.M)
    assert re.search(r"\d{1,3}\.\d{3},\d", all_text)  # 13.668,9
    assert re.search(r"\d,\d %", all_text)  # 2,2 %


def test_every_gold_passage_points_at_text_stating_its_figures(corpus):
    _, pages, questions = corpus
    text = {(p.doc_id, p.page): p.text for p in pages}
    for q in questions:
        for g in q.gold_passages:
            page = text[(g.doc_id, g.page)]
            assert 0 <= g.start < g.end <= len(page)
            assert page[g.start : g.end] == g.text, q.qid
            assert g.figures, f"{q.qid}: a gold passage that states none of the figures"
            for v in g.figures:
                assert figure_in_text(v, g.text), f"{q.qid}: {v} not written in Spanish in {g.text!r}"
        stated = [v for g in q.gold_passages for v in g.figures]
        needed = q.support_figures if q.kind == "calculo" else q.gold_figures
        if q.answerable:
            assert q.gold_passages and q.gold_figures, q.qid
            for v in needed:
                assert v in stated, f"{q.qid}: figure {v} has no gold passage"
            for v in q.gold_figures:  # the gold answer text states its gold figures
                assert figure_in_text(abs(v), q.answer), f"{q.qid}: {v} not in answer {q.answer!r}"
        else:
            assert not q.gold_passages and not q.gold_figures


def test_each_fact_is_stated_once(corpus):
    """A gold figure's Spanish writing recurs in its document only by coincidence (a small integer such as the
    number of board members matching another count), never because a fact is restated."""
    _, pages, questions = corpus
    full: dict[str, str] = {}
    for p in pages:
        full[p.doc_id] = full.get(p.doc_id, "") + "\n\n" + p.text
    n = repeated = 0
    for q in questions:
        for g in q.gold_passages:
            for v in g.figures:
                n += 1
                counts = [
                    len(re.findall(rf"(?<![\d.,]){re.escape(s)}(?![\d]|[.,]\d)", full[g.doc_id]))
                    for s in {num(abs(v), d) for d in range(3) if abs(round(v, d) - v) < 1e-9}
                ]
                assert max(counts) >= 1, (q.qid, v)
                repeated += max(counts) > 1
    assert repeated / n <= 0.03, (repeated, n)


def test_kind_counts_within_requested_ranges(corpus):
    docs, _, questions = corpus
    assert 250 <= len(questions) <= 300
    counts = Counter(q.kind for q in questions)
    assert set(counts) == set(KINDS)
    assert 0.06 <= counts["no_respondible"] / len(questions) <= 0.07
    for kind in KINDS:
        assert counts[kind] >= 15, (kind, counts[kind])
    for q in questions:
        if q.kind == "comparacion":
            assert len({g.doc_id for g in q.gold_passages}) == 2, q.qid
        if q.kind in ("texto_y_nota", "tabla_y_nota"):
            assert len(q.gold_passages) == 2 and any(g.text[0] in "¹²³⁴⁵⁶⁷⁸⁹" for g in q.gold_passages)
        if q.kind == "nota_pie":
            assert q.gold_passages[0].text[0] in "¹²³⁴⁵⁶⁷⁸⁹"
        if q.kind in ("tabla", "tabla_y_nota"):
            assert q.gold_passages[0].text.startswith("| ")
    assert len({q.qid for q in questions}) == len(questions)
    assert len({q.question for q in questions}) == len(questions)
    assert kind_targets(280)["no_respondible"] == 18 and sum(kind_targets(263).values()) == 263


def test_no_respondible_names_real_entities_and_its_answer_is_absent(corpus):
    docs, pages, questions = corpus
    entities = {d.company for d in docs}
    unanswerable = [q for q in questions if q.kind == "no_respondible"]
    assert len({q.absent_terms[0] for q in unanswerable}) >= 4  # several kinds of traps, not one template
    for q in unanswerable:
        assert not q.answerable and q.absent_terms
        assert q.company in entities and q.company in q.question
        assert absent_ok(q, pages), q.question
    # the check itself can fail: a term that is present is reported
    q0 = unanswerable[0].model_copy(update={"absent_terms": ["millones de euros"], "absent_scope": []})
    assert not absent_ok(q0, pages)


def test_to_question_contract(corpus):
    q = next(q for q in corpus[2] if q.kind == "tabla_y_nota")
    c = q.to_question()
    assert c.kind == "synthetic" and c.question_type == "tabla_y_nota"
    assert [(e.doc_id, e.page, e.text) for e in c.evidence] == [
        (g.doc_id, g.page, g.text) for g in q.gold_passages
    ]


def test_generation_is_fast():
    import time

    t = time.perf_counter()
    generate_corpus(3)
    assert time.perf_counter() - t < 5.0


# ------------------------------------------------------------------------------------------------ coverage
def _chunk(doc: str, spans: list[tuple[int, int, int]], body: str = "", cid: str = "c") -> Chunk:
    return Chunk(
        chunk_id=cid,
        doc_id=doc,
        pages=sorted({p for p, _, _ in spans}),
        spans=[Span(page=p, start=s, end=e) for p, s, e in spans],
        text=body,
        body=body,
    )


def test_coverage_exactly_half_counts_less_does_not():
    g = GoldPassage(doc_id="D", page=2, start=100, end=110, text="x" * 10)
    assert passage_retrieved(g, [_chunk("D", [(2, 100, 105)])])  # 5 of 10: exactly half
    assert not passage_retrieved(g, [_chunk("D", [(2, 100, 104)])])  # 4 of 10
    assert passage_retrieved(g, [_chunk("D", [(2, 90, 103)]), _chunk("D", [(2, 103, 105)])])  # union 5
    # overlapping spans are not counted twice: [100,103) + [101,104) = 4
    assert covered_chars(g, [_chunk("D", [(2, 100, 103)]), _chunk("D", [(2, 101, 104)])]) == 4
    assert not passage_retrieved(g, [_chunk("D", [(2, 100, 103)]), _chunk("D", [(2, 101, 104)])])
    assert not passage_retrieved(
        g, [_chunk("D", [(1, 0, 500)]), _chunk("E", [(2, 0, 500)])]
    )  # other page/doc
    assert passage_retrieved(g, [_chunk("D", [(1, 0, 50), (2, 0, 500)])])  # multi-page chunk
    assert passage_retrieved(g, [_chunk("D", [(2, 104, 110)])], min_fraction=0.6)  # 6 of 10


def test_citation_precision_by_passage_coverage():
    g = [GoldPassage(doc_id="D", page=0, start=10, end=20, text="y" * 10)]
    hit, miss = _chunk("D", [(0, 0, 30)]), _chunk("D", [(0, 40, 90)])
    assert citation_precision([hit, miss], g) == 0.5
    assert citation_precision([hit], g) == 1.0
    assert citation_precision([], g) is None


# ------------------------------------------------------------------------------------------------ accuracy
def test_values_match_scale_percent_sign_and_tolerance():
    assert values_match(1.25e9, 1250.0)  # "1.250 millones de euros"
    assert values_match(0.139, 13.9)  # a percentage written as a fraction
    assert values_match(-3.4, 3.4)  # direction is stated in words
    assert not values_match(924.0, 925.0)
    assert values_match(13.86, 13.9, rel_tol=0.01, abs_tol=0.06)
    assert not values_match(15.0, 13.9, rel_tol=0.01, abs_tol=0.06)


def test_strict_vs_lenient_on_plain_figures():
    assert judge_figures([1250e6], [1250.0]) == {
        "lenient": True,
        "strict": True,
        "missing": [],
        "foreign": [],
    }
    r = judge_figures([1250.0, 1100.0], [1250.0])
    assert r["lenient"] and not r["strict"] and r["foreign"] == [1100.0]
    assert judge_figures([1250.0, 1100.0], [1250.0], allowed=[1100.0])["strict"]
    r = judge_figures([], [1250.0])
    assert not r["lenient"] and not r["strict"] and r["missing"] == [1250.0]


def _q(**kw) -> SyntheticQuestion:
    base = {
        "qid": "t",
        "question": "¿Cuáles fueron los ingresos de Ejemplo en 2024?",
        "kind": "tabla",
        "answer": "",
    }
    return SyntheticQuestion(**{**base, **kw})


def test_strict_vs_lenient_on_spanish_answers():
    q = _q(gold_figures=[13668.9])
    assert score_answer(q, "Los ingresos de 2024 fueron 13.668,9 millones de euros.")["strict"]
    r = score_answer(q, "13.668,9 millones de euros, frente a 12.001,4 millones el año anterior.")
    assert r["lenient"] and not r["strict"]
    r = score_answer(q, "Unos 12.000 millones de euros.")
    assert not r["lenient"] and not r["strict"]
    calc = _q(kind="calculo", gold_figures=[13.9], support_figures=[13668.9, 12001.4])
    assert score_answer(calc, "Crecieron un 13,86 % (13.668,9 frente a 12.001,4 millones).")["strict"]
    assert not score_answer(calc, "Crecieron un 15 %.")["lenient"]
    nr = _q(
        kind="no_respondible", answerable=False, question="¿Qué calificación otorga S&P a Ejemplo en 2024?"
    )
    assert score_answer(nr, "No consta en los documentos.")["strict"]
    r = score_answer(nr, "No consta; quizá unos 5 millones de euros.")
    assert r["lenient"] and not r["strict"]
    assert not score_answer(nr, "La calificación es BBB con deuda de 300 millones.")["lenient"]


def test_every_gold_answer_is_strictly_correct_and_faithful(corpus):
    for q in corpus[2]:
        assert score_answer(q, q.answer)["strict"], (q.qid, q.answer)
        assert faithfulness(q.answer, [g.text for g in q.gold_passages], q)["faithful"], (q.qid, q.answer)


def test_faithfulness_rules():
    q = _q(gold_figures=[13668.9])
    assert faithfulness("13.668,9 millones", ["| Ingresos | 13.668,9 | 12.001,4 |"], q)["faithful"]
    r = faithfulness("13.668,9 millones y 99,9 %", ["| Ingresos | 13.668,9 | 12.001,4 |"], q)
    assert not r["faithful"] and r["ungrounded"] == [99.9]
    calc = _q(kind="calculo", gold_figures=[13.9], support_figures=[13668.9, 12001.4])
    assert faithfulness("Un 13,9 %.", ["| Ingresos | 13.668,9 | 12.001,4 |"], calc)["faithful"]
    assert not faithfulness("Un 13,9 %.", ["| Ingresos | 13.668,9 | 11.000,0 |"], calc)["faithful"]


# ------------------------------------------------------------------------------------------------ baselines
def test_best_line_and_first_figure():
    body = (
        "Aceros > Cuenta de resultados\n\n| Concepto | 2024 | 2023 |\n| --- | ---: | ---: |\n"
        "| Ingresos | 1.000,0 | 900,0 |\n| EBITDA ajustado¹ | 250,5 | 200,1 |\n\n¹ Excluye 5,5 millones."
    )
    question = "¿Cuál fue el EBITDA ajustado de Aceros en 2024?"
    line = best_line(body, question, extract_numbers)
    assert line == "| EBITDA ajustado¹ | 250,5 | 200,1 |"
    assert first_figure(line, question, extract_numbers) == "250,5"
    assert (
        best_line("Hay 12 consejeros. Se reunió 9 veces.", "¿Cuántas veces se reunió?")
        == "Se reunió 9 veces."
    )


def test_roc_auc_on_toy_cases():
    assert abstention_roc([0.9, 0.8, 0.3, 0.2], [True, True, False, False])["auc"] == 1.0
    assert abstention_roc([0.1, 0.2, 0.8, 0.9], [True, True, False, False])["auc"] == 0.0
    assert abstention_roc([4, 3, 2, 1], [True, False, True, False])["auc"] == 0.75
    r = abstention_roc([0.9, 0.8, 0.3, 0.2], [True, True, False, False])
    assert 0.3 < r["threshold"] <= 0.8 and r["tpr"] == 1.0 and r["fpr"] == 0.0
    assert math.isnan(abstention_roc([1.0, 2.0], [True, True])["auc"])


# ------------------------------------------------------------------------------------------------ study
def _blocks_chunker(docs, pages) -> list[Chunk]:
    """Local fallback chunker for the test: one chunk per blank-line block, header 'doc > section'."""
    out = []
    for p in pages:
        for m in re.finditer(r"[^\n]+(?:\n[^\n]+)*", p.text):
            body = m.group(0)
            out.append(
                Chunk(
                    chunk_id=f"{p.doc_id}:{p.page}:{m.start()}",
                    doc_id=p.doc_id,
                    pages=[p.page],
                    spans=[Span(page=p.page, start=m.start(), end=m.end())],
                    text=f"{p.doc_id} > {p.section}\n\n{body}",
                    body=body,
                    section=p.section,
                )
            )
    return out


def _bm25(chunks):
    import numpy as np
    from rank_bm25 import BM25Okapi

    def tok(t):
        return re.findall(r"\w+", t.lower())

    bm = BM25Okapi([tok(c.text) for c in chunks])

    def search(query: str, k: int):
        s = bm.get_scores(tok(query))
        order = np.argsort(-s, kind="stable")[:k]
        return [(int(i), float(s[i])) for i in order]

    return search


@pytest.fixture(scope="module")
def small():
    docs, pages, questions = generate_corpus(5, n_companies=4, n_etfs=3, n_questions=80)
    chunks = _blocks_chunker(docs, pages)
    return docs, pages, questions, chunks


def test_run_synthetic_study_end_to_end(small):
    docs, pages, questions, chunks = small
    res = run_synthetic_study(docs, pages, questions, chunks, _bm25(chunks), {"progress": False})
    assert res["n_questions"] == len(questions) == len(res["per_question"])
    cov = res["coverage"]
    assert [c["k"] for c in cov] == [1, 2, 3, 5]
    ps = [c["coverage_all"]["p"] for c in cov]
    toks = [c["context_tokens_mean"] for c in cov]
    assert ps == sorted(ps) and toks == sorted(toks) and toks[0] < toks[-1]
    lo, hi = cov[0]["coverage_all"]["ci"]
    assert lo <= ps[0] <= hi
    b = res["baselines"]
    # the best chunk contains its best line, which contains the first figure: lenient accuracy can only drop
    assert (
        b["mejor_chunk"]["lenient"]["k"]
        >= b["mejor_linea"]["lenient"]["k"]
        >= b["primera_cifra"]["lenient"]["k"]
    )
    assert b["mejor_chunk"]["strict_by_kind"]["no_respondible"]["k"] == 0  # baselines never abstain
    assert 0.0 <= res["abstention"]["auc"] <= 1.0
    assert "mejor_linea+abstencion" in b


def test_study_with_oracle_search_and_gold_answers(small):
    docs, pages, questions, chunks = small
    gold_chunks = {}
    for q in questions:
        hits = [i for i, c in enumerate(chunks) if any(passage_retrieved(g, [c]) for g in q.gold_passages)]
        gold_chunks[q.question] = hits

    def oracle(query, k):
        hits = gold_chunks[query]
        rest = [i for i in range(len(chunks)) if i not in hits]
        return [(i, 10.0) for i in hits][:k] + [(i, 0.0) for i in rest][: max(0, k - len(hits))]

    answers = {}
    for q in questions[:20]:
        hits = gold_chunks[q.question]
        passages = [
            Passage(
                n=n,
                chunk_id=chunks[i].chunk_id,
                doc_id=chunks[i].doc_id,
                pages=chunks[i].pages,
                text=chunks[i].body,
            )
            for n, i in enumerate(hits, 1)
        ]
        answers[q.qid] = Answer(
            qid=q.qid,
            run_id="r",
            backend="gold",
            model="gold",
            prompt_style="p",
            template_id="t",
            context_mode="oracle",
            passages=passages,
            prompt=[],
            text=q.answer,
            citations=[Citation(passage=p.n) for p in passages],
        )
    res = run_synthetic_study(docs, pages, questions, chunks, oracle, {"progress": False}, answers=answers)
    for c in res["coverage"]:
        if c["k"] >= 2:  # every question has at most two gold passages
            assert c["coverage_all"]["p"] == 1.0
    assert res["abstention"]["auc"] == 1.0  # oracle: answerable questions score 10, the others 0
    a = res["answers"]
    assert a["n"] == 20 and a["strict"]["p"] == 1.0 and a["citation_precision_mean"] == 1.0
    assert a["faithful"]["p"] == 1.0
