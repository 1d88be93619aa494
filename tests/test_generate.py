"""Context modes (retrieved top k; oracle = evidence chunks first, then the same document by search rank) and a
whole generation run through the response cache: recorded once, replayed with zero model calls, same answers."""

from __future__ import annotations

import pytest

from finrag.core.contracts import Chunk, Evidence, Question, Span
from finrag.core.io import write_jsonl
from finrag.generate.run import (
    RunSpec,
    family_specs,
    generate_answers,
    recording_progress,
    seconds_left,
    shared_backend,
)
from finrag.llm.backends.extractive import ExtractiveBackend
from finrag.llm.cache import CachedLLM, CacheMiss
from finrag.retrieve.contexts import (
    ContextBuilder,
    context_summary,
    freeze_contexts,
    load_frozen_contexts,
    thaw_contexts,
)


def _chunk(doc: str, page: int, j: int, text: str) -> Chunk:
    return Chunk(
        chunk_id=f"{doc}:{page}:{j}", doc_id=doc, pages=[page], spans=[Span(page=page, start=0, end=len(text))],
        text=text, body=text,
    )  # fmt: skip


CHUNKS = [
    _chunk("A", 0, 0, "Company A 10-K 2019 cover page"),
    _chunk("A", 1, 0, "Revenue of A was $5,000 million in 2019"),
    _chunk("A", 2, 0, "Net income of A was $700 million in 2019"),
    _chunk("A", 2, 1, "Net income grew from $600 million"),
    _chunk("A", 3, 0, "Risk factors of A"),
    _chunk("A", 4, 0, "Employees of A"),
    _chunk("A", 5, 0, "Properties of A"),
    _chunk("B", 0, 0, "Company B net income was $900 million in 2019"),
    _chunk("B", 1, 0, "Company B revenue"),
]


def fake_rank(query: str, k: int, allowed):
    """A fixed ranking (B first, then A's chunks backwards), cut to `allowed` and k: enough to see the rules."""
    order = [7, 8, 6, 5, 4, 3, 2, 1, 0]
    hits = [(i, 1.0 / (r + 1)) for r, i in enumerate(order) if allowed is None or i in allowed]
    return hits[:k]


Q = Question(
    qid="q1", question="What was A's net income in 2019?", answer="$700 million", doc_ids=["A"],
    evidence=[Evidence(doc_id="A", page=2), Evidence(doc_id="A", page=1)],
)  # fmt: skip


def test_retrieved_is_the_top_k_of_the_search():
    got = ContextBuilder(CHUNKS, fake_rank, k=5).build(Q, "retrieved")
    assert [p.chunk_id for p in got] == ["B:0:0", "B:1:0", "A:5:0", "A:4:0", "A:3:0"]
    assert [p.n for p in got] == [1, 2, 3, 4, 5]


def test_oracle_puts_evidence_chunks_first_then_fills_from_the_same_document_by_rank():
    got = ContextBuilder(CHUNKS, fake_rank, k=5).build(Q, "oracle")
    ids = [p.chunk_id for p in got]
    # one chunk per evidence page (page 1, then page 2's best-ranked holder), then A's chunks in search order
    assert ids[:2] == ["A:1:0", "A:2:1"]
    assert ids[2:] == ["A:5:0", "A:4:0", "A:3:0"]
    assert all(p.doc_id == "A" for p in got) and len(got) == 5
    with pytest.raises(ValueError, match="unknown context mode"):
        ContextBuilder(CHUNKS, fake_rank).build(Q, "gold")


def test_generation_records_then_replays_with_zero_calls(tmp_path):
    builder = ContextBuilder(CHUNKS, fake_rank, k=3)
    q2 = Q.model_copy(update={"qid": "q2", "question": "What was B's net income?", "doc_ids": ["B"],
                              "evidence": [Evidence(doc_id="B", page=0)]})  # fmt: skip
    questions = [Q, q2]
    contexts = {(q.qid, m): builder.build(q, m) for q in questions for m in ("retrieved", "oracle")}
    specs = [
        RunSpec("ex-plain-retrieved", "plain", "retrieved"),
        RunSpec("ex-plain-oracle", "plain", "oracle"),
    ]
    dec = {"temperature": 0.0, "max_tokens": 64, "seed": 0}
    rec = CachedLLM(ExtractiveBackend(), tmp_path / "cache", mode="auto", stage="t")
    first = generate_answers(questions, contexts, rec, specs, dec, progress=False)
    assert rec.calls == 4 and rec.hits == 0
    assert all(a.text.endswith("[1]") for run in first.values() for a in run)  # extractive cites [1]
    replay = CachedLLM(ExtractiveBackend().identity(), tmp_path / "cache", mode="replay", stage="t")
    again = generate_answers(questions, contexts, replay, specs, dec, progress=False)
    assert replay.calls == 0 and replay.hits == 4
    for run_id in first:
        assert [a.model_dump() for a in again[run_id]] == [a.model_dump() for a in first[run_id]]
        assert all(a.passages and a.cache_key and a.prompt for a in first[run_id])
    with pytest.raises(CacheMiss, match="stage=t"):
        generate_answers(questions, contexts, replay, [RunSpec("x", "quote", "oracle")], dec, progress=False)


FAMILIES = {
    "greedy": {"backend": "extractive", "tag": "ex", "run_id": "{tag}-{style}-{context}", "styles": ["plain", "decline"],
               "contexts": ["retrieved", "oracle"], "replicates": [0]},
    "sampled": {"backend": "extractive", "tag": "ex", "run_id": "{tag}-{style}-{context}-r{replicate}",
                "styles": ["plain"], "contexts": ["retrieved"], "replicates": [0, 1], "decoding": {"temperature": 0.7}},
}  # fmt: skip


def test_families_in_one_pass_give_the_same_calls_as_one_by_one(tmp_path):
    """Recording two families interleaved must produce exactly the cache entries each family's own stage asks for
    (so `dvc repro generate@family` replays them), with each family's decoding in its keys."""
    base = {"temperature": 0.0, "max_tokens": 64, "seed": 0}
    specs = [s for name, fam in FAMILIES.items() for s in family_specs(name, fam, base)]
    assert [s.run_id for s in specs if s.family == "sampled"] == [
        "ex-plain-retrieved-r0",
        "ex-plain-retrieved-r1",
    ]
    builder = ContextBuilder(CHUNKS, fake_rank, k=3)
    contexts = {(Q.qid, m): builder.build(Q, m) for m in ("retrieved", "oracle")}
    together = CachedLLM(ExtractiveBackend(), tmp_path / "cache", mode="auto", stage="t")
    both = generate_answers([Q], contexts, together, specs, base, progress=False)
    assert together.calls == 6
    # the per-question order keeps calls on the same passages next to each other, across families
    for name, fam in FAMILIES.items():
        alone = CachedLLM(ExtractiveBackend().identity(), tmp_path / "cache", mode="replay", stage=name)
        own = generate_answers([Q], contexts, alone, family_specs(name, fam, base), base, progress=False)
        assert alone.calls == 0
        for run_id, rows in own.items():
            assert [a.cache_key for a in rows] == [a.cache_key for a in both[run_id]]
    keys = {a.cache_key for rows in both.values() for a in rows}
    assert len(keys) == 6  # greedy plain-retrieved and sampled r0 differ by temperature: distinct entries
    assert shared_backend(FAMILIES) == ("extractive", {})
    with pytest.raises(ValueError, match="different backends"):
        shared_backend({**FAMILIES, "other": {**FAMILIES["greedy"], "backend": "llamacpp"}})
    nested = {
        "backend": "anthropic",
        "backend_params": {"prices": {"input_per_mtok": 1.0, "output_per_mtok": 5.0}},
    }
    assert shared_backend({"a": nested, "b": dict(nested)}) == ("anthropic", nested["backend_params"])


def test_oracle_skips_an_evidence_page_already_shown_by_a_multi_page_chunk():
    chunks = [
        Chunk(chunk_id="X", doc_id="D", pages=[2, 3], spans=[], text="pages two and three", body="x"),
        Chunk(chunk_id="Z", doc_id="D", pages=[3], spans=[], text="page three again", body="z"),
        Chunk(chunk_id="W", doc_id="D", pages=[4], spans=[], text="page four", body="w"),
    ]
    q = Question(qid="q", question="?", answer="a", doc_ids=["D"],
                 evidence=[Evidence(doc_id="D", page=p) for p in (2, 3, 4)])  # fmt: skip

    def rank(query, k, allowed):
        return [(i, 1.0 - i / 10) for i in (0, 1, 2) if allowed is None or i in allowed][:k]

    got = ContextBuilder(chunks, rank, k=2).oracle(q)
    assert [p.chunk_id for p in got] == ["X", "W"]  # X covers pages 2 and 3; page 4 gets the second slot


def test_frozen_contexts_thaw_to_the_same_passages_and_fail_loudly_on_changed_chunks():
    builder = ContextBuilder(CHUNKS, fake_rank, k=3)
    frozen = freeze_contexts([Q], ["retrieved", "oracle"], builder, "structure/minilm/dense", progress=False)
    assert [(c.qid, c.mode) for c in frozen] == [("q1", "retrieved"), ("q1", "oracle")]
    thawed = thaw_contexts(frozen, CHUNKS)
    for mode in ("retrieved", "oracle"):
        assert thawed[("q1", mode)] == builder.build(Q, mode)
    with pytest.raises(ValueError, match="chunks changed"):
        thaw_contexts(frozen, CHUNKS[:-2])
    summary = context_summary([Q], thawed, "structure/minilm/dense")
    assert summary["modes"]["oracle"]["mean_evidence_recall"] == 1.0  # both evidence pages, first
    assert summary["modes"]["retrieved"]["mean_evidence_recall"] == 0.0  # company B ranks first
    assert summary["modes"]["retrieved"]["questions"] == 1


def test_frozen_contexts_load_from_their_files_with_the_setups_chunker(tmp_path):
    builder = ContextBuilder(CHUNKS, fake_rank, k=3)
    frozen = freeze_contexts([Q], ["retrieved"], builder, "structure/minilm/dense", progress=False)
    write_jsonl(tmp_path / "contexts.jsonl", frozen)
    with pytest.raises(FileNotFoundError, match="structure.jsonl"):
        load_frozen_contexts(tmp_path / "contexts.jsonl", tmp_path / "chunks")
    write_jsonl(tmp_path / "chunks" / "structure.jsonl", CHUNKS)
    setup, contexts = load_frozen_contexts(tmp_path / "contexts.jsonl", tmp_path / "chunks")
    assert setup == "structure/minilm/dense"
    assert contexts == {("q1", "retrieved"): builder.build(Q, "retrieved")}
    other = freeze_contexts([Q], ["oracle"], builder, "page/mpnet/dense", progress=False)
    write_jsonl(tmp_path / "contexts.jsonl", [*frozen, *other])
    with pytest.raises(ValueError, match="mixes search setups"):
        load_frozen_contexts(tmp_path / "contexts.jsonl", tmp_path / "chunks")


def test_recording_progress_counts_what_is_cached_without_calling(tmp_path):
    base = {"temperature": 0.0, "max_tokens": 64, "seed": 0}
    specs = family_specs("sampled", FAMILIES["sampled"], base)
    builder = ContextBuilder(CHUNKS, fake_rank, k=3)
    contexts = {(Q.qid, m): builder.build(Q, m) for m in ("retrieved", "oracle")}
    llm = CachedLLM(ExtractiveBackend(), tmp_path / "cache", mode="auto", stage="t")
    before = recording_progress([Q], contexts, llm.identity, llm.cache, specs, base)
    assert llm.calls == 0 and all(r["recorded"] == 0 and r["calls"] == 1 for r in before.values())
    generate_answers([Q], contexts, llm, specs[:1], base, progress=False)  # record replicate 0 only
    after = recording_progress([Q], contexts, llm.identity, llm.cache, specs, base)
    assert [after[s.run_id]["recorded"] for s in specs] == [1, 0]
    assert llm.calls == 1
    (entry,) = llm.cache.entries.values()
    assert after[specs[0].run_id]["model_seconds"] == round(entry["latency_s"], 1)
    assert seconds_left(before) is None  # nothing recorded: no rate to go by
    runs = {
        "a": {"calls": 4, "recorded": 2, "model_seconds": 10.0},
        "b": {"calls": 4, "recorded": 0, "model_seconds": 0},
    }
    assert seconds_left(runs) == 30.0  # 5 s per recorded call x 6 missing


def test_an_answer_cut_at_max_tokens_is_recorded_and_counted(tmp_path):
    """finish_reason travels from the backend through the cache into the answer, and run_stats counts the cut ones."""
    from finrag.generate.run import run_stats
    from finrag.llm.backends.base import Backend, Completion

    class Talkative(Backend):
        name, model = "talkative", "t"

        def _complete(self, messages, decoding, documents):
            cut = "What was A's net income" in messages[-1]["content"]
            return Completion(
                text="Reasoning: ...", model=self.model, finish_reason="length" if cut else "stop"
            )

    builder = ContextBuilder(CHUNKS, fake_rank, k=3)
    q2 = Q.model_copy(update={"qid": "q2", "question": "What was B's net income?", "doc_ids": ["B"]})
    contexts = {(q.qid, "retrieved"): builder.build(q, "retrieved") for q in (Q, q2)}
    spec = [RunSpec("t-cot-retrieved", "cot", "retrieved")]
    dec = {"temperature": 0.0, "max_tokens": 8, "seed": 0}
    out = generate_answers([Q, q2], contexts, CachedLLM(Talkative(), tmp_path, mode="auto", stage="t"), spec, dec,
                           progress=False)["t-cot-retrieved"]  # fmt: skip
    replayed = generate_answers([Q, q2], contexts, CachedLLM(Talkative().identity(), tmp_path, mode="replay",
                                stage="t"), spec, dec, progress=False)["t-cot-retrieved"]  # fmt: skip
    assert [a.finish_reason for a in out] == [a.finish_reason for a in replayed]
    assert sorted(a.finish_reason for a in out) == ["length", "stop"]
    assert run_stats(out)["cut_at_max_tokens"] == 1


def test_a_draw_of_several_kinds_orders_kind_after_kind_and_one_kind_draws_as_before():
    from finrag.generate.run import question_sample

    pool = [Question(qid=f"fb{i}", question="q", kind="financebench") for i in range(6)] + [
        Question(qid=f"t{i}", question="q", kind="trick_unanswerable") for i in range(3)
    ]
    one = question_sample(pool, {"kinds": ["financebench"], "seed": 7})
    both = question_sample(pool, {"kinds": ["financebench", "trick_unanswerable"], "seed": 7})
    assert [q.qid for q in both[:6]] == [q.qid for q in one]  # the FinanceBench order does not move
    assert {q.qid for q in both[6:]} == {"t0", "t1", "t2"}
    assert (
        question_sample(pool, {"kinds": ["financebench", "trick_unanswerable"], "seed": 7, "size": 4})
        == both[:4]
    )


def test_a_pinned_style_names_its_run_by_the_style_and_renders_its_version():
    fam = {"run_id": "{tag}-{template}-{context}", "tag": "m", "styles": ["plain@1", "plain@2"],
           "contexts": ["retrieved"], "replicates": [0]}  # fmt: skip
    specs = family_specs("f", fam, {"temperature": 0.0})
    assert [s.run_id for s in specs] == ["m-plain@1-retrieved", "m-plain@2-retrieved"]
    old = {"run_id": "{tag}-{style}-{context}", "tag": "m", "styles": ["plain@1"], "contexts": ["retrieved"],
           "replicates": [0]}  # fmt: skip
    assert family_specs("f", old, {})[0].run_id == "m-plain-retrieved"
