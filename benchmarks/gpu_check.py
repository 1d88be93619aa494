"""The GPU path, checked in minutes on any CUDA machine: a tiny randomly initialised BERT encoder (no weights to
download or carry: the device machines take 64 MiB of the tree and reach nothing outside) goes through finrag's own
embedding code (`finrag.retrieve.embedding.STEmbedder`, device chosen by `finrag.core.device`: CUDA in fp16) and
through the same code on the CPU (fp32), on the same texts. It prints chunks/s on each device and the largest
difference between the two sets of unit vectors (max |a - b| and the smallest cosine).

    .venv/bin/python benchmarks/gpu_check.py [--n 4096] [--batch-size 64] [--json out.json]

Without CUDA it runs the CPU half only and says that the GPU half was not run (CI runs it so, on tiny inputs).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

WORDS = [
    "revenue",
    "net",
    "income",
    "operating",
    "margin",
    "cash",
    "flow",
    "dividend",
    "share",
    "repurchase",
    "goodwill",
    "impairment",
    "segment",
    "fiscal",
    "year",
    "quarter",
    "guidance",
    "capital",
    "expenditure",
    "depreciation",
    "amortization",
    "inventory",
    "receivable",
    "payable",
    "debt",
    "equity",
    "interest",
    "expense",
    "tax",
    "rate",
    "earnings",
    "per",
    "diluted",
    "basic",
    "gross",
    "profit",
    "cost",
    "sales",
]


def texts(n: int, seed: int = 0) -> list[str]:
    """n filing-like sentences of 20 to 120 words (a length spread like the chunks')."""
    rng = random.Random(seed)
    return [" ".join(rng.choice(WORDS) for _ in range(rng.randint(20, 120))) for _ in range(n)]


def tiny_encoder(root: Path, seed: int = 0) -> Path:
    """A 2-layer, 64-wide BERT with random weights and a word-level vocabulary, saved as a sentence-transformers
    model (transformer + mean pooling) that STEmbedder loads with local_files_only."""
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(seed)
    hf = root / "hf"
    hf.mkdir(parents=True)
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(set(WORDS))]
    (hf / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(hf / "vocab.txt")).save_pretrained(hf)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        intermediate_size=128,
        max_position_embeddings=256,
    )
    BertModel(config).save_pretrained(hf)
    word = models.Transformer(str(hf), max_seq_length=256)
    pooling = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    out = root / "st"
    SentenceTransformer(modules=[word, pooling], device="cpu").save(str(out))
    return out


def encode_on(device: str, path: Path, chunks: list[str], batch_size: int) -> tuple[np.ndarray, float, str]:
    """Vectors, chunks per second (after one warm-up batch) and the precision, through finrag's embedder."""
    from finrag.retrieve.embedding import STEmbedder

    os.environ["FINRAG_DEVICE"] = device
    # the CPU reference in fp32; on CUDA the embedder's own default (auto: fp16), the path a GPU user gets
    precision = "fp32" if device == "cpu" else "auto"
    emb = STEmbedder(
        "tiny-random-bert", path, batch_size=batch_size, precision=precision, fused_attention=False
    )
    emb.embed_passages(chunks[:batch_size])  # warm-up: CUDA context, kernels
    start = time.perf_counter()
    vecs = emb.embed_passages(chunks)
    if device.startswith("cuda"):
        import torch

        torch.cuda.synchronize()
    return vecs, len(chunks) / (time.perf_counter() - start), emb.precision


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=4096, help="texts to encode on each device")
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--json", help="write the figures here too")
    args = ap.parse_args(argv)

    import torch

    chunks = texts(args.n)
    with tempfile.TemporaryDirectory() as tmp:
        path = tiny_encoder(Path(tmp))
        cpu, cpu_rate, cpu_prec = encode_on("cpu", path, chunks, args.batch_size)
        out: dict = {
            "n": args.n,
            "torch": torch.__version__,
            "cpu": {"chunks_per_s": round(cpu_rate, 1), "precision": cpu_prec},
            "cuda": None,
        }
        print(f"cpu: {cpu_rate:,.0f} chunks/s ({cpu_prec}), {args.n} texts")
        if torch.cuda.is_available():
            gpu, gpu_rate, gpu_prec = encode_on("cuda", path, chunks, args.batch_size)
            cos = np.sum(cpu * gpu, axis=1)
            out["cuda"] = {
                "device": torch.cuda.get_device_name(0),
                "chunks_per_s": round(gpu_rate, 1),
                "precision": gpu_prec,
                "speedup": round(gpu_rate / cpu_rate, 2),
                "max_abs_diff": float(np.max(np.abs(cpu - gpu))),
                "min_cosine": float(np.min(cos)),
            }
            c = out["cuda"]
            print(
                f"cuda ({c['device']}): {gpu_rate:,.0f} chunks/s ({gpu_prec}), {c['speedup']}x the CPU; "
                f"largest |cpu - cuda| {c['max_abs_diff']:.2e}, smallest cosine {c['min_cosine']:.6f}"
            )
        else:
            print("cuda: not available on this machine, the GPU half was not run")
    if args.json:
        Path(args.json).write_text(json.dumps(out, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
