"""The labelling page: served in a thread on a free port, driven over HTTP with httpx."""

from __future__ import annotations

import json
import re
import threading
from pathlib import Path

import httpx
import pytest

from finrag.core.contracts import Answer, Passage, Question
from finrag.core.io import write_jsonl
from finrag.ingest.human_claims import load_finrag_labels
from finrag.trust.labelling import load_items, make_server

INJECTED = "<script>alert('x')</script>"


def _answer(qid: str, text: str, replicate: int = 0) -> Answer:
    return Answer(
        qid=qid,
        run_id="run-abc",
        backend="secret-backend",
        model="secret-model-7b",
        prompt_style="plain",
        template_id="t@1",
        context_mode="retrieved",
        replicate=replicate,
        passages=[
            Passage(n=1, chunk_id="c1", doc_id="3M_2018_10K", pages=[59], text="Capex was $1,577 million."),
            Passage(
                n=2, chunk_id="c2", doc_id="3M_2018_10K", pages=[47, 48], text=f"PP&E net {INJECTED} $8.7bn"
            ),
        ],
        prompt=[{"role": "user", "content": "q"}],
        text=text,
    )


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    answers = tmp_path / "answers.jsonl"
    write_jsonl(
        answers,
        [
            _answer(
                "q1", "3M spent $1,577 million on capex in FY2018 [1]. Its net PP&E was $8.7 billion [2]."
            ),
            _answer("q2", "The passages do not state the figure."),  # no claims: nothing to label
            _answer("q3", f"Revenue was {INJECTED} $5 billion in 2020 [2]."),
        ],
    )
    questions = tmp_path / "questions.jsonl"
    write_jsonl(questions, [Question(qid="q1", question="What was 3M's FY2018 capex?")])
    return {"answers": answers, "questions": questions, "labels": tmp_path / "labels"}


@pytest.fixture
def server(files):
    srv = make_server(files["answers"], files["labels"], labeller="alice", questions_path=files["questions"])
    t = threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield srv
    srv.shutdown()
    srv.server_close()


@pytest.fixture
def client(server):
    with httpx.Client(base_url=server.url, timeout=5) as c:
        yield c


def test_items_ids_and_refusals(files):
    items, skipped = load_items(files["answers"], files["questions"])
    assert [it.answer_id for it in items] == ["run-abc/q1/0", "run-abc/q3/0"]
    assert skipped == {"no_claims": 1}
    assert [c["claim_id"] for c in items[0].claims] == ["run-abc/q1/0#1", "run-abc/q1/0#2"]
    assert items[0].question == "What was 3M's FY2018 capex?" and items[1].question == ""
    shuffled, _ = load_items(files["answers"], shuffle_seed=3)
    assert sorted(i.answer_id for i in shuffled) == [i.answer_id for i in items]


def test_duplicate_answer_is_an_error(tmp_path):
    p = tmp_path / "a.jsonl"
    write_jsonl(p, [_answer("q1", "Revenue was $5 billion."), _answer("q1", "Revenue was $6 billion.")])
    with pytest.raises(ValueError, match=r"a\.jsonl: answer run-abc/q1/0 appears twice"):
        load_items(p)


def test_bad_labeller_name(files):
    with pytest.raises(ValueError, match="labeller"):
        make_server(files["answers"], files["labels"], labeller="../evil")


def test_page_shows_claims_escaped_and_blind(client):
    page = client.get("/?i=0")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    html = page.text
    assert "3M spent $1,577 million on capex in FY2018." in html
    assert "Its net PP&amp;E was $8.7 billion." in html
    assert "What was 3M&#39;s FY2018 capex?" in html
    assert "3M_2018_10K" in html and "pages\n      60, 48" not in html  # pages shown 1-based
    assert "48, 49" in html
    assert INJECTED not in html and "&lt;script&gt;alert(" in html
    # blind: nothing preselected, no judge, no model / backend anywhere, the run only inside id attributes
    assert " checked" not in html
    for secret in ("judge", "secret-model-7b", "secret-backend"):
        assert secret not in html
    visible = re.sub(r"<[^>]*>", " ", html)
    assert "run-abc" not in visible and "3M spent" in visible
    assert "Content-Security-Policy" in page.headers and "<script>" not in html.replace(
        '<script src="/static/labelling.js" defer></script>', ""
    )
    js = client.get("/static/labelling.js")
    assert js.status_code == 200 and 'fetch("/api/label"' in js.text and "innerHTML" not in js.text
    assert client.get("/static/../labelling.py").status_code == 404
    assert client.get("/?i=9").status_code == 404


def test_api_item_json(client):
    item = client.get("/api/item", params={"i": 1}).json()
    assert item["answer_id"] == "run-abc/q3/0"
    assert [c["text"] for c in item["claims"]] == [f"Revenue was {INJECTED} $5 billion in 2020."]
    assert item["claims"][0]["label"] is None
    assert [p["n"] for p in item["passages"]] == [1, 2]
    assert "model" not in item and "backend" not in item
    bad = client.get("/api/item", params={"i": "x"})
    assert bad.status_code == 400 and "not an integer" in bad.json()["error"]


def test_post_two_labels_and_load_them(client, files):
    r1 = client.post(
        "/api/label", json={"answer_id": "run-abc/q1/0", "claim_id": "run-abc/q1/0#1", "verdict": "supported"}
    )
    assert r1.status_code == 200, r1.text
    assert (
        r1.json()["saved"] == 1 and r1.json()["next"] == 1
    )  # "save and next" moves on to the next open answer
    r2 = client.post(
        "/api/label",
        json={
            "answer_id": "run-abc/q1/0",
            "claim_id": "run-abc/q1/0#2",
            "verdict": "contradicted",
            "note": "  passage says 8.7bn for PP&E gross?  ",
        },
    )
    assert r2.status_code == 200 and r2.json()["next"] == 1
    assert r2.json()["progress"] == {"answers_labelled": 1, "answers": 2, "claims_labelled": 2, "claims": 3}

    lines = (files["labels"] / "alice.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 2
    recs = [json.loads(x) for x in lines]
    assert {"answer_id", "claim_id", "claim", "passages", "verdict", "note", "labeller", "time"} <= set(
        recs[0]
    )
    assert [r["verdict"] for r in recs] == ["supported", "contradicted"]
    assert recs[1]["note"] == "passage says 8.7bn for PP&E gross?"
    assert recs[0]["claim"] == "3M spent $1,577 million on capex in FY2018."
    assert [p["doc_id"] for p in recs[0]["passages"]] == ["3M_2018_10K"] * 2

    loaded = load_finrag_labels(files["labels"])
    assert len(loaded.items) == 2
    got = {it.claim: it.human for it in loaded.items}
    assert got == {
        "3M spent $1,577 million on capex in FY2018.": "supported",
        "Its net PP&E was $8.7 billion.": "contradicted",
    }
    assert {it.group_id for it in loaded.items} == {"run-abc/q1/0"}
    assert loaded.items[0].passages[0] == "Capex was $1,577 million."

    # the page now shows the labeller's own choices
    html = client.get("/?i=0").text
    assert 'value="contradicted" checked' in html and 'value="supported" checked' in html


def test_relabel_latest_wins_and_survives_restart(client, files, server):
    aid, cid = "run-abc/q3/0", "run-abc/q3/0#1"
    assert client.post(
        "/api/label", json={"answer_id": aid, "claim_id": cid, "verdict": "supported"}
    ).is_success
    batch = {
        "answer_id": aid,
        "labels": [{"claim_id": cid, "verdict": "unsupported", "note": "no 2020 figure"}],
    }
    assert client.post("/api/label", json=batch).is_success
    loaded = load_finrag_labels(files["labels"])
    assert [it.human for it in loaded.items] == ["unsupported"]
    assert loaded.excluded == {"superseded_by_later_label": 1}
    again = make_server(files["answers"], files["labels"], labeller="alice")
    try:
        assert again.app.progress()["claims_labelled"] == 1
        assert again.app.item_json(1)["claims"][0]["label"] == {
            "verdict": "unsupported",
            "note": "no 2020 figure",
        }
        assert again.app.next_open() == 0
    finally:
        again.server_close()


def test_bad_posts_are_400_and_write_nothing(client, files):
    bad = client.post(
        "/api/label", json={"answer_id": "run-abc/q1/0", "claim_id": "run-abc/q1/0#1", "verdict": "true"}
    )
    assert bad.status_code == 400
    assert bad.json()["error"] == (
        "verdict 'true' for run-abc/q1/0#1 is not one of supported, unsupported, contradicted"
    )
    half = {
        "answer_id": "run-abc/q1/0",
        "labels": [
            {"claim_id": "run-abc/q1/0#1", "verdict": "supported"},
            {"claim_id": "run-abc/q1/0#7", "verdict": "supported"},
        ],
    }
    r = client.post("/api/label", json=half)
    assert r.status_code == 400 and "unknown claim_id 'run-abc/q1/0#7'" in r.json()["error"]
    r = client.post("/api/label", json={"answer_id": "nope", "claim_id": "x", "verdict": "supported"})
    assert r.status_code == 400 and "unknown answer_id" in r.json()["error"]
    r = client.post("/api/label", content=b"{not json", headers={"Content-Type": "application/json"})
    assert r.status_code == 400 and "not JSON" in r.json()["error"]
    r = client.post("/api/label", content=b"verdict=supported", headers={"Content-Type": "text/plain"})
    assert r.status_code == 415
    assert not (files["labels"] / "alice.jsonl").exists()


def test_foreign_host_header_refused(client):
    r = client.get("/", headers={"Host": "evil.example:80"})
    assert r.status_code == 403
    assert client.get("/", headers={"Host": "localhost"}).status_code == 200
