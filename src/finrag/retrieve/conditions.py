"""Context conditions beyond the frozen two: the oracle passages in an order that carries no relevance (position as a
controlled factor), and contexts from stronger retrieval rows (retrieval quality as a dose).

Each condition is written as a contexts file of its own, in the frozen contexts' format and modes ("oracle" or
"retrieved"), so generation thaws it with the same loader and every answer keeps a valid `context_mode`; the
condition's name travels in the run id. Built from files in git (the frozen contexts and the search runs), so the
stage replays without a matrix or a model.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict

from finrag.core.contracts import Context
from finrag.core.params import StageParams


class OracleOrder(BaseModel):
    """The frozen oracle passages (gold first) shuffled per question by random.Random(f"{seed}:{qid}")."""

    model_config = ConfigDict(extra="forbid")
    seed: int


class RetrievalLevel(BaseModel):
    """The top k of a search run in git (one line per question: {"qid", "hits": [{"chunk_id", "score"}]})."""

    model_config = ConfigDict(extra="forbid")
    run: str
    setup: str  # chunker/embedder/method(+rules) that ranked them: the first part names the chunk file
    level: int  # its place in the nested dose (1 is the frozen `retrieved` mode)
    recall_at_5: str = ""  # where its evidence recall was measured, for a reader (not read by code)


class ContextConditionsParams(StageParams):
    section: ClassVar[str] = "context_conditions"
    contexts: str
    questions: str
    chunks_dir: str
    k: int
    oracle_orders: dict[str, OracleOrder]
    levels: dict[str, RetrievalLevel]
    out_dir: str
    metrics_out: str


def shuffled_oracle(frozen: Sequence[Context], seed: int) -> list[Context]:
    """Each question's oracle passages (and their scores) in a seeded random order: where the gold passage sits no
    longer depends on its being gold. The draw is per question, so adding questions moves no other's order."""
    out = []
    for ctx in frozen:
        if ctx.mode != "oracle":
            continue
        pairs = list(zip(ctx.chunk_ids, ctx.scores, strict=True))
        random.Random(f"{seed}:{ctx.qid}").shuffle(pairs)  # str seeds hash with SHA-512: stable across runs
        out.append(
            ctx.model_copy(update={"chunk_ids": [c for c, _ in pairs], "scores": [s for _, s in pairs]})
        )
    return out


def contexts_from_run(rows: Sequence[Mapping], qids: Sequence[str], k: int, setup: str) -> list[Context]:
    """The top k of a search run as "retrieved" contexts, for the given questions in their order; a question the
    run lacks is an error (the levels must hold the same questions)."""
    by_qid = {r["qid"]: r["hits"] for r in rows}
    missing = [q for q in qids if q not in by_qid]
    if missing:
        raise ValueError(f"search run for {setup} lacks {len(missing)} questions (first {missing[0]})")
    return [
        Context(
            qid=q,
            mode="retrieved",
            setup=setup,
            chunk_ids=[h["chunk_id"] for h in by_qid[q][:k]],
            scores=[float(h["score"]) for h in by_qid[q][:k]],
        )
        for q in qids
    ]


def condition_files(out_dir: Path, names: Sequence[str]) -> dict[str, Path]:
    """Where each named condition's contexts file lives (generation reads them from here)."""
    return {name: out_dir / f"{name}.jsonl" for name in names}
