"""EDGAR client against recorded responses only (httpx.MockTransport): UA, rate limit, retries, cache, lookup."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from finrag.ingest.edgar_download import (
    USER_AGENT_ENV,
    EdgarClient,
    EdgarError,
    Filing,
    RateLimiter,
)

RECORDED = Path(__file__).parent / "fixtures" / "recorded" / "edgar"
UA = "finrag tests test@example.com"
SUBMISSIONS = "https://data.sec.gov/submissions/CIK0000066740.json"
OLDER = "https://data.sec.gov/submissions/CIK0000066740-submissions-001.json"
PRIMARY = "https://www.sec.gov/Archives/edgar/data/66740/000006674023000058/mmm-20230630.htm"


class FakeClock:
    """Time that only moves when the limiter sleeps: measures the schedule without waiting."""

    def __init__(self):
        self.now = 1000.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.slept.append(s)
        self.now += s


class Sec:
    """Serves the recorded bodies; records (url, user-agent, time) per request; can fail first."""

    def __init__(self, clock: FakeClock | None = None, fail_first: list[int] | None = None):
        self.clock = clock
        self.fail_first = list(fail_first or [])
        self.requests: list[tuple[str, str, float | None]] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        self.requests.append(
            (url, request.headers.get("user-agent", ""), self.clock() if self.clock else None)
        )
        if self.fail_first:
            return httpx.Response(self.fail_first.pop(0), text="Request Rate Threshold Exceeded")
        if url == SUBMISSIONS:
            return httpx.Response(200, content=(RECORDED / "submissions_CIK0000066740.json").read_bytes())
        if url == OLDER:
            return httpx.Response(200, content=(RECORDED / "CIK0000066740-submissions-001.json").read_bytes())
        if url == PRIMARY:
            return httpx.Response(200, content=(RECORDED / "mmm-20230630.htm").read_bytes())
        if url.startswith("https://www.sec.gov/Archives/edgar/data/66740/rate/"):
            return httpx.Response(200, text="ok")
        return httpx.Response(404, text="Not Found")


def _client(tmp_path: Path, sec: Sec, clock: FakeClock | None = None, **kw) -> EdgarClient:
    clock = clock or FakeClock()
    return EdgarClient(
        UA,
        tmp_path / "cache",
        transport=httpx.MockTransport(sec),
        limiter=RateLimiter(10, clock=clock, sleep=clock.sleep),
        retry_sleep=lambda s: None,
        **kw,
    )


def test_missing_user_agent_refused(monkeypatch, tmp_path):
    monkeypatch.delenv(USER_AGENT_ENV, raising=False)
    with pytest.raises(EdgarError, match=USER_AGENT_ENV):
        EdgarClient(cache_dir=tmp_path)
    monkeypatch.setenv(USER_AGENT_ENV, "   ")
    with pytest.raises(EdgarError, match="User-Agent"):
        EdgarClient(cache_dir=tmp_path)


def test_user_agent_from_env_is_sent(monkeypatch, tmp_path):
    monkeypatch.setenv(USER_AGENT_ENV, UA)
    sec = Sec()
    client = EdgarClient(cache_dir=tmp_path, transport=httpx.MockTransport(sec), retry_sleep=lambda s: None)
    client.get_json(SUBMISSIONS)
    assert sec.requests[0][1] == UA


def test_rate_limit_at_most_10_per_second(tmp_path):
    clock = FakeClock()
    sec = Sec(clock)
    client = _client(tmp_path, sec, clock)
    for i in range(12):
        client.get_bytes(f"https://www.sec.gov/Archives/edgar/data/66740/rate/{i}.txt")
    times = [t for _, _, t in sec.requests]
    assert len(times) == 12
    gaps = [b - a for a, b in zip(times, times[1:], strict=False)]
    assert min(gaps) >= 0.1 - 1e-9
    # any 11 consecutive requests span at least one second: never more than 10 in a one-second window
    assert all(times[i + 10] - times[i] >= 1.0 - 1e-9 for i in range(len(times) - 10))
    assert times[-1] - times[0] == pytest.approx(1.1)


def test_rate_limiter_real_clock_spacing():
    limiter = RateLimiter(50)  # real time, kept short: 12 acquisitions at >= 20 ms apart
    times = [limiter.acquire() for _ in range(12)]
    assert all(b - a >= 0.02 - 1e-3 for a, b in zip(times, times[1:], strict=False))


def test_retry_on_429_then_success(tmp_path):
    sec = Sec(fail_first=[429, 503])
    client = _client(tmp_path, sec)
    data = client.get_json(SUBMISSIONS)
    assert data["name"] == "3M CO"
    assert [u for u, _, _ in sec.requests] == [SUBMISSIONS] * 3
    assert client.requests_made == 3


def test_retries_exhausted_is_clear_error(tmp_path):
    sec = Sec(fail_first=[429] * 10)
    client = _client(tmp_path, sec, attempts=3)
    with pytest.raises(EdgarError, match=r"HTTP 429 after 3 attempt"):
        client.get_json(SUBMISSIONS)
    assert not client.cache_path(SUBMISSIONS).exists()


def test_404_not_retried(tmp_path):
    sec = Sec()
    client = _client(tmp_path, sec)
    with pytest.raises(EdgarError, match="HTTP 404"):
        client.get_bytes("https://www.sec.gov/Archives/edgar/data/1/2/missing.htm")
    assert len(sec.requests) == 1


def test_cache_hit_makes_no_request(tmp_path):
    sec = Sec()
    client = _client(tmp_path, sec)
    filing = client.find_filing(66740, "10-Q", "2023-06-30")
    path = client.fetch(filing)
    n = len(sec.requests)
    assert b"FORM 10-Q" in path.read_bytes()
    # same client, and a fresh client on the same cache: nothing goes out
    client.fetch(client.find_filing(66740, "10-Q", "2023-06-30"))
    sec2 = Sec()
    client2 = _client(tmp_path, sec2)
    client2.fetch(client2.find_filing("0000066740", "10-Q", "2023-06-30"))
    assert len(sec.requests) == n and sec2.requests == []


def test_find_by_form_and_period_builds_archive_url(tmp_path):
    client = _client(tmp_path, Sec())
    f = client.find_filing(66740, "10-Q", "2023-06-30")
    assert f == Filing(
        "0000066740", "0000066740-23-000058", "10-Q", "2023-06-30", "2023-07-26", "mmm-20230630.htm"
    )
    assert f.url == PRIMARY
    assert client.find_filing(66740, "10-K", "2022").accession == "0000066740-23-000014"
    assert client.find_filing(66740, "10-Q", "2023").report_date == "2023-06-30"  # latest of the year
    assert client.find_filing(66740, "8-K", filed="2023-01-24").primary_document == "mmm-20230124.htm"


def test_older_submissions_pages_are_searched(tmp_path):
    sec = Sec()
    client = _client(tmp_path, sec)
    f = client.find_filing(66740, "10-K", "2015-12-31")
    assert f.accession == "0001558370-16-003162" and f.primary_document == "mmm-20151231x10k.htm"
    assert OLDER in [u for u, _, _ in sec.requests]


def test_not_found_form_period_is_clear_error(tmp_path):
    client = _client(tmp_path, Sec())
    with pytest.raises(
        EdgarError, match=r"no 10-K for period '2019'.*latest 10-K report dates: 2015-12-31, 2022-12-31"
    ):
        client.find_filing(66740, "10-K", "2019")
    with pytest.raises(EdgarError, match="no filing with accession 0000066740-99-000001"):
        client.find_filing(66740, "10-Q", accession="0000066740-99-000001")


def test_financebench_doc_link_to_filing(tmp_path):
    client = _client(tmp_path, Sec())
    doc = {
        "doc_name": "3M_2023Q2_10Q",
        "doc_type": "10q",
        "doc_period": 2023,
        "doc_link": "https://investors.3m.com/financials/sec-filings/content/0000066740-23-000058/0000066740-23-000058.pdf",
    }
    f = client.find_financebench_filing(doc)  # CIK taken from the accession's filer prefix
    assert f.url == PRIMARY
    # a link without accession: CIK from the link, 10-Q by quarter end
    doc2 = {**doc, "doc_link": "https://d18rn0p25nwr6d.cloudfront.net/CIK-0000066740/abc.pdf"}
    assert client.find_financebench_filing(doc2).accession == "0000066740-23-000058"
    # filing-agent accession (0001558370-...) with the company CIK passed explicitly
    old = {
        "doc_name": "3M_2015_10K",
        "doc_type": "10k",
        "doc_period": 2015,
        "doc_link": "https://investors.3m.com/financials/sec-filings/content/0001558370-16-003162/x.pdf",
    }
    assert client.find_financebench_filing(old, cik=66740).primary_document == "mmm-20151231x10k.htm"


def test_financebench_earnings_release_refused(tmp_path):
    client = _client(tmp_path, Sec())
    with pytest.raises(EdgarError, match="not an EDGAR form"):
        client.find_financebench_filing({"doc_name": "PEPSICO_2023Q1_EARNINGS", "doc_type": "Earnings"})
    with pytest.raises(EdgarError, match="no CIK"):
        client.find_financebench_filing(
            {"doc_name": "X_2020_10K", "doc_type": "10k", "doc_link": "https://x/y.pdf"}
        )
