"""Build the corpus (documents.jsonl + pages.jsonl) from the mirror, and run the whole ingest stage.

Documents: every FinanceBench PDF (doc_id = file stem = FinanceBench doc_name) and every EDGAR HTML filing
(doc_id = the FinanceBench doc_name when MANIFEST.csv says it is exactly that document and no PDF of it is
present, else `<TICKER>_<form>_<period-end>`). A file that fails to parse costs one log line and a count in
the metrics; the rest are still processed. A file parsed with damage (pages that lost text: see
finrag.ingest.parsed.Parsed) is kept with what was left, and costs one log line and a count too (`damaged_files`,
`damaged_pages`, `parse_damaged`). Outputs are written only after all parsing, each atomically.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tqdm import tqdm

from finrag.core.contracts import Document, Page, Question
from finrag.core.io import sha256_file, write_json, write_jsonl
from finrag.ingest.align import DEFAULT_NUMBER_THRESHOLD, DEFAULT_THRESHOLD, align_questions
from finrag.ingest.financebench import (
    doc_period,
    form_name,
    html_standins,
    load_questions,
    manifest_rows,
)
from finrag.ingest.parsed import damage_reasons, page_ranges

log = logging.getLogger(__name__)

Parser = Callable[..., list[Page]]
INCLUDE_CHOICES = ("all", "financebench")


@dataclass(frozen=True)
class SourceFile:
    """One file to parse and the metadata its Document will carry."""

    doc_id: str
    rel_path: str  # relative to the mirror root
    source_format: str  # pdf | html
    company: str = ""
    form: str = ""
    period: str = ""
    sector: str = ""
    collection: str = "financebench"  # "edgar": a filing FinanceBench does not name (a distractor)


def _default_parse() -> Parser:
    from finrag.ingest.parse import parse_filing

    return parse_filing


def _norm(s: str) -> str:
    return re.sub(r"[^a-z0-9]", "", s.lower())


def _financebench_company(ticker: str, company: str, fb_docs: dict[str, dict]) -> dict | None:
    """The FinanceBench document-list record of the same company (for its name and GICS sector), if any.

    Matched by the FinanceBench company name inside the EDGAR company name ("Coca-Cola" in "COCA COLA CO"),
    or by a FinanceBench doc-name prefix equal to the ticker (AMD).
    """
    target = _norm(company)
    best = None
    for name, rec in fb_docs.items():
        fb = _norm(rec.get("company", ""))
        same = name.split("_")[0].upper() == ticker.upper() or (len(fb) >= 4 and fb in target)
        if same and (best is None or len(fb) > len(_norm(best.get("company", "")))):
            best = rec
    return best


def discover_sources(
    mirror: Path, include: str = "all", fb_docs: dict[str, dict] | None = None
) -> list[SourceFile]:
    """Every file of the corpus with its doc_id and metadata, in a stable order (PDFs, then HTML)."""
    if include not in INCLUDE_CHOICES:
        raise ValueError(f"include must be one of {INCLUDE_CHOICES}, not {include!r}")
    mirror = Path(mirror)
    fb_docs = fb_docs or {}
    out: list[SourceFile] = []
    pdf_dir = mirror / "financebench" / "pdfs"
    pdf_names = set()
    for pdf in sorted(pdf_dir.glob("*.pdf")) if pdf_dir.is_dir() else []:
        name = pdf.stem
        pdf_names.add(name)
        info = fb_docs.get(name, {})
        out.append(
            SourceFile(
                doc_id=name,
                rel_path=pdf.relative_to(mirror).as_posix(),
                source_format="pdf",
                company=info.get("company", name.split("_")[0]),
                form=form_name(info.get("doc_type", "")) if info else "",
                period=doc_period(name, info),
                sector=info.get("gics_sector", ""),
            )
        )
    exact = {path: name for name, path in html_standins(mirror).items()}
    meta = {r["local_path"]: r for r in manifest_rows(mirror) if r.get("kind") == "edgar_html"}
    edgar = mirror / "edgar"
    for html in sorted(edgar.glob("*/*.htm*")) if edgar.is_dir() else []:
        rel = html.relative_to(mirror).as_posix()
        row = meta.get(rel, {})
        ticker = row.get("ticker") or html.parent.name
        form, _, period = html.stem.partition("_")
        form, period = row.get("form") or form, row.get("period") or period
        fb_name = exact.get(rel)
        if fb_name in pdf_names:
            fb_name = None  # the PDF is that document; this HTML is another copy under its EDGAR name
        if include == "financebench" and not fb_name:
            continue
        fb = fb_docs.get(fb_name) if fb_name else None
        fb = fb or _financebench_company(ticker, row.get("company", ""), fb_docs)
        out.append(
            SourceFile(
                doc_id=fb_name or f"{ticker}_{form}_{period}",
                rel_path=rel,
                source_format="html",
                company=(fb or {}).get("company") or row.get("company", "") or ticker,
                form=form,
                period=doc_period(fb_name, fb) if fb_name else period,  # as the questions name it: 2023Q2
                sector=(fb or {}).get("gics_sector", ""),
                collection="financebench" if fb_name else "edgar",
            )
        )
    return out


@dataclass
class CorpusBuild:
    documents: list[Document]
    pages: list[Page]
    failures: list[dict]  # [{file, doc_id, reason}]
    seconds: float
    damaged: list[dict] = field(default_factory=list)  # [{file, doc_id, pages, page_ranges, reasons}]

    @property
    def pages_by_doc(self) -> dict[str, list[Page]]:
        out: dict[str, list[Page]] = {}
        for p in self.pages:
            out.setdefault(p.doc_id, []).append(p)
        return out

    def metrics(self) -> dict:
        return {
            "documents": len(self.documents),
            "documents_pdf": sum(d.source_format == "pdf" for d in self.documents),
            "documents_html": sum(d.source_format == "html" for d in self.documents),
            "pages": len(self.pages),
            "parse_failures": len(self.failures),
            "parse_failed": self.failures,
            "damaged_files": len(self.damaged),
            "damaged_pages": sum(len(d["pages"]) for d in self.damaged),
            "parse_damaged": self.damaged,
            "parse_seconds": round(self.seconds, 1),
        }


def parse_sources(
    mirror: Path, sources: list[SourceFile], parse: Parser | None = None, progress: bool = True
) -> CorpusBuild:
    """Parse every source; a failure (any exception, or no text) is logged in one line and recorded, and so is
    a file parsed with damage (its `.damage`, when the parser gives one)."""
    parse = parse or _default_parse()
    mirror = Path(mirror)
    t0 = time.perf_counter()
    documents, pages, failures, damaged = [], [], [], []
    seen: set[str] = set()
    for src in tqdm(sources, desc="parse filings", unit="doc", disable=not progress):
        path = mirror / src.rel_path
        try:
            if src.doc_id in seen:
                raise ValueError(f"duplicate doc_id {src.doc_id}")
            parsed = parse(path, doc_id=src.doc_id)
            damage = list(getattr(parsed, "damage", None) or [])
            got = list(parsed)
            if not any(p.text.strip() for p in got):
                raise ValueError("parser returned no text")
            digest = sha256_file(path)
        except Exception as exc:  # noqa: BLE001 - any parser failure is one counted line, not a crash
            reason = " ".join(str(exc).split()) or type(exc).__name__
            reason = reason.removeprefix(f"{path}: ")
            log.warning("%s: parse failed: %s", src.rel_path, reason)
            failures.append({"file": src.rel_path, "doc_id": src.doc_id, "reason": reason})
            continue
        seen.add(src.doc_id)
        if damage:
            hit = sorted({d["page"] for d in damage if d.get("page") is not None})
            rec = {
                "file": src.rel_path,
                "doc_id": src.doc_id,
                "pages": hit,
                "page_ranges": page_ranges(hit),
                "reasons": damage_reasons(damage),
            }
            log.warning(
                "%s: parsed with damage: %d of %d pages (%s)",
                src.rel_path,
                len(rec["pages"]),
                len(got),
                ", ".join(rec["reasons"]),
            )
            damaged.append(rec)
        got = [p if p.doc_id == src.doc_id else p.model_copy(update={"doc_id": src.doc_id}) for p in got]
        pages.extend(got)
        documents.append(
            Document(
                doc_id=src.doc_id,
                company=src.company,
                form=src.form,
                period=src.period,
                source_file=src.rel_path,
                sha256=digest,
                source_format=src.source_format,
                n_pages=len(got),
                sector=src.sector,
                collection=src.collection,
            )
        )
    return CorpusBuild(documents, pages, failures, time.perf_counter() - t0, damaged)


def write_corpus(build: CorpusBuild, out_dir: Path) -> None:
    """pages.jsonl then documents.jsonl, each atomically (a crash leaves the previous files whole)."""
    out_dir = Path(out_dir)
    write_jsonl(out_dir / "pages.jsonl", build.pages)
    write_jsonl(out_dir / "documents.jsonl", build.documents)


def _build(
    mirror: Path, include: str, parse: Parser | None, progress: bool, fb_docs: dict | None
) -> CorpusBuild:
    if fb_docs is None:
        from finrag.ingest.financebench import load_financebench

        try:
            fb_docs = load_financebench(Path(mirror), download=False).documents_by_name
        except Exception as exc:  # noqa: BLE001 - metadata is optional for building the corpus
            log.warning("FinanceBench document list unavailable (%s); documents get no sector", exc)
            fb_docs = {}
    return parse_sources(mirror, discover_sources(mirror, include, fb_docs), parse, progress)


def build_corpus(
    mirror: Path,
    out_dir: Path,
    include: str = "all",
    parse: Parser | None = None,
    progress: bool = True,
    fb_docs: dict[str, dict] | None = None,
) -> dict:
    """Parse the mirror's filings into out_dir/{documents,pages}.jsonl; return corpus metrics. A mirror with no
    filing at all is an error (an empty corpus would make every question 'unavailable' and look like a result)."""
    build = _build(Path(mirror), include, parse, progress, fb_docs)
    if not build.documents:
        from finrag.core.config import DataUnavailable

        raise DataUnavailable(f"no filing found in the data mirror {mirror} (expected pdfs/ and edgar/)")
    write_corpus(build, out_dir)
    return build.metrics()


def _mark_parse_failures(questions: list[Question], failures: list[dict]) -> list[Question]:
    """A question whose document failed to parse cannot be answered from the corpus: mark it unavailable."""
    failed = {f["doc_id"]: f["reason"] for f in failures}
    out = []
    for q in questions:
        bad = [d for d in q.doc_ids if d in failed]
        if q.available and bad:
            reason = "; ".join(f"source document {d} failed to parse: {failed[d]}" for d in bad)
            q = q.model_copy(update={"available": False, "unavailable_reason": reason})
        out.append(q)
    return out


def run_ingest(
    mirror: Path,
    out_dir: Path,
    questions_out: Path,
    metrics_out: Path,
    include: str = "all",
    parse: Parser | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    number_threshold: float = DEFAULT_NUMBER_THRESHOLD,
    progress: bool = True,
) -> dict:
    """The ingest stage: FinanceBench questions + corpus + evidence alignment, all outputs written atomically.

    Writes out_dir/{documents,pages}.jsonl, questions_out (all 150 questions with availability and aligned
    evidence) and metrics_out (JSON); returns the metrics.
    """
    t0 = time.perf_counter()
    mirror = Path(mirror)
    questions, data, sources, load_errors = load_questions(mirror)
    build = _build(mirror, include, parse, progress, data.documents_by_name)
    questions = _mark_parse_failures(questions, build.failures)
    formats = {d.doc_id: d.source_format for d in build.documents}
    questions, align_metrics = align_questions(
        questions, build.pages_by_doc, formats, threshold=threshold, number_threshold=number_threshold
    )
    metrics = {
        **build.metrics(),
        **align_metrics,
        "questions_unavailable": [
            {"qid": q.qid, "doc_ids": q.doc_ids, "reason": q.unavailable_reason}
            for q in questions
            if not q.available
        ],
        "html_standins_used": sorted(
            d.doc_id for d in build.documents if d.source_format == "html" and d.doc_id in sources
        ),
        "load_errors": load_errors,
        "financebench_source": data.source,
        "include": include,
        "seconds": round(time.perf_counter() - t0, 1),
    }
    write_corpus(build, out_dir)
    write_jsonl(questions_out, questions)
    write_json(metrics_out, metrics)
    return metrics
