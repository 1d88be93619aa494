"""RAGAS faithfulness as a groundedness judge, computed by the `ragas` library over finrag's cached LLMs.

Why: a widely used, independently written groundedness metric beside finrag's own judges, so the agreement stage
can report how a standard tool fares on the same human labels. ragas only does the scoring; every model call goes
through finrag.llm.cache.CachedLLM, so ragas' prompts and the replies are recorded in the response cache and
replay offline byte for byte (replay mode: a miss is a hard CacheMiss, never a silent call).

How ragas 0.4.3 computes faithfulness (`ragas.metrics.collections.Faithfulness`, the non-deprecated API):
prompt 1 splits the response into atomic statements (JSON {"statements": [str]}); prompt 2 gives each statement a
0/1 verdict against the contexts joined by newlines (JSON {"statements": [{statement, reason, verdict}]}); the
score is the share of verdicts equal to 1, NaN when either list is empty. One claim therefore costs 2 model calls,
plus one per re-ask of a reply that does not parse (`max_retries`, default 1).

The custom-model extension point of that API is ragas' `InstructorBaseRagasLLM` (generate / agenerate(prompt,
response_model) -> a pydantic instance); the older BaseRagasLLM / LangchainLLMWrapper are deprecated and rejected
by collections metrics. The adapter below sends ragas' prompt as one user message and parses the reply with
ragas' own `extract_json` plus the response model; a reply that still fails after the re-asks raises ragas'
`RagasOutputParserException`.

Offline: RAGAS_DO_NOT_TRACK is set to "true" before ragas is imported (ragas' telemetry switch, read once), and
faithfulness needs no embeddings model. ragas is imported only when a judge is built (the import takes seconds),
so importing this module, or finrag.score.judge which registers the "ragas" judge, stays cheap.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from finrag.core.contracts import ClaimVerdict, Verdict
from finrag.core.io import sha256_text
from finrag.score.claims import strip_citations
from finrag.score.judges.base import BaseJudge

RAGAS_REQUIREMENTS = ("ragas==0.4.3", "langchain-community<0.4")
DEFAULT_DECODING = {"temperature": 0.0, "max_tokens": 1024}  # ragas' own default output budget is 1024 tokens
REASK = (
    "Your reply could not be read as JSON that complies with the schema given above. Reply again with only that "
    "JSON object, using double quotes."
)  # fixed text (no parser message in it), so a re-ask's cache key does not depend on library versions
_STATEMENTS_MODEL = "StatementGeneratorOutput"
_NLI_MODEL = "NLIStatementOutput"


class RagasUnavailable(ImportError):
    """ragas (or a dependency it needs) is not installed; the message names the requirements."""


@lru_cache(maxsize=1)
def load_ragas() -> SimpleNamespace:
    """Import ragas with telemetry off; the pieces this module uses. Raises RagasUnavailable when absent."""
    os.environ["RAGAS_DO_NOT_TRACK"] = "true"
    try:
        import ragas
        from ragas._analytics import do_not_track
        from ragas.exceptions import RagasOutputParserException
        from ragas.llms.base import InstructorBaseRagasLLM
        from ragas.metrics.collections import Faithfulness
        from ragas.prompt.utils import extract_json
    except ImportError as exc:
        need = " ".join(f'"{r}"' for r in RAGAS_REQUIREMENTS)
        raise RagasUnavailable(f"the ragas judge needs {need} installed ({exc})") from exc
    do_not_track.cache_clear()  # in case something read the switch before we set it
    if not do_not_track():
        raise RuntimeError("ragas telemetry could not be switched off (RAGAS_DO_NOT_TRACK)")
    return SimpleNamespace(
        version=ragas.__version__,
        Faithfulness=Faithfulness,
        InstructorBaseRagasLLM=InstructorBaseRagasLLM,
        RagasOutputParserException=RagasOutputParserException,
        extract_json=extract_json,
    )


def ragas_version() -> str:
    return load_ragas().version


class CachedRagasLLM:
    """ragas' structured-output LLM interface over anything with CachedLLM's `.complete`.

    `generate(prompt, response_model)` sends the prompt as one user message with fixed decoding, template
    `ragas-faithfulness@<ragas version>` and item id `ragas:<sha256(prompt)[:16]>`, and parses the reply into
    `response_model`; a reply that does not parse is re-asked up to `max_retries` times (the bad reply and a fixed
    request to fix it appended, as instructor does), then ragas' RagasOutputParserException is raised. Every call
    is appended to `self.log` (step, cache key, hit, parsed output or error, raw reply) for the judge to read.
    Build it with `make_ragas_llm`, which gives it ragas' base class. Not meant to be shared across threads.
    """

    def __init__(
        self,
        llm,
        decoding: dict | None = None,
        template_id: str | None = None,
        max_retries: int = 1,
        system_prompt: str | None = None,
        replicate: int = 0,
    ):
        self.llm = llm
        self.replicate = int(replicate)  # part of the cache key: another index is a new sample
        self.decoding = dict(decoding) if decoding is not None else dict(DEFAULT_DECODING)
        self.template_id = template_id or f"ragas-faithfulness@{ragas_version()}"
        self.max_retries = max(0, int(max_retries))
        self.system_prompt = system_prompt
        self.log: list[dict] = []
        self.stats = {"calls": 0, "cache_hits": 0, "reasks": 0, "unparsed_replies": 0}

    def generate(self, prompt: str, response_model):
        r = load_ragas()
        messages = [{"role": "system", "content": self.system_prompt}] if self.system_prompt else []
        messages.append({"role": "user", "content": prompt})
        item = "ragas:" + sha256_text(prompt)[:16]
        for attempt in range(self.max_retries + 1):
            completion, key, hit = self.llm.complete(
                messages,
                self.decoding,
                replicate=self.replicate,
                template_id=self.template_id,
                item_id=item if attempt == 0 else f"{item}:reask{attempt}",
            )
            self.stats["calls"] += 1
            self.stats["cache_hits"] += int(bool(hit))
            text = completion.text or ""
            rec: dict[str, Any] = {"step": response_model.__name__, "cache_key": key, "hit": bool(hit)}
            try:
                out = response_model.model_validate_json(r.extract_json(text))
            except ValueError as exc:  # pydantic's ValidationError (bad JSON or wrong shape) is a ValueError
                self.stats["unparsed_replies"] += 1
                errors = exc.errors(include_url=False) if hasattr(exc, "errors") else []
                rec.update(
                    error="; ".join(
                        f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in errors[:3]
                    )
                    or str(exc)[:300],
                    raw=text[:500],
                )
                self.log.append(rec)
                if attempt < self.max_retries:
                    self.stats["reasks"] += 1
                    messages = [
                        *messages,
                        {"role": "assistant", "content": text},
                        {"role": "user", "content": REASK},
                    ]
                continue
            rec["parsed"] = out.model_dump(mode="json")
            self.log.append(rec)
            return out
        raise r.RagasOutputParserException()

    async def agenerate(self, prompt: str, response_model):
        """ragas awaits this; the cached call is synchronous (calls are made one at a time, in order)."""
        return self.generate(prompt, response_model)


@lru_cache(maxsize=1)
def _adapter_class() -> type:
    """CachedRagasLLM with ragas' InstructorBaseRagasLLM as a base, so ragas' collections metrics accept it."""
    return type("CachedRagasLLM", (CachedRagasLLM, load_ragas().InstructorBaseRagasLLM), {})


def make_ragas_llm(llm, **kwargs) -> CachedRagasLLM:
    """A ragas-compatible LLM (an InstructorBaseRagasLLM) over a CachedLLM; kwargs go to CachedRagasLLM."""
    return _adapter_class()(llm, **kwargs)


def _run(coro):
    """Run a coroutine to the end from sync code, also when an event loop is already running (notebooks)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(coro)
    with ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


class RagasFaithfulnessJudge(BaseJudge):
    """Supported when ragas faithfulness of the claim against the passages is at least `threshold`.

    ragas scores (user_input=question, response=claim, retrieved_contexts=passages); ragas 0.4.3 rejects an empty
    user_input, and the judge has no question, so `question` is a fixed placeholder. threshold defaults to 1.0:
    the score is the share of the claim's statements supported, and finrag (like its human labels, where
    "Partial" is unsupported) calls a claim supported only when all of it is; a claim is usually one or two
    statements, so 0.5 would accept half-supported claims. ragas has no "contradicted": verdicts are supported or
    unsupported. When ragas cannot parse the model's output (re-asks exhausted, an empty statement or verdict
    list giving a NaN score, a verdict other than 0/1, fewer verdicts than statements), the claim is unsupported
    with detail parse_failed and counted in `self.stats["parse_failures"]`; it is never silently supported.
    Statements that repeat the placeholder question are left out of the score (a small model copies it into the
    claim's statements); a claim with no other statement is a parse failure. Cache misses in replay mode and
    backend errors propagate.

    Params: threshold, decoding (finrag decoding dict; default temperature 0, max_tokens 1024), max_retries
    (re-asks of an unparseable reply), max_passage_chars (each passage cut to this), question (the placeholder),
    template_id (default ragas-faithfulness@<ragas version>), name, replicate (cache-key replicate index).
    """

    name = "ragas"

    def __init__(
        self,
        llm,
        threshold: float = 1.0,
        decoding: dict | None = None,
        max_retries: int = 1,
        max_passage_chars: int = 6000,
        question: str = "(not given)",
        template_id: str | None = None,
        name: str | None = None,
        replicate: int = 0,
    ):
        if llm is None:
            raise ValueError("the ragas judge needs an LLM (a finrag.llm.cache.CachedLLM)")
        if not 0.0 <= float(threshold) <= 1.0:
            raise ValueError(f"ragas judge threshold must be in [0, 1], not {threshold!r}")
        if not question.strip():
            raise ValueError("ragas judge question must not be empty (ragas rejects an empty user_input)")
        r = load_ragas()
        self.ragas_version = r.version
        self.threshold = float(threshold)
        self.max_passage_chars = max_passage_chars
        self.question = question
        self._adapter = make_ragas_llm(
            llm, decoding=decoding, template_id=template_id, max_retries=max_retries, replicate=replicate
        )
        self.metric = r.Faithfulness(llm=self._adapter)
        if name:
            self.name = name
        self.stats = {
            "claims": 0,
            "calls": 0,
            "cache_hits": 0,
            "reasks": 0,
            "parse_failures": 0,
            "verdict_count_mismatches": 0,
            "skipped": 0,
        }

    @property
    def llm(self):
        """The CachedLLM behind ragas (settable, so scoring can wrap it in a meter)."""
        return self._adapter.llm

    @llm.setter
    def llm(self, value) -> None:
        self._adapter.llm = value

    @property
    def template_id(self) -> str:
        return self._adapter.template_id

    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "") -> ClaimVerdict:
        r = load_ragas()
        self.stats["claims"] += 1
        text = strip_citations(claim).strip()
        contexts = [p.strip()[: self.max_passage_chars] for p in passages if p and p.strip()]
        detail: dict[str, Any] = {
            "method": "ragas-faithfulness",
            "ragas_version": self.ragas_version,
            "threshold": self.threshold,
        }
        if not text or not contexts:  # ragas refuses these; nothing to ask a model
            self.stats["skipped"] += 1
            detail["skipped"] = "empty claim" if not text else "no passages"
            return ClaimVerdict(claim_id=claim_id, verdict="unsupported", judge=self.name, detail=detail)
        adapter = self._adapter
        adapter.log = []
        before = dict(adapter.stats)
        failure = None
        try:
            result = _run(
                self.metric.ascore(user_input=self.question, response=text, retrieved_contexts=contexts)
            )
            score = result.value
        except r.RagasOutputParserException:
            score, failure = None, "reply not parsed after re-asks"
        for k in ("calls", "cache_hits", "reasks"):
            self.stats[k] += adapter.stats[k] - before[k]
        log = list(adapter.log)
        statements = next(
            (e["parsed"]["statements"] for e in log if e["step"] == _STATEMENTS_MODEL and "parsed" in e), None
        )
        verdicts = next(
            (e["parsed"]["statements"] for e in log if e["step"] == _NLI_MODEL and "parsed" in e), None
        )
        dropped = 0
        if failure is None:
            if score is None or (isinstance(score, float) and math.isnan(score)):
                failure = "no statements extracted" if not statements else "no verdicts given"
            elif any(v.get("verdict") not in (0, 1) for v in verdicts or []):
                failure = "a verdict other than 0/1"
            elif statements is not None and len(verdicts or []) < len(statements):
                failure = "fewer verdicts than statements"  # unjudged statements must not pass as supported
            else:
                # ragas must be given a question; a small model copies the placeholder into the claim's statements,
                # and its verdict on "(not given)" is not about the claim: such statements are left out
                kept = [v for v in verdicts or [] if self.question not in str(v.get("statement", ""))]
                dropped = len(verdicts or []) - len(kept)
                if dropped and not kept:
                    failure = "only the placeholder question was extracted as a statement"
                elif dropped:
                    score = sum(int(v["verdict"]) for v in kept) / len(kept)
        detail.update(
            placeholder_statements_dropped=dropped,
            score=None if failure else round(float(score), 4),
            statements=statements,
            verdicts=verdicts,
            cache_keys=[e["cache_key"] for e in log],
            calls=len(log),
        )
        errors = [{"step": e["step"], "error": e["error"], "raw": e["raw"]} for e in log if "error" in e]
        if errors:
            detail["parse_errors"] = errors
        if statements is not None and verdicts is not None and len(statements) != len(verdicts):
            detail["verdict_count_mismatch"] = True  # fewer verdicts: a parse failure (above); more: flagged
            self.stats["verdict_count_mismatches"] += 1
        if failure:
            self.stats["parse_failures"] += 1
            detail.update(parse_failed=True, parse_failure=failure)
            verdict: Verdict = "unsupported"
        else:
            verdict = "supported" if float(score) >= self.threshold else "unsupported"
        evidence = " | ".join(f"{v.get('verdict')}: {v.get('reason', '')}" for v in verdicts or [])
        return ClaimVerdict(
            claim_id=claim_id, verdict=verdict, judge=self.name, evidence=evidence[:1000], detail=detail
        )
