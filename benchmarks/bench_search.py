"""Query latency per search method for one retrieval setup (chunker x embedder), as the retrieval stage runs it.

The setup is the one `finrag.retrieve.methods.build_search_context` assembles from params.yaml `retrieve` (BM25
parameters, store, embedder settings, fusion depth, rerank depth), with two changes so that every query pays its
full cost: the cross-encoder re-ranker is built WITHOUT its score cache (params `rerank_cache` would otherwise
serve repeated (query, passage) scores from SQLite), and each method gets a fresh `DenseIndex` over the same
store (DenseIndex memoises its last query vectors, so `hybrid` after `dense` on the same questions would skip
the query embedding). No metadata filter is applied (as in stage 06).

One-off setup is timed separately: reading chunks and vectors, building BM25, filling the vector store,
loading the embedder, loading the re-ranker. Then, per method, 2 warm-up queries and `--n` timed queries, one
at a time (time.perf_counter; CPU time of this process too, since the CPU is shared and wall time moves with
other people's load); it prints median and p90 ms per query and the 1-minute load average after each method.
Queries are the `question` texts of available questions in data/questions/all.jsonl (a seeded sample).

    .venv/bin/python benchmarks/bench_search.py [--chunker structure] [--embedder minilm] [--methods dense bm25]
        [--n 20] [--k 5] [--threads 1] [--json out.json]
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import time
from pathlib import Path

import numpy as np

from finrag.core.config import params, repo_root
from finrag.core.contracts import Chunk, Question
from finrag.core.io import read_jsonl, write_json
from finrag.retrieve.methods import build_search_context
from finrag.retrieve.search import SEARCH_METHODS, SearchContext, search

WARMUP = 2


def _path(p: str | Path) -> Path:
    """params.yaml paths are relative to the repository root (DVC runs stages there)."""
    p = Path(p)
    return p if p.is_absolute() else repo_root() / p


def _load() -> float:
    return os.getloadavg()[0]


class Setup:
    """Wall seconds per one-off setup step, in order."""

    def __init__(self) -> None:
        self.steps: dict[str, float] = {}

    def time(self, name: str, fn):
        t = time.perf_counter()
        out = fn()
        self.steps[name] = time.perf_counter() - t
        print(f"setup: {name} {self.steps[name]:.1f} s (load avg {_load():.1f})", flush=True)
        return out


def fail(msg: str) -> None:
    print(msg, file=sys.stderr)
    raise SystemExit(2)


def input_files(a, p: dict) -> tuple[Path, Path]:
    """The chunk and vector files of the setup; exits 2 with one line when one the methods need is missing."""
    chunks_file = _path(p["chunks_dir"]) / f"{a.chunker}.jsonl"
    vec_file = _path(p["embeddings_dir"]) / a.chunker / f"{a.embedder}.npy"
    if not chunks_file.is_file():
        fail(f"{chunks_file}: no chunks for chunker '{a.chunker}' (run the chunk stage first)")
    if any(m in ("dense", "hybrid", "hybrid_rerank") for m in a.methods) and not vec_file.is_file():
        fail(f"{vec_file}: no vectors for {a.chunker} x {a.embedder} yet (run the embed stage first)")
    return chunks_file, vec_file


def build(a, p: dict, setup: Setup):
    """SearchContext for bm25 (from build_search_context) plus, as needed, the store, embedder and an uncached
    re-ranker; returns (ctx, a factory of fresh DenseIndex objects or None)."""
    chunks_file, vec_file = input_files(a, p)
    needs_dense = any(m in ("dense", "hybrid", "hybrid_rerank") for m in a.methods)
    model = p["reranker"]
    model_path = _path(model)

    chunks = setup.time("read chunks", lambda: read_jsonl(chunks_file, Chunk))
    # BM25 plus depth / rrf_k / weights / rerank_depth exactly as the retrieval stage sets them
    ctx: SearchContext = setup.time(
        "build BM25", lambda: build_search_context(chunks, None, None, p, methods=["bm25"])
    )
    dense_factory = None
    if needs_dense:
        from finrag.retrieve.embedding import make_embedder
        from finrag.retrieve.stores import DenseIndex, make_store

        vectors = setup.time("read vectors", lambda: np.load(vec_file))
        if len(vectors) != len(chunks):
            fail(f"{vec_file}: {len(vectors)} vectors for {len(chunks)} chunks (re-run the embed stage)")

        def fill_store():
            store = make_store(p.get("store", "faiss"), dim=int(vectors.shape[1]))
            store.add(list(range(len(chunks))), vectors)
            return store

        store = setup.time(f"fill {p.get('store', 'faiss')} store", fill_store)
        kw = dict(p.get("embedders", {}).get(a.embedder, {}) or {})
        embedder = setup.time(f"load embedder {a.embedder}", lambda: make_embedder(a.embedder, **kw))
        texts = [c.text for c in chunks]

        def dense_factory():
            return DenseIndex(embedder, store, texts)  # store already filled: nothing is embedded here

    if "hybrid_rerank" in a.methods:
        from finrag.retrieve.rerank import CrossEncoderReranker

        def load_reranker():
            try:
                return CrossEncoderReranker(
                    str(model_path) if model_path.exists() else model,
                    max_length=p.get("rerank_max_length"),
                    precision=p.get("rerank_precision", "fp32"),
                    cache_dir=None,  # honest latency: params' rerank_cache would serve repeated scores
                )
            except Exception as exc:  # noqa: BLE001 - one line, then exit 2
                fail(
                    f"re-ranker '{model}' could not be loaded (run the reranker stage?): {exc}".splitlines()[
                        0
                    ]
                )

        ctx.reranker = setup.time("load re-ranker (no score cache)", load_reranker)
    return ctx, dense_factory


def time_method(ctx: SearchContext, method: str, queries: list[str], k: int) -> dict:
    warm, timed = queries[:WARMUP], queries[WARMUP:]
    for q in warm:
        search(ctx, method, q, k)
    wall, cpu = [], []
    for q in timed:
        t, c = time.perf_counter(), time.process_time()
        search(ctx, method, q, k)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - c) * 1000)
    return dict(
        method=method,
        n=len(timed),
        median_ms=float(np.median(wall)),
        p90_ms=float(np.percentile(wall, 90)),
        cpu_median_ms=float(np.median(cpu)),
        load_avg=_load(),
    )


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chunker", default="structure")
    ap.add_argument("--embedder", default="minilm")
    ap.add_argument("--methods", nargs="+", default=["dense", "bm25", "hybrid", "hybrid_rerank"])
    ap.add_argument("--n", type=int, default=20, help="timed queries per method (after 2 warm-up queries)")
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0, help="which questions are sampled")
    ap.add_argument("--threads", type=int, help="torch threads (default: torch's own)")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    unknown = [m for m in a.methods if m not in SEARCH_METHODS.names()]
    if unknown:
        fail(f"unknown method(s) {unknown}; known: {sorted(SEARCH_METHODS.names())}")
    if a.n < 1:
        fail("--n must be at least 1")
    p = dict(params("retrieve"))
    p["rerank_cache"] = None  # belt and braces: nothing below may reach the score cache

    input_files(a, p)
    qfile = _path(p["questions"])
    if not qfile.is_file():
        fail(f"{qfile}: no questions (run the questions stage first)")
    pool = [q.question for q in read_jsonl(qfile, Question) if q.available]
    if len(pool) < WARMUP + a.n:
        fail(f"{qfile}: {len(pool)} available questions, need {WARMUP + a.n} (--n {a.n} + {WARMUP} warm-up)")
    queries = random.Random(a.seed).sample(pool, WARMUP + a.n)

    import torch

    if a.threads:
        torch.set_num_threads(a.threads)
    print(
        f"{a.chunker} x {a.embedder}; k={a.k}; {a.n} timed queries per method after {WARMUP} warm-up; "
        f"torch threads {torch.get_num_threads()}; {os.cpu_count()} CPUs; load avg at start "
        + "/".join(f"{x:.1f}" for x in os.getloadavg()),
        flush=True,
    )
    setup = Setup()
    ctx, dense_factory = build(a, p, setup)
    rows = []
    for m in a.methods:
        if dense_factory is not None:
            ctx.dense = dense_factory()  # fresh query-vector memo per method
        rows.append(time_method(ctx, m, queries, a.k))
        print(f"[{m}] done; load avg {_load():.1f}", flush=True)

    print(f"\nsetup (one-off, wall s; {len(ctx.chunks)} chunks):")
    for name, s in setup.steps.items():
        print(f"  {name:<36} {s:7.1f}")
    print("\nre-ranker scored without its cache; dense query vectors not memoised across methods")
    print("| method | queries | median ms | p90 ms | CPU ms (median) | load avg (1 min) |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['method']} | {r['n']} | {r['median_ms']:.1f} | {r['p90_ms']:.1f} | "
            f"{r['cpu_median_ms']:.1f} | {r['load_avg']:.1f} |"
        )
    if a.json:
        write_json(
            a.json,
            dict(
                chunker=a.chunker,
                embedder=a.embedder,
                k=a.k,
                n_chunks=len(ctx.chunks),
                torch_threads=torch.get_num_threads(),
                cpus=os.cpu_count(),
                rerank_cache=False,
                setup_s=setup.steps,
                methods=rows,
            ),
        )


if __name__ == "__main__":
    main()
