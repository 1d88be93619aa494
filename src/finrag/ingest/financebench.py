"""FinanceBench questions and document list: from the local mirror, or downloaded at a pinned commit.

Why pinned: a gold label changed in the upstream history, so every run must read the same bytes
(commit `finrag.core.config.FINANCEBENCH_COMMIT`, checked by sha256). The download path retries transient
failures and caches on disk, so a second run makes no request.

Also decides, per question, whether its source document can be had locally (a FinanceBench PDF, or an EDGAR
HTML filing that MANIFEST.csv marks as the exact same FinanceBench document), without dropping any question.
"""

from __future__ import annotations

import csv
import json
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential,
)

from finrag.core.config import FINANCEBENCH_RAW, DataUnavailable, mirror_dir, repo_root
from finrag.core.contracts import Evidence, Question
from finrag.core.io import atomic_open, sha256_file

log = logging.getLogger(__name__)

QUESTIONS_FILE = "financebench_open_source.jsonl"
DOCUMENTS_FILE = "financebench_document_information.jsonl"
# Path of each file inside the upstream repository (raw URL = FINANCEBENCH_RAW/<path>).
UPSTREAM_PATHS = {QUESTIONS_FILE: "data/" + QUESTIONS_FILE, DOCUMENTS_FILE: "data/" + DOCUMENTS_FILE}
# sha256 of the files at the pinned commit (from the mirror's MANIFEST.csv): a download must match.
EXPECTED_SHA256 = {
    QUESTIONS_FILE: "a5a2aa673e573e55675fc3c0f9aa38c1cf59d2abc91edb077534f71f10a71877",
    DOCUMENTS_FILE: "1c69127783879de8cdadb159d2181f39bc3123b8e0ebf74031c3969d69189575",
}
# Used only when MANIFEST.csv is absent: FinanceBench documents whose exact filing exists as EDGAR HTML.
FALLBACK_HTML_STANDINS = {
    "3M_2023Q2_10Q": "edgar/MMM/10-Q_2023-06-30.htm",
    "Pfizer_2023Q2_10Q": "edgar/PFE/10-Q_2023-07-02.htm",
    "APPLE_2023Q3_10Q": "edgar/AAPL/10-Q_2023-07-01.htm",
}
FORM_NAMES = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "earnings": "EARNINGS", "10k_annualreport": "10-K"}
_EXACT_NOTE = re.compile(r"exact FinanceBench doc\s+([A-Za-z0-9_.&-]+)")
_PERIOD = re.compile(r"_(\d{4}(?:Q[1-4])?)(?:_|$)")


class FinanceBenchError(DataUnavailable):
    """FinanceBench data could not be read or downloaded. Message is one line."""


@dataclass
class FinanceBenchData:
    """Raw records as published, plus one line per record that could not be read."""

    questions: list[dict]
    documents: list[dict]
    errors: list[str] = field(default_factory=list)
    source: str = ""  # "mirror:<dir>" or "download:<commit url>"

    @property
    def documents_by_name(self) -> dict[str, dict]:
        return {d["doc_name"]: d for d in self.documents if "doc_name" in d}


@dataclass(frozen=True)
class SourceDoc:
    """Where a FinanceBench document lies in the mirror."""

    doc_name: str
    rel_path: str  # relative to the mirror root
    source_format: str  # "pdf" or "html"


# --------------------------------------------------------------------------- reading


def parse_jsonl(text: str, source: str) -> tuple[list[dict], list[str]]:
    """Parse JSON lines, keeping going past bad lines: each failure is one line naming source:line."""
    records, errors = [], []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
            if not isinstance(obj, dict):
                raise ValueError(f"expected a JSON object, got {type(obj).__name__}")
        except ValueError as exc:
            errors.append(f"{source}:{lineno}: malformed JSON line: {str(exc).splitlines()[0]}")
            continue
        records.append(obj)
    return records, errors


def _retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code == 429 or exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError)


def _get(client: httpx.Client, url: str, attempts: int = 5, sleep=None) -> httpx.Response:
    """GET with exponential back-off on transport errors, 429 and 5xx (tenacity)."""
    kwargs = {"sleep": sleep} if sleep is not None else {}
    for attempt in Retrying(
        stop=stop_after_attempt(attempts),
        wait=wait_exponential(multiplier=0.5, max=30),
        retry=retry_if_exception(_retryable),
        reraise=True,
        **kwargs,
    ):
        with attempt:
            resp = client.get(url)
            resp.raise_for_status()
    return resp


def default_cache_dir() -> Path:
    return repo_root() / ".cache" / "financebench"


def download_file(
    name: str,
    cache_dir: Path | None = None,
    client: httpx.Client | None = None,
    expected_sha256: dict[str, str] | None = None,
    sleep=None,
) -> Path:
    """Fetch one FinanceBench file at the pinned commit into the cache (no request when already cached)."""
    cache_dir = Path(cache_dir or default_cache_dir())
    expected = (EXPECTED_SHA256 if expected_sha256 is None else expected_sha256).get(name)
    dest = cache_dir / name
    if dest.exists() and (expected is None or sha256_file(dest) == expected):
        return dest
    url = f"{FINANCEBENCH_RAW}/{UPSTREAM_PATHS.get(name, name)}"
    own = client is None
    client = client or httpx.Client(timeout=60, follow_redirects=True)
    try:
        resp = _get(client, url, sleep=sleep)
    except httpx.HTTPError as exc:
        raise FinanceBenchError(f"could not download {url}: {exc}".splitlines()[0]) from exc
    finally:
        if own:
            client.close()
    with atomic_open(dest, "wb") as fh:
        fh.write(resp.content)
    if expected is not None and sha256_file(dest) != expected:
        dest.unlink()
        raise FinanceBenchError(f"{url}: sha256 differs from the pinned file (expected {expected[:12]}...)")
    return dest


def load_financebench(
    mirror: Path | None = None,
    *,
    cache_dir: Path | None = None,
    client: httpx.Client | None = None,
    download: bool = True,
    expected_sha256: dict[str, str] | None = None,
    sleep=None,
) -> FinanceBenchData:
    """Read both FinanceBench files from the mirror when there is one, else download them (pinned, cached)."""
    mirror = mirror if mirror is not None else mirror_dir()
    paths: dict[str, Path] = {}
    if mirror is not None and all((Path(mirror) / "financebench" / n).exists() for n in UPSTREAM_PATHS):
        paths = {n: Path(mirror) / "financebench" / n for n in UPSTREAM_PATHS}
        for n, path in paths.items():
            want = EXPECTED_SHA256.get(n)
            if want is not None and sha256_file(path) != want:
                log.warning(
                    "%s differs from the pinned FinanceBench file (sha256); results may not match", path
                )
        source = f"mirror:{mirror}"
    elif download:
        paths = {
            n: download_file(n, cache_dir, client, expected_sha256=expected_sha256, sleep=sleep)
            for n in UPSTREAM_PATHS
        }
        source = f"download:{FINANCEBENCH_RAW}"
    else:
        raise DataUnavailable("FinanceBench files are neither in the mirror nor allowed to be downloaded")
    parsed = {}
    errors: list[str] = []
    for name, path in paths.items():
        recs, errs = parse_jsonl(path.read_text(encoding="utf-8"), str(path))
        parsed[name] = recs
        errors.extend(errs)
    for e in errors:
        log.warning(e)
    return FinanceBenchData(parsed[QUESTIONS_FILE], parsed[DOCUMENTS_FILE], errors, source)


# --------------------------------------------------------------------------- mapping to contracts


def doc_period(doc_name: str, doc_info: dict | None = None) -> str:
    """The period in the document name ("2023Q2", "2018"), else the document list's doc_period."""
    m = _PERIOD.search(doc_name)
    if m:
        return m.group(1)
    if doc_info and doc_info.get("doc_period") is not None:
        return str(doc_info["doc_period"])
    return ""


def form_name(doc_type: str) -> str:
    return FORM_NAMES.get(str(doc_type).lower(), str(doc_type).upper())


def to_question(rec: dict, docs_by_name: dict[str, dict]) -> Question:
    """One FinanceBench record -> Question. Evidence doc_id is the evidence's `doc_name` key."""
    doc_name = rec["doc_name"]
    evidence = [
        Evidence(
            doc_id=e.get("doc_name") or doc_name,
            page=int(e["evidence_page_num"]),
            text=e.get("evidence_text") or "",
        )
        for e in rec.get("evidence") or []
    ]
    return Question(
        qid=rec["financebench_id"],
        question=rec["question"],
        answer=rec.get("answer") or "",
        doc_ids=[doc_name],
        company=rec.get("company") or docs_by_name.get(doc_name, {}).get("company", ""),
        period=doc_period(doc_name, docs_by_name.get(doc_name)),
        question_type=rec.get("question_type") or "",
        reasoning=rec.get("question_reasoning") or "",
        kind="financebench",
        evidence=evidence,
        justification=rec.get("justification") or "",
    )


def to_questions(data: FinanceBenchData) -> tuple[list[Question], list[str]]:
    """Map every record; a record missing a required key is one error line, the rest still mapped."""
    docs = data.documents_by_name
    out, errors = [], []
    for i, rec in enumerate(data.questions, 1):
        try:
            out.append(to_question(rec, docs))
        except (KeyError, TypeError, ValueError) as exc:
            qid = rec.get("financebench_id", f"record {i}")
            errors.append(f"{QUESTIONS_FILE}: {qid}: cannot map record: {type(exc).__name__}: {exc}")
    return out, errors


# --------------------------------------------------------------------------- availability


def manifest_rows(mirror: Path) -> list[dict]:
    path = Path(mirror) / "MANIFEST.csv"
    if not path.exists():
        return []
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def html_standins(mirror: Path) -> dict[str, str]:
    """FinanceBench doc name -> EDGAR HTML path, from MANIFEST notes 'exact FinanceBench doc X'."""
    rows = manifest_rows(mirror)
    if not rows:
        return {k: v for k, v in FALLBACK_HTML_STANDINS.items() if (Path(mirror) / v).exists()}
    out = {}
    for row in rows:
        m = _EXACT_NOTE.search(row.get("note") or "")
        if m and (row.get("local_path") or "").endswith((".htm", ".html")):
            out[m.group(1)] = row["local_path"]
    return out


def resolve_sources(mirror: Path | None, doc_names) -> dict[str, SourceDoc]:
    """Which FinanceBench documents can be had locally; a PDF is preferred over an HTML stand-in."""
    if mirror is None:
        return {}
    mirror = Path(mirror)
    standins = html_standins(mirror)
    out = {}
    for name in doc_names:
        pdf = f"financebench/pdfs/{name}.pdf"
        if (mirror / pdf).exists():
            out[name] = SourceDoc(name, pdf, "pdf")
        elif name in standins and (mirror / standins[name]).exists():
            out[name] = SourceDoc(name, standins[name], "html")
    return out


def mark_availability(questions: list[Question], sources: dict[str, SourceDoc]) -> list[Question]:
    """Set available / unavailable_reason on every question; none is dropped."""
    out = []
    for q in questions:
        missing = [d for d in q.doc_ids if d not in sources]
        if missing:
            reason = "; ".join(
                f"source document {d} not available locally (no financebench/pdfs/{d}.pdf and no "
                "EDGAR HTML stand-in)"
                for d in missing
            )
            out.append(q.model_copy(update={"available": False, "unavailable_reason": reason}))
        else:
            out.append(q.model_copy(update={"available": True, "unavailable_reason": ""}))
    return out


def load_questions(
    mirror: Path | None = None, **kwargs
) -> tuple[list[Question], FinanceBenchData, dict[str, SourceDoc], list[str]]:
    """Questions with availability set, the raw data, the resolved sources and all load errors."""
    mirror = mirror if mirror is not None else mirror_dir()
    data = load_financebench(mirror, **kwargs)
    questions, map_errors = to_questions(data)
    names = {d for q in questions for d in q.doc_ids} | set(data.documents_by_name)
    sources = resolve_sources(mirror, sorted(names))
    return mark_availability(questions, sources), data, sources, data.errors + map_errors
