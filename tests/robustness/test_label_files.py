"""Label files after a crash or a hand edit: a torn LAST line is skipped with a warning and cut off before the
next append (as in the response cache); any other malformed line is an error naming the user's file:line."""

from __future__ import annotations

import json
import os
import threading
import warnings
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from finrag.cli import app
from finrag.core.contracts import Answer, Passage
from finrag.core.io import read_jsonl, repair_jsonl_tail, write_jsonl
from finrag.ingest.human_claims import load_finrag_labels
from finrag.trust import labelling
from finrag.trust.labelling import make_server

AID = "run-r/q1/0"
PASSAGE = "Net revenue was $412.5 million in fiscal 2023. Operating margin was 14.2% in 2023."


def _answer(qid: str, text: str) -> Answer:
    return Answer(
        qid=qid,
        run_id="run-r",
        backend="b",
        model="m",
        prompt_style="plain",
        template_id="t@1",
        context_mode="retrieved",
        passages=[Passage(n=1, chunk_id="c1", doc_id="D", pages=[0], text=PASSAGE)],
        prompt=[],
        text=text,
    )


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    p = tmp_path / "answers.jsonl"
    write_jsonl(p, [_answer("q1", "Net revenue was $412.5 million [1]. Margin was 14.2% [1]. Costs fell.")])
    return p


def _rec(i: int, verdict: str = "supported", note: str = "", t: str = "2025-01-01T00:00:00") -> dict:
    return {
        "answer_id": AID,
        "claim_id": f"{AID}#{i}",
        "claim": f"claim {i}",
        "passages": [{"text": PASSAGE}],
        "verdict": verdict,
        "note": note,
        "labeller": "rob",
        "time": t,
    }


def _line(r: dict) -> bytes:
    return (json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n").encode()


def _torn_file(path: Path, torn: bytes | None = None) -> bytes:
    """Two good labels, then the first part of a third: what a crash mid-append leaves."""
    path.parent.mkdir(parents=True, exist_ok=True)
    torn = _line(_rec(3, "contradicted", note="écart"))[:-12] if torn is None else torn
    path.write_bytes(_line(_rec(1)) + _line(_rec(2, "unsupported")) + torn)
    return torn


def _serve(srv):
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    return srv


# ------------------------------------------------------------------------------------------ the label server


def test_torn_last_line_is_skipped_warned_and_cut_before_the_next_append(answers, tmp_path):
    labels = tmp_path / "labels" / "rob.jsonl"
    torn = _torn_file(labels)
    with pytest.warns(RuntimeWarning, match=r"rob\.jsonl:3: torn last line skipped"):
        srv = _serve(make_server(answers, tmp_path / "labels", labeller="rob", read_timeout=1))
    try:
        assert srv.app.progress()["claims_labelled"] == 2  # the two whole labels are kept
        with pytest.warns(RuntimeWarning, match=r"cut a torn last line \(\d+ bytes\) before appending"):
            r = httpx.post(
                srv.url + "api/label",
                json={"answer_id": AID, "claim_id": f"{AID}#3", "verdict": "supported"},
                timeout=3,
            )
            assert r.status_code == 200, r.text
            srv.shutdown()  # the handler thread's warning is raised before this returns
    finally:
        srv.server_close()
    data = labels.read_bytes()
    assert torn not in data and data.endswith(b"\n")
    recs = [json.loads(x) for x in data.splitlines()]  # every line is whole JSON again
    assert [(r["claim_id"], r["verdict"]) for r in recs] == [
        (f"{AID}#1", "supported"),
        (f"{AID}#2", "unsupported"),
        (f"{AID}#3", "supported"),
    ]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no torn line left: reading it again warns nothing
        assert len(load_finrag_labels(tmp_path / "labels").items) == 3


def test_torn_inside_a_multibyte_character_is_still_only_a_torn_line(answers, tmp_path):
    labels = tmp_path / "labels" / "rob.jsonl"
    line = _line(_rec(3, note="é" * 10))
    cut = line.index("é".encode()) + 1  # half of the two UTF-8 bytes of é
    _torn_file(labels, torn=line[:cut])
    with pytest.warns(RuntimeWarning, match="torn last line skipped"):
        srv = make_server(answers, tmp_path / "labels", labeller="rob")
    srv.server_close()
    assert srv.app.progress()["claims_labelled"] == 2


def test_whole_last_line_missing_only_its_newline_is_kept(answers, tmp_path):
    labels = tmp_path / "labels" / "rob.jsonl"
    _torn_file(labels, torn=_line(_rec(3))[:-1])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        srv = make_server(answers, tmp_path / "labels", labeller="rob")
        srv.app.store.append([_rec(1, "contradicted", t="2025-02-01T00:00:00")])
    srv.server_close()
    recs = read_jsonl(labels)
    assert [r["claim_id"] for r in recs] == [f"{AID}#1", f"{AID}#2", f"{AID}#3", f"{AID}#1"]
    assert srv.app.progress()["claims_labelled"] == 3


@pytest.mark.parametrize(
    "content",
    [
        _line(_rec(1)) + b"{not json\n" + _line(_rec(2)),  # in the middle
        _line(_rec(1)) + b"{not json\n",  # last, but ends in a newline: not an interrupted append
        _line(_rec(1)) + b"\xff\xfe\n" + _line(_rec(2)),  # not UTF-8
    ],
)
def test_any_other_malformed_line_is_an_error_naming_file_and_line(answers, tmp_path, content):
    labels = tmp_path / "labels" / "rob.jsonl"
    labels.parent.mkdir()
    labels.write_bytes(content)
    with pytest.raises(ValueError, match=r"labels/rob\.jsonl:2: malformed line"):
        make_server(answers, tmp_path / "labels", labeller="rob")
    assert labels.read_bytes() == content  # nothing repaired behind the user's back


def _label_cli(answers: Path, labels_dir: Path, monkeypatch):
    monkeypatch.setattr(labelling.LabellingServer, "serve_forever", lambda self, *a, **k: None)
    args = ["label", "--answers", str(answers), "--labels-dir", str(labels_dir), "--port", "0"]
    return CliRunner().invoke(app, [*args, "--labeller", "rob"])


def test_cli_label_starts_on_a_torn_file_with_a_warning(answers, tmp_path, monkeypatch):
    _torn_file(tmp_path / "labels" / "rob.jsonl")
    with pytest.warns(RuntimeWarning, match=r"rob\.jsonl:3: torn last line skipped"):
        r = _label_cli(answers, tmp_path / "labels", monkeypatch)
    assert r.exit_code == 0, (r.output, r.exception)
    assert "labelling page: http://127.0.0.1:" in r.stdout


def test_cli_label_on_a_malformed_middle_line_is_one_line_naming_it(answers, tmp_path, monkeypatch):
    labels = tmp_path / "labels" / "rob.jsonl"
    labels.parent.mkdir()
    labels.write_bytes(_line(_rec(1)) + b"{oops\n" + _line(_rec(2)))
    r = _label_cli(answers, tmp_path / "labels", monkeypatch)
    assert r.exit_code == 2, (r.output, r.exception)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and f"{labels}:2: malformed line" in err


# ------------------------------------------------------------------------------------------ the shared helpers


def test_repair_jsonl_tail(tmp_path):
    p = tmp_path / "x.jsonl"
    cases = [
        (b"", False, b""),
        (b'{"a": 1}\n', False, b'{"a": 1}\n'),
        (b'{"a": 1}\n{"b": 2}', False, b'{"a": 1}\n{"b": 2}\n'),  # whole record: given its newline
        (b'{"a": 1}\n{"b": ', True, b'{"a": 1}\n'),  # torn: cut
        (b'{"b": ', True, b""),  # the only line, torn
    ]
    for before, cut, after in cases:
        p.write_bytes(before)
        fd = os.open(p, os.O_RDWR | os.O_APPEND)
        try:
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter("always")
                assert repair_jsonl_tail(fd, p) is cut, before
        finally:
            os.close(fd)
        assert p.read_bytes() == after, before
        assert bool(seen) is cut


def test_read_jsonl_default_is_unchanged_strict(tmp_path):
    p = tmp_path / "x.jsonl"
    p.write_bytes(b'{"a": 1}\n{"b": ')
    with pytest.raises(ValueError, match=r"x\.jsonl:2: malformed line"):
        read_jsonl(p)
    with pytest.warns(RuntimeWarning, match=r"x\.jsonl:2: torn last line skipped \(6 bytes"):
        assert read_jsonl(p, torn_tail=True) == [{"a": 1}]


# ------------------------------------------------------------------------------------------ finrag agreement


def _agreement(path: Path, fmt: str):
    return CliRunner().invoke(app, ["agreement", "--labels", str(path), "--format", fmt])


def test_agreement_error_names_the_users_file(tmp_path):
    mine = tmp_path / "my labels.jsonl"
    mine.write_bytes(_line(_rec(1)) + b"{oops\n" + _line(_rec(2)))
    r = _agreement(mine, "finrag")
    assert r.exit_code == 2, (r.output, r.exception)
    err = r.stderr.strip()
    assert f"{mine}:2: malformed line" in err, err
    assert "finrag-labels-" not in err and "labels/labels.jsonl" not in err


def test_agreement_error_names_the_users_file_for_a_relative_path(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    good = {"example_id": "e", "subset": "numeric", "statement": "s", "entailment_label": True, "report": "R"}
    Path("fv.jsonl").write_text(json.dumps({**good, "context_paragraphs": [{"text": PASSAGE}]}) + "\n{oops\n")
    r = _agreement(Path("fv.jsonl"), "findver")
    assert r.exit_code == 2, (r.output, r.exception)
    assert "finrag: agreement" in r.stderr and "fv.jsonl:2: malformed line" in r.stderr
    assert "finrag-labels-" not in r.stderr and "findver_testmini" not in r.stderr


def test_agreement_skips_a_torn_last_label_with_a_warning(tmp_path):
    mine = tmp_path / "mine.jsonl"
    recs = [_rec(i, v) for i, v in enumerate(["supported", "unsupported", "supported", "contradicted"], 1)]
    mine.write_bytes(b"".join(_line(r) for r in recs) + _line(_rec(5))[:30])
    with pytest.warns(RuntimeWarning, match=r"mine\.jsonl:5: torn last line skipped") as seen:
        r = _agreement(mine, "finrag")
    assert r.exit_code == 0, (r.output, r.exception)
    out = json.loads(r.stdout)
    assert out["n"] == 4 and out["loaded"]["n_source"] == 4
    assert any(str(mine) in str(w.message) for w in seen)  # the user's path, not a temporary link
