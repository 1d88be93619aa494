"""What finrag's two web servers share (the service, `finrag.serve.app`, and the labelling page,
`finrag.trust.labelling`): one guard in front of each FastAPI app and one set of uvicorn options, so both refuse
the same requests the same way.

The guard (`Guard`, pure ASGI, so it covers mounted static files and 404s too) checks, in this order: the Host
header when bound to loopback (a DNS-rebinding page names its own host), a token when one is set, and for a request
with a body an exact Content-Length of at most `max_body` bytes (411 / 413) and the whole body within
`read_timeout` seconds (408); an unexpected error is logged and answered 500 with one line, never a traceback.
uvicorn (h11) refuses malformed heads itself (400: a bad or doubled Content-Length, a head over MAX_HEAD bytes).

Hand-written only where no library feature does the job: Starlette's TrustedHostMiddleware matches host names
and answers 400, not "any loopback address" (127.0.0.0/8, [::1]) with 403; uvicorn has no body size limit, no
body deadline, and times out only idle keep-alive connections, never a request head that stalls half-way.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import logging
from collections.abc import Callable, Iterable, Mapping
from typing import Any, TypeGuard
from urllib.parse import parse_qs

from starlette.datastructures import Headers
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send
from uvicorn.protocols.http.h11_impl import H11Protocol

MAX_BODY = 1 << 20  # bytes of one request body
MAX_HEAD = 16 << 10  # bytes of a request line and headers (h11's own default, stated)
READ_TIMEOUT = 5.0  # seconds for a request's head, and again for its whole body
_BODY_METHODS = frozenset({"POST", "PUT", "PATCH"})

ErrorResponse = Callable[[Scope, int, str, dict[str, str]], Response]


def is_loopback(host: str) -> bool:
    """localhost or a loopback address (127.0.0.0/8, ::1; brackets allowed)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str:
    """The Host header without its port: `127.0.0.1:8000` -> `127.0.0.1`, `[::1]:80` -> `[::1]`."""
    return host_header if host_header.endswith("]") else host_header.rsplit(":", 1)[0]


def presented_token(
    headers: Mapping[str, str], query_string: bytes = b"", header: str = "", param: str = ""
) -> str | None:
    """The secret a request presents: `Authorization: Bearer <it>`, else header `header`, else `?param=<it>`."""
    auth = headers.get("authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    if header and header in headers:
        return headers[header].strip()
    values = parse_qs(query_string.decode("latin-1")).get(param) if param else None
    return values[0] if values else None


def token_matches(given: str | None, wanted: Iterable[str]) -> TypeGuard[str]:
    """Whether `given` is one of `wanted`, compared in constant time (as bytes: any text is comparable)."""
    return given is not None and any(hmac.compare_digest(given.encode(), w.encode()) for w in wanted)


def json_error(scope: Scope, status: int, message: str, headers: dict[str, str]) -> Response:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


class Guard:
    """Pure-ASGI middleware: host, token, body limits and deadline, one-line 500 (see the module docstring).

    `token`: required from every request when set (`presented_token` with `token_header` / `token_param`);
    `error(scope, status, message, headers)`: the response for a refusal; `headers`: added to every response.
    """

    def __init__(
        self,
        app: ASGIApp,
        *,
        loopback_only: bool = False,
        token: str | None = None,
        token_header: str = "",
        token_param: str = "",
        token_help: str = "this server needs its token",
        realm: str = "finrag",
        max_body: int = MAX_BODY,
        read_timeout: float = READ_TIMEOUT,
        error: ErrorResponse = json_error,
        headers: Mapping[str, str] | None = None,
        log: logging.Logger | None = None,
    ) -> None:
        self.app, self.loopback_only, self.error = app, loopback_only, error
        self.log = log or logging.getLogger(__name__)
        self.token, self.token_header, self.token_param = token, token_header, token_param
        self.token_help, self.realm = token_help, realm
        self.max_body, self.read_timeout = max_body, read_timeout
        self.headers = [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        started = False

        async def send_(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                message = {**message, "headers": [*message.get("headers", []), *self.headers]}
            await send(message)

        async def refuse(status: int, message: str, headers: dict[str, str] | None = None) -> None:
            await self.error(scope, status, " ".join(message.split()), headers or {})(scope, receive, send_)

        close = {"connection": "close"}  # the rest of the request, if any, is not read
        headers = Headers(scope=scope)
        if self.loopback_only and not is_loopback(host_name(headers.get("host", ""))):
            return await refuse(403, "Host header is not a loopback address")
        if self.token is not None:
            given = presented_token(
                headers, scope.get("query_string", b""), self.token_header, self.token_param
            )
            if not token_matches(given, [self.token]):
                auth = {"www-authenticate": f'Bearer realm="{self.realm}"', **close}
                return await refuse(401, self.token_help, auth)
        if scope["method"] in _BODY_METHODS:
            length = self._length(headers)
            if isinstance(length, tuple):
                return await refuse(*length, close)
            got = [0]
            try:
                body = await asyncio.wait_for(_read_body(receive, got), self.read_timeout)
            except TimeoutError:
                why = f"body not received within {self.read_timeout:g} s ({got[0]} of {length} bytes)"
                return await refuse(408, why, close)
            if body is None:
                return None  # the client went away before sending its body: nobody to answer
            receive = _replay(body, receive)
        try:
            await self.app(scope, receive, send_)
        except Exception:
            self.log.exception("%s %s failed", scope["method"], scope["path"])
            if not started:
                await refuse(500, "internal error (see the server's log)", close)
        return None

    def _length(self, headers: Headers) -> int | tuple[int, str]:
        """The declared body length, or (status, why) to refuse it."""
        if "transfer-encoding" in headers:
            return 411, "send the body with a Content-Length, not chunked"
        raw = headers.get("content-length")
        if raw is None:
            return 411, "Content-Length is required"
        length = int(raw)  # h11 admits only digits, and one value: it answers anything else 400 itself
        if length > self.max_body:
            return 413, f"body over {self.max_body} bytes"
        return length


async def _read_body(receive: Receive, got: list[int]) -> bytes | None:
    """The whole body (the server stops at Content-Length), or None if the client disconnects first."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunks.append(message.get("body", b""))
        got[0] += len(chunks[-1])
        if not message.get("more_body", False):
            return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """A `receive` that gives the body already read, then what the server says next (a disconnect)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again


class HeadDeadline(H11Protocol):
    """uvicorn's h11 protocol with its keep-alive timer armed from the moment a connection opens and kept running
    until a whole request head has arrived (uvicorn itself stops it at any byte, so a trickled head never ends)."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self.timeout_keep_alive_task = self.loop.call_later(
            self.timeout_keep_alive, self.timeout_keep_alive_handler
        )

    def data_received(self, data: bytes) -> None:
        self.conn.receive_data(data)  # no timer reset here: handle_events stops it at a complete request head
        self.handle_events()


def uvicorn_options(read_timeout: float = READ_TIMEOUT) -> dict[str, Any]:
    """uvicorn.Config / uvicorn.run options both servers use: a request's head within `read_timeout` seconds
    (also the keep-alive wait; uvicorn annotates it int but uses any number, via loop.call_later), a head of at
    most MAX_HEAD bytes, h11 whether or not httptools is installed."""
    return {
        "http": HeadDeadline,
        "timeout_keep_alive": read_timeout,
        "h11_max_incomplete_event_size": MAX_HEAD,
    }
