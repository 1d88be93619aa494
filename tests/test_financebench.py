"""FinanceBench loading: mirror and (recorded, offline) download paths, mapping, availability."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import httpx
import pytest

from finrag.core.config import FINANCEBENCH_RAW
from finrag.core.contracts import Question
from finrag.core.io import sha256_file
from finrag.ingest import financebench as fb

RECORDED = Path(__file__).parent / "fixtures" / "recorded" / "financebench"
NAMES = (fb.QUESTIONS_FILE, fb.DOCUMENTS_FILE)


def _recorded_sha() -> dict[str, str]:
    return {n: sha256_file(RECORDED / n) for n in NAMES}


class Server:
    """A MockTransport that serves the recorded files, can fail first, and counts requests."""

    def __init__(self, fail_first: dict[str, list[int]] | None = None):
        self.requests: list[str] = []
        self.fail_first = {k: list(v) for k, v in (fail_first or {}).items()}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.requests.append(url)
        name = url.rsplit("/", 1)[-1]
        if not url.startswith(f"{FINANCEBENCH_RAW}/data/") or not (RECORDED / name).exists():
            return httpx.Response(404, text="404: Not Found")
        if self.fail_first.get(name):
            return httpx.Response(self.fail_first[name].pop(0), text="try later")
        return httpx.Response(200, content=(RECORDED / name).read_bytes())

    def client(self) -> httpx.Client:
        return httpx.Client(transport=httpx.MockTransport(self))


def _load(tmp_path: Path, server: Server, **kw) -> fb.FinanceBenchData:
    empty_mirror = tmp_path / "nomirror"
    empty_mirror.mkdir(exist_ok=True)
    kw.setdefault("expected_sha256", _recorded_sha())
    return fb.load_financebench(
        empty_mirror, cache_dir=tmp_path / "cache", client=server.client(), sleep=lambda s: None, **kw
    )


# ------------------------------------------------------------------ download path (recorded responses only)


def test_download_pinned_commit_then_cache_hit(tmp_path):
    server = Server()
    data = _load(tmp_path, server)
    assert len(data.questions) == 3 and len(data.documents) == 4 and data.errors == []
    assert data.source.startswith("download:") and fb.FINANCEBENCH_RAW in data.source
    assert sorted(server.requests) == sorted(f"{FINANCEBENCH_RAW}/data/{n}" for n in NAMES)
    assert "cc39aeb4afdf33909ee1412188bf89035950c2eb" in server.requests[0]
    # second load: served from the on-disk cache, no request at all
    again = Server()
    data2 = _load(tmp_path, again)
    assert again.requests == []
    assert data2.questions == data.questions


def test_download_retries_transient_errors(tmp_path):
    server = Server(fail_first={fb.QUESTIONS_FILE: [503, 429]})
    data = _load(tmp_path, server)
    assert len(data.questions) == 3
    q_url = f"{FINANCEBENCH_RAW}/data/{fb.QUESTIONS_FILE}"
    assert server.requests.count(q_url) == 3


def test_download_not_found_is_clear_error(tmp_path):
    server = Server()
    with pytest.raises(fb.FinanceBenchError, match=r"could not download .*nope\.jsonl.*404"):
        fb.download_file(
            "nope.jsonl", tmp_path / "cache", server.client(), expected_sha256={}, sleep=lambda s: None
        )
    assert len(server.requests) == 1  # a 404 is not retried


def test_download_checksum_mismatch_refused_and_not_cached(tmp_path):
    server = Server()
    bad = dict.fromkeys(NAMES, "0" * 64)
    with pytest.raises(fb.FinanceBenchError, match="sha256 differs from the pinned file"):
        _load(tmp_path, server, expected_sha256=bad)
    assert not any((tmp_path / "cache").glob("*.jsonl"))


def test_pinned_checksums_match_mirror_manifest(mirror):
    rows = {r["local_path"]: r["sha256"] for r in fb.manifest_rows(mirror)}
    for name in NAMES:
        assert rows[f"financebench/{name}"] == fb.EXPECTED_SHA256[name]


# ------------------------------------------------------------------ parsing and mapping


def test_malformed_line_named_counted_rest_loaded(tmp_path):
    mirror = tmp_path / "m"
    (mirror / "financebench").mkdir(parents=True)
    lines = (RECORDED / fb.QUESTIONS_FILE).read_text().splitlines()
    lines.insert(1, '{"financebench_id": "broken", "question": ')
    (mirror / "financebench" / fb.QUESTIONS_FILE).write_text("\n".join(lines) + "\n")
    shutil.copy(RECORDED / fb.DOCUMENTS_FILE, mirror / "financebench" / fb.DOCUMENTS_FILE)
    data = fb.load_financebench(mirror)
    assert len(data.questions) == 3
    assert len(data.errors) == 1
    assert f"{fb.QUESTIONS_FILE}:2: malformed JSON line" in data.errors[0]


def test_record_missing_key_is_an_error_not_a_crash():
    data = fb.FinanceBenchData(questions=[{"financebench_id": "x1", "doc_name": "A_2020_10K"}], documents=[])
    qs, errors = fb.to_questions(data)
    assert qs == [] and len(errors) == 1 and "x1" in errors[0] and "question" in errors[0]


def test_mapping_to_question_contract():
    recs, errs = fb.parse_jsonl((RECORDED / fb.QUESTIONS_FILE).read_text(), "q")
    docs, _ = fb.parse_jsonl((RECORDED / fb.DOCUMENTS_FILE).read_text(), "d")
    assert errs == []
    qs, errors = fb.to_questions(fb.FinanceBenchData(recs, docs))
    assert errors == []
    q = qs[1]
    assert isinstance(q, Question)
    assert q.qid == "financebench_id_00807" and q.doc_ids == ["3M_2023Q2_10Q"]
    assert q.company == "3M" and q.period == "2023Q2" and q.kind == "financebench"
    assert q.question_type == "domain-relevant" and q.reasoning == ""  # null reasoning -> ""
    assert [(e.doc_id, e.page) for e in q.evidence] == [("3M_2023Q2_10Q", 4), ("3M_2023Q2_10Q", 4)]
    assert q.evidence[0].text.startswith("Cash and cash equivalents")
    assert qs[0].period == "2018" and qs[0].reasoning == "Information extraction"


def test_evidence_doc_id_comes_from_doc_name_not_evidence_doc_name():
    rec = json.loads((RECORDED / fb.QUESTIONS_FILE).read_text().splitlines()[0])
    rec["evidence"][0]["evidence_doc_name"] = "SOMETHING_ELSE"
    q = fb.to_question(rec, {})
    assert q.evidence[0].doc_id == "3M_2018_10K" and q.evidence[0].page == 59


def test_doc_period():
    assert fb.doc_period("3M_2023Q2_10Q") == "2023Q2"
    assert fb.doc_period("AMCOR_2022_8K_dated-2022-07-01") == "2022"
    assert fb.doc_period("JOHNSON_JOHNSON_2022_10K") == "2022"
    assert fb.doc_period("ODD", {"doc_period": 2019}) == "2019"


# ------------------------------------------------------------------ availability


def _mirror_with(tmp_path: Path, pdfs=(), html=None, manifest: str | None = None) -> Path:
    m = tmp_path / "mirror"
    (m / "financebench" / "pdfs").mkdir(parents=True)
    for n in NAMES:
        shutil.copy(RECORDED / n, m / "financebench" / n)
    for p in pdfs:
        (m / "financebench" / "pdfs" / f"{p}.pdf").write_bytes(b"%PDF-1.4\n%%EOF\n")
    if html:
        (m / html).parent.mkdir(parents=True, exist_ok=True)
        (m / html).write_text("<html></html>")
    if manifest is not None:
        (m / "MANIFEST.csv").write_text(manifest)
    return m


def test_availability_pdf_html_standin_and_missing(tmp_path):
    manifest = (
        "kind,local_path,note\n"
        "edgar_html,edgar/MMM/10-Q_2023-06-30.htm,exact FinanceBench doc 3M_2023Q2_10Q (PDF absent from snapshot)\n"
    )
    m = _mirror_with(tmp_path, pdfs=["3M_2018_10K"], html="edgar/MMM/10-Q_2023-06-30.htm", manifest=manifest)
    qs, data, sources, errors = fb.load_questions(m)
    assert errors == [] and len(qs) == 3  # none dropped
    by = {q.qid: q for q in qs}
    assert by["financebench_id_03029"].available
    assert sources["3M_2018_10K"].source_format == "pdf"
    assert by["financebench_id_00807"].available
    assert sources["3M_2023Q2_10Q"] == fb.SourceDoc("3M_2023Q2_10Q", "edgar/MMM/10-Q_2023-06-30.htm", "html")
    aes = by["financebench_id_00499"]
    assert not aes.available and "AES_2022_10K" in aes.unavailable_reason


def test_availability_fallback_table_without_manifest(tmp_path):
    m = _mirror_with(tmp_path, html="edgar/MMM/10-Q_2023-06-30.htm")
    assert fb.html_standins(m) == {"3M_2023Q2_10Q": "edgar/MMM/10-Q_2023-06-30.htm"}


def test_pdf_preferred_over_html_standin(tmp_path):
    manifest = "kind,local_path,note\nedgar_html,edgar/PFE/10-Q_2023-07-02.htm,exact FinanceBench doc Pfizer_2023Q2_10Q\n"
    m = _mirror_with(
        tmp_path, pdfs=["Pfizer_2023Q2_10Q"], html="edgar/PFE/10-Q_2023-07-02.htm", manifest=manifest
    )
    assert fb.resolve_sources(m, ["Pfizer_2023Q2_10Q"])["Pfizer_2023Q2_10Q"].source_format == "pdf"


# ------------------------------------------------------------------ real mirror


@pytest.mark.realdata
def test_real_mirror_150_questions_132_available(mirror):
    qs, data, sources, errors = fb.load_questions(mirror)
    assert errors == [] and data.source.startswith("mirror:")
    assert len(qs) == 150 and len(data.documents) == 361
    assert len({q.qid for q in qs}) == 150
    available = [q for q in qs if q.available]
    assert len(available) == 132
    assert all(q.unavailable_reason for q in qs if not q.available)
    via_html = [q for q in available if sources[q.doc_ids[0]].source_format == "html"]
    assert {q.doc_ids[0] for q in via_html} == {"3M_2023Q2_10Q"} and len(via_html) == 3
    assert sources["Pfizer_2023Q2_10Q"].source_format == "pdf"
    assert all(e.doc_id == q.doc_ids[0] and e.page >= 0 for q in qs for e in q.evidence)
    sectors = {d.get("gics_sector") for d in data.documents}
    assert "Industrials" in sectors and None not in sectors


def test_a_failed_download_is_a_one_line_data_error_and_an_empty_mirror_parses_nothing(tmp_path, monkeypatch):
    from finrag.core.config import DataUnavailable, mirror_dir
    from finrag.ingest.corpus import build_corpus

    class Offline(Server):
        def __call__(self, request):
            raise httpx.ConnectError("no network here")

    with pytest.raises(DataUnavailable):  # FinanceBenchError is a DataUnavailable: the stage prints one line
        _load(tmp_path, Offline())
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataUnavailable, match="no filing found"):
        build_corpus(tmp_path / "empty", tmp_path / "out", progress=False, fb_docs={})
    monkeypatch.setenv("FINRAG_MIRROR", str(tmp_path / "does-not-exist"))
    with pytest.raises(DataUnavailable, match="not a folder"):
        mirror_dir()
