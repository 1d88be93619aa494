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

Served by FastAPI under uvicorn behind `finrag.core.http.Guard`, with the service's uvicorn options: on a
loopback address (the default) a Host header that is not loopback is refused (DNS rebinding), a request's head and
body each have `read_timeout` seconds (closed / 408), a body has an exact Content-Length of at most MAX_BODY bytes
(411 / 400 / 413), and an error is answered 500 with one line (the traceback goes to the server's log). The page
loads one same-origin script under a strict Content-Security-Policy and jinja2 escapes all text, so an answer or
passage cannot inject HTML; POSTs must be JSON (no cross-site forms), and a state-changing request whose Origin
header names another origin (`Origin: null` included) is refused with 403 (`SameOrigin`; one without an Origin
header, as curl sends, passes to the checks above). Every text in a POST body must be valid Unicode without
control characters other than tab, newline and carriage return (422 otherwise, before it is saved; an error never
echoes such a character as itself). Bound beyond loopback it needs a token
(`FINRAG_LABEL_TOKEN`, at least 16 characters) on every request: `Authorization: Bearer <token>`,
`X-Finrag-Token: <token>` or `?token=<token>` (the page passes it on to its links, script and API calls).
"""

from __future__ import annotations

import json
import logging
import os
import random
import re
import socket
import sys
import threading
import webbrowser
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlsplit

import jinja2
import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.concurrency import run_in_threadpool
from starlette.datastructures import Headers
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import ASGIApp, Receive, Scope, Send
from uvicorn.config import LOGGING_CONFIG

from finrag.core.contracts import Answer, Question
from finrag.core.http import MAX_BODY, READ_TIMEOUT, Guard, is_loopback, uvicorn_options
from finrag.core.io import append_locked, read_jsonl
from finrag.score.claims import split_claims

VERDICTS = ("supported", "unsupported", "contradicted")
STATIC_DIR = Path(__file__).parent / "labelling_static"
MAX_NOTE = 2000  # characters of one note
TOKEN_ENV = "FINRAG_LABEL_TOKEN"
MIN_TOKEN = 16  # characters of a token
log = logging.getLogger(__name__)
_LABELLER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
_HEADERS = {  # on every response
    "Cache-Control": "no-store",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; "
    "form-action 'none'",
    "Referrer-Policy": "no-referrer",
}


class LabelError(ValueError):
    """A request the page cannot accept (answered with `status`, 400, and this message)."""

    status = 400


class NotFound(LabelError):
    """An item index outside the list (answered with 404)."""

    status = 404


class BadText(LabelError):
    """Text that is not valid Unicode (a body not UTF-8, a lone surrogate) or holds a control character other than
    tab, newline and carriage return (answered with 422)."""

    status = 422


# a lone surrogate (the JSON escape "\ud800" decodes to one: it cannot be encoded, so saving it would fail) or a
# control character other than tab, newline and carriage return (C0, DEL, C1)
_BAD_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|[\ud800-\udfff]")
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _printable(text: str) -> str:
    """`text` safe to echo in an error: each lone surrogate or control character written as its escape."""
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def check_text(body: Any) -> None:
    """BadText naming the first string in `body` (a parsed JSON value: keys and values, at any depth) that is not
    valid Unicode or holds a control character; the message names the character by its code point, never by
    itself. Iterative: as deep as json.loads went, without recursion."""
    stack: list[tuple[str, Any]] = [("", body)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            items: list[tuple[str, Any]] = []
            for k, v in value.items():
                name = f"{where}.{_printable(str(k))}" if where else _printable(str(k))
                items += [(f"{name} (a key)", k), (name, v)]
            stack.extend(reversed(items))
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in reversed(list(enumerate(value))))
        elif isinstance(value, str) and (m := _BAD_TEXT.search(value)):
            code, at = f"U+{ord(m.group()):04X}", m.start()
            why = (
                f"not valid Unicode: a lone surrogate {code} at character {at}"
                if m.group() >= "\ud800"
                else f"a control character {code} at character {at} (only tab, newline and carriage return "
                "are allowed)"
            )
            raise BadText(f"{where or 'body'}: {why}")


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


_HELP = (
    "this page needs its token: ?token=... in the address, or an Authorization: Bearer or X-Finrag-Token "
    f"header (the server's {TOKEN_ENV})"
)


def needs_token(host: str) -> bool:
    """Whether binding to `host` needs a token: anything beyond loopback (127.0.0.0/8, ::1, localhost) does."""
    return not is_loopback(host)


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


class _JSON(JSONResponse):
    def render(self, content: Any) -> bytes:
        return json.dumps(content, ensure_ascii=False).encode()


def _error(scope: Scope, status: int, message: str, headers: dict[str, str]) -> Response:
    """One line: JSON {"error": ...} under /api/, plain text elsewhere (a lone surrogate or a control character
    in the message written as its escape, so the reply can always be encoded)."""
    message = _printable(" ".join(str(message).split()))
    if scope["path"].startswith("/api/"):
        return _JSON({"error": message}, status_code=status, headers=headers)
    return PlainTextResponse(message + "\n", status_code=status, headers=headers)


def _save(state: LabellingApp, raw: bytes) -> Response:
    """Parse and record one POST /api/label body (in a worker thread: the append fsyncs)."""
    try:
        body = json.loads(raw or b"null")
    except UnicodeDecodeError as exc:
        raise BadText(f"body is not valid UTF-8 ({exc.reason} at byte {exc.start})") from None
    except json.JSONDecodeError as exc:
        raise LabelError(f"body is not JSON: {exc}") from None
    except RecursionError:
        raise LabelError("body is not JSON: nested too deeply") from None
    check_text(body)  # before anything reads, strips or encodes it
    try:
        return _JSON(state.label(body))
    except OSError as exc:
        log.error("labelling: could not save labels to %s", state.store.path, exc_info=True)
        why = exc.strerror or type(exc).__name__
        return _JSON({"error": f"labels not saved: {why} (see the server's log)"}, status_code=500)


_SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
_DEFAULT_PORT = {"http": 80, "https": 443}


def _origin(value: str, scheme: str | None = None) -> tuple[str, str, int] | None:
    """(scheme, host, port) of an Origin header (`scheme` None) or of a Host header served over `scheme`; None for
    anything else (`null`, a path, user info, a bad port)."""
    try:
        parts = urlsplit(value if scheme is None else f"//{value}")
        scheme = scheme or parts.scheme
        if (
            scheme not in _DEFAULT_PORT
            or not parts.hostname
            or parts.path
            or parts.query
            or parts.fragment
            or parts.username is not None
        ):
            return None
        return scheme, parts.hostname, _DEFAULT_PORT[scheme] if parts.port is None else parts.port
    except ValueError:  # a port that is not a number, an unclosed [
        return None


class SameOrigin:
    """Pure-ASGI middleware: a state-changing request (anything but GET, HEAD, OPTIONS) that carries an Origin
    header naming another origin than the page's own (its scheme and Host header), `Origin: null` included, is
    refused with 403 (cross-site requests from a browser: a form, a fetch from another page or a sandboxed frame).
    A request without an Origin header (curl, scripts) passes, to the token and Host checks as before."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and scope["method"] not in _SAFE_METHODS:
            headers = Headers(scope=scope)
            given = headers.getlist("origin")
            own = _origin(headers.get("host", ""), scope.get("scheme", "http"))
            if given and (own is None or any(_origin(o) != own for o in given)):
                shown = ", ".join(repr(o) for o in given)
                why = f"cross-origin {scope['method']} refused: Origin {shown} is not this page's own"
                return await _error(scope, 403, why, {})(scope, receive, send)
        return await self.app(scope, receive, send)


def create_app(
    state: LabellingApp,
    token: str | None = None,
    loopback_only: bool = True,
    read_timeout: float = READ_TIMEOUT,
) -> FastAPI:
    """The page as a FastAPI app behind finrag.core.http's Guard (host, token, body limits, one-line 500)."""
    api = FastAPI(openapi_url=None, docs_url=None, redoc_url=None)
    api.add_middleware(SameOrigin)  # inside the guard: after its host and token checks, with its headers
    api.add_middleware(
        Guard,
        loopback_only=loopback_only,
        token=token,
        token_header="x-finrag-token",
        token_param="token",
        token_help=_HELP,
        realm="finrag-labelling",
        max_body=MAX_BODY,
        read_timeout=read_timeout,
        error=_error,
        headers=_HEADERS,
        log=log,
    )
    api.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @api.exception_handler(LabelError)
    async def _refused(request: Request, exc: LabelError) -> Response:
        return _error(request.scope, exc.status, str(exc), {})

    @api.exception_handler(StarletteHTTPException)
    async def _http_error(request: Request, exc: StarletteHTTPException) -> Response:
        return _error(
            request.scope, exc.status_code, f"{exc.detail}: {request.url.path}", dict(exc.headers or {})
        )

    @api.api_route("/", methods=["GET", "HEAD"])
    @api.api_route("/index.html", methods=["GET", "HEAD"])
    def page(i: str | None = None) -> Response:
        return HTMLResponse(state.page(state.index(i), token))

    @api.get("/api/item")
    def item(i: str | None = None) -> Response:
        return _JSON(state.item_json(state.index(i)))

    @api.get("/api/progress")
    def progress() -> Response:
        return _JSON({**state.progress(), "skipped": state.skipped})

    @api.post("/api/label")
    async def label(request: Request) -> Response:
        if not request.headers.get("content-type", "").lower().startswith("application/json"):
            return _error(request.scope, 415, "POST /api/label takes application/json", {})  # no forms (CSRF)
        return await run_in_threadpool(_save, state, await request.body())

    return api


class LabellingServer:
    """The page under uvicorn on a socket bound at once, so `.url` is known before `serve_forever` (port 0 picks a
    free port); `shutdown` (from another thread) stops it, as with the standard library's servers.

    `token`: required from every request when set (check_token makes it mandatory beyond loopback);
    `read_timeout`: seconds a client has for its request's head and again for its whole body.
    """

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
        self.token = check_token(host, token)
        self.read_timeout = float(read_timeout)
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.create_server((host, port), family=family)
        self.server_address = self.socket.getsockname()
        self.asgi = create_app(app, self.token, is_loopback(host), self.read_timeout)
        config = uvicorn.Config(
            self.asgi,
            lifespan="off",
            log_config=LOGGING_CONFIG if verbose else None,  # verbose: uvicorn's log and access log on stderr
            access_log=verbose,
            **uvicorn_options(self.read_timeout),
        )
        self._uvicorn = uvicorn.Server(config)
        self._stopped = threading.Event()

    def serve_forever(self, poll_interval: float = 0.5) -> None:
        """Serve until `shutdown` or Ctrl-C (`poll_interval` is ignored: uvicorn looks every 0.1 s)."""
        try:
            self._uvicorn.run(sockets=[self.socket])
        finally:
            self._stopped.set()

    def shutdown(self) -> None:
        self._uvicorn.should_exit = True
        self._stopped.wait()

    def server_close(self) -> None:
        self.socket.close()

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
