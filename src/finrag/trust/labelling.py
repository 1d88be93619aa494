"""A small local web page on which a person labels the claims of finrag's own answers.

Why: judge agreement on public benchmarks says little about finrag's answers, so a person labels a sample of
them here, blind to any judge: the page shows the question, the numbered passages the model saw and the answer
cut into claims (`split_claims`), never a verdict, never the run or model that wrote it. Each labelled claim is
one JSON line appended (write + flush + fsync) to `<labels_dir>/<labeller>.jsonl`, the format
`finrag.ingest.human_claims.load_finrag_labels` reads; a re-labelled claim is a new line, and the loader keeps the
latest.

A crash mid-append can at worst leave a torn LAST line (no final newline, not JSON): it is skipped with a
warning when the file is read and cut off before the next append, as in the response cache; any other malformed
line is an error naming file:line.

Standard library only (http.server) plus jinja2 (already a dependency) for an escaped page. The page loads one
same-origin script (no inline script, strict Content-Security-Policy) and all text is escaped by jinja2's
autoescape, so an answer or passage cannot inject HTML. It binds to 127.0.0.1 unless told otherwise, and on a
loopback address it refuses requests whose Host header is not loopback (DNS rebinding); it refuses POSTs that
are not JSON (cross-site forms). Bound beyond loopback (0.0.0.0, a LAN address, a host name) it needs a token
(`FINRAG_LABEL_TOKEN`, at least 16 characters) that every request presents: header `Authorization: Bearer
<token>` or `X-Finrag-Token: <token>`, or `?token=<token>` in the address (the page passes it on to its links,
script and API calls). The server is threaded; each request must arrive within `read_timeout` seconds (else
408 / closed), its body is at most MAX_BODY bytes with an exact Content-Length (else 411 / 400 / 413), and a
failure while saving is answered 500 with one line (the traceback goes to the server's log, never the client).
"""

from __future__ import annotations

import hmac
import ipaddress
import json
import logging
import os
import random
import re
import socket
import sys
import threading
import time
import webbrowser
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import cast
from urllib.parse import parse_qs, quote, urlsplit

import jinja2

from finrag.core.contracts import Answer, Question
from finrag.core.io import append_locked, read_jsonl
from finrag.score.claims import split_claims

VERDICTS = ("supported", "unsupported", "contradicted")
STATIC_DIR = Path(__file__).parent / "labelling_static"
MAX_BODY = 1 << 20  # bytes of one POST
MAX_NOTE = 2000  # characters of one note
READ_TIMEOUT = 5.0  # seconds: for the request line and headers (per read) and for the whole body
LINGER = 1.0  # seconds to drain an unread body after refusing it
TOKEN_ENV = "FINRAG_LABEL_TOKEN"
MIN_TOKEN = 16  # characters of a token
_CONTENT_LENGTH = re.compile(r"^[0-9]{1,19}$")
log = logging.getLogger(__name__)
_LABELLER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_STATIC_TYPES = {".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8"}
_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; form-action 'none'"


class LabelError(ValueError):
    """A request the page cannot accept (answered with 400 and this message)."""


class NotFound(LabelError):
    """An item index outside the list (answered with 404)."""


@dataclass
class Item:
    """One answer to label: what the person sees, plus the ids the labels are recorded under."""

    answer_id: str
    qid: str
    run_id: str
    replicate: int
    question: str
    answer_text: str
    passages: list[dict]  # {n, doc_id, pages, text}: exactly what the model saw
    claims: list[dict]  # {claim_id, text}


def make_answer_id(answer: Answer) -> str:
    """Deterministic id of an answer: the same answer file gives the same ids on every run."""
    return f"{answer.run_id}/{answer.qid}/{answer.replicate}"


def make_claim_id(answer_id: str, i: int) -> str:
    """Id of the i-th claim (1-based, as split_claims numbers them) of an answer."""
    return f"{answer_id}#{i}"


def _paths(p: str | Path | Sequence[str | Path]) -> list[Path]:
    return [Path(p)] if isinstance(p, str | Path) else [Path(x) for x in p]


def load_items(
    answers_path: str | Path | Sequence[str | Path],
    questions_path: str | Path | Sequence[str | Path] | None = None,
    shuffle_seed: int | None = None,
) -> tuple[list[Item], dict[str, int]]:
    """The answers to label, in file order (or shuffled reproducibly), and what was left out and why.

    Answers with no claims (refusals, only remarks about the passages) have nothing to label and are left out;
    a repeated answer id is an error naming the file, since its labels could not be told apart.
    """
    questions: dict[str, str] = {}
    for qp in _paths(questions_path) if questions_path is not None else []:
        for q in read_jsonl(qp, Question):
            questions[q.qid] = q.question
    items: list[Item] = []
    seen: dict[str, Path] = {}
    skipped = {"no_claims": 0}
    for ap in _paths(answers_path):
        for a in read_jsonl(ap, Answer):
            aid = make_answer_id(a)
            if aid in seen:
                raise ValueError(f"{ap}: answer {aid} appears twice (first in {seen[aid]})")
            seen[aid] = ap
            claims = split_claims(a.text)
            if not claims:
                skipped["no_claims"] += 1
                continue
            items.append(
                Item(
                    answer_id=aid,
                    qid=a.qid,
                    run_id=a.run_id,
                    replicate=a.replicate,
                    question=questions.get(a.qid, ""),
                    answer_text=a.text,
                    passages=[
                        {"n": p.n, "doc_id": p.doc_id, "pages": list(p.pages), "text": p.text}
                        for p in a.passages
                    ],
                    claims=[
                        {"claim_id": make_claim_id(aid, i), "text": c.text} for i, c in enumerate(claims, 1)
                    ],
                )
            )
    if shuffle_seed is not None:
        random.Random(shuffle_seed).shuffle(items)
    return items, skipped


@dataclass
class LabelStore:
    """The labeller's file: appended one line at a time; remembers the latest label per claim for the page."""

    path: Path
    labeller: str
    latest: dict[str, dict] = field(default_factory=dict)  # claim_id -> {verdict, note, time}
    lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        if self.path.parent.exists() and not self.path.parent.is_dir():
            raise NotADirectoryError(f"labels folder {self.path.parent} is not a folder")
        if self.path.exists():
            for r in read_jsonl(self.path, torn_tail=True):  # a torn last line: skipped with a warning
                self._remember(r)

    def _remember(self, r: dict) -> None:
        cid = cast(str, r.get("claim_id"))
        old = self.latest.get(cid)
        if old is None or str(r.get("time", "")) >= str(old.get("time", "")):
            self.latest[cid] = {"verdict": r.get("verdict"), "note": r.get("note", ""), "time": r.get("time")}

    def append(self, records: list[dict]) -> None:
        """Append the records, one line each, in one write + fsync under a lock (a crash loses at most the lines
        being written, and a torn last line left by one is cut off first)."""
        data = b"".join((json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n").encode() for r in records)
        with self.lock:
            append_locked(self.path, data, stacklevel=4)  # another server on the same file waits
            for r in records:
                self._remember(r)


class LabellingApp:
    """The state behind the page: the items, the labeller's store, and the request logic (no HTTP in here)."""

    def __init__(self, items: list[Item], store: LabelStore, skipped: dict[str, int] | None = None) -> None:
        self.items = items
        self.store = store
        self.skipped = dict(skipped or {})
        self.by_id = {it.answer_id: k for k, it in enumerate(items)}
        env = jinja2.Environment(
            loader=jinja2.FileSystemLoader(STATIC_DIR),
            autoescape=True,
            undefined=jinja2.StrictUndefined,
            keep_trailing_newline=True,
        )
        self.template = env.get_template("page.html")

    # ------------------------------------------------------------------ progress
    def is_done(self, k: int) -> bool:
        return all(c["claim_id"] in self.store.latest for c in self.items[k].claims)

    def progress(self) -> dict:
        return {
            "answers_labelled": sum(self.is_done(k) for k in range(len(self.items))),
            "answers": len(self.items),
            "claims_labelled": sum(
                c["claim_id"] in self.store.latest for it in self.items for c in it.claims
            ),
            "claims": sum(len(it.claims) for it in self.items),
        }

    def next_open(self, after: int = -1) -> int | None:
        """The first answer after `after` (wrapping round) that still has an unlabelled claim; None if none."""
        n = len(self.items)
        for step in range(1, n + 1):
            k = (after + step) % n
            if not self.is_done(k):
                return k
        return None

    # ------------------------------------------------------------------ views
    def index(self, raw: str | None) -> int:
        if not self.items:
            raise LabelError("there are no answers with claims to label")
        if raw is None or raw == "":
            k = self.next_open()
            return 0 if k is None else k
        try:
            k = int(raw)
        except ValueError:
            raise LabelError(f"item index {raw!r} is not an integer") from None
        if not 0 <= k < len(self.items):
            raise NotFound(f"item index {k} is out of range 0..{len(self.items) - 1}")
        return k

    def item_json(self, k: int) -> dict:
        """What the page shows for item k: no judge verdict, no run or model (only ids the labels need)."""
        it = self.items[k]
        claims = [{**c, "label": self._label(c["claim_id"])} for c in it.claims]
        return {
            "i": k,
            "n": len(self.items),
            "answer_id": it.answer_id,
            "qid": it.qid,
            "question": it.question,
            "answer_text": it.answer_text,
            "passages": it.passages,
            "claims": claims,
            "labeller": self.store.labeller,
            "progress": self.progress(),
        }

    def _label(self, claim_id: str) -> dict | None:
        lab = self.store.latest.get(claim_id)
        return None if lab is None else {"verdict": lab["verdict"], "note": lab.get("note") or ""}

    def page(self, k: int, token: str | None = None) -> str:
        """The page of item k; with a token, every address on it (links, script, style) carries ?token=."""
        data = self.item_json(k)
        tq = f"token={quote(token, safe='')}" if token else ""
        return self.template.render(
            item=data,
            token_and="&" + tq if tq else "",
            token_only="?" + tq if tq else "",
            verdicts=VERDICTS,
            prev_i=k - 1 if k > 0 else None,
            next_i=k + 1 if k + 1 < len(self.items) else None,
            all_done=self.next_open() is None,
        )

    # ------------------------------------------------------------------ labels
    def label(self, body: dict) -> dict:
        """Validate a label request (one label or {answer_id, labels: [...]}) and record it, all or nothing."""
        if not isinstance(body, dict):
            raise LabelError("the request body must be a JSON object")
        entries = body.get("labels")
        if entries is None:
            entries = [{k: body[k] for k in ("claim_id", "verdict", "note") if k in body}]
        if not isinstance(entries, list) or not entries:
            raise LabelError("'labels' must be a non-empty list of {claim_id, verdict, note}")
        answer_id = body.get("answer_id")
        if not isinstance(answer_id, str) or answer_id not in self.by_id:
            raise LabelError(f"unknown answer_id {answer_id!r}")
        it = self.items[self.by_id[answer_id]]
        claims = {c["claim_id"]: c["text"] for c in it.claims}
        now = datetime.now(UTC).isoformat(timespec="microseconds")
        records = []
        for e in entries:
            if not isinstance(e, dict):
                raise LabelError("each label must be a JSON object {claim_id, verdict, note}")
            cid, verdict, note = e.get("claim_id"), e.get("verdict"), e.get("note", "")
            if cid not in claims:
                raise LabelError(f"unknown claim_id {cid!r} for answer {answer_id}")
            if verdict not in VERDICTS:
                raise LabelError(f"verdict {verdict!r} for {cid} is not one of {', '.join(VERDICTS)}")
            note = "" if note is None else note
            if not isinstance(note, str) or len(note) > MAX_NOTE:
                raise LabelError(f"note for {cid} must be text of at most {MAX_NOTE} characters")
            records.append(
                {
                    "answer_id": answer_id,
                    "claim_id": cid,
                    "claim": claims[cid],
                    "passages": it.passages,
                    "verdict": verdict,
                    "note": note.strip(),
                    "labeller": self.store.labeller,
                    "time": now,
                    "qid": it.qid,
                    "run_id": it.run_id,
                    "replicate": it.replicate,
                }
            )
        self.store.append(records)
        k = self.by_id[answer_id]
        return {"saved": len(records), "progress": self.progress(), "next": self.next_open(k)}


# ---------------------------------------------------------------------------------------------- HTTP


def _is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def needs_token(host: str) -> bool:
    """Whether binding to `host` needs a token: anything beyond loopback (127.0.0.0/8, ::1, localhost) does."""
    return not _is_loopback(host)


def check_token(host: str, token: str | None) -> str | None:
    """The token the server will require (None: none), or ValueError when binding to `host` needs one."""
    token = token or None
    if token is None and needs_token(host):
        raise ValueError(
            f"--host {host} is beyond loopback: set {TOKEN_ENV} to a secret of at least {MIN_TOKEN} "
            "characters (e.g. python -c 'import secrets; print(secrets.token_urlsafe())'), which every "
            "request must then present"
        )
    if token is not None and (len(token) < MIN_TOKEN or not token.isprintable() or token.strip() != token):
        raise ValueError(f"{TOKEN_ENV} must be at least {MIN_TOKEN} printable characters, no spaces")
    return token


class _BodyError(Exception):
    """The body could not be read: (status or None to just close, message)."""

    def __init__(self, status: int | None, message: str) -> None:
        super().__init__(message)
        self.status = status


class _Handler(BaseHTTPRequestHandler):
    server: LabellingServer
    server_version = "finrag-labelling"
    sys_version = ""

    def setup(self) -> None:
        self.timeout = self.server.read_timeout  # type: ignore[misc]  # socket timeout for every read (StreamRequestHandler.setup)
        self._responded = False
        self._body_unread = False
        super().setup()

    def finish(self) -> None:
        if self._body_unread:
            self._linger()
        super().finish()

    def _linger(self) -> None:
        """After refusing a POST whose body was not read: stop sending, then drain what the client still sends
        for a moment, so that closing does not reset the connection before the client has read the answer."""
        with suppress(OSError):
            self.connection.shutdown(socket.SHUT_WR)
            end = time.monotonic() + min(LINGER, self.server.read_timeout)
            while (left := end - time.monotonic()) > 0:
                self.connection.settimeout(left)
                if not self.connection.recv(1 << 16):
                    break

    def log_message(self, format: str, *args) -> None:  # noqa: A002 - signature of the base class
        if self.server.verbose:
            super().log_message(format, *args)

    # ---------------------------------------------------------------- responses
    def send_response(self, code: int, message: str | None = None) -> None:
        self._responded = True
        super().send_response(code, message)

    def _send(self, status: int, body: bytes, ctype: str, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.send_header("Content-Security-Policy", _CSP)
        self.send_header("Referrer-Policy", "no-referrer")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(body)

    def _json(self, status: int, obj) -> None:
        self._send(status, json.dumps(obj, ensure_ascii=False).encode(), "application/json; charset=utf-8")

    def _error(self, status: int, message: str, extra: dict | None = None) -> None:
        message = " ".join(message.split())  # one line
        if self.path.startswith("/api/"):
            body = json.dumps({"error": message}, ensure_ascii=False).encode()
            self._send(status, body, "application/json; charset=utf-8", extra)
        else:
            self._send(status, message.encode() + b"\n", "text/plain; charset=utf-8", extra)

    def _host_ok(self) -> bool:
        if not self.server.loopback_only:
            return True
        host = self.headers.get("Host", "")
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        return _is_loopback(name)

    def _presented_token(self) -> str | None:
        auth = self.headers.get("Authorization", "")
        if auth[:7].lower() == "bearer ":
            return auth[7:].strip()
        if "X-Finrag-Token" in self.headers:
            return self.headers["X-Finrag-Token"].strip()
        return (parse_qs(urlsplit(self.path).query).get("token") or cast("list[str | None]", [None]))[0]

    def _token_ok(self) -> bool:
        want = self.server.token
        if want is None:
            return True
        got = self._presented_token()
        return got is not None and hmac.compare_digest(got.encode(), want.encode())

    def _allowed(self) -> bool:
        """Host and token checks; answers the request (403 / 401) and returns False when it is refused."""
        if not self._host_ok():
            self._error(HTTPStatus.FORBIDDEN, "Host header is not a loopback address")
            return False
        if not self._token_ok():
            self.close_connection = True
            self._error(
                HTTPStatus.UNAUTHORIZED,
                f"this page needs its token: ?token=... in the address, or an Authorization: Bearer or "
                f"X-Finrag-Token header (the server's {TOKEN_ENV})",
                {"WWW-Authenticate": 'Bearer realm="finrag-labelling"'},
            )
            return False
        return True

    def _guarded(self, route) -> None:
        """Run a route; anything unexpected is logged here and answered 500 with one line, never a traceback."""
        try:
            route()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True  # the client went away
        except Exception:
            log.exception("labelling: %s %s failed", self.command, self.path)
            self.close_connection = True
            if not self._responded:
                with suppress(OSError):
                    self._error(HTTPStatus.INTERNAL_SERVER_ERROR, "internal error (see the server's log)")

    # ---------------------------------------------------------------- routes
    def do_GET(self) -> None:  # noqa: N802 - http.server naming
        self._guarded(self._get)

    do_HEAD = do_GET

    def do_POST(self) -> None:  # noqa: N802 - http.server naming
        self._guarded(self._post)

    def _get(self) -> None:
        if not self._allowed():
            return
        url = urlsplit(self.path)
        q = parse_qs(url.query)
        app = self.server.app
        try:
            if url.path in ("/", "/index.html"):
                k = app.index(q.get("i", [None])[0])
                page = app.page(k, self.server.token)
                return self._send(HTTPStatus.OK, page.encode(), "text/html; charset=utf-8")
            if url.path == "/api/item":
                return self._json(HTTPStatus.OK, app.item_json(app.index(q.get("i", [None])[0])))
            if url.path == "/api/progress":
                return self._json(HTTPStatus.OK, {**app.progress(), "skipped": app.skipped})
            if url.path.startswith("/static/"):
                return self._static(url.path.removeprefix("/static/"))
        except LabelError as exc:
            status = HTTPStatus.NOT_FOUND if isinstance(exc, NotFound) else HTTPStatus.BAD_REQUEST
            return self._error(status, str(exc))
        return self._error(HTTPStatus.NOT_FOUND, f"no such page: {url.path}")

    def _static(self, name: str) -> None:
        path = STATIC_DIR / name
        if "/" in name or name.startswith(".") or path.suffix not in _STATIC_TYPES or not path.is_file():
            return self._error(HTTPStatus.NOT_FOUND, f"no such file: {name}")
        self._send(HTTPStatus.OK, path.read_bytes(), _STATIC_TYPES[path.suffix])

    def _content_length(self) -> int:
        """The declared body length: exactly one plain decimal Content-Length of at most MAX_BODY bytes."""
        values = self.headers.get_all("Content-Length") or []
        if "Transfer-Encoding" in self.headers:
            raise _BodyError(HTTPStatus.LENGTH_REQUIRED, "send the body with a Content-Length, not chunked")
        if not values:
            raise _BodyError(HTTPStatus.LENGTH_REQUIRED, "Content-Length is required")
        if len(set(v.strip() for v in values)) > 1:
            raise _BodyError(HTTPStatus.BAD_REQUEST, "Content-Length is given twice, with different values")
        raw = values[0].strip()
        if raw.startswith("-") and _CONTENT_LENGTH.match(raw[1:]):
            raise _BodyError(HTTPStatus.LENGTH_REQUIRED, f"Content-Length {raw} is negative")
        if not _CONTENT_LENGTH.match(raw):
            raise _BodyError(HTTPStatus.BAD_REQUEST, f"Content-Length {raw[:40]!r} is not an integer")
        length = int(raw)
        if length > MAX_BODY:
            raise _BodyError(HTTPStatus.REQUEST_ENTITY_TOO_LARGE, f"body over {MAX_BODY} bytes")
        return length

    def _read_body(self, length: int) -> bytes:
        """Exactly `length` bytes, all within read_timeout seconds (a slow or stalled client is cut off)."""
        deadline = time.monotonic() + self.server.read_timeout
        chunks: list[bytes] = []
        got = 0
        try:
            while got < length:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                self.connection.settimeout(left)
                chunk = self.rfile.read1(min(length - got, 1 << 16))
                if not chunk:
                    raise _BodyError(None, f"client closed after {got} of {length} body bytes")
                chunks.append(chunk)
                got += len(chunk)
        except TimeoutError:
            raise _BodyError(
                HTTPStatus.REQUEST_TIMEOUT,
                f"body not received within {self.server.read_timeout:g} s ({got} of {length} bytes)",
            ) from None
        return b"".join(chunks)

    def _post(self) -> None:
        self._body_unread = True
        if not self._allowed():
            return
        if urlsplit(self.path).path != "/api/label":
            return self._error(HTTPStatus.NOT_FOUND, f"no such endpoint: {self.path}")
        if not self.headers.get("Content-Type", "").lower().startswith("application/json"):
            self.close_connection = True
            return self._error(HTTPStatus.UNSUPPORTED_MEDIA_TYPE, "POST /api/label takes application/json")
        try:
            raw = self._read_body(self._content_length())
            self._body_unread = False
        except _BodyError as exc:
            self.close_connection = True  # the rest of the body, if any, is not read: the connection is done
            if self.server.verbose:
                self.log_error("refused body: %s", exc)
            if exc.status is not None:
                return self._error(exc.status, str(exc))
            return None
        try:
            body = json.loads(raw or b"null")
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            return self._error(HTTPStatus.BAD_REQUEST, f"body is not JSON: {exc}")
        except RecursionError:
            return self._error(HTTPStatus.BAD_REQUEST, "body is not JSON: nested too deeply")
        try:
            result = self.server.app.label(body)
        except LabelError as exc:
            return self._error(HTTPStatus.BAD_REQUEST, str(exc))
        except OSError as exc:
            log.error("labelling: could not save labels to %s", self.server.app.store.path, exc_info=True)
            why = exc.strerror or type(exc).__name__
            return self._error(
                HTTPStatus.INTERNAL_SERVER_ERROR, f"labels not saved: {why} (see the server's log)"
            )
        self._json(HTTPStatus.OK, result)


class LabellingServer(ThreadingHTTPServer):
    """The HTTP server, one thread per connection; `.url` is where the page is (port 0 picks a free port).

    `token`: required from every request when set (check_token makes it mandatory beyond loopback);
    `read_timeout`: seconds a client has for each read of its request and for its whole body.
    """

    daemon_threads = True

    def __init__(
        self,
        app: LabellingApp,
        host: str,
        port: int,
        verbose: bool = False,
        token: str | None = None,
        read_timeout: float = READ_TIMEOUT,
    ) -> None:
        self.app = app
        self.verbose = verbose
        self.token = check_token(host, token)
        self.read_timeout = float(read_timeout)
        self.loopback_only = _is_loopback(host)
        if ":" in host:
            self.address_family = socket.AF_INET6
        super().__init__((host, port), _Handler)

    def handle_error(self, request, client_address) -> None:
        """An error escaping a handler (e.g. the client vanished): one log line, no traceback on stderr."""
        exc = sys.exc_info()[1]
        log.warning("labelling: request from %s failed: %r", client_address[0], exc)

    @property
    def url(self) -> str:
        host, port = cast("tuple[str, int]", self.server_address[:2])
        host = f"[{host}]" if ":" in str(host) else host
        return f"http://{host}:{port}/"


def make_server(
    answers_path: str | Path | Sequence[str | Path],
    labels_dir: str | Path,
    host: str = "127.0.0.1",
    port: int = 0,
    labeller: str = "anonymous",
    questions_path: str | Path | Sequence[str | Path] | None = None,
    shuffle_seed: int | None = None,
    verbose: bool = False,
    token: str | None = None,
    read_timeout: float = READ_TIMEOUT,
) -> LabellingServer:
    """Build the server (bound, not yet serving): for tests and for `serve`.

    Refuses (ValueError, before binding) a host beyond loopback without a token; see `check_token`.
    """
    if not _LABELLER.match(labeller):
        raise ValueError(
            f"labeller {labeller!r}: use letters, digits, '_', '.', '-' (it names the labels file)"
        )
    token = check_token(host, token)
    items, skipped = load_items(answers_path, questions_path, shuffle_seed)
    if not items:
        raise ValueError(f"{answers_path}: no answers with claims to label")
    store = LabelStore(Path(labels_dir) / f"{labeller}.jsonl", labeller)
    app = LabellingApp(items, store, skipped)
    return LabellingServer(app, host, port, verbose=verbose, token=token, read_timeout=read_timeout)


def serve(
    answers_path: str | Path | Sequence[str | Path],
    labels_dir: str | Path,
    host: str = "127.0.0.1",
    port: int = 0,
    labeller: str = "anonymous",
    questions_path: str | Path | Sequence[str | Path] | None = None,
    shuffle_seed: int | None = None,
    open_browser: bool = False,
) -> None:
    """Serve the labelling page until Ctrl-C; prints the address (port 0 = a free port).

    The token, if any, comes from FINRAG_LABEL_TOKEN; binding beyond loopback needs one.
    """
    token = os.environ.get(TOKEN_ENV) or None
    server = make_server(
        answers_path, labels_dir, host, port, labeller, questions_path, shuffle_seed, True, token=token
    )
    if needs_token(host):
        print(
            f"finrag: warning: the labelling page listens on {host}, beyond loopback: anyone who can reach "
            f"it and holds the token ({TOKEN_ENV}) can read the answers and write labels, over plain HTTP",
            file=sys.stderr,
            flush=True,
        )
    p = server.app.progress()
    where = server.url + ("?token=<" + TOKEN_ENV + ">" if server.token else "")
    print(
        f"labelling page: {where}  (labeller {labeller}, {p['answers_labelled']}/{p['answers']} answers "
        f"labelled, labels -> {server.app.store.path}); Ctrl-C to stop",
        flush=True,
    )
    if open_browser:
        webbrowser.open(server.url + (f"?token={quote(server.token, safe='')}" if server.token else ""))
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
