"""The passages a model sees: retrieved (top k of the selected search setup) or oracle (the gold evidence chunks
first), built by search once and frozen as chunk ids by the contexts stage, so generation never searches."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from finrag.core.contracts import Chunk, Context, Passage, Question
from finrag.retrieve.metrics import evidence_pages

RankFn = Callable[[str, int, "set[int] | None"], list[tuple[int, float]]]


def passages_from(chunks: Sequence[Chunk], hits: Iterable[tuple[int, float]]) -> list[Passage]:
    """Number the chunks [1]..[n] in rank order."""
    out = []
    for n, (i, score) in enumerate(hits, 1):
        c = chunks[i]
        out.append(
            Passage(n=n, chunk_id=c.chunk_id, doc_id=c.doc_id, pages=c.pages, text=c.text, score=score)
        )
    return out


@dataclass
class ContextBuilder:
    """Builds the k passages a model sees for one question.

    retrieved: the top k of the selected search setup.
    oracle: the chunks holding the gold evidence first (for each evidence page, its best-ranked chunk by the same
    search restricted to that document), then filled from the same document(s) by search rank.
    """

    chunks: list[Chunk]
    rank: RankFn  # (query, k, allowed chunk indices or None) -> [(chunk index, score)]
    k: int = 5

    def __post_init__(self):
        self._by_doc: dict[str, list[int]] = {}
        self._by_page: dict[tuple[str, int], list[int]] = {}
        for i, c in enumerate(self.chunks):
            self._by_doc.setdefault(c.doc_id, []).append(i)
            for p in c.pages:
                self._by_page.setdefault((c.doc_id, p), []).append(i)

    def retrieved(self, q: Question) -> list[Passage]:
        return passages_from(self.chunks, self.rank(q.question, self.k, None)[: self.k])

    def oracle(self, q: Question) -> list[Passage]:
        docs = list(dict.fromkeys(d for d, _ in sorted(evidence_pages(q)))) or list(q.doc_ids)
        allowed = {i for d in docs for i in self._by_doc.get(d, [])}
        if not allowed:
            return []
        ranked = self.rank(q.question, len(allowed), allowed)
        position = {i: r for r, (i, _) in enumerate(ranked)}
        scores = dict(ranked)
        chosen: list[int] = []
        for page in sorted(evidence_pages(q)):
            doc, number = page
            if any(self.chunks[i].doc_id == doc and number in self.chunks[i].pages for i in chosen):
                continue  # already shown by a chunk spanning several pages: keep the slot for another page
            holders = [i for i in self._by_page.get(page, []) if i not in chosen]
            if holders:
                chosen.append(min(holders, key=lambda i: (position.get(i, len(position)), i)))
        for i, _ in ranked:
            if len(chosen) >= self.k:
                break
            if i not in chosen:
                chosen.append(i)
        chosen = chosen[: self.k]
        return passages_from(self.chunks, [(i, scores.get(i, 0.0)) for i in chosen])

    def build(self, q: Question, mode: str) -> list[Passage]:
        if mode == "retrieved":
            return self.retrieved(q)
        if mode == "oracle":
            return self.oracle(q)
        raise ValueError(f"unknown context mode '{mode}' (retrieved, oracle)")


def freeze_contexts(
    questions: Sequence[Question],
    modes: Sequence[str],
    builder: ContextBuilder,
    setup: str,
    progress: bool = True,
) -> list[Context]:
    """Every question's passages in every mode, as chunk ids (the contexts stage writes these)."""
    out = []
    for q in tqdm(questions, desc=f"contexts[{setup}]", unit="question", disable=not progress):
        for mode in modes:
            passages = builder.build(q, mode)
            out.append(
                Context(
                    qid=q.qid,
                    mode=mode,  # type: ignore[arg-type]
                    setup=setup,
                    chunk_ids=[p.chunk_id for p in passages],
                    scores=[p.score for p in passages],
                )
            )
    return out


def thaw_contexts(
    contexts: Sequence[Context], chunks: Sequence[Chunk]
) -> dict[tuple[str, str], list[Passage]]:
    """Frozen contexts back to numbered passages; a chunk id missing from `chunks` means the chunks changed since
    the contexts were frozen, which must fail loudly (the prompts would no longer match the cache)."""
    index = {c.chunk_id: i for i, c in enumerate(chunks)}
    out: dict[tuple[str, str], list[Passage]] = {}
    for ctx in contexts:
        missing = [cid for cid in ctx.chunk_ids if cid not in index]
        if missing:
            raise ValueError(
                f"context {ctx.qid}/{ctx.mode} names chunks not in the chunk file ({missing[:3]}): "
                "the chunks changed since the contexts stage ran; re-run it"
            )
        out[(ctx.qid, ctx.mode)] = passages_from(
            chunks, [(index[cid], s) for cid, s in zip(ctx.chunk_ids, ctx.scores, strict=True)]
        )
    return out


def load_frozen_contexts(
    contexts_file: Path, chunks_dir: Path
) -> tuple[str, dict[tuple[str, str], list[Passage]]]:
    """The contexts stage's file, thawed against its chunker's chunk file: (search setup, passages per
    (qid, mode)). One loader for the generate stage and `finrag progress`, so both ask for the same prompts."""
    from finrag.core.io import read_jsonl

    frozen = read_jsonl(contexts_file, Context)
    setups = sorted({c.setup for c in frozen})
    if len(setups) != 1:
        raise ValueError(
            f"{contexts_file} mixes search setups {setups} (or has none): re-run the contexts stage"
        )
    chunker = setups[0].split("/")[0]
    chunk_file = chunks_dir / f"{chunker}.jsonl"
    if not chunk_file.is_file():
        raise FileNotFoundError(f"chunk file not found: {chunk_file} (run the chunk stage)")
    return setups[0], thaw_contexts(frozen, read_jsonl(chunk_file, Chunk))


def context_summary(
    questions: Sequence[Question], contexts: dict[tuple[str, str], list[Passage]], setup: str
) -> dict:
    """Per mode: how many questions, and the mean share of their evidence pages the passages cover (the ceiling
    for a grounded answer); the oracle mode falls short of 1 only where the evidence spans more than k chunks."""
    from finrag.retrieve.metrics import evidence_recall

    modes = sorted({m for _, m in contexts})
    out: dict = {"setup": setup, "modes": {}}
    for mode in modes:
        recalls = [
            evidence_recall(q, contexts[(q.qid, mode)]) for q in questions if (q.qid, mode) in contexts
        ]
        scored = [r for r in recalls if r is not None]
        out["modes"][mode] = {
            "questions": len(recalls),
            "with_evidence": len(scored),
            "mean_evidence_recall": sum(scored) / len(scored) if scored else None,
            "all_evidence_shown": sum(r >= 1.0 for r in scored) / len(scored) if scored else None,
        }
    return out
