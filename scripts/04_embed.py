"""Stage 04 embed: one chunker's chunks x one embedder -> vectors (float32), through the item-level cache so a
killed run resumes where it stopped and a re-run computes nothing."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from _stage import main
from finrag.config import params
from finrag.contracts import Chunk
from finrag.embedding import embed_with_cache, make_embedder
from finrag.io import atomic_open, read_jsonl


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunker", required=True)
    ap.add_argument("--embedder", required=True)
    args = ap.parse_args()
    p = params("embed")
    chunks = read_jsonl(Path(p["chunks_dir"]) / f"{args.chunker}.jsonl", Chunk)
    embedder = make_embedder(args.embedder, **p["embedders"].get(args.embedder, {}))
    vectors = embed_with_cache(
        embedder,
        [c.text for c in chunks],
        Path(p["cache_dir"]) / args.embedder,
        p["batch_size"],
        progress=True,
    )
    out = Path(p["out_dir"]) / args.chunker / f"{args.embedder}.npy"
    with atomic_open(out, "wb") as fh:
        np.save(fh, np.asarray(vectors, dtype=np.float32))


if __name__ == "__main__":
    main(run)
