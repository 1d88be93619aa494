"""Parse the whole mirrored corpus (FinanceBench PDFs + EDGAR HTML) and print throughput per format, and how
many pages the parsers flag as damaged (`Parsed.damaged_pages`; a healthy corpus: 0).

    FINRAG_MIRROR=/path/to/mirror .venv/bin/python benchmarks/bench_parse.py [--limit N] [--format pdf|html]

A plain script, not a test: it takes minutes on a small machine. Figures are wall-clock on whatever else the
machine is doing, so report them with the machine's load.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

from tqdm import tqdm

from finrag.core.config import mirror_dir
from finrag.ingest.parse import parse_filing
from finrag.ingest.parsed import IngestError


def bench(files: list[Path], label: str) -> dict:
    pages = chars = flagged = damaged = 0
    per_file: list[float] = []
    errors: list[str] = []
    t0 = time.perf_counter()
    for f in tqdm(files, desc=label, unit="file"):
        t = time.perf_counter()
        try:
            parsed = parse_filing(f)
        except IngestError as e:
            errors.append(str(e))
            continue
        per_file.append(time.perf_counter() - t)
        pages += len(parsed)
        chars += sum(len(p.text) for p in parsed)
        flagged += len(getattr(parsed, "damaged_pages", []))
        damaged += bool(getattr(parsed, "damage", None))
    wall = time.perf_counter() - t0
    return {
        "format": label,
        "files": len(files),
        "pages": pages,
        "flagged_pages": flagged,
        "damaged_files": damaged,
        "seconds": wall,
        "pages_per_s": pages / wall if wall else 0.0,
        "mb_text": chars / 1e6,
        "median_s_per_file": statistics.median(per_file) if per_file else 0.0,
        "max_s_per_file": max(per_file) if per_file else 0.0,
        "errors": errors,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=0, help="only the first N files of each format (0: all)")
    ap.add_argument("--format", choices=["pdf", "html"], help="only this format (default: both)")
    args = ap.parse_args()
    root = mirror_dir(required=True)
    if hasattr(os, "getloadavg"):
        print(f"load average (1 min) at the start {os.getloadavg()[0]:.1f}")
    pdfs = sorted((root / "financebench" / "pdfs").glob("*.pdf"))
    htmls = sorted((root / "edgar").glob("*/*.htm"))
    if args.limit:
        pdfs, htmls = pdfs[: args.limit], htmls[: args.limit]
    rows = [
        bench(files, label)
        for label, files in (("pdf", pdfs), ("html", htmls))
        if args.format in (None, label)
    ]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"cpu count {os.cpu_count()}, load average (1 min) at the end {load:.1f}")
    print(
        "| format | files | pages | flagged pages | files with damage | seconds | pages/s | median s/file | max s/file "
        "| text MB | errors |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['format']} | {r['files']} | {r['pages']} | {r['flagged_pages']} | {r['damaged_files']} | "
            f"{r['seconds']:.1f} | "
            f"{r['pages_per_s']:.1f} | {r['median_s_per_file']:.2f} | {r['max_s_per_file']:.2f} | "
            f"{r['mb_text']:.1f} | {len(r['errors'])} |"
        )
        for e in r["errors"]:
            print(f"  error: {e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
