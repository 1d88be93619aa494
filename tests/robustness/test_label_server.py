"""The labelling server under hostile or broken clients: a real server on 127.0.0.1 (free port, in a thread),
raw sockets for requests httpx would not send, a short read timeout so the slow-client probes take < 1 s each."""

from __future__ import annotations

import json
import logging
import socket
import threading
import time
import types
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from finrag.cli import app
from finrag.core.contracts import Answer, Passage
from finrag.core.io import write_jsonl
from finrag.trust import labelling
from finrag.trust.labelling import MAX_BODY, check_token, make_server, needs_token

TIMEOUT = 0.5  # the server's read timeout in these tests
TOKEN = "s3cret-token-for-tests-only"
AID, CID = "run-r/q1/0", "run-r/q1/0#1"


def _answer(qid: str, text: str) -> Answer:
    return Answer(
        qid=qid,
        run_id="run-r",
        backend="b",
        model="m",
        prompt_style="plain",
        template_id="t@1",
        context_mode="retrieved",
        passages=[Passage(n=1, chunk_id="c1", doc_id="D", pages=[0], text="Revenue was $5 billion.")],
        prompt=[],
        text=text,
    )


@pytest.fixture
def answers(tmp_path: Path) -> Path:
    p = tmp_path / "answers.jsonl"
    write_jsonl(p, [_answer("q1", "Revenue was $5 billion [1]."), _answer("q2", "Costs were $2 billion.")])
    return p


@pytest.fixture
def start(answers, tmp_path):
    """start(**make_server kwargs) -> a serving LabellingServer on 127.0.0.1; all are stopped at the end."""
    servers = []

    def _start(**kw):
        kw.setdefault("read_timeout", TIMEOUT)
        srv = make_server(answers, kw.pop("labels_dir", tmp_path / "labels"), labeller="rob", **kw)
        threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(srv)
        return srv

    yield _start
    for srv in servers:
        srv.shutdown()
        srv.server_close()


@pytest.fixture
def server(start):
    return start()


def _addr(srv) -> tuple[str, int]:
    return srv.server_address[:2]


def _recv_all(sock: socket.socket, limit: float = 3.0) -> bytes:
    """Everything the server sends until it closes (fails the test if it does not close within `limit`)."""
    sock.settimeout(limit)
    out = b""
    while True:
        try:
            chunk = sock.recv(1 << 16)
        except TimeoutError:
            pytest.fail(f"the server neither answered nor closed within {limit} s (got {out[:200]!r})")
        except ConnectionResetError:
            return out
        if not chunk:
            return out
        out += chunk


def _status(raw: bytes) -> int | None:
    return int(raw.split(b" ", 2)[1]) if raw.startswith(b"HTTP/") else None


def _post_raw(srv, headers: dict[str, str], body: bytes = b"") -> bytes:
    head = "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    with socket.create_connection(_addr(srv), timeout=3) as s:
        s.sendall(f"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1\r\n{head}\r\n".encode() + body)
        return _recv_all(s)


def _label_body(pad: int = 0) -> bytes:
    return json.dumps({"answer_id": AID, "claim_id": CID, "verdict": "supported", "pad": "x" * pad}).encode()


UVICORN_400 = b"Invalid HTTP request received."  # uvicorn (h11) refuses a malformed head itself


def _progress_ok(srv, **kw) -> bool:
    return httpx.get(srv.url + "api/progress", timeout=2, **kw).status_code == 200


# ------------------------------------------------------------------------------------------ Content-Length


def test_negative_content_length_with_a_3mb_body_is_refused(server, tmp_path):
    body = _label_body(pad=3 << 20)  # a valid label padded to 3 MB: the old server read it all and saved it
    with socket.create_connection(_addr(server), timeout=3) as s:
        head = b"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"

        def send() -> None:
            try:
                s.sendall(head + b"Content-Length: -1\r\n\r\n" + body)
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass  # the server stopped reading: expected

        sender = threading.Thread(target=send, daemon=True)
        sender.start()
        raw = _recv_all(s)
        sender.join(3)
    assert _status(raw) == 400, raw[:300]  # h11 admits only digits: 400 before the body is read
    assert UVICORN_400 in raw
    assert not (tmp_path / "labels" / "rob.jsonl").exists()
    assert _progress_ok(server)


@pytest.mark.parametrize(
    ("headers", "status", "needle"),
    [
        ({}, 411, b"Content-Length is required"),
        ({"Content-Length": "abc"}, 400, UVICORN_400),
        ({"Content-Length": "+5"}, 400, UVICORN_400),
        ({"Content-Length": "1_0"}, 400, UVICORN_400),
        ({"Content-Length": str(MAX_BODY + 1)}, 413, b"body over"),
        ({"Content-Length": "9" * 30}, 400, UVICORN_400),
        ({"Transfer-Encoding": "chunked"}, 411, b"not chunked"),
    ],
)
def test_bad_content_length_is_refused(server, tmp_path, headers, status, needle):
    raw = _post_raw(server, {"Content-Type": "application/json", **headers}, _label_body())
    assert _status(raw) == status, raw[:300]
    assert needle in raw
    assert not (tmp_path / "labels" / "rob.jsonl").exists()


def test_two_different_content_lengths_are_refused(server):
    body = _label_body()
    raw = _post_raw(
        server,
        {"Content-Type": "application/json", "Content-Length": str(len(body)), "content-length": "3"},
        body,
    )
    assert _status(raw) == 400 and UVICORN_400 in raw


def test_exact_content_length_still_saves(server, tmp_path):
    body = _label_body()
    raw = _post_raw(server, {"Content-Type": "application/json", "Content-Length": str(len(body))}, body)
    assert _status(raw) == 200 and b'"saved": 1' in raw
    assert len((tmp_path / "labels" / "rob.jsonl").read_text().splitlines()) == 1


# ------------------------------------------------------------------------------------------ slow clients


def test_short_body_times_out_and_others_are_served_meanwhile(server, tmp_path):
    with socket.create_connection(_addr(server), timeout=3) as slow:
        slow.sendall(
            b"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n0123456789"
        )
        t0 = time.monotonic()
        assert _progress_ok(server)  # the held connection does not block another client
        raw = _recv_all(slow, limit=3 + TIMEOUT)
        waited = time.monotonic() - t0
    assert _status(raw) == 408, raw[:300]
    assert b"10 of 100 bytes" in raw
    assert waited < TIMEOUT + 2
    assert not (tmp_path / "labels" / "rob.jsonl").exists()
    assert _progress_ok(server)


def test_trickled_body_is_cut_at_the_deadline(server):
    """One byte every 0.2 s never trips a per-read timeout; the whole body has read_timeout seconds."""
    with socket.create_connection(_addr(server), timeout=3) as slow:
        slow.sendall(
            b"POST /api/label HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            b"Content-Length: 1000\r\n\r\n"
        )
        t0 = time.monotonic()
        raw = b""
        slow.settimeout(0.2)
        while time.monotonic() - t0 < TIMEOUT + 2:
            try:
                slow.sendall(b" ")
                chunk = slow.recv(4096)
            except TimeoutError:
                continue
            except OSError:
                break
            if not chunk:
                break
            raw += chunk
            if b"\r\n\r\n" in raw:
                break
    assert _status(raw) == 408, raw[:300]
    assert time.monotonic() - t0 < TIMEOUT + 2


def test_unfinished_headers_are_closed(server):
    with socket.create_connection(_addr(server), timeout=3) as slow:
        slow.sendall(b"GET /api/progress HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # never the blank line
        t0 = time.monotonic()
        _recv_all(slow, limit=TIMEOUT + 2)
    assert time.monotonic() - t0 < TIMEOUT + 2
    assert _progress_ok(server)


# ------------------------------------------------------------------------------------------ save failures


def test_labels_folder_that_is_a_file_refuses_to_start(answers, tmp_path):
    blocker = tmp_path / "labels"
    blocker.write_text("not a folder\n")
    with pytest.raises(NotADirectoryError, match="labels folder .*labels is not a folder"):
        make_server(answers, blocker, labeller="rob")


def test_cli_labels_folder_that_is_a_file_is_one_line(answers, tmp_path, monkeypatch):
    def never(self, *a, **k):
        raise AssertionError("the server must not start")

    monkeypatch.setattr(labelling.LabellingServer, "serve_forever", never)
    (tmp_path / "labels").write_text("x\n")
    r = CliRunner().invoke(
        app, ["label", "--answers", str(answers), "--labels-dir", str(tmp_path / "labels"), "--port", "0"]
    )
    assert r.exit_code == 2, (r.output, r.exception)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and "is not a folder" in err and "Traceback" not in r.output


def test_save_failure_is_500_with_one_line_and_the_server_stays_up(server, tmp_path, caplog):
    (tmp_path / "labels").write_text("became a file after the start\n")  # the folder is created on first save
    with caplog.at_level("ERROR", logger="finrag.trust.labelling"):
        r = httpx.post(
            server.url + "api/label",
            json={"answer_id": AID, "claim_id": CID, "verdict": "supported"},
            timeout=3,
        )
    assert r.status_code == 500
    assert len(r.text.strip().splitlines()) == 1 and "Traceback" not in r.text
    assert r.json()["error"].startswith("labels not saved:")
    assert any("could not save labels" in rec.getMessage() and rec.exc_info for rec in caplog.records)
    assert _progress_ok(server)


def test_unexpected_error_is_500_without_traceback(server, monkeypatch, caplog):
    def boom(self):
        raise RuntimeError("internal detail /secret/path")

    monkeypatch.setattr(labelling.LabellingApp, "progress", boom)
    with caplog.at_level("ERROR", logger="finrag.trust.labelling"):
        r = httpx.get(server.url + "api/progress", timeout=3)
    assert r.status_code == 500 and "Traceback" not in r.text and "/secret/path" not in r.text
    assert r.json() == {"error": "internal error (see the server's log)"}
    assert any(rec.exc_info for rec in caplog.records)


def test_deeply_nested_json_is_400(server):
    body = b"[" * 100_000 + b"]" * 100_000
    raw = _post_raw(server, {"Content-Type": "application/json", "Content-Length": str(len(body))}, body)
    assert _status(raw) == 400, raw[:300]


# ------------------------------------------------------------------------------------------ token


@pytest.mark.parametrize("host", ["127.0.0.1", "127.8.9.10", "::1", "[::1]", "localhost", "LocalHost"])
def test_loopback_needs_no_token(host):
    assert not needs_token(host)
    assert check_token(host, None) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "", "::", "192.168.1.20", "10.0.0.1", "labeller.example.org"])
def test_beyond_loopback_needs_a_token(host, answers, tmp_path):
    assert needs_token(host)
    with pytest.raises(ValueError, match="FINRAG_LABEL_TOKEN"):
        check_token(host, None)
    with pytest.raises(ValueError, match="FINRAG_LABEL_TOKEN"):
        check_token(host, "")
    with pytest.raises(ValueError, match="at least 16"):
        check_token(host, "short")
    assert check_token(host, TOKEN) == TOKEN
    with pytest.raises(ValueError, match="beyond loopback"):  # refused before anything is bound
        make_server(answers, tmp_path / "labels", host=host, labeller="rob")


def test_cli_refuses_a_public_host_without_a_token(answers, tmp_path, monkeypatch):
    monkeypatch.delenv("FINRAG_LABEL_TOKEN", raising=False)

    class NoBind:
        def __init__(self, *a, **k):
            raise AssertionError("must not bind")

    monkeypatch.setattr(labelling, "LabellingServer", NoBind)
    r = CliRunner().invoke(
        app, ["label", "--answers", str(answers), "--labels-dir", str(tmp_path / "l"), "--host", "0.0.0.0"]
    )
    assert r.exit_code == 2, (r.output, r.exception)
    err = r.stderr.strip()
    assert len(err.splitlines()) == 1 and "FINRAG_LABEL_TOKEN" in err and "beyond loopback" in err


def test_cli_warns_on_a_public_host_and_passes_the_token(answers, tmp_path, monkeypatch):
    seen = {}

    def fake_make_server(*args, **kw):
        seen.update(kw)
        return types.SimpleNamespace(
            url="http://0.0.0.0:1/",
            token=kw["token"],
            app=types.SimpleNamespace(
                progress=lambda: {"answers_labelled": 0, "answers": 1}, store=types.SimpleNamespace(path="p")
            ),
            serve_forever=lambda: None,
            server_close=lambda: None,
        )

    monkeypatch.setenv("FINRAG_LABEL_TOKEN", TOKEN)
    monkeypatch.setattr(labelling, "make_server", fake_make_server)
    r = CliRunner().invoke(app, ["label", "--answers", str(answers), "--host", "0.0.0.0"])
    assert r.exit_code == 0, (r.output, r.exception)
    assert seen["token"] == TOKEN
    assert "beyond loopback" in r.stderr and TOKEN not in r.output


def test_token_is_required_on_every_request(start, tmp_path):
    srv = start(token=TOKEN)
    base = srv.url
    for path in ("", "?i=0", "api/progress", "api/item?i=0", "static/labelling.js", "static/labelling.css"):
        r = httpx.get(base + path, timeout=3)
        assert r.status_code == 401, path
        assert r.headers["WWW-Authenticate"].startswith("Bearer")
        assert httpx.get(base + path, headers={"X-Finrag-Token": TOKEN + "x"}, timeout=3).status_code == 401
    bearer = {"Authorization": f"Bearer {TOKEN}"}
    assert httpx.get(base + "api/progress", headers=bearer, timeout=3).status_code == 200
    assert httpx.get(base + "api/progress", headers={"X-Finrag-Token": TOKEN}, timeout=3).status_code == 200
    page = httpx.get(base + f"?i=0&token={TOKEN}", timeout=3)
    assert page.status_code == 200
    # the page passes the token on to its script, style sheet and links
    assert f'src="/static/labelling.js?token={TOKEN}"' in page.text
    assert f'href="/static/labelling.css?token={TOKEN}"' in page.text
    assert f'href="/?i=1&amp;token={TOKEN}"' in page.text
    js = httpx.get(base + f"static/labelling.js?token={TOKEN}", timeout=3)
    assert js.status_code == 200 and "X-Finrag-Token" in js.text
    label = {"answer_id": AID, "claim_id": CID, "verdict": "supported"}
    assert httpx.post(base + "api/label", json=label, timeout=3).status_code == 401
    assert not (tmp_path / "labels" / "rob.jsonl").exists()
    assert httpx.post(base + "api/label", json=label, headers=bearer, timeout=3).status_code == 200
    assert (tmp_path / "labels" / "rob.jsonl").exists()


def test_loopback_without_token_works_as_before(server):
    page = httpx.get(server.url, timeout=3)
    assert page.status_code == 200 and "token" not in page.text
    assert '<script src="/static/labelling.js" defer></script>' in page.text


@pytest.mark.browser
def test_token_page_saves_in_a_browser(start, tmp_path):
    """The page's script sends the token with its POST and keeps it on the next address."""
    chromium, driver_path = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
    if not (chromium.exists() and driver_path.exists()):
        pytest.skip("/usr/bin/chromium or chromedriver absent: apt-get install -y chromium chromium-driver")
    from selenium import webdriver  # the dev group installs it: never skipped
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    srv = start(token=TOKEN)
    opts = webdriver.ChromeOptions()
    opts.binary_location = str(chromium)
    for f in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"):
        opts.add_argument(f)
    opts.add_argument(f"--user-data-dir={tmp_path / 'chrome-profile'}")
    driver = webdriver.Chrome(service=Service(executable_path=str(driver_path)), options=opts)
    driver.set_page_load_timeout(20)
    try:
        driver.get(srv.url + f"?i=0&token={TOKEN}")
        driver.find_element(By.ID, "v-1-supported").click()
        driver.find_element(By.ID, "save").click()

        def moved(d) -> bool:
            return "token=" in d.current_url and "i=1" in d.current_url and "1 of 2" in d.page_source

        WebDriverWait(driver, 10, ignored_exceptions=(WebDriverException,)).until(moved)
        assert "Answer 2 of 2" in driver.find_element(By.ID, "progress").text
    finally:
        driver.quit()
    recs = [json.loads(x) for x in (tmp_path / "labels" / "rob.jsonl").read_text().splitlines()]
    assert [(r["claim_id"], r["verdict"]) for r in recs] == [(CID, "supported")]


# ------------------------------------------------------------------------------------------ text at the boundary


def _post_json_bytes(srv, raw: bytes, **headers: str) -> httpx.Response:
    return httpx.post(
        srv.url + "api/label",
        content=raw,
        headers={"Content-Type": "application/json", **headers},
        timeout=3,
    )


def _one_line_error(r: httpx.Response) -> str:
    text = r.content.decode("utf-8")  # strict: a lone surrogate could not have been encoded
    assert len(text.strip().splitlines()) == 1 and "\x00" not in text, text
    return json.loads(text)["error"]


_PREFIX = b'{"answer_id": "run-r/q1/0", "claim_id": "run-r/q1/0#1", "verdict": "supported"'


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        (
            _PREFIX + rb', "note": "fine \ud800 note"}',
            "note: not valid Unicode: a lone surrogate U+D800 at character 5",
        ),
        (_PREFIX + rb', "note": "\udc00"}', "note: not valid Unicode: a lone surrogate U+DC00"),
        (_PREFIX + rb', "note": "a\u0000b"}', "note: a control character U+0000 at character 1"),
        (_PREFIX + rb', "note": "\u001b[31mred"}', "note: a control character U+001B"),
        (_PREFIX + rb', "note": "del\u007f"}', "note: a control character U+007F"),
        (
            b'{"answer_id": "run-r/q1/0\\ud800", "claim_id": "x", "verdict": "supported"}',
            "answer_id: not valid",
        ),
        (
            b'{"answer_id": "run-r/q1/0", "claim_id": "run-r/q1/0#1\\u0000", "verdict": "s"}',
            "claim_id: a control",
        ),
        (
            b'{"answer_id": "run-r/q1/0", "labels": [{"claim_id": "run-r/q1/0#1", "verdict": "supported", '
            b'"note": "\\ud800"}]}',
            "labels[0].note: not valid Unicode",
        ),
        (_PREFIX + rb', "\ud800": 1}', "\\ud800 (a key): not valid Unicode"),
        (_PREFIX + b', "note": "caf\xe9"}', "body is not valid UTF-8"),  # a Latin-1 byte
        (_PREFIX + b', "note": "\xed\xa0\x80"}', "note: not valid Unicode: a lone surrogate U+D800"),
    ],
)
def test_bad_text_in_a_label_is_422_with_one_line_and_nothing_is_saved(server, tmp_path, caplog, raw, needle):
    with caplog.at_level("ERROR", logger="finrag.trust.labelling"):
        r = _post_json_bytes(server, raw)
    assert r.status_code == 422, r.text
    assert needle in _one_line_error(r)
    assert not (tmp_path / "labels" / "rob.jsonl").exists()
    assert not [rec for rec in caplog.records if rec.levelno >= logging.ERROR]  # a refusal, not a 500
    assert _progress_ok(server)


def test_tab_newline_and_carriage_return_in_a_note_are_saved(server, tmp_path):
    note = "first line\r\nsecond\tline"
    r = httpx.post(
        server.url + "api/label",
        json={"answer_id": AID, "claim_id": CID, "verdict": "supported", "note": note},
        timeout=3,
    )
    assert r.status_code == 200, r.text
    (rec,) = [json.loads(x) for x in (tmp_path / "labels" / "rob.jsonl").read_text().splitlines()]
    assert rec["note"] == note


def test_an_error_never_echoes_a_character_it_cannot_encode():
    assert labelling._printable("a\ud800b\x00c\x1b") == "a\\ud800b\\u0000c\\u001b"
    assert labelling._printable("€5 million — fine") == "€5 million — fine"
    with pytest.raises(labelling.BadText, match=r"labels\[1\]\.note: a control character U\+0007"):
        labelling.check_text({"labels": [{"note": "ok\ttab"}, {"note": "bell\x07"}]})
    deep: object = "\ud800"
    for _ in range(5000):  # deeper than the recursion limit: checked without recursion
        deep = [deep]
    with pytest.raises(labelling.BadText, match="lone surrogate"):
        labelling.check_text(deep)


# ------------------------------------------------------------------------------------------ Origin


def _label(srv, **headers: str) -> httpx.Response:
    return httpx.post(
        srv.url + "api/label",
        json={"answer_id": AID, "claim_id": CID, "verdict": "supported"},
        headers=headers,
        timeout=3,
    )


def _own_origin(srv) -> str:
    return srv.url.rstrip("/")  # http://127.0.0.1:PORT


@pytest.mark.parametrize(
    "origin",
    [
        "http://evil.example",
        "null",
        "http://127.0.0.1",  # another port
        "http://127.0.0.1:1",
        "https://{own}",  # another scheme
        "http://localhost:{port}",  # another host name for the same address is another origin
        "http://127.0.0.1:{port}.evil.example",
        "http://user@127.0.0.1:{port}",
        "http://127.0.0.1:{port}/api/label",
        "",
    ],
)
def test_a_foreign_origin_is_refused_with_403_and_nothing_is_saved(server, tmp_path, origin):
    port = server.server_address[1]
    origin = origin.format(port=port, own=f"127.0.0.1:{port}")
    r = _label(server, Origin=origin)
    assert r.status_code == 403, r.text
    error = _one_line_error(r)
    assert error.startswith("cross-origin POST refused: Origin") and repr(origin) in error
    assert r.headers["Cache-Control"] == "no-store"  # the guard's headers, as on every response
    assert not (tmp_path / "labels" / "rob.jsonl").exists()


def test_same_origin_and_no_origin_are_accepted(server, tmp_path):
    assert _label(server).status_code == 200  # curl, scripts: no Origin header, as before
    assert _label(server, Origin=_own_origin(server)).status_code == 200  # the page's own fetch
    port = server.server_address[1]
    assert _label(server, Origin=f"http://LOCALHOST:{port}", Host=f"localhost:{port}").status_code == 200
    assert len((tmp_path / "labels" / "rob.jsonl").read_text().splitlines()) == 3
    # only state-changing requests are checked: reading with a foreign Origin is as before
    assert httpx.get(server.url + "api/progress", headers={"Origin": "null"}, timeout=3).status_code == 200


def test_a_doubled_origin_must_be_own_every_time(server):
    raw = _post_raw(
        server,
        {
            "Content-Type": "application/json",
            "Origin": _own_origin(server),
            "origin": "http://evil.example",
            "Content-Length": str(len(_label_body())),
        },
        _label_body(),
    )
    assert _status(raw) == 403, raw[:300]


def test_origin_is_checked_after_the_token(start, tmp_path):
    srv = start(token=TOKEN)
    bearer = f"Bearer {TOKEN}"
    assert _label(srv, Origin="http://evil.example").status_code == 401  # no token: refused as before
    assert _label(srv, Origin="http://evil.example", Authorization=bearer).status_code == 403
    assert _label(srv, Origin="null", Authorization=bearer).status_code == 403
    assert not (tmp_path / "labels" / "rob.jsonl").exists()
    assert _label(srv, Origin=_own_origin(srv), Authorization=bearer).status_code == 200
    assert _label(srv, Authorization=bearer).status_code == 200
