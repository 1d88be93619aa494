"""Generation runs through the response cache (the passages come from finrag.retrieve.contexts).

A run is resumable by construction: every call goes through `CachedLLM`, so re-running a killed run replays what
was recorded and calls the model only for what is missing. Answers are written once, atomically, at the end; the
cache is the durable record.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from tqdm import tqdm

from finrag.core.contracts import Answer, Passage, Question
from finrag.core.io import canonical_json
from finrag.core.sampling import per_stratum_ranks
from finrag.llm.cache import CachedLLM, ResponseCache, cache_key, cache_request
from finrag.llm.executor import ModelCall
from finrag.llm.prompts.render import get_style, render, style_name

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RunSpec:
    """One generation run: a model, a prompt style, a context mode and a replicate index. `family` and
    `decoding` (merged over the call's base decoding) let runs of several families share one pass."""

    run_id: str
    style: str
    context_mode: str
    replicate: int = 0
    family: str = ""
    decoding: tuple[tuple[str, object], ...] = ()
    condition: str = ""  # a context condition's name (its own contexts file); "" for the frozen modes
    qids: frozenset[str] | None = None  # the family's declared question sample; None: every question

    @property
    def contexts_key(self) -> str:
        """The name its passages are filed under: the condition, else the frozen mode."""
        return self.condition or self.context_mode

    def asks(self, qid: str) -> bool:
        return self.qids is None or qid in self.qids


def family_specs(
    name: str,
    family: Mapping,
    base_decoding: Mapping,
    condition_modes: Mapping[str, str] | None = None,
    qids: Sequence[str] | None = None,
) -> list[RunSpec]:
    """The runs of one `generate.families` entry, each carrying the family's full decoding. A style is a name (its
    current version) or pinned as `name@version`; run ids format `{style}` as the name and `{template}` as given. A `contexts` entry that
    names a context condition (a key of `condition_modes`: condition -> its frozen mode) runs on that condition's
    passages under its mode; `qids` is the family's question sample, if it declares one."""
    decoding = {**base_decoding, **family.get("decoding", {})}
    conditions = condition_modes or {}
    return [
        RunSpec(
            run_id=family["run_id"].format(
                tag=family["tag"], style=style_name(style), template=style, context=mode, replicate=rep
            ),
            style=style,
            context_mode=conditions.get(mode, mode),
            replicate=rep,
            family=name,
            decoding=tuple(sorted(decoding.items())),
            condition=mode if mode in conditions else "",
            qids=frozenset(qids) if qids is not None else None,
        )
        for style in family["styles"]
        for mode in family["contexts"]
        for rep in family["replicates"]
    ]


def question_sample(questions: Sequence[Question], sample: Mapping | None) -> list[Question]:
    """A family's declared question sample (`questions: {kinds, seed, size}`), in its draw order: the first `size`
    (default: all) of one seeded shuffle of the questions of those kinds, in the order given (the generate stage
    gives the available ones in the file's order). With several `kinds`, the kinds come one after another in the
    order listed, each in its own seeded shuffle (one kind: the same order as a draw of that kind alone). Raising `size` keeps every question drawn before (the recorded
    calls stay in use), and recording in draw order leaves a usable prefix whenever it stops. The shuffle is of the
    whole pool: a question added to or removed from it (a filing the mirror gains) redraws the others."""
    if not sample:
        return list(questions)
    kinds = sample.get("kinds") or [None]
    ordered: list[Question] = []
    for kind in kinds:
        pool = [q for q in questions if kind is None or q.kind == kind]
        ranks = per_stratum_ranks(pool, lambda _q: "all", int(sample["seed"]))
        ordered += [q for _, q in sorted(zip(ranks, pool, strict=True), key=lambda t: t[0])]
    return ordered[: int(sample.get("size", len(ordered)))]


def load_conditions(
    contexts: dict[tuple[str, str], list[Passage]],
    conditions_dir: Path,
    names: Sequence[str],
    chunks_dir: Path,
) -> dict[str, str]:
    """Add each named context condition's passages (the context_conditions stage's file) to `contexts` under
    (qid, name); return name -> the frozen mode its passages are (so each answer keeps a valid context_mode)."""
    from finrag.retrieve.conditions import condition_files
    from finrag.retrieve.contexts import load_frozen_contexts

    modes: dict[str, str] = {}
    for name, path in condition_files(conditions_dir, names).items():
        if not path.is_file():
            raise FileNotFoundError(f"context condition '{name}' not found at {path}: run context_conditions")
        _setup, thawed = load_frozen_contexts(path, chunks_dir)
        for (qid, mode), passages in thawed.items():
            contexts[(qid, name)] = passages
            modes[name] = mode
    return modes


def plan_runs(
    p: Mapping,
    fams: Mapping[str, Mapping],
    questions: Sequence[Question],
    contexts: dict[tuple[str, str], list[Passage]],
    chunks_dir: Path,
) -> tuple[list[Question], list[RunSpec]]:
    """The questions in the order to ask them and every run spec of `fams`, with the context conditions they name
    loaded into `contexts` and each family's declared question draw (drawn from `questions` as given: the
    available ones in the file's order). One plan for the generate stage and `finrag progress`. Families with a
    draw and families without one are not run in one pass (the draw's order would reorder the others' answers)."""
    named = sorted({m for fam in fams.values() for m in fam["contexts"]} - {"retrieved", "oracle"})
    modes = load_conditions(contexts, Path(p["conditions_dir"]), named, chunks_dir) if named else {}
    with_draw = [n for n, f in fams.items() if f.get("questions")]
    if with_draw and len(with_draw) != len(fams):
        raise ValueError(
            f"families {with_draw} declare a question draw and the others do not: run them apart"
        )
    draws = {
        canonical_json({k: v for k, v in fams[n]["questions"].items() if k != "size"}) for n in with_draw
    }
    if len(draws) > 1:
        raise ValueError(f"families {sorted(fams)} declare different question draws: run them one at a time")
    sampled = {n: [q.qid for q in question_sample(questions, fams[n]["questions"])] for n in with_draw}
    ordered = list(questions)
    if draws:  # ask in the draw's order, so a stopped recording leaves a usable prefix
        first = question_sample(questions, {**json.loads(draws.pop()), "size": len(questions)})
        rank = {q.qid: i for i, q in enumerate(first)}
        ordered = sorted(questions, key=lambda q: rank.get(q.qid, len(rank)))
    specs = [
        spec
        for name, fam in fams.items()
        for spec in family_specs(name, fam, p["decoding"], modes, sampled.get(name))
    ]
    return ordered, specs


def select_families(p: Mapping, names: Sequence[str]) -> dict[str, Mapping]:
    """The named families of the `generate` params section, in order; an unknown name is an error."""
    unknown = [f for f in names if f not in p["families"]]
    if unknown:
        raise ValueError(
            f"unknown family {unknown}; params.yaml generate.families has {sorted(p['families'])}"
        )
    return {name: p["families"][name] for name in names}


def backend_settings(p: Mapping, backend: str, overrides: Mapping | None = None) -> dict:
    """A backend's settings: its `generate.backends` entry, then a family's `backend_params` on top."""
    return {**p["backends"].get(backend, {}), **(overrides or {})}


def shared_backend(families: Mapping[str, Mapping]) -> tuple[str, dict]:
    """The one backend (name, params overrides) that several families run on; they must agree to share a pass."""
    seen = {canonical_json([f["backend"], f.get("backend_params") or {}]) for f in families.values()}
    if len(seen) != 1:
        raise ValueError(
            f"families {sorted(families)} use different backends {sorted(seen)}: run them one at a time"
        )
    backend, overrides = json.loads(seen.pop())
    return backend, dict(overrides)


def plan_calls(
    questions: Sequence[Question],
    contexts: dict[tuple[str, str], list[Passage]],
    specs: Sequence[RunSpec],
    decoding: dict,
) -> list[tuple[Question, RunSpec, list[Passage], ModelCall]]:
    """Every call of the runs, in the order they are made: question -> replicate -> context -> style, so consecutive
    prompts share their longest prefix (system + passages) in a local model's KV cache, across families too when
    several run in one pass. Each call's group is its question (an executor keeps a group on one worker)."""
    if len({s.run_id for s in specs}) != len(specs):
        raise ValueError("two run specs share a run_id")
    order = sorted(specs, key=lambda s: (s.replicate, s.contexts_key, s.style, s.family, s.run_id))
    out = []
    for q in questions:
        for spec in order:
            if not spec.asks(q.qid):
                continue
            passages = contexts[(q.qid, spec.contexts_key)]
            messages, template_id = render(spec.style, q.question, passages)
            call = ModelCall(
                messages=messages,
                decoding=get_style(spec.style).decoding({**decoding, **dict(spec.decoding)}),
                replicate=spec.replicate,
                template_id=template_id,
                item_id=f"{q.qid}/{spec.run_id}",
                group=q.qid,
            )
            out.append((q, spec, passages, call))
    return out


def generate_answers(
    questions: Sequence[Question],
    contexts: dict[tuple[str, str], list[Passage]],
    llm: CachedLLM,
    specs: Sequence[RunSpec],
    decoding: dict,
    progress: bool = True,
) -> dict[str, list[Answer]]:
    """Answer every question under every run spec (a spec's own decoding overrides `decoding`), in `plan_calls`'s
    order; a call already in the cache (recorded earlier, or by an executor's workers) is replayed."""
    planned = plan_calls(questions, contexts, specs, decoding)
    out: dict[str, list[Answer]] = {s.run_id: [] for s in specs}
    bar = tqdm(
        total=len(planned), desc=f"generate[{llm.identity['model']}]", disable=not progress, unit="call"
    )
    for q, spec, passages, call in planned:
        comp, key, _hit = llm.complete(
            call.messages,
            call.decoding,
            replicate=call.replicate,
            template_id=call.template_id,
            item_id=call.item_id,
        )
        out[spec.run_id].append(
            answer_from_completion(
                comp, key, llm, q.qid, spec.run_id, spec, call.template_id, passages, call.messages
            )
        )
        bar.update(1)
        bar.set_postfix(calls=llm.calls, hits=llm.hits)
    bar.close()
    return out


def answer_from_completion(comp, key, llm, qid, run_id, spec, template_id, passages, messages) -> Answer:
    """The Answer record of one completed call (generation and the service build it the same way)."""
    return Answer(
        qid=qid,
        run_id=run_id,
        backend=llm.identity["backend"],
        model=llm.identity["model"],
        prompt_style=style_name(spec.style),
        template_id=template_id,
        context_mode=spec.context_mode,
        replicate=spec.replicate,
        passages=passages,
        prompt=messages,
        text=comp.text,
        citations=_citations(comp),
        usage=comp.usage,
        latency_s=comp.latency_s,
        cost_usd=comp.cost_usd,
        cache_key=key,
        finish_reason=comp.finish_reason or None,
    )


def _citations(comp):
    """Offset citations from the backend where it gives them, else [n] markers parsed from the text."""
    if comp.citations:
        return comp.citations
    from finrag.llm.prompts.parse import bracket_citations

    return bracket_citations(comp.text)


def run_stats(answers: Sequence[Answer]) -> dict:
    return {
        "answers": len(answers),
        "input_tokens": int(sum(a.usage.get("input_tokens", 0) for a in answers)),
        "output_tokens": int(sum(a.usage.get("output_tokens", 0) for a in answers)),
        "model_seconds": round(sum(a.latency_s for a in answers), 1),
        "cost_usd": round(sum(a.cost_usd for a in answers), 6),
        "cut_at_max_tokens": sum(a.finish_reason == "length" for a in answers),
    }


def generation_summary(answers_by_family: Mapping[str, Sequence[Answer]]) -> dict:
    """Calls, tokens, model seconds and cost per run and per run family, from the saved answers themselves: the
    figures are those of the recorded calls, so a replay reproduces them (latency and cost are stored with each
    answer)."""
    families: dict[str, dict] = {}
    for name, answers in sorted(answers_by_family.items()):
        by_run: dict[str, list[Answer]] = {}
        for a in answers:
            by_run.setdefault(a.run_id, []).append(a)
        runs = {run_id: run_stats(rows) for run_id, rows in sorted(by_run.items())}
        keys = ("answers", "input_tokens", "output_tokens", "cut_at_max_tokens")
        total = {k: sum(r[k] for r in runs.values()) for k in keys}
        total["model_seconds"] = round(sum(r["model_seconds"] for r in runs.values()), 1)
        total["cost_usd"] = round(sum(r["cost_usd"] for r in runs.values()), 6)
        total["calls_per_hour"] = (
            round(total["answers"] / total["model_seconds"] * 3600, 1) if total["model_seconds"] else None
        )
        families[name] = {"runs": runs, "total": total}
    return {"families": families}


def recording_progress(
    questions: Sequence[Question],
    contexts: dict[tuple[str, str], list[Passage]],
    identity: dict,
    cache: ResponseCache,
    specs: Sequence[RunSpec],
    decoding: dict,
) -> dict[str, dict]:
    """Per run: how many of its calls are already in the response cache, without calling anything (the same
    requests `generate_answers` would make for a backend of this `identity`), so a long recording can be watched
    and resumed knowingly. `model_seconds` sums the recorded calls' latencies (for an estimate of what is left)."""
    out = {}
    for spec in specs:
        recorded, seconds, calls = 0, 0.0, 0
        for q in questions:
            if not spec.asks(q.qid):
                continue
            calls += 1
            messages, template_id = render(spec.style, q.question, contexts[(q.qid, spec.contexts_key)])
            dec = get_style(spec.style).decoding({**decoding, **dict(spec.decoding)})
            req = cache_request(identity, messages, dec, replicate=spec.replicate, template_id=template_id)
            entry = cache.get(cache_key(req))
            if entry is not None:
                recorded += 1
                seconds += float(entry.get("latency_s") or 0.0)
        out[spec.run_id] = {
            "family": spec.family,
            "calls": calls,
            "recorded": recorded,
            "model_seconds": round(seconds, 1),
        }
    return out


def seconds_left(runs: Mapping[str, Mapping]) -> float | None:
    """Model seconds the missing calls of these runs would take at the mean latency of the recorded ones (None
    before the first call): an estimate for one process; N shards divide the wall time by about N."""
    recorded = sum(r["recorded"] for r in runs.values())
    if not recorded:
        return None
    missing = sum(r["calls"] - r["recorded"] for r in runs.values())
    return round(sum(r["model_seconds"] for r in runs.values()) / recorded * missing, 1)
