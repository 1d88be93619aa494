"""What a full rebuild of the embedding matrices costs on this machine, from a timed sample of each (chunker,
encoder) pair: chunks per second on `sample` chunks drawn at random, times the chunker's chunk count.

Why a sample: the nine matrices take hours on 2 cores (days' worth of a session's time on a CPU without AVX-512),
so the README's rebuild table is extrapolated, and says so; the stage that measures it takes minutes.
"""

from __future__ import annotations

import random
import subprocess
import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import Field

from finrag.core.contracts import Chunk
from finrag.core.io import read_jsonl
from finrag.core.machine import machine
from finrag.core.params import StageParams
from finrag.retrieve.embedding import make_embedder


class RebuildCostParams(StageParams):
    section: ClassVar[str] = "rebuild_cost"
    chunks_dir: str
    sample: int = Field(
        48, ge=4, description="chunks timed per (chunker, encoder) pair, after a warm-up batch"
    )
    warmup: int = Field(4, ge=1)
    seed: int
    out: str


def sample_cost(
    chunks: Sequence[Chunk], embedder_name: str, settings: dict, sample: int, warmup: int, seed: int
) -> dict:
    """Seconds per chunk of one encoder on a random sample of `chunks` (the same sample for every encoder)."""
    rng = random.Random(seed)
    picked = rng.sample(range(len(chunks)), min(sample + warmup, len(chunks)))
    texts = [chunks[i].text for i in picked]
    embedder = make_embedder(embedder_name, **settings)
    embedder.embed_passages(texts[:warmup])  # model load, first-call allocations
    t0 = time.perf_counter()
    embedder.embed_passages(texts[warmup:])
    secs = time.perf_counter() - t0
    timed = len(texts) - warmup
    return {
        "sampled_chunks": timed,
        "sample_seconds": round(secs, 2),
        "chunks_per_s": round(timed / secs, 3),
        "extrapolated_hours": round(len(chunks) * secs / timed / 3600, 2),
    }


def rebuild_cost(p: RebuildCostParams, chunkers: Sequence[str], embedders: dict[str, dict]) -> dict:
    rows: list[dict] = []
    for chunker in chunkers:
        chunks = read_jsonl(Path(p.chunks_dir) / f"{chunker}.jsonl", Chunk)
        for name, settings in embedders.items():
            row: dict = {"chunker": chunker, "embedder": name, "chunks": len(chunks)}
            row.update(sample_cost(chunks, name, dict(settings), p.sample, p.warmup, p.seed))
            rows.append(row)
    commit = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True, check=False).stdout
    return {
        "method": f"extrapolated: {p.sample} random chunks timed per pair (after {p.warmup} warm-up), times the "
        "chunker's chunk count; each encoder with the embed stage's own settings",
        "rows": rows,
        "total_hours": round(sum(r["extrapolated_hours"] for r in rows), 1),
        "commit": commit.strip(),
        "machine": machine(),
    }
