"""Stage contexts: freeze the passages every question gets, in each context mode, from the search setup the
select stage chose. The file is small and in git: generation reads it, so a replay needs neither the embeddings
nor the re-ranker, and every run family sees exactly the same passages. `contexts_summary` measures it."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Question
from finrag.core.io import read_json, read_jsonl, write_jsonl
from finrag.retrieve.contexts import ContextBuilder, freeze_contexts
from finrag.retrieve.evaluation_params import ContextsParams
from finrag.retrieve.methods import load_search_context
from finrag.retrieve.params import RetrieveParams
from finrag.retrieve.search import search


def run() -> None:
    p = ContextsParams.load()
    rp = RetrieveParams.load()
    sel = read_json(Path(p.selected))
    chunker, embedder, method = sel["chunker"], sel["embedder"], sel["method"]
    ctx = load_search_context(chunker, embedder, rp.as_dict(), methods=[method])
    builder = ContextBuilder(
        ctx.chunks, lambda text, k, allowed: search(ctx, method, text, k, allowed), k=p.k
    )
    questions = [q for q in read_jsonl(Path(p.questions), Question) if q.available]
    write_jsonl(Path(p.out), freeze_contexts(questions, p.modes, builder, f"{chunker}/{embedder}/{method}"))


if __name__ == "__main__":
    main(run)
