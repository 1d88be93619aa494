"""Every input file of the study, listed with where it comes from and its sha256, fetched and verified.

`data/inputs.csv` (committed) is the data mirror's own MANIFEST.csv plus two columns: `url` (the file at its pinned
commit: `github.com/<repo>/raw/<commit>/<path>`, which also resolves Git LFS files) and `role`:
- `study`: a file the committed results were built from; bytes and sha256 are known and a download must match.
- `absent`: a file the mirror lacks, so the study did not read it: FinanceBench's 10 PDFs of 4 MiB or more that
  the questions use (hash unknown here: fetched only with `--allow-unverified`), and files MANIFEST.csv lists
  but the mirror does not hold (hash known: a fetch is verified). The ingest stage never fetches them.

`fetch_inputs` downloads what is missing into a folder laid out as the mirror (`FINRAG_MIRROR`, else `data/mirror`):
resumable (a `.part` file continued with an HTTP Range request after a kill), retried with back-off (tenacity) on
429 / 5xx / transport errors, at most 10 requests a second with a declared User-Agent for sec.gov (SEC's
fair-access rules), a progress bar over the bytes, and a file whose size or sha256 differs is refused and removed.
"""

from __future__ import annotations

import csv
import os
import re
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatch
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlparse

import httpx
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_exponential
from tqdm import tqdm

from finrag.core.config import DataUnavailable, repo_root
from finrag.core.io import sha256_file
from finrag.ingest.edgar_download import USER_AGENT_ENV, RateLimiter, retryable

INPUTS_MANIFEST = "data/inputs.csv"
DEFAULT_DEST = "data/mirror"
ROLES = ("study", "absent")
CHUNK = 1 << 16


class FetchError(RuntimeError):
    """An input file could not be fetched or did not verify. One line that says what to do."""


class ChecksumMismatch(FetchError):
    """A downloaded file's size or sha256 is not the manifest's: the file was refused and removed."""


@dataclass(frozen=True)
class InputFile:
    local_path: str  # relative to the mirror root
    url: str
    kind: str
    role: str
    bytes: int | None
    sha256: str | None

    @property
    def verified(self) -> bool:
        return bool(self.sha256)


@dataclass
class FetchReport:
    present: list[str] = field(default_factory=list)
    fetched: list[str] = field(default_factory=list)
    skipped_unverified: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)
    requests: int = 0
    bytes_downloaded: int = 0

    def summary(self) -> dict:
        return {"present": len(self.present), "fetched": len(self.fetched),
                "skipped_unverified": len(self.skipped_unverified), "failed": self.failed,
                "requests": self.requests, "bytes_downloaded": self.bytes_downloaded}  # fmt: skip


def manifest_path() -> Path:
    return repo_root() / INPUTS_MANIFEST


def source_url(repo: str, commit: str, path: str) -> str:
    """The file at its pinned commit (GitHub redirects `raw` to the LFS store when the file is an LFS object)."""
    return f"https://github.com/{repo}/raw/{commit}/{path}"


def read_manifest(path: Path | None = None) -> list[dict]:
    path = Path(path or manifest_path())
    if not path.exists():
        raise DataUnavailable(f"no input manifest at {path} (it is committed: restore it with git checkout)")
    with open(path, encoding="utf-8", newline="") as fh:
        return list(csv.DictReader(fh))


def input_files(rows: Iterable[dict]) -> list[InputFile]:
    out = []
    for r in rows:
        if r.get("role") not in ROLES:
            raise DataUnavailable(f"input manifest: {r.get('local_path')}: role must be one of {ROLES}")
        out.append(InputFile(
            local_path=r["local_path"], url=r["url"], kind=r["kind"], role=r["role"],
            bytes=int(r["bytes"]) if r.get("bytes") else None, sha256=(r.get("sha256") or None),
        ))  # fmt: skip
    return out


def build_manifest(mirror: Path, questions_file: Path | None = None) -> list[dict]:
    """The committed manifest from a mirror's MANIFEST.csv, plus the filings the FinanceBench questions name that
    the mirror lacks (role `absent`, no hash)."""
    import json

    mirror = Path(mirror)
    with open(mirror / "MANIFEST.csv", encoding="utf-8", newline="") as fh:
        rows = list(csv.DictReader(fh))
    out = []
    for r in rows:
        # a row of MANIFEST.csv whose file the mirror does not hold was not read by the study: `absent` (its hash
        # is known, so a fetch of it is still verified)
        role = "study" if (mirror / r["local_path"]).is_file() else "absent"
        out.append({**r, "url": source_url(r["source_repo"], r["commit"], r["path"]), "role": role})
    have = {r["local_path"] for r in rows}
    qfile = questions_file or mirror / "financebench" / "financebench_open_source.jsonl"
    fb = next((r for r in rows if r["kind"] == "financebench_pdf"), None)
    stand_ins = {
        m.group(1) for r in rows for m in [re.search(r"exact FinanceBench doc (\S+)", r.get("note", ""))] if m
    }
    if fb is not None and Path(qfile).exists():
        with open(qfile, encoding="utf-8") as fh:
            docs = sorted({json.loads(line)["doc_name"] for line in fh if line.strip()})
        for doc in docs:
            local = f"financebench/pdfs/{doc}.pdf"
            if local in have:
                continue
            out.append({
                "kind": "financebench_pdf", "local_path": local, "source_repo": fb["source_repo"],
                "commit": fb["commit"], "path": f"pdfs/{doc}.pdf", "company": doc.split("_")[0],
                "url": source_url(fb["source_repo"], fb["commit"], f"pdfs/{doc}.pdf"), "role": "absent",
                "licence": fb.get("licence", ""),
                "note": "a question's filing the mirror lacks (4 MiB or more); sha256 unknown here"
                + ("; the study reads its EDGAR HTML instead" if doc in stand_ins else ""),
            })  # fmt: skip
    return out


def manifest_text(rows: Sequence[dict]) -> str:
    import io

    cols: list[str] = []
    for r in rows:
        cols += [k for k in r if k not in cols]
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=cols, lineterminator="\n")
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue()


def write_manifest(rows: Sequence[dict], path: Path) -> None:
    from finrag.core.io import atomic_open

    with atomic_open(path, "w") as fh:
        fh.write(manifest_text(rows))


def intact(f: InputFile, path: Path) -> bool:
    """`path` has the manifest's size and sha256 (the size first: it is free)."""
    return (f.bytes is None or path.stat().st_size == f.bytes) and sha256_file(path) == f.sha256


def select(files: Sequence[InputFile], only: Sequence[str] = ()) -> list[InputFile]:
    """Files whose kind, role or local path (a glob) matches any of `only`; all when `only` is empty."""
    if not only:
        return list(files)
    return [f for f in files if any(o in (f.kind, f.role) or fnmatch(f.local_path, o) for o in only)]


def status(files: Sequence[InputFile], root: Path) -> dict[str, list[str]]:
    """Each file's state under `root`: ok (size and sha256 match), unverified (present, no known hash), missing,
    partial (a `.part` left by an interrupted download), corrupt (size or hash differ)."""
    out: dict[str, list[str]] = {k: [] for k in ("ok", "unverified", "missing", "partial", "corrupt")}
    for f in files:
        p = root / f.local_path
        if not p.exists():
            out["partial" if p.with_name(p.name + ".part").exists() else "missing"].append(f.local_path)
        elif not f.verified:
            out["unverified"].append(f.local_path)
        elif not intact(f, p):
            out["corrupt"].append(f.local_path)
        else:
            out["ok"].append(f.local_path)
    return out


UNREACHABLE = re.compile(
    r"name or service not known|temporary failure in name resolution|nodename nor servname|getaddrinfo|"
    r"no address associated|network is unreachable|no route to host|connection refused",
    re.IGNORECASE,
)


class NetworkUnreachable(FetchError):
    """The host cannot be reached at all (its name does not resolve, no route, refused, connect timed out):
    retrying or trying the next file of the same host cannot help, so the fetch stops at once."""


def unreachable(exc: BaseException) -> bool:
    """A connection that failed before any byte was exchanged, for a reason a retry will not change."""
    if isinstance(exc, httpx.ConnectTimeout):
        return True
    if not isinstance(exc, httpx.ConnectError):
        return False
    chain: list[BaseException] = [exc]
    while chain[-1].__cause__ is not None or chain[-1].__context__ is not None:
        chain.append(chain[-1].__cause__ or chain[-1].__context__)  # type: ignore[arg-type]
        if len(chain) > 8:
            break
    return any(isinstance(e, socket.gaierror) or UNREACHABLE.search(str(e)) for e in chain)


def _worth_retrying(exc: BaseException) -> bool:
    return retryable(exc) and not unreachable(exc)


class Fetcher:
    """Downloads manifest files into `dest`. Pass `transport` (httpx.MockTransport) in tests. A host that cannot
    be reached is not retried, and the files after it from the same host are not tried (one line, at once)."""

    def __init__(
        self,
        dest: Path,
        *,
        transport: httpx.BaseTransport | None = None,
        user_agent: str | None = None,
        limiter: RateLimiter | None = None,
        attempts: int = 5,
        retry_sleep: Callable[[float], None] | None = None,
        timeout: float = 120.0,
        progress: bool = True,
    ):
        self.dest = Path(dest)
        self.user_agent = (
            user_agent if user_agent is not None else os.environ.get(USER_AGENT_ENV, "")
        ).strip()
        self.limiter = limiter or RateLimiter()
        self.attempts, self.retry_sleep, self.progress = attempts, retry_sleep, progress
        headers = {"User-Agent": self.user_agent or "finrag (research pipeline; data fetch)"}
        self.client = httpx.Client(
            headers=headers,
            timeout=httpx.Timeout(timeout, connect=min(timeout, 10.0)),
            follow_redirects=True,
            transport=transport,
        )
        self.report = FetchReport()
        self.unreachable_hosts: dict[str, str] = {}

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> Fetcher:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check_host(self, url: str) -> None:
        host = urlparse(url).hostname or ""
        if (host == "sec.gov" or host.endswith(".sec.gov")) and not self.user_agent:
            raise FetchError(
                f"{url}: SEC EDGAR requires a declared User-Agent: set {USER_AGENT_ENV} to "
                "'Your Name or Organisation your.email@example.com' (https://www.sec.gov/os/accessing-edgar-data)"
            )

    def _download_once(self, f: InputFile, part: Path, bar: tqdm) -> None:
        """One request: continue `part` from its size (Range) or start over when the server sends it whole."""
        have = part.stat().st_size if part.exists() else 0
        headers = {"Range": f"bytes={have}-"} if have else {}
        self.limiter.acquire()
        self.report.requests += 1
        with self.client.stream("GET", f.url, headers=headers) as resp:
            if resp.status_code == 416 and f.bytes is not None and have == f.bytes:
                return  # the part is already whole
            resp.raise_for_status()
            mode = "ab" if (have and resp.status_code == 206) else "wb"
            if mode == "wb" and have:
                bar.update(-have)
            with open(part, mode) as fh:
                for block in resp.iter_bytes(CHUNK):
                    fh.write(block)
                    bar.update(len(block))
                    self.report.bytes_downloaded += len(block)

    def fetch_one(self, f: InputFile, bar: tqdm) -> None:
        target = self.dest / f.local_path
        part = target.with_name(target.name + ".part")
        target.parent.mkdir(parents=True, exist_ok=True)
        self._check_host(f.url)
        host = urlparse(f.url).hostname or ""
        if host in self.unreachable_hosts:
            raise NetworkUnreachable(f"not tried: {self.unreachable_hosts[host]}")
        kwargs: dict[str, Any] = {"sleep": self.retry_sleep} if self.retry_sleep is not None else {}
        try:
            for attempt in Retrying(
                stop=stop_after_attempt(self.attempts), wait=wait_exponential(multiplier=0.5, max=30),
                retry=retry_if_exception(_worth_retrying), reraise=True, **kwargs,
            ):  # fmt: skip
                with attempt:
                    self._download_once(f, part, bar)
        except httpx.HTTPStatusError as exc:
            raise FetchError(f"{f.url}: HTTP {exc.response.status_code}") from exc
        except httpx.TransportError as exc:
            if unreachable(exc):
                why = f"{host} unreachable ({type(exc).__name__}: {exc})".splitlines()[0]
                self.unreachable_hosts[host] = why
                raise NetworkUnreachable(f"{f.url}: {why}") from exc
            raise FetchError(f"{f.url}: {type(exc).__name__}: {exc}".splitlines()[0]) from exc
        if f.verified and not intact(f, part):
            size, digest = part.stat().st_size, sha256_file(part)
            part.unlink()
            raise ChecksumMismatch(
                f"{f.local_path}: refused: got {size:,} bytes sha256 {digest[:12]}, the manifest says "
                f"{f.bytes or '?'} bytes sha256 {cast(str, f.sha256)[:12]} (removed; run again, or report a changed source)"
            )
        os.replace(part, target)

    def fetch(self, files: Sequence[InputFile], allow_unverified: bool = False) -> FetchReport:
        """Fetch every file of `files` that `dest` lacks; a file already there with the right hash is kept, one
        with another hash is reported (never overwritten: it may be someone's own copy)."""
        st = status(files, self.dest)
        by_path = {f.local_path: f for f in files}
        self.report.present += st["ok"] + st["unverified"]
        for path in st["corrupt"]:
            self.report.failed[path] = (
                "present with another size or sha256 (not overwritten: remove it to fetch)"
            )
        todo = [by_path[p] for p in st["missing"] + st["partial"]]
        for f in [f for f in todo if not f.verified and not allow_unverified]:
            self.report.skipped_unverified.append(f.local_path)
        todo = [f for f in todo if f.verified or allow_unverified]
        total = sum(f.bytes or 0 for f in todo)
        with tqdm(
            total=total, unit="B", unit_scale=True, desc="finrag data fetch", disable=not self.progress
        ) as bar:
            for f in todo:
                try:
                    self.fetch_one(f, bar)
                    self.report.fetched.append(f.local_path)
                except FetchError as exc:
                    self.report.failed[f.local_path] = str(exc)
        return self.report


def fetch_destination() -> Path:
    """Where fetched files go: `FINRAG_MIRROR` when set, else `data/mirror` in the repository."""
    env = os.environ.get("FINRAG_MIRROR")
    return Path(env) if env else repo_root() / DEFAULT_DEST


def write_mirror_manifest(rows: Sequence[dict], dest: Path) -> None:
    """A fetched mirror gets the manifest as its MANIFEST.csv (the ingest stage reads filing metadata there)."""
    if not (dest / "MANIFEST.csv").exists():
        write_manifest([r for r in rows if r.get("role") == "study"], dest / "MANIFEST.csv")


def ensure_study_inputs(mirror: Path | None, *, fetch: bool = True, transport: httpx.BaseTransport | None = None,
                        progress: bool = True) -> Path:  # fmt: skip
    """The mirror the study reads, with every `study` file in it. Missing files are fetched when `fetch` (and the
    network is there); otherwise, or when a fetch fails, one line says what is missing and how to get it."""
    rows = read_manifest()
    files = [f for f in input_files(rows) if f.role == "study"]
    root = Path(mirror) if mirror is not None else fetch_destination()
    st = status(files, root) if root.is_dir() else {"missing": [f.local_path for f in files], "partial": []}
    missing = st["missing"] + st["partial"]
    if not missing:
        return root
    if not fetch:
        raise DataUnavailable(_missing_line(missing, root, "ingest.fetch is false"))
    with Fetcher(root, transport=transport, progress=progress) as fetcher:
        wanted = set(missing)
        report = fetcher.fetch([f for f in files if f.local_path in wanted])
    if report.failed:
        first = next(iter(report.failed.values()))
        raise DataUnavailable(_missing_line(sorted(report.failed), root, f"fetch failed: {first}"))
    write_mirror_manifest(rows, root)
    return root


def _missing_line(missing: Sequence[str], root: Path, why: str) -> str:
    kinds: dict[str, int] = {}
    for m in missing:
        kinds[m.split("/")[0]] = kinds.get(m.split("/")[0], 0) + 1
    what = ", ".join(f"{n} in {k}/" for k, n in sorted(kinds.items()))
    return (f"{len(missing)} input file(s) missing from {root} ({what}; first: {missing[0]}); {why}. "
            "Set FINRAG_MIRROR to a copy of the data mirror, or run `finrag data fetch` where there is network")  # fmt: skip
