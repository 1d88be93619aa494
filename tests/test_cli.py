"""The `finrag` command line: each command's happy path on small data made here, and each error path
(exit code 2, exactly one line on stderr, no traceback)."""

from __future__ import annotations

import json
import sys
import types
from functools import partial
from pathlib import Path

import numpy as np
import pytest
import typer
import yaml
from typer.testing import CliRunner

from factories import page_chunk
from finrag.cli import app
from finrag.core import stats
from finrag.core.contracts import Document
from finrag.core.io import write_jsonl
from finrag.llm.backends.extractive import ExtractiveBackend
from finrag.llm.cache import CachedLLM
from finrag.llm.prompts.render import render

runner = CliRunner()


@pytest.fixture(autouse=True)
def fewer_resamples(monkeypatch):
    """200 bootstrap resamples instead of 2000: intervals still computed, in a fraction of the time."""
    monkeypatch.setattr(stats, "kappa_bootstrap", partial(stats.kappa_bootstrap, n_resamples=200))


def run(*args: str):
    return runner.invoke(app, [str(a) for a in args])


def ok_lines(result) -> list[dict]:
    assert result.exit_code == 0, (result.exit_code, result.stdout, result.stderr, result.exception)
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def ok_one(result) -> dict:
    (obj,) = ok_lines(result)
    return obj


def user_error(result, *needles: str) -> str:
    """Exit code 2, one line on stderr naming the problem, nothing on stdout, no traceback."""
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr, result.exception)
    assert isinstance(result.exception, SystemExit), result.exception
    err = result.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert err.startswith("finrag: ")
    assert "Traceback" not in result.output and "Traceback" not in result.stderr
    assert result.stdout == ""
    for n in needles:
        assert n in err, (n, err)
    return err


# ------------------------------------------------------------------------------------------------ parse


def test_parse_missing_file(tmp_path):
    user_error(run("parse", tmp_path / "nope.pdf"), "nope.pdf", "no such file")


def test_parse_non_filing_html(tmp_path):
    f = tmp_path / "page.html"
    f.write_text("<html><body><p>hello</p></body></html>")
    user_error(run("parse", f), "page.html", "not a filing")


def test_parse_real_pdf_prints_one_json_line_per_page(mirror):
    import pypdfium2 as pdfium

    pdf = mirror / "financebench" / "pdfs" / "ULTABEAUTY_2023Q4_EARNINGS.pdf"
    if not pdf.is_file():
        pytest.skip(f"{pdf.name} is not in this mirror")
    rows = ok_lines(run("parse", pdf))
    assert len(rows) == len(pdfium.PdfDocument(str(pdf)))
    assert [r["page"] for r in rows] == list(range(len(rows)))
    assert {r["doc"] for r in rows} == {"ULTABEAUTY_2023Q4_EARNINGS"}
    assert set(rows[0]) == {"doc", "page", "text", "section"}
    assert "Ulta Beauty" in rows[0]["text"]


# ------------------------------------------------------------------------------------------------ search

CHUNKS = [
    (
        "ACME_2022_10K",
        3,
        "ACME revenue grew. Revenue was $412 million; revenue by segment follows. Revenue rose.",
    ),
    ("ACME_2022_10K", 4, "ACME employees numbered 1,200 at year end and the headquarters moved to Denver."),
    ("BETA_2023_10K", 7, "Beta Corp revenue was $95 million in 2023."),
    ("BETA_2023_10K", 8, "Beta Corp litigation: no material proceedings are pending against the company."),
    ("BETA_2023_10K", 9, "Properties: Beta Corp leases offices in Austin and a warehouse in Reno."),
    ("ACME_2022_10K", 5, "Risk factors include supply shortages, cyber attacks and interest rates."),
    ("ACME_2022_10K", 6, "The board of directors met eleven times during the year."),
]


def _chunks_file(path: Path) -> Path:
    rows = [page_chunk(doc, page, text) for doc, page, text in CHUNKS]
    write_jsonl(path, rows)
    return path


def _documents_file(path: Path) -> Path:
    write_jsonl(
        path,
        [
            Document(doc_id="ACME_2022_10K", company="Acme Inc.", form="10-K", period="2022"),
            Document(doc_id="BETA_2023_10K", company="Beta Corp", form="10-K", period="2023"),
        ],
    )
    return path


def test_search_bm25_prints_hits_as_json(tmp_path):
    f = _chunks_file(tmp_path / "tiny.jsonl")
    hits = ok_lines(run("search", "What was revenue?", "--setup", "tiny/none/bm25", "-k", "2", "--chunks", f))
    assert len(hits) == 2
    assert {"doc", "pages", "score", "text"} <= set(hits[0])
    assert (hits[0]["doc"], hits[0]["pages"]) == ("ACME_2022_10K", [3])  # four "revenue"s
    assert (hits[1]["doc"], hits[1]["pages"]) == ("BETA_2023_10K", [7])
    assert hits[0]["score"] > hits[1]["score"] > 0
    assert hits[0]["text"] == CHUNKS[0][2]


def test_search_filter_keeps_the_named_company(tmp_path):
    f = _chunks_file(tmp_path / "tiny.jsonl")
    d = _documents_file(tmp_path / "documents.jsonl")
    q = "What was Beta Corp revenue in 2023?"
    base = ["search", q, "--setup", "tiny/none/bm25", "-k", "4", "--chunks", f]
    unfiltered = ok_lines(run(*base))
    assert "ACME_2022_10K" in {h["doc"] for h in unfiltered}, (
        "the test needs another company's hits unfiltered"
    )
    filtered = ok_lines(run(*base, "--filter", "--documents", d))
    assert filtered and {h["doc"] for h in filtered} == {"BETA_2023_10K"}
    assert filtered[0]["pages"] == [7]


def test_search_reads_paths_from_a_params_override(tmp_path):
    _chunks_file(tmp_path / "chunks" / "tiny.jsonl")
    params = {
        "retrieve": {
            "chunks_dir": str(tmp_path / "chunks"),
            "embeddings_dir": str(tmp_path / "emb"),
            "methods": ["bm25"],
            "bm25": {"k1": 1.2, "b": 0.75, "language": "en"},
            "store": "faiss",
            "embedders": {},
            "depth": 10,
            "rrf_k": 60,
            "rrf_weights": None,
            "rerank_depth": 5,
            "reranker": "none",
        }
    }
    pf = tmp_path / "params.yaml"
    pf.write_text(yaml.safe_dump(params))
    hits = ok_lines(run("search", "litigation proceedings", "--setup", "tiny/x/bm25", "--params", pf))
    assert [h["pages"] for h in hits] == [[8]]
    err = user_error(run("search", "q", "--setup", "tiny/x/dense", "--params", pf), "dvc repro embed")
    assert str(tmp_path / "emb" / "tiny" / "x.npy") in err


class _BagOfWords:
    """A toy embedder (normalised word counts over a fixed vocabulary) standing in for finrag.retrieve.embedding."""

    def __init__(self, vocab):
        self.vocab = {w: i for i, w in enumerate(vocab)}

    def _vec(self, text: str) -> np.ndarray:
        v = np.zeros(len(self.vocab), dtype=np.float32)
        for w in text.lower().replace(".", " ").replace(",", " ").replace(":", " ").split():
            if w in self.vocab:
                v[self.vocab[w]] += 1
        return v / (np.linalg.norm(v) or 1.0)

    def embed_query(self, text: str) -> np.ndarray:
        return self._vec(text)

    def embed_passages(self, texts) -> np.ndarray:
        return np.stack([self._vec(t) for t in texts])


def test_search_dense_uses_the_embeddings_file(tmp_path, monkeypatch):
    vocab = ["revenue", "employees", "headquarters", "litigation", "proceedings", "denver", "beta", "acme"]
    emb = _BagOfWords(vocab)
    fake = types.ModuleType("finrag.retrieve.embedding")
    fake.make_embedder = lambda name, **kw: emb
    fake.embed_with_cache = lambda embedder, texts, *a, **kw: embedder.embed_passages(texts)
    monkeypatch.setitem(sys.modules, "finrag.retrieve.embedding", fake)
    f = _chunks_file(tmp_path / "tiny.jsonl")
    vec = tmp_path / "toy.npy"
    np.save(vec, emb.embed_passages([t for _, _, t in CHUNKS]))
    hits = ok_lines(
        run(
            "search",
            "where are the headquarters",
            "--setup",
            "tiny/toy/dense",
            "--chunks",
            f,
            "--embeddings",
            vec,
        )
    )
    assert hits[0]["pages"] == [4] and hits[0]["doc"] == "ACME_2022_10K"
    assert hits[0]["score"] == pytest.approx(
        float(emb.embed_query("headquarters") @ np.load(vec)[1]), rel=1e-5
    )
    np.save(vec, np.load(vec)[:3])  # one vector short of the chunks
    user_error(
        run("search", "q", "--setup", "tiny/toy/dense", "--chunks", f, "--embeddings", vec),
        "re-run the embed stage",
    )


def test_search_errors(tmp_path):
    f = _chunks_file(tmp_path / "tiny.jsonl")
    user_error(run("search", "q", "--setup", "tiny/bm25", "--chunks", f), "CHUNKER/EMBEDDER/METHOD")
    user_error(run("search", "q", "--setup", "tiny/x/magic", "--chunks", f), "unknown search method 'magic'")
    err = user_error(run("search", "q", "--setup", "nochunker/x/bm25"), "dvc repro chunk")
    assert "nochunker.jsonl" in err
    user_error(run("search", "q", "--setup", "tiny/x/dense", "--chunks", f), "dvc repro embed")
    user_error(
        run(
            "search",
            "q",
            "--setup",
            "tiny/x/bm25",
            "--chunks",
            f,
            "--filter",
            "--documents",
            tmp_path / "d.jsonl",
        ),
        "documents file not found",
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f.read_text() + "{not json\n")
    user_error(run("search", "q", "--setup", "tiny/x/bm25", "--chunks", bad), "bad.jsonl:8")
    user_error(run("search", "--setup", "tiny/x/bm25"), "Missing argument")  # a usage error is one line too


# ------------------------------------------------------------------------------------------------ grade


def test_grade_prints_verdict_and_figures():
    r = ok_one(run("grade", "--gold", "$1,577 million", "--answer", "Capex was $1.577 billion."))
    assert r["verdict"] == "correct" and r["unit_mismatch"] is False
    assert r["gold_figures"][0]["value"] == pytest.approx(1.577e9)
    assert r["matched"] == [["$1,577 million", "$1.577 billion"]]
    r = ok_one(
        run(
            "grade", "--gold", "$1,577 million", "--answer", "It was $1,577 thousand.", "--question", "Capex?"
        )
    )
    assert r["verdict"] == "incorrect" and r["unit_mismatch"] is True
    assert r["answer_figures"][0]["value"] == pytest.approx(1.577e6)


def test_grade_missing_option_is_one_line():
    user_error(run("grade", "--gold", "5"), "--answer")


# ------------------------------------------------------------------------------------------------ judge

PASSAGE = (
    "Net revenue was $412.5 million in fiscal 2023, up from $380.1 million in fiscal 2022. "
    "Operating margin was 14.2% in 2023."
)


def test_judge_numeric():
    r = ok_one(
        run("judge", "--claim", "Net revenue was $412.5 million in fiscal 2023.", "--passage", PASSAGE)
    )
    assert r["verdict"] == "supported" and "$412.5 million" in r["evidence"] and r["judge"] == "numeric"
    r = ok_one(
        run(
            "judge",
            "--claim",
            "Operating margin was 19.8% in 2023.",
            "--passage",
            "Costs were flat.",
            "--passage",
            PASSAGE,
        )
    )
    assert r["verdict"] == "contradicted" and "14.2%" in r["evidence"]


def test_judge_llm_through_the_response_cache(tmp_path):
    cache = tmp_path / "cache"
    args = [
        "judge",
        "--claim",
        "Revenue rose.",
        "--passage",
        PASSAGE,
        "--judge",
        "llm",
        "--backend",
        "extractive",
    ]
    first = ok_one(run(*args, "--cache-dir", cache))
    # the extractive stand-in answers no verdict word: the judge must say so, never count it as supported
    assert first["verdict"] == "unsupported" and first["detail"]["parse_failed"] is True
    assert list(cache.rglob("*.jsonl")), "the call was recorded"
    again = ok_one(run(*args, "--cache-dir", cache, "--cache-mode", "replay"))
    assert again["detail"]["cache_key"] == first["detail"]["cache_key"]
    user_error(
        run(*args[:2], "Other claim.", *args[3:], "--cache-dir", cache, "--cache-mode", "replay"),
        "cache miss",
    )


def test_judge_errors(tmp_path):
    base = ["judge", "--claim", "x", "--passage", "y"]
    user_error(run(*base, "--judge", "oracle"), "unknown judge 'oracle'")
    user_error(
        run(*base, "--judge", "llm", "--backend", "gpt9", "--cache-dir", tmp_path), "unknown llm backend"
    )
    user_error(
        run(*base, "--judge", "llm", "--cache-mode", "sometimes", "--cache-dir", tmp_path), "--cache-mode"
    )
    user_error(run("judge", "--claim", "x"), "--passage")
    # a backend that cannot be loaded here: a local model file that does not exist
    pf = tmp_path / "params.yaml"
    pf.write_text(
        yaml.safe_dump({"llm": {"backends": {"llamacpp": {"model_path": str(tmp_path / "m.gguf")}}}})
    )
    user_error(
        run(*base, "--judge", "llm", "--params", pf, "--cache-dir", tmp_path), "GGUF model file not found"
    )
    pf2 = tmp_path / "params2.yaml"  # params files are read once per process: a new name, not a rewrite
    pf2.write_text(yaml.safe_dump({"llm": {"backends": {"llamacpp": {"no_such_setting": 1}}}}))
    user_error(
        run(*base, "--judge", "llm", "--params", pf2, "--cache-dir", tmp_path), "llm.backends.llamacpp"
    )


# ------------------------------------------------------------------------------------------------ agreement

# (claim, human True/False): the numeric judge supports the first four, not the last four -> 3+3 agree, 2 do not
FINDVER = [
    ("Net revenue was $412.5 million in fiscal 2023.", True),
    ("Operating margin was 14.2% in 2023.", True),
    ("Net revenue was $380.1 million in fiscal 2022.", True),
    ("Net revenue grew by $32.4 million in 2023.", False),
    ("Net revenue was $455.0 million in fiscal 2023.", False),
    ("Operating margin was 19.8% in 2023.", False),
    ("Net revenue was $501.7 million in fiscal 2022.", False),
    ("Operating margin was 9.1% in 2023.", True),
]


def _findver_file(path: Path, rows=FINDVER) -> Path:
    write_jsonl(
        path,
        [
            {"example_id": f"ex-{i}", "subset": "numeric", "statement": c, "entailment_label": lab,
             "report": "R.json", "context_paragraphs": [{"id": 0, "text": PASSAGE}]}
            for i, (c, lab) in enumerate(rows)
        ],
    )  # fmt: skip
    return path


def test_agreement_findver_numeric(tmp_path):
    r = ok_one(run("agreement", "--labels", _findver_file(tmp_path / "fv.jsonl"), "--format", "findver"))
    assert r["benchmark"] == "findver" and r["judge"] == "numeric" and r["n"] == 8
    # confusion (rows human S/N, cols judge S/N) = [[3, 1], [1, 3]]: p_o = .75, p_e = .5 -> kappa .5
    assert r["confusion_matrix"] == [[3, 1], [1, 3]]
    assert r["kappa"] == pytest.approx(0.5)
    assert r["balanced_accuracy"] == pytest.approx(0.75)
    lo, hi = r["kappa_ci"]
    assert -1.0 <= lo <= 0.5 <= hi <= 1.0
    assert r["three_class"]["n"] == 8 and r["loaded"]["n_items"] == 8


def test_agreement_other_formats(tmp_path):
    ab = tmp_path / "ab.jsonl"
    write_jsonl(
        ab,
        [
            {"id": f"a{i}", "claim": c, "references": [PASSAGE], "src_dataset": "X",
             "attribution_label": "attributable" if lab else "not attributable"}
            for i, (c, lab) in enumerate(FINDVER)
        ],
    )  # fmt: skip
    r = ok_one(run("agreement", "--labels", ab, "--format", "attributionbench", "--judge", "numeric"))
    assert (r["n"], r["confusion_matrix"]) == (8, [[3, 1], [1, 3]]) and "three_class" not in r
    eq = tmp_path / "eq.jsonl"
    claims = [
        {"claim_string": c, "evidence": [f"[1] https://example.org/{i}\n\n{PASSAGE}"],
         "support": "Complete" if lab else "Partial"}
        for i, (c, lab) in enumerate(FINDVER)
    ]  # fmt: skip
    claims.append(
        {"claim_string": "Only a link.", "evidence": ["[2] https://example.org/x"], "support": "Complete"}
    )
    write_jsonl(
        eq, [{"question": "q", "answers": {"sysA": {"claims": claims[:4]}, "sysB": {"claims": claims[4:]}}}]
    )
    r = ok_one(run("agreement", "--labels", eq, "--format", "expertqa"))
    assert r["n"] == 8 and r["loaded"]["excluded"] == {"evidence_url_only": 1}
    assert r["answer_level"]["n"] == 2  # two answers: sysA (judge: all supported), sysB
    fr = tmp_path / "mine.jsonl"
    verdicts = ["supported", "supported", "supported", "unsupported", "unsupported", "contradicted", "unsupported",
                "supported"]  # fmt: skip
    write_jsonl(
        fr,
        [
            {"answer_id": "a1", "claim_id": f"c{i}", "labeller": "me", "claim": c, "passages": [{"text": PASSAGE}],
             "verdict": v, "time": "2025-01-01T00:00:00"}
            for i, ((c, _), v) in enumerate(zip(FINDVER, verdicts, strict=True))
        ],
    )  # fmt: skip
    r = ok_one(run("agreement", "--labels", fr, "--format", "finrag"))
    assert r["n"] == 8 and r["confusion_matrix"] == [[3, 1], [1, 3]] and "three_class" in r


def test_agreement_errors(tmp_path):
    user_error(
        run("agreement", "--labels", tmp_path / "none.jsonl", "--format", "findver"), "labels file not found"
    )
    f = _findver_file(tmp_path / "fv.jsonl")
    user_error(run("agreement", "--labels", f, "--format", "fever"), "--format must be one of")
    user_error(run("agreement", "--labels", f, "--format", "findver", "--judge", "vibes"), "unknown judge")
    user_error(
        run("agreement", "--labels", f, "--format", "expertqa"), "not in the expertqa format", "'answers'"
    )
    empty = _findver_file(tmp_path / "nocontext.jsonl")
    empty.write_text(empty.read_text().replace(json.dumps(PASSAGE), '""'))
    user_error(
        run("agreement", "--labels", empty, "--format", "findver"), "no usable findver items", "no_context"
    )
    bad = tmp_path / "bad.jsonl"
    bad.write_text(f.read_text() + "{oops\n")
    user_error(run("agreement", "--labels", bad, "--format", "findver"), "malformed line")


def test_agreement_on_a_real_sample(mirror):
    f = mirror / "humanlabels" / "attributionbench" / "dev_all_subset_balanced.jsonl"
    r = ok_one(run("agreement", "--labels", f, "--format", "attributionbench", "--sample", "40"))
    assert r["n"] == 40 and r["loaded"]["n_items"] == 1198
    assert sum(map(sum, r["confusion_matrix"])) == 40 and len(r["kappa_ci"]) == 2


# ------------------------------------------------------------------------------------------------ replay


def _recorded_answer(tmp_path: Path) -> tuple[Path, Path]:
    cache = tmp_path / "cache"
    messages, template_id = render("plain", "What was revenue?", [{"n": 1, "text": PASSAGE}])
    llm = CachedLLM(ExtractiveBackend(), cache, mode="record", stage="generate")
    comp, key, _ = llm.complete(messages, {"max_tokens": 50}, template_id=template_id, item_id="q1")
    ans = {"qid": "q1", "cache_key": key, "text": comp.text, "prompt": messages, "backend": "extractive",
           "model": ExtractiveBackend.model, "template_id": template_id, "replicate": 0}  # fmt: skip
    f = tmp_path / "answers.jsonl"
    write_jsonl(f, [ans])
    return cache, f


def test_replay_ok_and_mismatch(tmp_path):
    cache, f = _recorded_answer(tmp_path)
    r = ok_one(run("replay", "--cache-dir", cache, f))
    assert r == {"n_answers": 1, "n_ok": 1, "missing": [], "mismatched": [], "ok": True}
    tampered = tmp_path / "tampered.jsonl"
    row = json.loads(f.read_text())
    write_jsonl(
        tampered, [{**row, "text": row["text"] + " (edited)"}, {**row, "qid": "q2", "cache_key": "0" * 64}]
    )
    res = run("replay", "--cache-dir", cache, f, tampered)
    assert res.exit_code == 1
    out = json.loads(res.stdout)
    assert (out["ok"], out["n_answers"], out["n_ok"]) == (False, 3, 1)
    assert len(out["missing"]) == 1 and "differs in text" in out["mismatched"][0]


def test_replay_errors(tmp_path):
    cache, f = _recorded_answer(tmp_path)
    user_error(run("replay", "--cache-dir", cache, tmp_path / "none.jsonl"), "answers file not found")
    user_error(run("replay", "--cache-dir", tmp_path / "nocache", f), "cache directory not found")
    user_error(run("replay", "--cache-dir", cache), "Missing argument")


# ------------------------------------------------------------------------------------------------ label


def test_label_calls_the_labelling_server(tmp_path, monkeypatch):
    import inspect

    from finrag.trust import labelling

    calls = []
    fake = types.ModuleType("finrag.trust.labelling")
    fake.serve = lambda *a, **kw: calls.append((a, kw))
    monkeypatch.setitem(sys.modules, "finrag.trust.labelling", fake)
    _, answers = _recorded_answer(tmp_path)
    res = run(
        "label",
        "--answers",
        answers,
        "--labels-dir",
        tmp_path / "labels",
        "--port",
        "9001",
        "--labeller",
        "ana",
    )
    assert res.exit_code == 0, res.stderr
    ((args, kwargs),) = calls
    assert args == (answers, tmp_path / "labels")
    assert kwargs == {"host": "127.0.0.1", "port": 9001, "questions_path": None, "labeller": "ana"}
    bound = inspect.signature(labelling.serve).bind(*args, **kwargs)  # the real server takes this call
    assert bound.arguments["answers_path"] == answers and bound.arguments["labeller"] == "ana"


def test_label_errors(tmp_path, monkeypatch):
    _, answers = _recorded_answer(tmp_path)
    monkeypatch.setitem(sys.modules, "finrag.trust.labelling", None)  # the module is absent
    user_error(run("label", "--answers", answers), "labelling page is not available")
    user_error(run("label", "--answers", tmp_path / "none.jsonl"), "answers file not found")
    user_error(
        run("label", "--answers", answers, "--questions", tmp_path / "q.jsonl"), "questions file not found"
    )
    user_error(run("label", "--answers", answers, "--port", "70000"), "--port")


def test_progress_counts_recorded_calls_per_family_without_a_model(tmp_path):
    from finrag.core.contracts import Question
    from finrag.generate.run import family_specs, generate_answers
    from finrag.retrieve.contexts import ContextBuilder, freeze_contexts

    chunks = [
        page_chunk("D", i, t)
        for i, t in enumerate(["Revenue was $5,000 million in 2019.", "Net income was $700 million in 2019."])
    ]
    (tmp_path / "chunks").mkdir()
    write_jsonl(tmp_path / "chunks" / "page.jsonl", chunks)
    questions = [
        Question(qid="q1", question="What was net income in 2019?", answer="$700 million", doc_ids=["D"])
    ]
    write_jsonl(tmp_path / "questions.jsonl", questions)
    builder = ContextBuilder(chunks, lambda text, k, allowed: [(1, 1.0), (0, 0.5)][:k], k=2)
    write_jsonl(
        tmp_path / "contexts.jsonl", freeze_contexts(questions, ["retrieved"], builder, "page/x/dense", False)
    )
    fam = {"backend": "extractive", "tag": "ex", "run_id": "{tag}-{style}-{context}", "styles": ["plain", "quote"],
           "contexts": ["retrieved"], "replicates": [0]}  # fmt: skip
    decoding = {"temperature": 0.0, "top_p": 1.0, "max_tokens": 64, "seed": 0}
    gen = {"questions": str(tmp_path / "questions.jsonl"), "contexts": str(tmp_path / "contexts.jsonl"),
           "chunks_dir": str(tmp_path / "chunks"), "cache_dir": str(tmp_path / "cache"), "decoding": decoding,
           "backends": {"extractive": {}}, "families": {"ex": fam}}  # fmt: skip
    (tmp_path / "params.yaml").write_text(yaml.safe_dump({"generate": gen}), encoding="utf-8")
    contexts = {("q1", "retrieved"): builder.build(questions[0], "retrieved")}
    llm = CachedLLM(ExtractiveBackend(), tmp_path / "cache", mode="auto", stage="t")
    generate_answers(
        questions, contexts, llm, family_specs("ex", fam, decoding)[:1], decoding, progress=False
    )
    (out,) = ok_lines(run("progress", "--params", tmp_path / "params.yaml"))
    assert out["ex"]["calls"] == 2 and out["ex"]["recorded"] == 1
    assert out["ex"]["runs"]["ex-plain-retrieved"]["recorded"] == 1
    assert out["ex"]["runs"]["ex-quote-retrieved"]["recorded"] == 0
    bad = run("progress", "--params", tmp_path / "params.yaml", "--family", "nope")
    assert bad.exit_code == 2 and "unknown family" in bad.stderr


def test_a_calibrated_judge_is_named_by_its_run_and_cut_at_that_runs_threshold(tmp_path):
    """`--judge llm_logprob` takes the first calibrated run of params.yaml; a calibrated run's own name (the 1.5B
    one) takes that run, with the threshold the agreement stage fitted for it; other names still fail clearly."""
    import json

    import yaml

    from finrag.cli import make_cli_judge

    backend = {"backend": "llamacpp", "n_ctx": 512, "logits_all": True}
    runs = {
        "llm": {"judge": "llm", "backend": "small"},
        "llm_logprob": {"judge": "llm_logprob", "backend": "small", "params": {"top_logprobs": 20}},
        "llm_logprob_big": {"judge": "llm_logprob", "backend": "big", "params": {"top_logprobs": 20}},
    }
    fitted = {"llm_logprob": {"calibration": {"threshold_all": -0.5}},
              "llm_logprob_big": {"calibration": {"threshold_all": 1.25}}}  # fmt: skip
    results = tmp_path / "agreement.json"
    results.write_text(json.dumps({"model_judges": {"runs": fitted}}), encoding="utf-8")
    params_file = tmp_path / "params.yaml"
    params_file.write_text(yaml.safe_dump({"agreement": {
        "metrics_out": str(results),
        "model_judges": {"cache_dir": str(tmp_path / "cache"), "backends": {"small": backend, "big": backend}, "runs": runs},
    }}), encoding="utf-8")  # fmt: skip

    def judge(name):
        return make_cli_judge(name, "llamacpp", "replay", tmp_path / "cache", params_file)

    assert judge("llm_logprob").threshold == -0.5
    assert judge("llm_logprob_big").threshold == 1.25
    with pytest.raises(typer.Exit):
        judge("llm_logprob_bigger")
