"""Stage chunk: pages of one corpus -> chunks of one chunker (each chunk keeps pages and char offsets)."""

from __future__ import annotations

import argparse
from collections import defaultdict
from pathlib import Path

from _stage import main
from finrag.core.contracts import Document, Page
from finrag.core.io import read_jsonl, write_jsonl
from finrag.retrieve.chunking import chunk_corpus, make_chunker
from finrag.retrieve.params import ChunkParams


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", required=True)
    ap.add_argument("--chunker", required=True)
    args = ap.parse_args()
    p = ChunkParams.load()
    corpus = p.corpora[args.corpus]
    src = Path(corpus.dir)
    docs = read_jsonl(src / "documents.jsonl", Document)
    if corpus.collections:
        docs = [d for d in docs if d.collection in corpus.collections]
    pages_by_doc: dict[str, list[Page]] = defaultdict(list)
    for page in read_jsonl(src / "pages.jsonl", Page):
        pages_by_doc[page.doc_id].append(page)
    chunker = make_chunker(args.chunker, **p.chunkers[args.chunker])
    chunks = chunk_corpus(docs, pages_by_doc, chunker)
    write_jsonl(Path(corpus.chunks_dir) / f"{args.chunker}.jsonl", chunks)


if __name__ == "__main__":
    main(run)
