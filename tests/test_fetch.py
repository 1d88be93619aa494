"""`finrag data fetch`: the input manifest, and downloads checked against recorded responses (httpx MockTransport):
verified, resumed after a kill, retried, a corrupted download refused, SEC's User-Agent rule, and the ingest
stage's "fetch what is missing or say in one line what is" (no real download anywhere here)."""

from __future__ import annotations

import csv
import hashlib
import os
from pathlib import Path

import httpx
import pytest

from finrag.core.config import DataUnavailable
from finrag.ingest import fetch as F
from finrag.ingest.edgar_download import RateLimiter


def _row(
    path: str, body: bytes | None, url: str, role: str = "study", kind: str = "financebench_pdf"
) -> dict:
    return {"kind": kind, "local_path": path, "url": url, "role": role,
            "bytes": str(len(body)) if body is not None else "",
            "sha256": hashlib.sha256(body).hexdigest() if body is not None else "", "note": ""}  # fmt: skip


BODIES = {
    "https://github.com/o/r/raw/c1/pdfs/A.pdf": b"%PDF-1.4 A " + b"a" * 300_000,
    "https://github.com/o/r/raw/c1/pdfs/B.pdf": b"%PDF-1.4 B " + b"b" * 1000,
    "https://github.com/o/r/raw/c1/data/q.jsonl": b'{"q": 1}\n',
}


class Server:
    """Recorded responses by URL; honours Range (206) unless `ignore_range`; counts what it was asked."""

    def __init__(self, bodies: dict[str, bytes], ignore_range: bool = False):
        self.bodies, self.ignore_range = dict(bodies), ignore_range
        self.requests: list[httpx.Request] = []
        self.fail_first: dict[str, int] = {}  # url -> how many 503s before it answers

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        url = str(request.url)
        if self.fail_first.get(url, 0) > 0:
            self.fail_first[url] -= 1
            return httpx.Response(503)
        if url not in self.bodies:
            return httpx.Response(404)
        body = self.bodies[url]
        rng = request.headers.get("range")
        if rng and not self.ignore_range:
            start = int(rng.split("=")[1].rstrip("-"))
            if start >= len(body):
                return httpx.Response(416)
            return httpx.Response(206, content=body[start:])
        return httpx.Response(200, content=body)


def _files(rows):
    return F.input_files(rows)


def _fetcher(dest: Path, server: Server, **kw) -> F.Fetcher:
    return F.Fetcher(dest, transport=httpx.MockTransport(server), retry_sleep=lambda s: None, progress=False,
                     limiter=RateLimiter(rate=1000), **kw)  # fmt: skip


def test_fetch_verifies_and_second_run_makes_no_request(tmp_path):
    rows = [_row(f"financebench/pdfs/{u.rsplit('/', 1)[-1]}", b, u) for u, b in BODIES.items()]
    server = Server(BODIES)
    with _fetcher(tmp_path, server) as f:
        rep = f.fetch(_files(rows))
    assert sorted(rep.fetched) == sorted(r["local_path"] for r in rows) and not rep.failed
    for r in rows:
        p = tmp_path / r["local_path"]
        assert hashlib.sha256(p.read_bytes()).hexdigest() == r["sha256"]
        assert not p.with_name(p.name + ".part").exists()
    n = len(server.requests)
    with _fetcher(tmp_path, server) as f:
        rep2 = f.fetch(_files(rows))
    assert len(server.requests) == n and len(rep2.present) == 3 and not rep2.fetched


def test_corrupted_download_is_refused_and_removed(tmp_path):
    url = "https://github.com/o/r/raw/c1/pdfs/A.pdf"
    rows = [_row("financebench/pdfs/A.pdf", BODIES[url], url)]
    bad = BODIES[url][:-1] + b"X"  # same size, one byte changed
    with _fetcher(tmp_path, Server({url: bad})) as f:
        rep = f.fetch(_files(rows))
    assert "financebench/pdfs/A.pdf" in rep.failed and "refused" in rep.failed["financebench/pdfs/A.pdf"]
    assert not (tmp_path / "financebench/pdfs/A.pdf").exists()
    assert not (tmp_path / "financebench/pdfs/A.pdf.part").exists()
    with pytest.raises(F.ChecksumMismatch), _fetcher(tmp_path, Server({url: bad})) as f:
        from tqdm import tqdm

        f.fetch_one(_files(rows)[0], tqdm(disable=True))


def test_a_file_already_there_with_another_hash_is_reported_not_overwritten(tmp_path):
    url = "https://github.com/o/r/raw/c1/pdfs/B.pdf"
    rows = [_row("financebench/pdfs/B.pdf", BODIES[url], url)]
    (tmp_path / "financebench/pdfs").mkdir(parents=True)
    (tmp_path / "financebench/pdfs/B.pdf").write_bytes(b"someone's own copy")
    server = Server(BODIES)
    with _fetcher(tmp_path, server) as f:
        rep = f.fetch(_files(rows))
    assert "financebench/pdfs/B.pdf" in rep.failed and not server.requests
    assert (tmp_path / "financebench/pdfs/B.pdf").read_bytes() == b"someone's own copy"
    assert F.status(_files(rows), tmp_path)["corrupt"] == ["financebench/pdfs/B.pdf"]


@pytest.mark.parametrize("ignore_range", [False, True])
def test_resume_after_a_kill(tmp_path, ignore_range):
    """A kill leaves `<file>.part`; the next run asks for the rest (Range) and verifies the whole file. A server
    that ignores Range sends it whole and the part is started over."""
    url = "https://github.com/o/r/raw/c1/pdfs/A.pdf"
    body = BODIES[url]
    rows = [_row("financebench/pdfs/A.pdf", body, url)]
    part = tmp_path / "financebench/pdfs/A.pdf.part"
    part.parent.mkdir(parents=True)
    part.write_bytes(body[:123_456])  # what the killed run had written
    assert F.status(_files(rows), tmp_path)["partial"] == ["financebench/pdfs/A.pdf"]
    server = Server({url: body}, ignore_range=ignore_range)
    with _fetcher(tmp_path, server) as f:
        rep = f.fetch(_files(rows))
    assert rep.fetched == ["financebench/pdfs/A.pdf"] and not rep.failed
    assert server.requests[0].headers["range"] == "bytes=123456-"
    assert rep.bytes_downloaded == (len(body) if ignore_range else len(body) - 123_456)
    assert (tmp_path / "financebench/pdfs/A.pdf").read_bytes() == body and not part.exists()


def test_killed_mid_stream_then_resumed(tmp_path):
    """The connection dies mid-body (a kill, from the file's side): the bytes written so far stay in the part and
    the retry continues from there."""
    url = "https://github.com/o/r/raw/c1/pdfs/A.pdf"
    body = BODIES[url]
    rows = [_row("financebench/pdfs/A.pdf", body, url)]
    calls = {"n": 0}

    class Dies(httpx.SyncByteStream):
        def __iter__(self):
            yield body[:100_000]
            raise httpx.ReadError("connection reset")

    def handler(request: httpx.Request) -> httpx.Response:
        calls["n"] += 1
        if calls["n"] == 1:
            return httpx.Response(200, stream=Dies())
        start = int(request.headers["range"].split("=")[1].rstrip("-"))
        return httpx.Response(206, content=body[start:])

    with F.Fetcher(tmp_path, transport=httpx.MockTransport(handler), retry_sleep=lambda s: None,
                   progress=False) as f:  # fmt: skip
        rep = f.fetch(_files(rows))
    assert rep.fetched and calls["n"] == 2
    assert (tmp_path / "financebench/pdfs/A.pdf").read_bytes() == body


def test_transient_errors_are_retried_then_reported(tmp_path):
    url = "https://github.com/o/r/raw/c1/pdfs/B.pdf"
    rows = [_row("financebench/pdfs/B.pdf", BODIES[url], url)]
    server = Server(BODIES)
    server.fail_first[url] = 2
    with _fetcher(tmp_path, server) as f:
        assert f.fetch(_files(rows)).fetched == ["financebench/pdfs/B.pdf"]
    assert len(server.requests) == 3
    server = Server({})  # 404: not retried, one line
    with _fetcher(tmp_path / "x", server, attempts=3) as f:
        rep = f.fetch(_files(rows))
    assert len(server.requests) == 1 and "HTTP 404" in rep.failed["financebench/pdfs/B.pdf"]


def test_sec_gov_needs_a_declared_user_agent(tmp_path, monkeypatch):
    monkeypatch.delenv("FINRAG_SEC_USER_AGENT", raising=False)
    url = "https://www.sec.gov/Archives/edgar/data/66740/000006674023000058/mmm-20230630.htm"
    rows = [_row("edgar/MMM/10-Q.htm", b"<html>", url, kind="edgar_html")]
    server = Server({url: b"<html>"})
    with _fetcher(tmp_path, server) as f:
        rep = f.fetch(_files(rows))
    assert "User-Agent" in rep.failed["edgar/MMM/10-Q.htm"] and not server.requests
    with _fetcher(tmp_path, server, user_agent="Jane Doe jane@example.com") as f:
        assert f.fetch(_files(rows)).fetched
    assert server.requests[0].headers["user-agent"] == "Jane Doe jane@example.com"


def test_unverified_files_only_when_asked(tmp_path):
    url = "https://github.com/o/r/raw/c1/pdfs/B.pdf"
    rows = [_row("financebench/pdfs/B.pdf", None, url, role="absent")]
    server = Server(BODIES)
    with _fetcher(tmp_path, server) as f:
        rep = f.fetch(_files(rows))
    assert rep.skipped_unverified == ["financebench/pdfs/B.pdf"] and not server.requests
    with _fetcher(tmp_path, server) as f:
        assert f.fetch(_files(rows), allow_unverified=True).fetched == ["financebench/pdfs/B.pdf"]
    assert F.status(_files(rows), tmp_path)["unverified"] == ["financebench/pdfs/B.pdf"]


def test_select_by_kind_role_or_glob():
    rows = [_row("financebench/pdfs/A.pdf", b"a", "u1"), _row("edgar/X/1.htm", b"b", "u2", kind="edgar_html"),
            _row("financebench/pdfs/C.pdf", None, "u3", role="absent")]  # fmt: skip
    files = _files(rows)
    assert [f.local_path for f in F.select(files, ["edgar_html"])] == ["edgar/X/1.htm"]
    assert [f.local_path for f in F.select(files, ["absent"])] == ["financebench/pdfs/C.pdf"]
    assert len(F.select(files, ["financebench/*"])) == 2 and len(F.select(files, [])) == 3
    with pytest.raises(DataUnavailable, match="role"):
        F.input_files([{**rows[0], "role": "maybe"}])


def _manifest(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "inputs.csv"
    F.write_manifest(rows, path)
    return path


def test_ingest_fetches_what_the_mirror_lacks_or_says_so_in_one_line(tmp_path, monkeypatch):
    rows = [_row(f"financebench/pdfs/{u.rsplit('/', 1)[-1]}", b, u) for u, b in BODIES.items()]
    rows.append(
        _row("financebench/pdfs/BIG.pdf", None, "https://github.com/o/r/raw/c1/pdfs/BIG.pdf", role="absent")
    )
    monkeypatch.setattr(F, "manifest_path", lambda: _manifest(tmp_path, rows))
    dest = tmp_path / "mirror"
    monkeypatch.setenv("FINRAG_MIRROR", str(dest))
    server = Server(BODIES)
    root = F.ensure_study_inputs(None, transport=httpx.MockTransport(server), progress=False)
    assert root == dest and len(server.requests) == 3  # the absent (unverified) file is not fetched
    with open(dest / "MANIFEST.csv", encoding="utf-8") as fh:
        assert len(list(csv.DictReader(fh))) == 3  # the ingest stage reads filing metadata there
    assert F.ensure_study_inputs(dest, transport=httpx.MockTransport(server), progress=False) == dest
    assert len(server.requests) == 3  # complete: nothing asked

    def offline(request):
        raise httpx.ConnectError("Temporary failure in name resolution")

    (dest / "financebench/pdfs/B.pdf").unlink()
    with pytest.raises(DataUnavailable) as exc:
        F.ensure_study_inputs(dest, transport=httpx.MockTransport(offline), progress=False)
    msg = str(exc.value)
    assert "\n" not in msg and "1 input file(s) missing" in msg and "B.pdf" in msg and "ConnectError" in msg
    with pytest.raises(DataUnavailable, match="ingest.fetch is false"):
        F.ensure_study_inputs(dest, fetch=False)


def test_committed_manifest_is_complete_and_pinned():
    files = F.input_files(F.read_manifest())
    study = [f for f in files if f.role == "study"]
    assert len(study) >= 170 and all(f.sha256 and len(f.sha256) == 64 and f.bytes for f in study)
    assert all(f.url.startswith("https://github.com/") and "/raw/" in f.url for f in files)
    fb = [f for f in files if f.kind == "financebench_pdf"]
    assert len(fb) == 84  # every filing PDF the 150 questions use, the 10 the mirror lacks included
    assert {f.local_path for f in fb if f.role == "absent"} >= {"financebench/pdfs/AMD_2022_10K.pdf"}
    assert all("cc39aeb4afdf33909ee1412188bf89035950c2eb" in f.url for f in fb)


def test_committed_manifest_matches_the_mirror():
    from finrag.core.config import mirror_dir

    mirror = mirror_dir()
    if mirror is None or not (mirror / "MANIFEST.csv").exists() or "FINRAG_MIRROR" not in os.environ:
        pytest.skip("no data mirror (set FINRAG_MIRROR): the committed manifest is checked against it")
    assert F.manifest_path().read_text(encoding="utf-8") == F.manifest_text(F.build_manifest(mirror))
    st = F.status([f for f in F.input_files(F.read_manifest()) if f.role == "study"], mirror)
    assert not st["missing"] and not st["corrupt"] and len(st["ok"]) >= 170


def test_real_files_round_trip_through_recorded_responses(tmp_path):
    """Three real mirror files served as GitHub would serve them: fetched and verified by the real manifest."""
    from finrag.core.config import mirror_dir

    mirror = mirror_dir()
    if mirror is None or "FINRAG_MIRROR" not in os.environ:
        pytest.skip("no data mirror (set FINRAG_MIRROR)")
    files = [f for f in F.input_files(F.read_manifest()) if f.role == "study"]
    pick = [
        next(f for f in files if f.kind == k) for k in ("financebench_meta", "edgar_html", "human_labels")
    ]
    server = Server({f.url: (mirror / f.local_path).read_bytes() for f in pick})
    with _fetcher(tmp_path, server) as f:
        rep = f.fetch(pick)
    assert sorted(rep.fetched) == sorted(f.local_path for f in pick) and not rep.failed


def test_cli_data_status_and_a_fetch_that_cannot_reach_the_network(tmp_path, monkeypatch):
    """`finrag data status` counts what an empty mirror lacks; `finrag data fetch` there, with every request
    failing, exits 1 with one line and leaves no partial file behind."""
    import json

    from typer.testing import CliRunner

    from finrag.cli import app

    monkeypatch.setenv("FINRAG_MIRROR", str(tmp_path))
    res = CliRunner().invoke(app, ["data", "status", "--only", "human_labels"])
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)
    assert out["missing"] == 3 and out["ok"] == 0 and len(out["missing_files"]) == 3

    def offline(request):
        raise httpx.ConnectError("no network")

    real = F.Fetcher.__init__

    def init(self, dest, **kw):
        real(self, dest, **{**kw, "transport": httpx.MockTransport(offline), "retry_sleep": lambda s: None})

    monkeypatch.setattr(F.Fetcher, "__init__", init)
    res = CliRunner().invoke(app, ["data", "fetch", "--only", "human_labels"])
    assert res.exit_code == 1
    assert "3 file(s) not fetched" in res.stderr and "ConnectError" in res.stderr
    assert not list(tmp_path.rglob("*.part")) and not (tmp_path / "MANIFEST.csv").exists()


def test_an_unreachable_network_fails_at_once_without_retries(tmp_path):
    """Offline (the host name does not resolve): one request, no back-off, every file reported in one pass."""
    rows = [_row(f"financebench/pdfs/{u.rsplit('/', 1)[-1]}", b, u) for u, b in BODIES.items()]
    calls, sleeps = [], []

    def offline(request):
        calls.append(request)
        raise httpx.ConnectError("[Errno -3] Temporary failure in name resolution")

    with F.Fetcher(tmp_path, transport=httpx.MockTransport(offline), retry_sleep=sleeps.append,
                   progress=False, limiter=RateLimiter(rate=1000)) as f:  # fmt: skip
        rep = f.fetch(_files(rows))
    assert len(calls) == 1 and sleeps == []
    assert len(rep.failed) == len(rows)
    assert all("github.com unreachable" in why for why in rep.failed.values())


def test_a_dropped_connection_is_still_retried(tmp_path):
    url = "https://github.com/o/r/raw/c1/pdfs/B.pdf"
    rows = [_row("financebench/pdfs/B.pdf", BODIES[url], url)]
    calls = []

    def flaky(request):
        calls.append(request)
        if len(calls) < 3:
            raise httpx.ReadError("connection reset by peer")
        return httpx.Response(200, content=BODIES[url])

    with F.Fetcher(tmp_path, transport=httpx.MockTransport(flaky), retry_sleep=lambda s: None,
                   progress=False, limiter=RateLimiter(rate=1000)) as f:  # fmt: skip
        assert f.fetch(_files(rows)).fetched == ["financebench/pdfs/B.pdf"]
    assert len(calls) == 3
    assert not F.unreachable(httpx.ReadError("connection reset by peer"))
    assert F.unreachable(httpx.ConnectTimeout("timed out"))
