"""The selected system, loaded once, answering one question at a time exactly as the study ran it.

The study picks its final system by a rule fixed in advance (`score.selection`, written to
`results/metrics/eval_main.json: final_system`): a generator, a prompt style and a context mode, over the search
setup `select` chose (`results/selected_setup.json`). This module rebuilds that system from the pipeline's own
files and code, so an answer served here is the answer the study scored:

- a benchmark question (FinanceBench or trick, named by `qid` or by its exact text) asked as evaluated (top_k =
  the frozen k, no filter) gets the passages frozen in `results/contexts.jsonl`, the same prompt, the same cache
  key, and `score_answer_record` with the study's judge and grader: the record equals the one in
  `results/scores/records.jsonl` (tests/test_serve_faithful.py checks every one);
- any other question is searched live with the selected setup (its dense index from the DVC outputs when present,
  else BM25 over the same chunks, and the response says so), answered through the same response cache (auto mode
  records the call, replay refuses a miss) and judged claim by claim with the same judge.

Every score carries the judge's measured agreement with human labels (Cohen's kappa with its 95% CI per
human-labelled set, read from `results/metrics/judge_agreement.json`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import logging
import os
import re
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from finrag.core.config import params as read_params
from finrag.core.config import repo_root
from finrag.core.contracts import Answer, Chunk, Document, Passage, Question, Record
from finrag.core.io import read_json, read_jsonl
from finrag.score.judge_trust import judge_trust
from finrag.score.record import ScoredAnswer
from finrag.serve.params import ServeParams

log = logging.getLogger(__name__)

SERVE_STAGE = "serve"  # live calls are recorded under llm_cache/serve/
# the verifier's logits for live claims: beside the study's logit cache (judge_cache/), never among the response
# cache's shards, which the service reads at start and checks entry by entry
LIVE_LOGITS = Path("judge_cache") / "serve" / "verifier_logits.jsonl"
_OLD_LIVE_LOGITS = Path(SERVE_STAGE) / "verifier_logits.jsonl"  # under serve.cache_dir, before 2026-12-06


def live_logits_path(root: Path, cache_dir: str) -> Path:
    """Where the service keeps live claims' logits; a file left among the response cache's shards by an earlier
    version is moved there first, so a service stopped after live answers starts again."""
    new, old = root / LIVE_LOGITS, root / cache_dir / _OLD_LIVE_LOGITS
    if old.exists():
        new.parent.mkdir(parents=True, exist_ok=True)
        if new.exists():
            with new.open("a", encoding="utf-8") as fh:
                fh.write(old.read_text(encoding="utf-8"))
            old.unlink()
        else:
            os.replace(old, new)
    return new


class LiveScore(Record):
    """The gold-free part of a scored record, for a question the study did not ask: the final answer, whether it
    declines, groundedness by the study's judge and citation quality (no correctness: there is no gold answer)."""

    final_answer: str
    declined: bool
    judge: str
    n_claims: int
    n_supported: int
    n_unsupported: int
    n_contradicted: int
    groundedness: float | None
    fully_grounded: bool
    refusal: bool
    citation_recall: float | None
    citation_precision: float | None
    n_citations: int
    n_invalid_citations: int

    def as_json(self) -> dict:
        """The response's `record`, as ScoredAnswer.as_json gives it for a benchmark question."""
        return self.model_dump()


class ServeError(RuntimeError):
    """A request the system cannot answer; `status` is the HTTP status the service returns with `message`."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status, self.message = status, message


def normalise_question(text: str) -> str:
    """Whitespace folded, ends trimmed: how a typed question is matched to a benchmark question."""
    return re.sub(r"\s+", " ", text).strip()


# a lone surrogate (the JSON escape "\ud800" decodes to one; it cannot be encoded, so hashing would fail) or a
# control character other than tab, newline and carriage return (C0, DEL, C1)
_BAD_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|[\ud800-\udfff]")


def text_problem(text: str) -> str | None:
    """Why `text` cannot be taken as a request's text (None: it can): a lone surrogate is not valid Unicode, and
    a control character other than tab, newline or carriage return is refused. The message names the character
    by its code point, never by itself, so an error reply can always be encoded."""
    m = _BAD_TEXT.search(text)
    if m is None:
        return None
    code = f"U+{ord(m.group()):04X}"
    if m.group() >= "\ud800":
        return f"not valid Unicode: a lone surrogate {code} at character {m.start()}"
    return (
        f"a control character {code} at character {m.start()} "
        "(only tab, newline and carriage return are allowed)"
    )


def _locate(evidence: str, passages: Sequence[Passage]) -> tuple[int | None, int | None, int | None]:
    """(passage n, start, end) of the first evidence snippet the judge quoted, found in a passage's text."""
    for piece in (s.strip() for s in evidence.split(" … ")):
        if len(piece) < 8:
            continue
        for p in passages:
            at = p.text.find(piece)
            if at >= 0:
                return p.n, at, at + len(piece)
    return None, None, None


def claim_views(scored: Mapping, passages: Sequence[Passage]) -> list[dict]:
    """Each claim with its verdict, the passage that supports it (where the judge quoted one) and the span."""
    out = []
    for c in scored["claims"]:
        n, start, end = _locate(str(c.get("evidence") or ""), passages)
        out.append(
            {
                "claim_id": c["claim_id"],
                "text": c["text"],
                "verdict": c["verdict"],
                "passage": n,
                "start": start,
                "end": end,
                "evidence": c.get("evidence") or "",
                "detail": c.get("detail") or "",
            }
        )
    return out


def citation_views(answer: Answer, passages: Sequence[Passage]) -> list[dict]:
    """Every citation with its document, pages and offsets, and whether the span lies in the cited passage."""
    from finrag.score.citations import numbered_passages, verify_offset_citation

    pmap = numbered_passages(passages)
    by_n = {p.n: p for p in passages}
    out = []
    for c in answer.citations:
        p = by_n.get(c.passage)
        out.append(
            {
                "passage": c.passage,
                "doc_id": p.doc_id if p else None,
                "pages": list(p.pages) if p else [],
                "start": c.start,
                "end": c.end,
                "cited_text": c.cited_text,
                "status": verify_offset_citation(c, pmap) if p else "unknown_passage",
            }
        )
    return out


class SelectedSystem:
    """The study's final system, ready to answer (see the module docstring). Thread-safe for reads; the response
    cache's appends are locked on disk."""

    def __init__(
        self, root: Path | None = None, serve: ServeParams | None = None, *, params_file: Path | None = None
    ):
        self.root = Path(root or repo_root())
        pfile = params_file or self.root / "params.yaml"
        section = lambda name: read_params(name, pfile)  # noqa: E731
        self.serve = serve or ServeParams.model_validate(
            section("serve") if "serve" in read_params(None, pfile) else {}
        )
        self.gen_p, self.score_p = section("generate"), section("score")
        self.ctx_p, self.retrieve_p = section("contexts"), section("retrieve")
        self._lock = threading.Lock()
        t0 = time.perf_counter()
        self.live_logits = live_logits_path(self.root, self.serve.cache_dir)  # before the cache is read
        self._load_system()
        self._load_data()
        self._load_judge()
        self._load_llm()
        self.retrieval = self._load_search()
        self.load_seconds = round(time.perf_counter() - t0, 2)
        log.info("selected system %s loaded in %.1f s", self.system["series"], self.load_seconds)

    # ------------------------------------------------------------------------------------------------ loading

    def _path(self, rel: str | os.PathLike) -> Path:
        p = Path(rel)
        return p if p.is_absolute() else self.root / p

    def _need(self, rel: str | os.PathLike, how: str) -> Path:
        p = self._path(rel)
        if not p.exists():
            raise FileNotFoundError(f"{p} is missing: {how}")
        return p

    def _load_system(self) -> None:
        evalm = read_json(
            self._need(self.serve.eval_metrics, "run `dvc repro score` (or restore the release)")
        )
        final = (evalm.get("final_system") or {}).get("system")
        if not final:
            raise ValueError(f"{self.serve.eval_metrics} has no final_system.system: re-run the score stage")
        self.system = dict(final)
        setup = read_json(self._need(self.ctx_p["selected"], "run `dvc repro select`"))
        self.setup = {k: setup[k] for k in ("chunker", "embedder", "method")}
        self.setup_name = "/".join(self.setup.values())
        run_ids = list(final.get("run_ids") or [])
        family = next(
            (
                (name, fam)
                for name, fam in self.gen_p["families"].items()
                if fam["backend"] == final["backend"] and any(r in run_ids for r in self._family_run_ids(fam))
            ),
            None,
        )
        if family is None:
            raise ValueError(f"no generate.families entry produces the selected runs {run_ids}")
        from finrag.generate.run import family_specs

        self.family_name, self.family = family
        specs = [s for s in family_specs(family[0], family[1], self.gen_p["decoding"]) if s.run_id in run_ids]
        self.spec = specs[0]  # a replicate series answers with its first replicate
        self.decoding = {**self.gen_p["decoding"], **dict(self.spec.decoding)}
        agreement_file = self._path(self.serve.agreement_metrics)
        self.agreement = read_json(agreement_file) if agreement_file.exists() else {}

    @staticmethod
    def _family_run_ids(fam: Mapping) -> list[str]:
        """The run ids a family produces, named as generation names them (one copy of that rule)."""
        from finrag.generate.run import family_specs

        return [spec.run_id for spec in family_specs("", fam, {})]

    def _load_data(self) -> None:
        from finrag.retrieve.contexts import load_frozen_contexts

        qfile = self._need(self.gen_p["questions"], "run `dvc repro questions`")
        self.questions = {q.qid: q for q in read_jsonl(qfile, Question) if q.available}
        self.by_text = {normalise_question(q.question): q.qid for q in self.questions.values()}
        if self.family.get("questions"):  # the family's declared draw: only those were asked as evaluated
            from finrag.generate.run import question_sample

            drawn = question_sample(list(self.questions.values()), self.family["questions"])
            self.spec = dataclasses.replace(self.spec, qids=frozenset(q.qid for q in drawn))
        chunks_dir = self._path(self.gen_p["chunks_dir"])
        chunk_file = self._need(chunks_dir / f"{self.setup['chunker']}.jsonl", "run `dvc repro chunk`")
        self.chunks = read_jsonl(chunk_file, Chunk)
        frozen_setup, self.contexts = load_frozen_contexts(self._path(self.gen_p["contexts"]), chunks_dir)
        if frozen_setup != self.setup_name:
            raise ValueError(
                f"results/contexts.jsonl was frozen from {frozen_setup}, not the selected {self.setup_name}"
            )
        self.frozen_k = int(self.ctx_p["k"])
        docs = self._path(self.serve.documents)
        self.documents = read_jsonl(docs, Document) if docs.exists() else []

    def _load_judge(self) -> None:
        from finrag.score.judges.base import make_judge

        spec = dict(self.score_p.get("judge") or {"name": "numeric"})
        self.judge_name = spec["name"]
        if spec["name"] in ("llm", "ragas", "combined"):
            raise ValueError(
                f"score.judge '{spec['name']}' needs a model: the service serves the numeric judge only"
            )
        params = dict(spec.get("params") or {})
        if spec["name"] in ("verifier", "study"):
            # the trained judge: its files under this root; the study's logit cache is read, never written (a live
            # claim's logit goes to the service's own file, beside its recorded live answers)
            params["model_dir"] = str(self.root / params.get("model_dir", "data/models/verifier"))
            if params.get("cache"):
                params["extra_caches"] = [str(self.root / params["cache"])]
            params["cache"] = str(self.live_logits)
        # unwrapped: score's MemoJudge only saves repeated work and would grow without bound in a service
        self.judge = make_judge(spec["name"], **params)
        self.trust = judge_trust(self.agreement, self.judge_name)

    def _load_llm(self) -> None:
        from finrag.generate.run import backend_settings
        from finrag.llm.backends.base import make_backend
        from finrag.llm.cache import CachedLLM

        chosen = os.environ.get("FINRAG_SERVE_BACKEND") or self.serve.backend or self.system["backend"]
        overrides = self.family.get("backend_params") if chosen == self.system["backend"] else None
        self.backend_name = chosen
        backend = make_backend(chosen, **backend_settings(self.gen_p, chosen, overrides))
        self.cache_mode = os.environ.get("FINRAG_LLM_MODE", self.serve.cache_mode)
        self.llm = CachedLLM(
            backend, self._path(self.serve.cache_dir), mode=self.cache_mode, stage=SERVE_STAGE
        )
        # the evaluated answers replay only from the selected system's own backend
        self.is_selected_backend = chosen == self.system["backend"]

    def _store_settings(self) -> tuple[str, dict]:
        cfg = self.serve.store
        qdrant = os.environ.get("FINRAG_SERVE_QDRANT")
        if qdrant:
            where = {"url": qdrant} if qdrant.startswith(("http://", "https://")) else {"path": qdrant}
            return "qdrant", {**where, "collection": cfg.collection}
        if cfg.kind == "qdrant":
            where = {"url": cfg.url} if cfg.url else {"path": str(self._path(cfg.path))} if cfg.path else {}
            return "qdrant", {**where, "collection": cfg.collection}
        return cfg.kind, {}

    def _load_search(self) -> dict:
        """The selected setup over its DVC outputs (vectors from the embed stage in the configured store, queries
        embedded by the same model); BM25 over the same chunks when the vectors are absent, said in every answer."""
        from finrag.retrieve.embedding import make_embedder
        from finrag.retrieve.methods import build_search_context
        from finrag.retrieve.stores import DenseIndex, make_store

        method = self.setup["method"]
        emb_dir = self._path(self.retrieve_p["embeddings_dir"])
        vectors_file = emb_dir / self.setup["chunker"] / f"{self.setup['embedder']}.npy"
        info: dict[str, Any] = {"setup": self.setup_name, "method": method, "store": None, "fallback": None}
        vectors = None
        if method != "bm25":
            if vectors_file.exists():
                import numpy as np

                vectors = np.load(vectors_file)
                if len(vectors) != len(self.chunks):
                    raise ValueError(f"{vectors_file}: {len(vectors)} vectors for {len(self.chunks)} chunks")
            else:
                shown = (
                    vectors_file.relative_to(self.root)
                    if vectors_file.is_relative_to(self.root)
                    else vectors_file
                )
                info["fallback"] = f"{shown} is absent (dvc pull, or the embed stage)"
                method = "bm25"
        self.search_ctx = build_search_context(self.chunks, None, None, self.retrieve_p, methods=[method])
        if vectors is not None:
            kind, kwargs = self._store_settings()
            store = make_store(kind, dim=int(vectors.shape[1]), **kwargs)
            if len(store) == 0:
                store.add(list(range(len(vectors))), vectors)
            elif len(store) != len(vectors):
                raise ValueError(f"the {kind} store holds {len(store)} vectors, the setup {len(vectors)}")
            name = self.setup["embedder"]
            embedder = make_embedder(name, **(self.retrieve_p.get("embedders") or {}).get(name, {}))
            self.search_ctx.dense = DenseIndex(embedder, store, [c.text for c in self.chunks], progress=False)
            info["store"] = {"kind": kind, **{k: v for k, v in kwargs.items() if k in ("path", "url")}}
        info["method"] = method
        if info["fallback"]:
            log.warning("live search falls back to BM25: %s", info["fallback"])
        self.search_method = method
        return info

    # ------------------------------------------------------------------------------------------------ answering

    def benchmark_question(self, question: str, qid: str | None) -> Question | None:
        if qid is not None:
            q = self.questions.get(qid)
            if q is None:
                raise ServeError(404, f"unknown qid '{qid}' (GET /v1/questions lists them)")
            if normalise_question(q.question) != normalise_question(question):
                raise ServeError(422, f"question text does not match qid '{qid}'")
            return q
        found = self.by_text.get(normalise_question(question))
        return self.questions[found] if found else None

    def _retrieve(self, question: str, k: int, use_filter: bool) -> tuple[list[Passage], dict]:
        from finrag.retrieve.contexts import passages_from
        from finrag.retrieve.search import search

        allowed = None
        if use_filter and self.documents:
            allowed = self.search_ctx.filtered_indices(
                Question(qid="live", question=question), self.documents
            )
        hits = search(self.search_ctx, self.search_method, question, k, allowed)
        info = {
            **self.retrieval,
            "filtered": allowed is not None,
            "allowed_chunks": len(allowed) if allowed else None,
        }
        return passages_from(self.chunks, hits), info

    def answer(
        self, question: str, top_k: int | None = None, use_filter: bool | None = None, qid: str | None = None
    ) -> dict:
        """One answer with its claims, groundedness, citations, declining, correctness (benchmark questions) and the
        judge's measured trust. Raises ServeError (422: text with a lone surrogate or a control character; 409: replay
        miss; 503: spending cap; 502: backend failure)."""
        from finrag.llm.cache import CacheMiss
        from finrag.llm.errors import LLMError, SpendingCapExceeded
        from finrag.llm.prompts.render import get_style, render

        for name, value in (("question", question), ("qid", qid)):
            problem = text_problem(value) if isinstance(value, str) else None
            if problem:  # the service refuses it at its boundary; a direct caller gets the same refusal here
                raise ServeError(422, f"{name}: {problem}")
        text = normalise_question(question)
        k = self.frozen_k if top_k is None else int(top_k)
        bench = self.benchmark_question(text, qid)
        as_evaluated = (
            bench is not None
            and k == self.frozen_k
            and not use_filter
            and self.is_selected_backend
            and self.spec.asks(bench.qid)
            and (bench.qid, self.spec.context_mode) in self.contexts
        )
        timing: dict[str, float] = {}
        t0 = time.perf_counter()
        if as_evaluated:
            passages = self.contexts[(cast(Question, bench).qid, self.spec.context_mode)]
            retrieval = {
                "setup": self.setup_name,
                "method": self.setup["method"],
                "frozen": "results/contexts.jsonl",
            }
            retrieval.update(filtered=False, fallback=None)
        else:
            passages, retrieval = self._retrieve(text, k, bool(use_filter))
        timing["retrieval"] = time.perf_counter() - t0

        t1 = time.perf_counter()
        messages, template_id = render(self.spec.style, text if bench is None else bench.question, passages)
        item = (
            f"{cast(Question, bench).qid}/{self.spec.run_id}"
            if as_evaluated
            else "live:" + hashlib.sha256(text.encode()).hexdigest()[:16]
        )
        try:
            comp, key, hit = self.llm.complete(
                messages,
                get_style(self.spec.style).decoding(self.decoding),
                replicate=self.spec.replicate,
                template_id=template_id,
                item_id=item,
            )
        except CacheMiss as exc:
            raise ServeError(409, f"not in the response cache and the service replays only: {exc}") from None
        except SpendingCapExceeded as exc:
            raise ServeError(503, f"spending cap reached: {exc}") from None
        except LLMError as exc:
            raise ServeError(502, f"the model backend failed: {exc}") from None
        timing["generation"] = time.perf_counter() - t1

        from finrag.generate.run import answer_from_completion

        run_id = self.spec.run_id if as_evaluated else f"serve-{self.spec.run_id}"
        qid_out = bench.qid if bench else "live"
        ans = answer_from_completion(
            comp, key, self.llm, qid_out, run_id, self.spec, template_id, passages, messages
        )
        t2 = time.perf_counter()
        record, detail = self._score(ans, bench)
        timing["judging"] = time.perf_counter() - t2
        return self._response(
            text, bench, as_evaluated, ans, passages, retrieval, record, detail, hit, timing
        )

    def _score(self, ans: Answer, bench: Question | None) -> tuple[ScoredAnswer | LiveScore, dict]:
        """The study's record (benchmark questions) or its gold-free part, plus per-claim detail."""
        from finrag.llm.prompts.parse import extract_answer
        from finrag.score.citations import score_answer_citations
        from finrag.score.claims import score_answer, split_claims
        from finrag.score.declining import declined
        from finrag.score.evaluate import score_answer_record

        claims = split_claims(ans.text)
        detail = score_answer(ans.text, ans.passages, self.judge, claims=claims)
        if bench is not None:
            record = score_answer_record(
                ans,
                bench,
                self.judge,
                citations=bool(self.score_p.get("citations", True)),
                grader_params=dict(self.score_p.get("grader") or {}) or None,
                replicate_suffix=self.score_p.get("replicate_suffix") or r"(?<=-r)\d+$",
            )
            return record, detail
        final = extract_answer(ans.text)
        cit = score_answer_citations(ans, self.judge)
        live = LiveScore(
            final_answer=final,
            declined=declined(final),
            judge=detail["judge"],
            n_claims=detail["n_claims"],
            n_supported=detail["n_supported"],
            n_unsupported=detail["n_unsupported"],
            n_contradicted=detail["n_contradicted"],
            groundedness=detail["groundedness"],
            fully_grounded=detail["fully_grounded"],
            refusal=detail["refusal"],
            citation_recall=cit["citation_recall"],
            citation_precision=cit["citation_precision"],
            n_citations=cit["n_citations"],
            n_invalid_citations=cit["n_invalid_citations"],
        )
        return live, detail

    def _response(
        self,
        text,
        bench,
        as_evaluated,
        ans,
        passages,
        retrieval,
        rec: ScoredAnswer | LiveScore,
        detail,
        hit,
        timing,
    ) -> dict[str, Any]:
        correctness = None
        if bench is not None and isinstance(rec, ScoredAnswer):
            correctness = {
                "gold": bench.answer,
                "verdict": rec.verdict,
                "correct": rec.correct,
                "verdict_source": rec.verdict_source,
                "grade_method": rec.grade_method,
                "expected_behaviour": rec.expected_behaviour,
                "note": None
                if as_evaluated
                else "graded against the gold answer, but not as evaluated "
                "(other top_k, filter or backend): this answer is not one the study scored",
            }
        return {
            "question": text,
            "qid": bench.qid if bench else None,
            "kind": bench.kind if bench else None,
            "source": "evaluation" if as_evaluated else "live",
            "system": {
                "series": self.system["series"],
                "run_id": ans.run_id,
                "backend": ans.backend,
                "model": ans.model,
                "prompt_style": ans.prompt_style,
                "template_id": ans.template_id,
                "context_mode": ans.context_mode,
            },
            "retrieval": retrieval,
            "answer": ans.text,
            "final_answer": rec.final_answer,
            "declined": rec.declined,
            "passages": [p.model_dump(mode="json") for p in passages],
            "claims": claim_views(detail, passages),
            "groundedness": rec.groundedness,
            "fully_grounded": rec.fully_grounded,
            "n_claims": rec.n_claims,
            "citations": citation_views(ans, passages),
            "citation_recall": rec.citation_recall,
            "citation_precision": rec.citation_precision,
            "correctness": correctness,
            "judge": self.trust,
            "record": rec.as_json(),
            "cache": {"hit": bool(hit), "key": ans.cache_key, "mode": self.cache_mode},
            "usage": {**ans.usage, "cost_usd": ans.cost_usd, "model_latency_s": ans.latency_s},
            "timing_ms": {k: round(v * 1000, 2) for k, v in timing.items()},
        }

    def question_list(self) -> list[dict]:
        return [
            {
                "qid": q.qid,
                "question": q.question,
                "kind": q.kind,
                "company": q.company,
                "question_type": q.question_type,
            }
            for q in sorted(self.questions.values(), key=lambda q: (q.kind != "financebench", q.qid))
            if self.spec.asks(q.qid)  # the questions the selected system was evaluated on
        ]

    def describe(self) -> dict:
        return {
            "system": self.system,
            "setup": self.setup,
            "retrieval": self.retrieval,
            "backend": self.backend_name,
            "cache_mode": self.cache_mode,
            "frozen_k": self.frozen_k,
            "questions": sum(self.spec.asks(q) for q in self.questions),  # those asked as evaluated
            "chunks": len(self.chunks),
            "judge": self.trust,
            "load_seconds": self.load_seconds,
        }
