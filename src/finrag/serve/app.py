"""The web service around the selected system (FastAPI): answers, the benchmark questions, a page, health and
Prometheus metrics.

Why it is built this way:
- The system loads in a background thread at start-up, so `/healthz` answers at once and `/readyz` says when
  answers can be served (a Kubernetes readiness probe waits on it).
- A finished response is kept in memory as JSON bytes (`serve.answer_memo` of them): a repeated question costs a
  dictionary lookup, which is what the load test measures as "cached answers".
- Only new model or search work waits in a bounded queue for `serve.queue.workers` worker threads (a malformed
  request, an unknown qid and a memoised answer are answered first, busy or not): one more request than
  `workers + max_waiting` gets 503 with Retry-After instead of piling up; each answer has a deadline (504). A
  timed-out answer keeps its worker until it ends, so the queue never over-commits the model.
- Every text field must be valid Unicode without control characters (tab, newline, carriage return allowed), or
  the request is refused with 422 before anything hashes or encodes it; an error reply never echoes a refused
  value as itself (lone surrogates and control characters are written as escapes).
- The model calls go through the response cache, which fsyncs each call before it returns: a crash or a kill
  loses no recorded call.
- Optional API keys (`FINRAG_API_KEYS`, comma-separated, sent as `Authorization: Bearer KEY` or `X-API-Key`)
  with a per-key token bucket (`serve.rate_limit_per_minute`, 429 with Retry-After). Without keys there is no
  login and no rate limit (bind to 127.0.0.1, the default).
- The labelling page's guard and uvicorn options (finrag.core.http): a body needs a Content-Length of at most
  MAX_BODY bytes and arrives within READ_TIMEOUT seconds, as does a request's head; bound to loopback, a Host
  header that is not loopback is refused (a DNS-rebinding page could otherwise spend on model calls).
"""

from __future__ import annotations

import asyncio
import json
import logging
import math
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Annotated, Any

from fastapi import FastAPI, Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, JSONResponse, Response
from fastapi.staticfiles import StaticFiles
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic_core import PydanticCustomError
from starlette.exceptions import HTTPException as StarletteHTTPException

from finrag.core.http import Guard, is_loopback, presented_token, token_matches, uvicorn_options
from finrag.serve.system import SelectedSystem, ServeError, ServeParams, normalise_question, text_problem

log = logging.getLogger(__name__)

STATIC = Path(__file__).parent / "static"
API_KEYS_ENV = "FINRAG_API_KEYS"
_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)


def _checked_text(value: str) -> str:
    """A request's text field as it reaches the service: valid Unicode, no control characters (422 otherwise,
    before anything hashes or encodes it)."""
    problem = text_problem(value)
    if problem:
        raise PydanticCustomError("text", problem)
    return value


Text = Annotated[StrictStr, AfterValidator(_checked_text)]


class AnswerRequest(BaseModel):
    """POST /v1/answer. Types are strict ("5" is not a top_k); unknown fields are refused; text must be valid
    Unicode without control characters (tab, newline and carriage return allowed)."""

    model_config = ConfigDict(extra="forbid")
    question: Text = Field(description="the question, 1 to serve.max_question_chars characters")
    top_k: StrictInt | None = Field(None, ge=1, description="passages to retrieve (default: the study's k)")
    filter: StrictBool | None = Field(
        None, description="company + period filter (default: off, as evaluated)"
    )
    qid: Text | None = Field(None, description="a benchmark question's id (GET /v1/questions)")


class Metrics:
    """The service's Prometheus series, on a registry of its own (several apps in one test process)."""

    def __init__(self) -> None:
        r = self.registry = CollectorRegistry()
        self.requests = Counter("finrag_requests_total", "HTTP requests", ["endpoint", "status"], registry=r)
        self.latency = Histogram(
            "finrag_request_seconds", "request latency", ["endpoint"], buckets=_LATENCY_BUCKETS, registry=r
        )
        self.stage = Histogram(
            "finrag_stage_seconds",
            "time per answering stage",
            ["stage"],
            buckets=_LATENCY_BUCKETS,
            registry=r,
        )
        self.memo = Counter("finrag_answer_memo_total", "in-memory answer lookups", ["result"], registry=r)
        self.llm_cache = Counter("finrag_llm_cache_total", "response-cache lookups", ["result"], registry=r)
        self.model_calls = Counter(
            "finrag_model_calls_total", "calls that reached a model", ["backend"], registry=r
        )
        self.spend = Counter("finrag_spend_usd_total", "USD spent on new model calls", registry=r)
        self.rejected = Counter("finrag_rejected_total", "requests turned away", ["reason"], registry=r)
        self.in_flight = Gauge(
            "finrag_answers_in_flight", "answers computing or waiting for a worker", registry=r
        )


class TokenBucket:
    """`rate_per_minute` requests a minute per key, bursting up to that many."""

    def __init__(self, rate_per_minute: int):
        self.capacity = float(rate_per_minute)
        self.per_second = rate_per_minute / 60.0
        self._state: dict[str, tuple[float, float]] = {}
        self._lock = threading.Lock()

    def take(self, key: str) -> float:
        """0 when allowed, else seconds until a token is there."""
        now = time.monotonic()
        with self._lock:
            tokens, last = self._state.get(key, (self.capacity, now))
            tokens = min(self.capacity, tokens + (now - last) * self.per_second)
            if tokens >= 1.0:
                self._state[key] = (tokens - 1.0, now)
                return 0.0
            self._state[key] = (tokens, now)
            return (1.0 - tokens) / self.per_second


def _api_keys() -> list[str]:
    return [k.strip() for k in os.environ.get(API_KEYS_ENV, "").split(",") if k.strip()]


# what an error reply may not carry as itself: a lone surrogate (not encodable) and control characters (one line)
_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")


def _printable(text: object) -> str:
    """`text` safe to echo in an error reply: each lone surrogate or control character written as its escape."""
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", str(text))


def _error(code: int, message: str, headers: dict | None = None, **extra) -> JSONResponse:
    return JSONResponse({"error": _printable(message), **extra}, status_code=code, headers=headers)


def _validation_message(exc: RequestValidationError) -> str:
    parts = []
    for e in exc.errors():
        where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
        parts.append(f"{where}: {e.get('msg', 'invalid')}")
    return _printable("; ".join(parts) or "invalid request")


def _validation_detail(exc: RequestValidationError) -> list[dict]:
    """Each error's type, place and message, escaped: never the input itself (it may be what was refused)."""
    return [
        {
            "type": _printable(e.get("type", "")),
            "loc": [x if isinstance(x, int) else _printable(x) for x in e.get("loc", ())],
            "msg": _printable(e.get("msg", "invalid")),
        }
        for e in exc.errors()
    ]


class _Endpoint:
    """Pure-ASGI middleware: request count and latency by route (a fixed set of labels, never a raw path)."""

    ROUTES = {"/v1/answer", "/v1/questions", "/v1/system", "/healthz", "/readyz", "/metrics", "/"}

    def __init__(self, app, metrics: Metrics):
        self.app, self.metrics = app, metrics

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        endpoint = path if path in self.ROUTES else ("/static" if path.startswith("/static/") else "other")
        status = {"code": 500}
        t0 = time.perf_counter()

        async def send_wrapper(message):
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_wrapper)
        finally:
            self.metrics.latency.labels(endpoint).observe(time.perf_counter() - t0)
            self.metrics.requests.labels(endpoint, str(status["code"])).inc()


class Service:
    """State shared by the routes: the system (once loaded), the answer memo, the queue and the limits."""

    def __init__(self, loader: Callable[[], SelectedSystem] | SelectedSystem, serve: ServeParams):
        self.serve = serve
        self.metrics = Metrics()
        self.system: SelectedSystem | None = loader if isinstance(loader, SelectedSystem) else None
        self._loader = None if self.system is not None else loader
        self.load_error: str | None = None
        self.memo: OrderedDict[tuple, bytes] = OrderedDict()
        self._memo_lock = threading.Lock()
        self.workers = ThreadPoolExecutor(max_workers=serve.queue.workers, thread_name_prefix="answer")
        self._slots: asyncio.Semaphore | None = None
        self.in_flight = 0
        self.keys = _api_keys()
        self.bucket = TokenBucket(serve.rate_limit_per_minute)

    def load(self) -> None:
        if self._loader is None:
            return
        try:
            self.system = self._loader()  # type: ignore[operator]
        except Exception as exc:  # a broken start-up is reported by /readyz, not a crash loop
            log.exception("the selected system failed to load")
            self.load_error = f"{type(exc).__name__}: {exc}"

    # ------------------------------------------------------------------------------------------------ memo

    def memo_get(self, key: tuple) -> bytes | None:
        with self._memo_lock:
            body = self.memo.get(key)
            if body is not None:
                self.memo.move_to_end(key)
            return body

    def memo_put(self, key: tuple, body: bytes) -> None:
        if self.serve.answer_memo <= 0:
            return
        with self._memo_lock:
            self.memo[key] = body
            self.memo.move_to_end(key)
            while len(self.memo) > self.serve.answer_memo:
                self.memo.popitem(last=False)

    # ------------------------------------------------------------------------------------------------ auth

    def check_key(self, request: Request) -> JSONResponse | None:
        if not self.keys:
            return None
        given = presented_token(request.headers, header="x-api-key")
        if not token_matches(given, self.keys):
            self.metrics.rejected.labels("unauthorised").inc()
            return _error(
                401,
                f"an API key is required ({API_KEYS_ENV} is set): send Authorization: Bearer KEY",
                headers={"WWW-Authenticate": "Bearer"},
            )
        wait = self.bucket.take(given)
        if wait > 0:
            self.metrics.rejected.labels("rate_limited").inc()
            retry = max(1, math.ceil(wait))
            return _error(
                429,
                f"rate limit: {self.serve.rate_limit_per_minute} requests a minute per key; "
                f"retry in {retry} s",
                headers={"Retry-After": str(retry)},
            )
        return None

    # ------------------------------------------------------------------------------------------------ answer

    def _compute(self, req: AnswerRequest) -> dict:
        system = self.system
        assert system is not None
        before_calls, before_spend = system.llm.calls, system.llm.new_cost_usd
        out = system.answer(req.question, req.top_k, req.filter, req.qid)
        m = self.metrics
        for stage, ms in out["timing_ms"].items():
            m.stage.labels(stage).observe(ms / 1000.0)
        m.llm_cache.labels("hit" if out["cache"]["hit"] else "miss").inc()
        new_calls = system.llm.calls - before_calls
        if new_calls > 0:
            m.model_calls.labels(system.llm.identity["backend"]).inc(new_calls)
        spent = system.llm.new_cost_usd - before_spend
        if spent > 0:
            m.spend.inc(spent)
        return out

    async def answer(self, req: AnswerRequest) -> Response:
        if self.system is None:
            self.metrics.rejected.labels("not_ready").inc()
            return _error(
                503,
                "the selected system is still loading (GET /readyz)"
                if not self.load_error
                else f"the selected system failed to load: {self.load_error}",
                headers={"Retry-After": "5"},
            )
        s = self.serve
        text = normalise_question(req.question)
        if not text:
            return self._invalid("question: must not be empty")
        if len(text) > s.max_question_chars:
            return self._invalid(f"question: {len(text)} characters, at most {s.max_question_chars}")
        if req.top_k is not None and req.top_k > s.max_top_k:
            return self._invalid(f"top_k: {req.top_k} is above the maximum {s.max_top_k}")
        # what needs no new work is answered before a queue slot is taken: an unknown qid or one whose text does
        # not match (a dictionary lookup), then a memoised answer; only new model or search work is queued
        if req.qid is not None:
            try:
                self.system.benchmark_question(text, req.qid)
            except ServeError as exc:
                self.metrics.rejected.labels("not_found" if exc.status == 404 else "invalid").inc()
                return _error(exc.status, exc.message)
        key = (text, req.top_k, req.filter, req.qid)
        body = self.memo_get(key)
        if body is not None:
            self.metrics.memo.labels("hit").inc()
            return Response(body, media_type="application/json", headers={"X-Finrag-Memo": "hit"})
        self.metrics.memo.labels("miss").inc()
        if self.in_flight >= s.queue.workers + s.queue.max_waiting:
            self.metrics.rejected.labels("queue_full").inc()
            return _error(
                503,
                f"busy: {self.in_flight} answers computing or waiting; retry shortly",
                headers={"Retry-After": str(s.queue.retry_after_s)},
            )
        if self._slots is None:
            self._slots = asyncio.Semaphore(s.queue.workers)
        slots = self._slots
        self.in_flight += 1
        self.metrics.in_flight.set(self.in_flight)
        try:
            deadline = time.monotonic() + s.timeout_s
            try:
                await asyncio.wait_for(slots.acquire(), timeout=s.timeout_s)
            except TimeoutError:
                self.metrics.rejected.labels("timeout").inc()
                return _error(
                    504,
                    f"no worker free within {s.timeout_s:g} s",
                    headers={"Retry-After": str(s.queue.retry_after_s)},
                )
            fut = asyncio.get_running_loop().run_in_executor(self.workers, self._compute, req)
            fut.add_done_callback(lambda _f: slots.release())  # the worker is free only when the answer ends
            try:
                out = await asyncio.wait_for(
                    asyncio.shield(fut), timeout=max(0.001, deadline - time.monotonic())
                )
            except TimeoutError:
                self.metrics.rejected.labels("timeout").inc()
                return _error(
                    504,
                    f"the answer took longer than {s.timeout_s:g} s (serve.timeout_s); its model "
                    "call, if any, is still recorded when it ends",
                )
            except ServeError as exc:
                return _error(exc.status, exc.message)
        finally:
            self.in_flight -= 1
            self.metrics.in_flight.set(self.in_flight)
        body = json.dumps(out, ensure_ascii=False, separators=(",", ":")).encode()
        self.memo_put(key, body)
        return Response(body, media_type="application/json", headers={"X-Finrag-Memo": "miss"})

    def _invalid(self, message: str) -> JSONResponse:
        self.metrics.rejected.labels("invalid").inc()
        return _error(422, message)


def create_app(  # noqa: C901 (the app's routes, each small, in one factory)
    loader: Callable[[], SelectedSystem] | SelectedSystem | None = None,
    serve: ServeParams | None = None,
    *,
    background_load: bool = True,
    loopback_only: bool = False,
) -> FastAPI:
    """The app. `loader` builds the SelectedSystem (default: from the repository's params.yaml and files), in a
    background thread unless `background_load` is False or a built system is given. Behind finrag.core.http's
    Guard (body limits and deadline, one-line 500; with `loopback_only`, a Host header that is not loopback is
    refused, against DNS rebinding: `run_server` sets it when bound to loopback)."""
    serve = serve or (loader.serve if isinstance(loader, SelectedSystem) else ServeParams())  # type: ignore[call-arg]
    service = Service(loader or (lambda: SelectedSystem(serve=serve)), serve)

    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def lifespan(_app: FastAPI):
        if service.system is None and background_load:
            threading.Thread(target=service.load, name="load-system", daemon=True).start()
        elif service.system is None:
            service.load()
        yield
        service.workers.shutdown(wait=True, cancel_futures=True)

    app = FastAPI(
        title="finrag: the selected system",
        version="1",
        description="Answers with their claims, groundedness, citations and the judge's measured agreement with "
        "human labels (Cohen's kappa, 95% CI).",
        lifespan=lifespan,
    )
    app.state.service = service
    app.add_middleware(Guard, loopback_only=loopback_only, log=log)
    app.add_middleware(_Endpoint, metrics=service.metrics)  # outermost: it counts the guard's refusals too
    app.mount("/static", StaticFiles(directory=STATIC), name="static")

    @app.exception_handler(RequestValidationError)
    async def _on_invalid(_request: Request, exc: RequestValidationError):
        service.metrics.rejected.labels("invalid").inc()
        return _error(422, _validation_message(exc), detail=_validation_detail(exc))

    @app.exception_handler(StarletteHTTPException)
    async def _on_http_error(request: Request, exc: StarletteHTTPException):
        why = exc.__cause__  # FastAPI's 400 "error parsing the body" for a body that is not UTF-8
        if exc.status_code == 400 and isinstance(why, UnicodeDecodeError):
            service.metrics.rejected.labels("invalid").inc()
            return _error(422, f"body: not valid UTF-8 ({why.reason} at byte {why.start})")
        return await http_exception_handler(request, exc)

    @app.post("/v1/answer", summary="Answer a question with the selected system")
    async def answer(body: AnswerRequest, request: Request) -> Any:
        denied = service.check_key(request)
        return denied or await service.answer(body)

    @app.get("/v1/questions", summary="The benchmark questions (FinanceBench and trick)")
    async def questions(request: Request) -> Any:
        denied = service.check_key(request)
        if denied:
            return denied
        if service.system is None:
            return _error(503, "the selected system is still loading", headers={"Retry-After": "5"})
        return {"questions": service.system.question_list()}

    @app.get("/v1/system", summary="What is being served: system, search setup, judge and its trust")
    async def system_info() -> Any:
        if service.system is None:
            return _error(503, "the selected system is still loading", headers={"Retry-After": "5"})
        return {**service.system.describe(), "auth": bool(service.keys)}

    @app.get("/healthz", summary="Liveness: the process answers")
    async def healthz() -> Any:
        return {"status": "ok"}

    @app.get("/readyz", summary="Readiness: the selected system is loaded")
    async def readyz() -> Any:
        if service.system is not None:
            return {"status": "ready", "load_seconds": service.system.load_seconds}
        if service.load_error:
            return _error(503, service.load_error, status="failed")
        return _error(503, "loading", status="loading", headers={"Retry-After": "5"})

    @app.get("/metrics", summary="Prometheus metrics")
    async def metrics() -> Response:
        return Response(generate_latest(service.metrics.registry), media_type=CONTENT_TYPE_LATEST)

    @app.get("/", include_in_schema=False)
    async def page() -> FileResponse:
        return FileResponse(STATIC / "index.html")

    return app


def run_server(
    host: str | None = None,
    port: int | None = None,
    cache_mode: str | None = None,
    cache_dir: str | None = None,
    log_level: str = "warning",
    serve: ServeParams | None = None,
    say: Callable[[str], object] = lambda msg: None,
) -> None:
    """`finrag serve` and `python -m finrag.serve`: the selected system under uvicorn, options over params.yaml's
    `serve` section. Its own entry point so the timing stages that start the service reach only the service."""
    import uvicorn

    sp = serve or ServeParams.model_validate({})
    if cache_dir is not None:
        sp = sp.model_copy(update={"cache_dir": str(cache_dir)})
    if cache_mode:
        os.environ["FINRAG_LLM_MODE"] = cache_mode
    bind = host or sp.host
    if not is_loopback(bind) and not os.environ.get(API_KEYS_ENV):
        say(f"warning: serving on {bind} without {API_KEYS_ENV}: anyone who reaches it can ask")
    say(f"finrag serve: http://{bind}:{port or sp.port}/ (ready when /readyz says so)")
    uvicorn.run(
        create_app(serve=sp, loopback_only=is_loopback(bind)),
        host=bind,
        port=port if port is not None else sp.port,
        log_level=log_level,
        access_log=False,
        **uvicorn_options(),
    )
