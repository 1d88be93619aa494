"""Stage embed: one chunker's chunks x one embedder -> vectors (float32), through the item-level cache so a
killed run resumes where it stopped and a re-run computes nothing."""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from _stage import main
from finrag.core.contracts import Chunk
from finrag.core.io import atomic_open, read_jsonl
from finrag.retrieve.embed_cache import embed_with_cache
from finrag.retrieve.embedding import make_embedder
from finrag.retrieve.params import EmbedParams


def run() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--chunker", required=True)
    ap.add_argument("--embedder", required=True)
    ap.add_argument(
        "--shard",
        help="I/N: only fill the item cache with every N-th missing chunk from the I-th, write nothing else "
        "(N processes side by side, each with workers=1; the stage itself then assembles from the cache)",
    )
    args = ap.parse_args()
    p = EmbedParams.load()
    chunks = read_jsonl(Path(p.chunks_dir) / f"{args.chunker}.jsonl", Chunk)
    settings = dict(p.embedders.get(args.embedder, {}))
    shard = None
    if args.shard:
        i, n = (int(x) for x in args.shard.split("/"))
        shard = (i, n)
        settings.update(threads=1, **({"workers": 1} if "workers" in settings else {}))
    embedder = make_embedder(args.embedder, **settings)
    vectors = embed_with_cache(
        embedder,
        [c.text for c in chunks],
        Path(p.cache_dir) / args.embedder,
        p.batch_size,
        progress=True,
        shard=shard,
    )
    if vectors is None:
        return
    out = Path(p.out_dir) / args.chunker / f"{args.embedder}.npy"
    with atomic_open(out, "wb") as fh:
        np.save(fh, np.asarray(vectors, dtype=np.float32))


if __name__ == "__main__":
    main(run)
