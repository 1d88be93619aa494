"""Measure PDF text extractors on the real FinanceBench PDFs: speed, and whether the gold evidence is on its page.

    FINRAG_MIRROR=/path/to/mirror .venv/bin/python benchmarks/compare_pdf_libraries.py [--every N] [--libs a,b] [--json OUT]

Candidates: pypdfium2 (Apache-2.0/BSD-3; through finrag's own page builder), PyMuPDF (AGPL-3.0) and pdfplumber
(MIT). A benchmark only: PyMuPDF and pdfplumber are dev dependencies and the product never imports them.

Quality is measured on every FinanceBench evidence item whose PDF is in the mirror, on the page the item names
(`evidence_page_num`, 0-based):
- token recall: share of the evidence text's word tokens (multiset) found in the page text;
- items found: share of evidence items with token recall >= 0.9 (the passage is recognisably on that page);
- number recall: share of the evidence's numbers (multiset) found as whole numbers in the page text;
- rows intact: table rows rebuilt from the evidence (a label line followed by >= 2 number lines, as
  FinanceBench's own extraction lays them out) whose numbers appear consecutively and in order in the page
  text (only whitespace, `$`, `%`, brackets or a nil dash `—` between them);
- rows on one line: the same, but all of the row's numbers on a single line of the page text (what a reader or a
  model sees as one table row).
Speed: pages/s to open each PDF and extract its evidence pages (plus, with --every N, every Nth page); the same
pages for every library, fastest of --repeat rounds (the machine may be shared). pdfplumber needs ~0.5-2 s a page, so the default sample is the evidence pages only.
Caveat: FinanceBench's evidence texts were produced by PyMuPDF-like extraction (same line breaks and glyph
artefacts), which favours PyMuPDF on token recall.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from tqdm import tqdm

from finrag.core.config import mirror_dir

WORD = re.compile(r"[a-z0-9]+")
NUM = re.compile(r"\d[\d,]*(?:\.\d+)?")
SEP = r"[\s$%€£()—–-]*"  # whitespace, currency, brackets, nil dashes


def numbers(text: str) -> list[str]:
    return [n.rstrip(",.") for n in NUM.findall(text)]


def multiset_recall(needles: list[str], hay: list[str]) -> float | None:
    if not needles:
        return None
    need, have = Counter(needles), Counter(hay)
    return sum(min(c, have[k]) for k, c in need.items()) / sum(need.values())


def evidence_rows(evidence: str) -> list[list[str]]:
    """Table rows from FinanceBench's evidence layout: a text line, then one line per cell (numbers, $, blanks)."""
    rows: list[list[str]] = []
    cur: list[str] | None = None
    for line in evidence.split("\n"):
        s = line.strip()
        if not s or re.fullmatch(r"[$%€£()\s]*", s):
            continue
        if re.fullmatch(r"[$€£]?\s*\(?\d[\d,]*(?:\.\d+)?\)?\s*%?", s):
            if cur is not None:
                cur.extend(numbers(s))
            continue
        if cur is not None and len(cur) >= 2:
            rows.append(cur)
        cur = [] if re.search(r"[A-Za-z]{3}", s) else None
    if cur is not None and len(cur) >= 2:
        rows.append(cur)
    return rows


def row_found(row: list[str], text: str) -> bool:
    """The row's numbers, in order, with nothing but whitespace, `$`, `%` or brackets between them."""
    pat = r"(?<![\d,.])" + SEP.join(re.escape(n) for n in row) + r"(?![\d])"
    return re.search(pat, text) is not None


# ------------------------------------------------------------------------------------------- extractors


def open_pdfium(path: Path):
    import pypdfium2 as pdfium

    from finrag.ingest.pdf import _page_text

    pdf = pdfium.PdfDocument(str(path))

    def get(i: int) -> str:
        page = pdf[i]
        tp = page.get_textpage()
        t = _page_text(tp)
        tp.close()
        page.close()
        return t

    return get, pdf.close


def open_pymupdf(path: Path):
    import pymupdf

    doc = pymupdf.open(str(path))
    return (lambda i: doc[i].get_text()), doc.close


def open_pdfplumber(path: Path):
    import pdfplumber

    pdf = pdfplumber.open(str(path))

    def get(i: int) -> str:
        page = pdf.pages[i]
        t = page.extract_text() or ""
        page.close()
        return t

    return get, pdf.close


LIBS = {"pypdfium2": open_pdfium, "pymupdf": open_pymupdf, "pdfplumber": open_pdfplumber}


def main() -> int:  # noqa: C901 (one benchmark's linear report)
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--every",
        type=int,
        default=0,
        help="add every Nth page of each PDF to the speed sample (0: evidence pages only)",
    )
    ap.add_argument("--repeat", type=int, default=2, help="timing rounds; the fastest counts")
    ap.add_argument("--libs", default=",".join(LIBS), help="comma-separated subset of " + ",".join(LIBS))
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()
    root = mirror_dir(required=True) / "financebench"
    pdf_dir = root / "pdfs"
    items = []
    with open(root / "financebench_open_source.jsonl", encoding="utf-8") as fh:
        for line in fh:
            for ev in json.loads(line)["evidence"]:
                if (pdf_dir / f"{ev['doc_name']}.pdf").exists():
                    items.append(ev)
    import pypdfium2 as pdfium

    pages: dict[str, set[int]] = defaultdict(set)
    for pdf_path in sorted(pdf_dir.glob("*.pdf")) if args.every > 0 else []:
        doc = pdfium.PdfDocument(str(pdf_path))
        pages[pdf_path.stem].update(range(0, len(doc), args.every))
        doc.close()
    for ev in items:
        pages[ev["doc_name"]].add(ev["evidence_page_num"])
    n_pages = sum(len(v) for v in pages.values())
    n_rows = sum(len(evidence_rows(ev["evidence_text"])) for ev in items)
    print(
        f"{len(items)} evidence items on {len({(e['doc_name'], e['evidence_page_num']) for e in items})} pages; "
        f"{n_rows} table rows rebuilt from them; speed sample {n_pages} pages of {len(pages)} PDFs",
        file=sys.stderr,
    )

    for doc in pages:  # warm the OS file cache so the first library timed does not pay for disk reads
        (pdf_dir / f"{doc}.pdf").read_bytes()
    libs = args.libs.split(",")
    texts_by_lib: dict[str, dict[tuple[str, int], str]] = {lib: {} for lib in libs}
    best: dict[str, float] = {}
    for rnd in range(args.repeat):  # rounds interleave the libraries; the fastest round counts (as timeit)
        for lib in libs:
            texts = texts_by_lib[lib]
            t0 = time.perf_counter()
            for doc, idx in tqdm(sorted(pages.items()), desc=f"{lib} round {rnd + 1}", unit="pdf"):
                get, close = LIBS[lib](pdf_dir / f"{doc}.pdf")
                for i in sorted(idx):
                    texts[(doc, i)] = get(i)
                close()
            best[lib] = min(best.get(lib, float("inf")), time.perf_counter() - t0)
    results = {}
    for lib in libs:
        texts, elapsed = texts_by_lib[lib], best[lib]
        tok, num, rows_ok, rows_line, rows_n = [], [], 0, 0, 0
        for ev in items:
            page = texts[(ev["doc_name"], ev["evidence_page_num"])]
            tok.append(multiset_recall(WORD.findall(ev["evidence_text"].lower()), WORD.findall(page.lower())))
            r = multiset_recall(numbers(ev["evidence_text"]), numbers(page))
            if r is not None:
                num.append(r)
            for row in evidence_rows(ev["evidence_text"]):
                rows_n += 1
                rows_ok += row_found(row, page)
                rows_line += any(row_found(row, ln) for ln in page.split("\n"))
        results[lib] = {
            "pages_per_s": n_pages / elapsed,
            "token_recall": sum(tok) / len(tok),
            "items_found": sum(1 for x in tok if x >= 0.9) / len(tok),
            "number_recall": sum(num) / len(num),
            "items_all_numbers": sum(1 for x in num if x == 1.0) / len(num),
            "rows_intact": rows_ok / rows_n if rows_n else float("nan"),
            "rows_one_line": rows_line / rows_n if rows_n else float("nan"),
            "n_items": len(tok),
            "n_items_with_numbers": len(num),
            "n_rows": rows_n,
            "speed_pages": n_pages,
            "repeat": args.repeat,
        }
    print(
        "| library | licence | pages/s | token recall | items found | number recall | items with all numbers "
        "| rows intact | rows on one line |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    lic = {"pypdfium2": "Apache-2.0 / BSD-3", "pymupdf": "AGPL-3.0", "pdfplumber": "MIT"}
    for lib, r in results.items():
        print(
            f"| {lib} | {lic[lib]} | {r['pages_per_s']:.1f} | {r['token_recall']:.3f} | {r['items_found']:.3f} | "
            f"{r['number_recall']:.3f} | "
            f"{r['items_all_numbers']:.3f} | {r['rows_intact']:.3f} | {r['rows_one_line']:.3f} |"
        )
    first = next(iter(results.values()))
    print(
        f"\n{first['n_items']} evidence items ({first['n_items_with_numbers']} with numbers), {first['n_rows']} "
        f"table rows; speed over {first['speed_pages']} pages, fastest of {args.repeat} rounds"
    )
    if args.json:
        from finrag.core.io import write_json

        write_json(args.json, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
