"""Corpus building (bad inputs counted, nothing half-written) and evidence alignment (synthetic and real)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from finrag.core.contracts import Document, Evidence, Page, Question
from finrag.core.io import read_jsonl
from finrag.ingest import corpus as C
from finrag.ingest.align import PageIndex, align_evidence, align_questions, locate, tokens
from finrag.ingest.financebench import DOCUMENTS_FILE, QUESTIONS_FILE, load_questions

RECORDED = Path(__file__).parent / "fixtures" / "recorded" / "financebench"

FILING_HTML = """<html><body>
<p>UNITED STATES SECURITIES AND EXCHANGE COMMISSION</p><p>FORM 10-K</p>
<p>Annual report for the fiscal year ended December 31, 2023. TestCo Inc.</p>
<p>{body}</p>
<div style="page-break-after: always"></div>
<p>Consolidated Balance Sheets</p>
<table><tr><td>Cash and cash equivalents</td><td>$</td><td>4,258</td><td>$</td><td>3,655</td></tr>
<tr><td>Total current liabilities</td><td></td><td>10,936</td><td></td><td>9,523</td></tr></table>
</body></html>"""


def _pages(doc_id: str, texts: list[str]) -> list[Page]:
    return [Page(doc_id=doc_id, page=i, text=t) for i, t in enumerate(texts)]


FILLER = [
    f"Item {i}. Unrelated discussion of risk factors, properties and legal proceedings." for i in range(8)
]


# ------------------------------------------------------------------ alignment, synthetic


def test_tokens_normalise_case_separators_and_unicode():
    assert tokens("Net income $ 5,363 (1,577)") == ["net", "income", "5363", "1577"]
    assert tokens("Cash\u00a0and\u00a0cash") == ["cash", "and", "cash"]


def test_evidence_on_stated_page():
    pages = _pages(
        "D", [*FILLER[:3], "Purchases of property, plant and equipment (PP&E) (1,577) (1,373)", *FILLER[3:]]
    )
    ev = Evidence(
        doc_id="D", page=3, text="Purchases of property, plant and equipment (PP&E)\n(1,577) \n(1,373)"
    )
    out = align_evidence(ev, PageIndex.build(pages), "pdf")
    assert out.aligned and out.aligned_page == 3 and out.align_score == 1.0 and out.reason == ""


def test_glued_words_from_financebench_extractor_still_align():
    pages = _pages(
        "D", [*FILLER, "Cash and cash equivalents $ 452,030 $ 461,329\nShort-term investments 59,901 —"]
    )
    ev = Evidence(
        doc_id="D",
        page=8,
        text="Cashandcashequivalents\n$\n452,030 $\n461,329\nShort-terminvestments\n59,901",
    )
    out = align_evidence(ev, PageIndex.build(pages), "pdf")
    assert out.aligned and out.aligned_page == 8


def test_wrong_stated_page_is_relocated_to_nearest_match():
    text = "Total revenues 194,579 184,786 177,546 Operating income 4,021 9,538"
    pages = _pages("D", [*FILLER[:5], text, *FILLER[5:]])
    ev = Evidence(doc_id="D", page=2, text=text)
    out = align_evidence(ev, PageIndex.build(pages), "pdf")
    assert out.aligned and out.aligned_page == 5 and out.page == 2


def test_same_words_other_figures_do_not_align():
    pages = _pages("D", [*FILLER[:2], "Total revenues 1,000 2,000 3,000 Operating income 11 12", *FILLER[2:]])
    ev = Evidence(
        doc_id="D", page=2, text="Total revenues 194,579 184,786 177,546 Operating income 4,021 9,538"
    )
    out = align_evidence(ev, PageIndex.build(pages), "pdf")
    assert not out.aligned and out.aligned_page is None
    assert "not on stated page 2" in out.reason and "number recall 0.00" in out.reason


def test_evidence_split_across_a_page_break():
    pages = _pages(
        "D",
        [
            *FILLER[:4],
            "Revenues by segment Americas 10,101 EMEA 20,202 Asia 30,303 Latin 40,404",
            "Corporate 50,505 Eliminations 60,606 Total 70,707 Other 80,808",
            *FILLER[4:],
        ],
    )
    ev = Evidence(
        doc_id="D",
        page=4,
        text="Americas 10,101 EMEA 20,202 Asia 30,303 Latin 40,404 Corporate 50,505 Eliminations 60,606 Total 70,707",
    )
    m = locate(ev.text, PageIndex.build(pages), 4)
    assert (
        m.page == 4 and m.score == 1.0
    )  # neither page alone passes; the pair does, credited to the larger part


def test_html_standin_found_by_text_on_another_page():
    pages = _pages(
        "H", [*FILLER, "Consolidated Balance Sheet | Cash and cash equivalents | $ 4,258 | $ 3,655 |"]
    )
    ev = Evidence(doc_id="H", page=4, text="Cash and cash equivalents\n$\n4,258 \n$\n3,655")
    out = align_evidence(ev, PageIndex.build(pages), "html")
    assert out.aligned and out.aligned_page == 8
    assert out.page == 4  # FinanceBench's PDF page is kept as given


def test_html_takes_best_page_pdf_trusts_stated_page():
    full = (
        "Marketable securities current 56 238 Accounts receivable net of allowances 4,947 4,532 Inventories"
    )
    partial = "Marketable securities current 56 238 Accounts receivable net of allowances 4,947 4,532"
    pages = _pages("H", [*FILLER[:4], partial, *FILLER[4:6], full, *FILLER[6:]])
    ev = Evidence(doc_id="H", page=4, text=full)
    idx = PageIndex.build(pages)
    assert align_evidence(ev, idx, "pdf").aligned_page == 4  # on the stated page, above threshold
    html = align_evidence(ev, idx, "html")
    assert html.aligned_page == 7 and html.align_score == 1.0


def test_empty_evidence_and_unparsed_document_reasons():
    idx = PageIndex.build(_pages("D", FILLER))
    assert (
        align_evidence(Evidence(doc_id="D", page=0, text="  \n"), idx, "pdf").reason == "empty evidence text"
    )
    assert (
        align_evidence(Evidence(doc_id="X", page=0, text="x 1"), None, "pdf").reason == "document not parsed"
    )


def test_align_questions_metrics_and_unavailable_passthrough():
    pages = {"D": _pages("D", [*FILLER, "Dividends declared per share 5.96 5.88"])}
    good = Evidence(doc_id="D", page=8, text="Dividends declared per share 5.96")
    bad = Evidence(doc_id="D", page=1, text="Goodwill impairment 7,777 charged in the quarter")
    qs = [
        Question(qid="q1", question="?", doc_ids=["D"], evidence=[good, bad]),
        Question(
            qid="q2", question="?", doc_ids=["Z"], evidence=[good], available=False, unavailable_reason="no"
        ),
    ]
    out, m = align_questions(qs, pages, {"D": "pdf"})
    assert m["questions_total"] == 2 and m["questions_available"] == 1
    assert m["evidence_items"] == 2 and m["evidence_aligned"] == 1 and m["alignment_rate"] == 0.5
    assert m["unaligned"] == [{"qid": "q1", "doc_id": "D", "page": 1, "reason": out[0].evidence[1].reason}]
    assert out[1] == qs[1]  # unavailable question untouched


# ------------------------------------------------------------------ corpus, temp mirror


def _temp_mirror(tmp_path: Path) -> Path:
    m = tmp_path / "mirror"
    (m / "financebench" / "pdfs").mkdir(parents=True)
    for n in (QUESTIONS_FILE, DOCUMENTS_FILE):
        shutil.copy(RECORDED / n, m / "financebench" / n)
    (m / "financebench" / "pdfs" / "3M_2018_10K.pdf").write_bytes(b"%PDF-1.4\n1 0 obj garbage\n")  # corrupt
    (m / "edgar" / "MMM").mkdir(parents=True)
    (m / "edgar" / "TST").mkdir(parents=True)
    (m / "edgar" / "MMM" / "10-Q_2023-06-30.htm").write_text(
        FILING_HTML.format(body="Quarterly report. " * 40)
    )
    (m / "edgar" / "TST" / "10-K_2023-12-31.htm").write_text(
        FILING_HTML.format(body="Annual report text. " * 40)
    )
    (m / "edgar" / "TST" / "10-Q_2023-06-30.htm").write_text("")  # empty
    (m / "MANIFEST.csv").write_text(
        "kind,local_path,company,ticker,form,period,note\n"
        "edgar_html,edgar/MMM/10-Q_2023-06-30.htm,3M COMPANY,MMM,10-Q,2023-06-30,"
        "exact FinanceBench doc 3M_2023Q2_10Q (PDF absent from snapshot)\n"
        "edgar_html,edgar/TST/10-K_2023-12-31.htm,TestCo Inc,TST,10-K,2023-12-31,a company\n"
    )
    return m


def test_discover_sources_doc_ids_and_metadata(tmp_path):
    m = _temp_mirror(tmp_path)
    fb_docs = {d["doc_name"]: d for d in read_jsonl(RECORDED / DOCUMENTS_FILE)}
    srcs = {s.rel_path: s for s in C.discover_sources(m, "all", fb_docs)}
    assert srcs["financebench/pdfs/3M_2018_10K.pdf"].doc_id == "3M_2018_10K"
    assert srcs["financebench/pdfs/3M_2018_10K.pdf"].sector == "Industrials"
    mmm = srcs["edgar/MMM/10-Q_2023-06-30.htm"]
    assert (mmm.doc_id, mmm.company, mmm.form, mmm.period, mmm.sector) == (
        "3M_2023Q2_10Q",
        "3M",
        "10-Q",
        "2023Q2",
        "Industrials",
    )
    assert srcs["edgar/TST/10-K_2023-12-31.htm"].doc_id == "TST_10-K_2023-12-31"
    fb_only = {s.doc_id for s in C.discover_sources(m, "financebench", fb_docs)}
    assert fb_only == {"3M_2018_10K", "3M_2023Q2_10Q"}
    with pytest.raises(ValueError, match="include must be one of"):
        C.discover_sources(m, "some")


def test_build_corpus_bad_files_counted_rest_processed(tmp_path, caplog):
    m = _temp_mirror(tmp_path)
    out = tmp_path / "corpus"
    metrics = C.build_corpus(m, out, include="all", progress=False)  # the real parser (finrag.ingest.parse)
    assert metrics["parse_failures"] == 2
    failed = {f["file"]: f["reason"] for f in metrics["parse_failed"]}
    assert set(failed) == {"financebench/pdfs/3M_2018_10K.pdf", "edgar/TST/10-Q_2023-06-30.htm"}
    assert all(r and "\n" not in r for r in failed.values())
    assert sum("parse failed" in r.message for r in caplog.records) == 2
    docs = read_jsonl(out / "documents.jsonl", Document)
    pages = read_jsonl(out / "pages.jsonl", Page)
    assert {d.doc_id for d in docs} == {"3M_2023Q2_10Q", "TST_10-K_2023-12-31"}
    assert metrics["documents"] == 2 and metrics["pages"] == len(pages) > 0
    for d in docs:
        assert d.n_pages == sum(p.doc_id == d.doc_id for p in pages) and len(d.sha256) == 64
        assert d.source_format == "html" and not Path(d.source_file).is_absolute()
    assert not list(out.glob(".*.tmp"))


def test_crash_mid_build_leaves_previous_outputs_whole(tmp_path):
    m = _temp_mirror(tmp_path)
    out = tmp_path / "corpus"
    out.mkdir()
    (out / "documents.jsonl").write_text("previous\n")

    def exploding(path, doc_id=None):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        C.build_corpus(m, out, parse=exploding, progress=False)
    assert (out / "documents.jsonl").read_text() == "previous\n"
    assert not (out / "pages.jsonl").exists() and not list(out.glob(".*.tmp"))


def test_injected_parser_and_doc_id_enforced(tmp_path):
    m = _temp_mirror(tmp_path)

    def fake(path, doc_id=None):
        return [Page(doc_id="wrong", page=0, text=f"text of {Path(path).name}")]

    metrics = C.build_corpus(m, tmp_path / "c", parse=fake, progress=False)
    assert metrics["parse_failures"] == 0 and metrics["documents"] == 4
    pages = read_jsonl(tmp_path / "c" / "pages.jsonl", Page)
    assert {p.doc_id for p in pages} == {
        "3M_2018_10K",
        "3M_2023Q2_10Q",
        "TST_10-K_2023-12-31",
        "TST_10-Q_2023-06-30",
    }


def test_run_ingest_writes_everything(tmp_path):
    m = _temp_mirror(tmp_path)
    out = tmp_path / "data"
    metrics = C.run_ingest(
        m, out / "corpus", out / "questions" / "financebench.jsonl", out / "ingest.json", progress=False
    )
    qs = {q.qid: q for q in read_jsonl(out / "questions" / "financebench.jsonl", Question)}
    assert len(qs) == 3  # all kept
    # the 3M PDF is corrupt: its question is unavailable, with the parse failure as reason
    assert (
        not qs["financebench_id_03029"].available
        and "failed to parse" in qs["financebench_id_03029"].unavailable_reason
    )
    assert (
        not qs["financebench_id_00499"].available
        and "not available locally" in qs["financebench_id_00499"].unavailable_reason
    )
    q = qs["financebench_id_00807"]
    assert q.available and all(e.aligned and e.aligned_page == 1 for e in q.evidence)
    saved = json.loads((out / "ingest.json").read_text())
    assert saved == json.loads(json.dumps(metrics))
    assert (
        metrics["questions_available"] == 1
        and metrics["evidence_items"] == 2
        and metrics["alignment_rate"] == 1.0
    )
    assert metrics["parse_failures"] == 2 and metrics["html_standins_used"] == ["3M_2023Q2_10Q"]


# ------------------------------------------------------------------ real mirror (a fast subset)

REAL_SUBSET = [
    "financebench/pdfs/FOOTLOCKER_2022_8K_dated-2022-05-20.pdf",
    "financebench/pdfs/PEPSICO_2023_8K_dated-2023-05-05.pdf",
    "financebench/pdfs/AMCOR_2022_8K_dated-2022-07-01.pdf",
    "financebench/pdfs/ULTABEAUTY_2023Q4_EARNINGS.pdf",
    "financebench/pdfs/JOHNSON_JOHNSON_2023Q2_EARNINGS.pdf",
    "financebench/pdfs/JOHNSON_JOHNSON_2022Q4_EARNINGS.pdf",
    "financebench/pdfs/JOHNSON_JOHNSON_2023_8K_dated-2023-08-30.pdf",
    "financebench/pdfs/MGMRESORTS_2022Q4_EARNINGS.pdf",
    "financebench/pdfs/AMCOR_2023Q4_EARNINGS.pdf",
    "financebench/pdfs/PEPSICO_2023Q1_EARNINGS.pdf",
    "financebench/pdfs/BESTBUY_2024Q2_10Q.pdf",
    "financebench/pdfs/BLOCK_2016_10K.pdf",  # FinanceBench's evidence text has glued words here
    "edgar/MMM/10-Q_2023-06-30.htm",
]


@pytest.fixture(scope="module")
def real_subset(mirror):
    questions, data, _, _ = load_questions(mirror, download=False)
    srcs = [
        s
        for s in C.discover_sources(mirror, "financebench", data.documents_by_name)
        if s.rel_path in REAL_SUBSET
    ]
    build = C.parse_sources(mirror, srcs, progress=False)
    ids = {s.doc_id for s in srcs}
    subset = [q for q in questions if q.available and q.doc_ids[0] in ids]
    return build, subset


@pytest.mark.realdata
def test_real_subset_aligns(real_subset):
    build, questions = real_subset
    assert build.failures == [] and len(build.documents) == len(REAL_SUBSET)
    formats = {d.doc_id: d.source_format for d in build.documents}
    out, m = align_questions(questions, build.pages_by_doc, formats)
    assert m["evidence_items"] >= 25
    assert m["alignment_rate"] >= 0.98, m["unaligned"]
    pdf_moved = [
        e for q in out for e in q.evidence if formats[e.doc_id] == "pdf" and e.aligned_page != e.page
    ]
    assert pdf_moved == []  # FinanceBench's 0-based page is our PDF page
    mmm = [e for q in out for e in q.evidence if e.doc_id == "3M_2023Q2_10Q"]
    assert len(mmm) == 3 and all(e.aligned for e in mmm)


@pytest.mark.realdata
def test_real_wrong_page_is_found_again(real_subset):
    build, questions = real_subset
    pages = build.pages_by_doc
    q = next(q for q in questions if q.doc_ids[0] == "JOHNSON_JOHNSON_2023Q2_EARNINGS")
    ev = q.evidence[0]
    shifted = ev.model_copy(update={"page": (ev.page + 7) % len(pages[ev.doc_id])})
    out = align_evidence(shifted, PageIndex.build(pages[ev.doc_id]), "pdf")
    assert out.aligned and out.aligned_page == ev.page


@pytest.mark.realdata
@pytest.mark.slow
def test_full_real_ingest(mirror, tmp_path):
    """The whole stage on the whole mirror (~4-5 min on 2 cores): opt in with FINRAG_FULL_INGEST=1."""
    import os

    if not os.environ.get("FINRAG_FULL_INGEST"):
        pytest.skip("full ingest takes minutes: set FINRAG_FULL_INGEST=1 to run it")
    m = C.run_ingest(
        mirror, tmp_path / "corpus", tmp_path / "q.jsonl", tmp_path / "ingest.json", progress=False
    )
    assert m["parse_failures"] == 0 and m["questions_total"] == 150 and m["questions_available"] == 132
    assert m["alignment_rate"] >= 0.98, m["unaligned"]
