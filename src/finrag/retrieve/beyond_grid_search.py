"""The search half of the rows beyond the grid: every (filter, method) row run over the scored questions. It needs
the chunks, and the embedder's matrix for dense and hybrid bases; finrag.retrieve.beyond_grid scores the runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from finrag.core.contracts import Chunk, Document, Question
from finrag.core.io import read_jsonl
from finrag.retrieve import finance  # noqa: F401  (registers the finance-aware search methods)
from finrag.retrieve.beyond_grid import Rankings, RowKey
from finrag.retrieve.finance_params import RetrieveFinanceParams
from finrag.retrieve.methods import build_search_context, load_vectors, run_method


def search_rows(
    p: RetrieveFinanceParams,
    chunks: Sequence[Chunk],
    questions: Sequence[Question],
    retrieve_params: Mapping,
    progress: bool = True,
) -> dict[RowKey, Rankings]:
    """Run every (filter, method) row of `p` over `questions`: top-k (chunk, score) per question. Dense and hybrid
    bases read the matrix of the embedder `p` names (for `retrieve_finance_dense`)."""
    embedder = getattr(p, "embedder", None)
    vectors = load_vectors(p.chunker, embedder, retrieve_params) if embedder else None
    documents = read_jsonl(Path(p.documents), Document)
    ctx = build_search_context(chunks, vectors, embedder, retrieve_params, methods=list(p.methods))
    runs: dict[RowKey, Rankings] = {}
    for flt in p.filters:
        docs = documents if flt == "company_period" else None
        for method in p.methods:
            runs[(flt, method)] = run_method(
                ctx, method, questions, int(retrieve_params["k"]), documents=docs, progress=progress
            )
    return runs
