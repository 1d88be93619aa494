"""Fetch a filing's primary document from SEC EDGAR, politely, for users who have network.

SEC's fair-access rules ask for a declared User-Agent and at most 10 requests per second; this client refuses
to run without the first (env FINRAG_SEC_USER_AGENT) and enforces the second with a limiter. Transient
failures (429, 5xx, transport errors) are retried with exponential back-off, and every response is cached on
disk, so a second fetch of the same URL makes no request.

Lookup: submissions JSON (https://data.sec.gov/submissions/CIK##########.json, filings.recent plus the
older pages listed in filings.files) -> accessionNumber/form/reportDate/primaryDocument ->
https://www.sec.gov/Archives/edgar/data/<cik>/<accession without dashes>/<primaryDocument>.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from finrag.core.config import repo_root
from finrag.core.io import atomic_open, sha256_text

USER_AGENT_ENV = "FINRAG_SEC_USER_AGENT"
SUBMISSIONS_URL = "https://data.sec.gov/submissions/{name}"
ARCHIVE_URL = "https://www.sec.gov/Archives/edgar/data/{cik}/{acc}/{doc}"
MAX_REQUESTS_PER_SECOND = 10.0

_ACCESSION = re.compile(r"(\d{10})-?(\d{2})-?(\d{6})")
_CIK_IN_LINK = re.compile(r"(?:CIK-|[?&]cik=)(\d{1,10})", re.IGNORECASE)
_QUARTER = re.compile(r"_(\d{4})Q([1-4])_")
_DATED = re.compile(r"dated[-_](\d{4}-\d{2}-\d{2})")


class EdgarError(RuntimeError):
    """A filing could not be found or fetched. Message is one line and says what to do."""


@dataclass(frozen=True)
class Filing:
    cik: str  # 10 digits
    accession: str  # with dashes, 0000066740-23-000058
    form: str
    report_date: str
    filing_date: str
    primary_document: str

    @property
    def url(self) -> str:
        return ARCHIVE_URL.format(
            cik=int(self.cik), acc=self.accession.replace("-", ""), doc=self.primary_document
        )


class RateLimiter:
    """At most `rate` requests in any one-second window: consecutive requests are >= 1/rate s apart.

    Clock and sleep are injectable so tests can measure without waiting.
    """

    def __init__(
        self,
        rate: float = MAX_REQUESTS_PER_SECOND,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
    ):
        if rate <= 0:
            raise ValueError("rate must be positive")
        self.interval = 1.0 / rate
        self.clock, self.sleep = clock, sleep
        self._next = float("-inf")
        self._lock = threading.Lock()

    def acquire(self) -> float:
        """Block until a request may go; return the time it went."""
        with self._lock:
            now = self.clock()
            if now < self._next:
                self.sleep(self._next - now)
                now = self.clock()
                now = max(now, self._next)
            self._next = now + self.interval
            return now


def retryable(exc: BaseException) -> bool:
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code == 429 or exc.response.status_code >= 500
    return isinstance(exc, httpx.TransportError)


def normalise_cik(cik: str | int) -> str:
    digits = re.sub(r"\D", "", str(cik))
    if not digits or len(digits) > 10:
        raise EdgarError(f"not a CIK: {cik!r} (expected up to 10 digits)")
    return digits.zfill(10)


class EdgarClient:
    """Cached, rate-limited, retrying EDGAR client. Pass `transport` (httpx.MockTransport) in tests."""

    def __init__(
        self,
        user_agent: str | None = None,
        cache_dir: Path | None = None,
        *,
        transport: httpx.BaseTransport | None = None,
        limiter: RateLimiter | None = None,
        attempts: int = 5,
        retry_sleep: Callable[[float], None] | None = None,
        timeout: float = 60.0,
    ):
        ua = (user_agent if user_agent is not None else os.environ.get(USER_AGENT_ENV, "")).strip()
        if not ua:
            raise EdgarError(
                f"SEC EDGAR requires a declared User-Agent: set {USER_AGENT_ENV} to "
                "'Your Name or Organisation your.email@example.com' (https://www.sec.gov/os/accessing-edgar-data)"
            )
        self.user_agent = ua
        self.cache_dir = Path(cache_dir or repo_root() / ".cache" / "edgar")
        self.limiter = limiter or RateLimiter()
        self.attempts = attempts
        self.retry_sleep = retry_sleep
        self.requests_made = 0
        self._client = httpx.Client(
            headers={"User-Agent": ua, "Accept-Encoding": "gzip, deflate"},
            timeout=timeout,
            follow_redirects=True,
            transport=transport,
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> EdgarClient:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ HTTP

    def cache_path(self, url: str) -> Path:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", url.rsplit("/", 1)[-1])[-80:]
        return self.cache_dir / f"{sha256_text(url)[:16]}_{name}"

    def get_bytes(self, url: str) -> bytes:
        """Body of `url`: from the disk cache, else fetched (rate-limited, retried) and cached."""
        path = self.cache_path(url)
        if path.exists():
            return path.read_bytes()
        kwargs: dict[str, Any] = {"sleep": self.retry_sleep} if self.retry_sleep is not None else {}
        tries = 0
        try:
            for attempt in Retrying(
                stop=stop_after_attempt(self.attempts),
                wait=wait_exponential(multiplier=0.5, max=30),
                retry=retry_if_exception(retryable),
                reraise=True,
                **kwargs,
            ):
                with attempt:
                    self.limiter.acquire()
                    self.requests_made += 1
                    tries += 1
                    resp = self._client.get(url)
                    resp.raise_for_status()
        except httpx.HTTPStatusError as exc:
            code = exc.response.status_code
            raise EdgarError(f"{url}: HTTP {code} after {tries} attempt(s)") from exc
        except httpx.TransportError as exc:
            raise EdgarError(f"{url}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
        with atomic_open(path, "wb") as fh:
            fh.write(resp.content)
        return resp.content

    def get_json(self, url: str) -> dict:
        try:
            return json.loads(self.get_bytes(url))
        except ValueError as exc:
            self.cache_path(url).unlink(missing_ok=True)
            raise EdgarError(f"{url}: response is not JSON: {exc}".splitlines()[0]) from exc

    # ------------------------------------------------------------------ lookup

    def filings(self, cik: str | int, include_older: bool = True) -> list[Filing]:
        """All filings listed for a company: filings.recent, plus older pages when asked."""
        cik10 = normalise_cik(cik)
        sub = self.get_json(SUBMISSIONS_URL.format(name=f"CIK{cik10}.json"))
        tables = [sub.get("filings", {}).get("recent", {})]
        if include_older:
            for extra in sub.get("filings", {}).get("files", []) or []:
                tables.append(self.get_json(SUBMISSIONS_URL.format(name=extra["name"])))
        out = []
        for t in tables:
            accs = t.get("accessionNumber", [])
            for i, acc in enumerate(accs):
                out.append(
                    Filing(
                        cik=cik10,
                        accession=acc,
                        form=_col(t, "form", i),
                        report_date=_col(t, "reportDate", i),
                        filing_date=_col(t, "filingDate", i),
                        primary_document=_col(t, "primaryDocument", i),
                    )
                )
        return out

    def find_filing(
        self,
        cik: str | int,
        form: str,
        period: str | None = None,
        *,
        accession: str | None = None,
        filed: str | None = None,
        quarter: tuple[int, int] | None = None,
    ) -> Filing:
        """One filing by accession, or by form plus period.

        period: a report date "YYYY-MM-DD" (exact) or "YYYY-MM" / "YYYY" (prefix; the latest match wins);
        filed: a filing date "YYYY-MM-DD" (8-Ks have no report period);
        quarter: (year, q) -> the 10-Q whose report date is within 45 days of that calendar quarter's end.
        """
        all_filings = self.filings(cik, include_older=True)
        if accession:
            acc = _format_accession(accession)
            hits = [f for f in all_filings if f.accession == acc]
            if not hits:
                raise EdgarError(
                    f"CIK {normalise_cik(cik)}: no filing with accession {acc} in EDGAR submissions"
                )
            return hits[0]
        wanted = form.upper()
        same_form = [f for f in all_filings if f.form.upper() == wanted]
        if filed:
            hits = [f for f in same_form if f.filing_date == filed]
        elif quarter:
            y, q = quarter
            end = _quarter_end(y, q)
            hits = [f for f in same_form if f.report_date and abs((_d(f.report_date) - end).days) <= 45]
        elif period:
            hits = [f for f in same_form if f.report_date.startswith(period)]
        else:
            hits = same_form
        if not hits:
            what = f"filed {filed}" if filed else f"quarter {quarter}" if quarter else f"period {period!r}"
            have = sorted({f.report_date for f in same_form if f.report_date})[-6:]
            raise EdgarError(
                f"CIK {normalise_cik(cik)}: no {wanted} for {what} in EDGAR submissions "
                f"(latest {wanted} report dates: {', '.join(have) or 'none'})"
            )
        return max(hits, key=lambda f: (f.report_date, f.filing_date))

    def fetch(self, filing: Filing, out_dir: Path | None = None) -> Path:
        """Download the primary document (cached); copy it to out_dir when given. Returns its path."""
        if not filing.primary_document:
            raise EdgarError(f"{filing.accession}: EDGAR lists no primary document")
        body = self.get_bytes(filing.url)
        if out_dir is None:
            return self.cache_path(filing.url)
        dest = (
            Path(out_dir)
            / f"{filing.form}_{filing.report_date or filing.filing_date}_{filing.primary_document}"
        )
        if not dest.exists():
            with atomic_open(dest, "wb") as fh:
                fh.write(body)
        return dest

    def find_financebench_filing(self, doc: dict, cik: str | int | None = None) -> Filing:
        """The EDGAR filing behind a FinanceBench document-list record (doc_name, doc_type, doc_link).

        The accession number in the link is used when present; the CIK comes from `cik`, the link
        (CIK-########## or cik=), or, last, the accession's filer prefix. Earnings releases are not EDGAR
        primary documents and are refused.
        """
        name = doc.get("doc_name", "")
        link = doc.get("doc_link", "") or ""
        doc_type = str(doc.get("doc_type", "")).lower()
        form = {"10k": "10-K", "10q": "10-Q", "8k": "8-K", "10k_annualreport": "10-K"}.get(doc_type)
        if form is None:
            raise EdgarError(
                f"{name}: document type {doc_type!r} is not an EDGAR form (only 10-K, 10-Q, 8-K)"
            )
        acc_m = _ACCESSION.search(link)
        cik_m = _CIK_IN_LINK.search(link)
        cik = cik if cik is not None else (cik_m.group(1) if cik_m else (acc_m.group(1) if acc_m else None))
        if cik is None:
            raise EdgarError(f"{name}: no CIK in the document link; pass cik= for this company")
        if acc_m:
            return self.find_filing(cik, form, accession="-".join(acc_m.groups()))
        dated = _DATED.search(name) or re.search(r"dateFiled=(\d{4}-\d{2}-\d{2})", link)
        if form == "8-K" and dated:
            return self.find_filing(cik, form, filed=dated.group(1))
        qm = _QUARTER.search(name + "_")
        if form == "10-Q" and qm:
            return self.find_filing(cik, form, quarter=(int(qm.group(1)), int(qm.group(2))))
        period = str(doc.get("doc_period", "") or "")
        return self.find_filing(cik, form, period or None)


def _col(table: dict, key: str, i: int) -> str:
    col = table.get(key) or []
    return str(col[i]) if i < len(col) and col[i] is not None else ""


def _format_accession(acc: str) -> str:
    m = _ACCESSION.fullmatch(acc.strip())
    if not m:
        raise EdgarError(f"not an accession number: {acc!r} (expected ##########-##-######)")
    return "-".join(m.groups())


def _d(s: str) -> date:
    return date.fromisoformat(s)


def _quarter_end(year: int, q: int) -> date:
    month = 3 * q
    day = 31 if month in (3, 12) else 30
    return date(year, month, day)
