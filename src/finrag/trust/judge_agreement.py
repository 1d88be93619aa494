"""How far can a groundedness judge be trusted? Its agreement with human labels, and with another judge.

Agreement is reported per benchmark and per subset, always on binary labels (supported vs not supported: the
benchmarks differ in how they split "not supported"), and also on three classes where the human labels have
them (FinDVer's false statements are "contradicted"; finrag's own labels). Where a benchmark groups claims into
answers (ExpertQA, finrag), an answer is supported when all its labelled claims are, and agreement is also given
per answer. Statistics come from finrag.core.stats.agreement (Cohen's kappa with a paired bootstrap interval,
balanced accuracy, raw agreement, confusion matrix: rows human, columns judge).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from tqdm import tqdm

from finrag.core.contracts import ClaimVerdict, LabelledClaim
from finrag.core.stats import DEFAULT_SEED, agreement
from finrag.ingest.human_claims import Loaded, binary, load_all, sample_stratified

BINARY_LABELS = ["supported", "not_supported"]
THREE_LABELS = ["supported", "unsupported", "contradicted"]
THREE_CLASS_BENCHMARKS = ("findver", "finrag")
ANSWER_LEVEL_BENCHMARKS = ("expertqa", "finrag")  # group_id is an answer there (FinDVer's is a report)
GROUP_SAMPLED = ("expertqa", "finrag")  # sampled by whole answers so answer-level figures stay whole

DEFAULT_SAMPLE_SIZES = {"findver": None, "attributionbench": 400, "expertqa": 400, "finrag": None}


def _verdict(v) -> str:
    return v.verdict if isinstance(v, ClaimVerdict) else str(v)


def judge_items(
    items: Sequence[LabelledClaim], judge, chunk: int = 32, progress: bool = True
) -> list[ClaimVerdict]:
    """The judge's verdict on every item (in order), in batches so a batching judge can use them."""
    out: list[ClaimVerdict] = []
    bar = tqdm(
        total=len(items), desc=f"judge {getattr(judge, 'name', '?')}", disable=not progress, leave=False
    )
    for s in range(0, len(items), chunk):
        part = items[s : s + chunk]
        out.extend(
            judge.judge_batch([i.claim for i in part], [i.passages for i in part], [i.item_id for i in part])
        )
        bar.update(len(part))
    bar.close()
    return out


def record_interleaved(runs: Mapping[str, tuple[Sequence[LabelledClaim], Any]], progress: bool = True) -> int:
    """Ask every judge about a claim before moving to the next claim: judges on the same model and prompt (the
    greedy LLM judge and its resample) then find the claim's prompt already in the model's KV cache, so the second
    call reads no prompt. Recording only: `runs` maps a name to (its items, a judge that judges one claim a call),
    and the normal pass afterwards replays every verdict from the response cache. Returns the claims visited."""
    order: dict[str, LabelledClaim] = {}
    for items, _ in runs.values():
        for it in items:
            order.setdefault(it.item_id, it)
    wanted = {name: {it.item_id for it in items} for name, (items, _) in runs.items()}
    for it in tqdm(order.values(), desc="record judges claim by claim", disable=not progress):
        for name, (_, judge) in runs.items():
            if it.item_id in wanted[name]:
                judge.judge_batch([it.claim], [it.passages], [it.item_id])
    return len(order)


def replayable_items(items: Sequence[LabelledClaim], judge) -> tuple[list[LabelledClaim], list[str]]:
    """For a model judge that makes one call a claim (llm_logprob, an LLM judge with batch_size 1), in replay mode:
    the items whose verdicts the response cache holds, and the ids of those that would need a model call (each
    asked once, alone; nothing is called). A batching judge's calls hold several claims, so asking one alone
    would miss."""
    from finrag.llm.cache import CacheMiss

    held, missing = [], []
    for it in items:
        try:
            judge.judge_batch([it.claim], [it.passages], [it.item_id])
        except CacheMiss:
            missing.append(it.item_id)
        else:
            held.append(it)
    return held, missing


def model_judge(run: Mapping, llm: Any, **overrides: Any):
    """One model-judge run of the agreement stage's `model_judges.runs` over `llm` (a CachedLLM): the judge its
    block names with the block's params, its decoding passed to the LLM judge (inside a combined judge too), and
    `overrides` on top (the CLI's fitted threshold). One place for the stage and the CLI, so both run the same judge."""
    import copy

    from finrag.score.judges.base import make_judge

    jparams = copy.deepcopy(dict(run.get("params") or {}))  # never write into the params being recorded
    if "decoding" in run:
        target = jparams.setdefault("llm_judge", {}) if run["judge"] == "combined" else jparams
        target["decoding"] = run["decoding"]
    return make_judge(run["judge"], llm=llm, **{**jparams, **overrides})


def record_model_judges(
    run_items: Mapping[str, Sequence[LabelledClaim]],
    runs: Mapping[str, Mapping],
    build: Callable[[str], Any],
    progress: bool = True,
) -> None:
    """Record the model judges' calls in the order that is cheapest and safest to stop (the normal pass replays
    every verdict afterwards): each log-probability judge goes through the benchmarks' nested samples in turn
    (`round_robin`: a stopped recording has covered an equal prefix of each), and the one-claim-a-call LLM judges
    go claim by claim across judges (`record_interleaved`: the claim's prompt is already in the KV cache).
    `build(name)` makes the run's judge; `runs` is agreement.model_judges.runs."""
    for name, run in runs.items():
        if run["judge"] == "llm_logprob":
            judge_items(round_robin(run_items[name]), build(name), chunk=1)
    one_call = {
        name: (run_items[name], build(name))
        for name, run in runs.items()
        if run["judge"] == "llm" and (run.get("params") or {}).get("batch_size", 1) == 1
    }
    record_interleaved(one_call, progress)


def _block(
    human: list[str], judged: list[str], three: bool, seed: int, groups: list[str] | None = None
) -> dict:
    """Agreement on binary (and three-class) labels; with `groups` (the answers claims belong to), the interval
    resamples whole answers."""
    res = {
        "binary": agreement(
            [binary(h) for h in human], [binary(j) for j in judged], BINARY_LABELS, seed=seed, groups=groups
        )
    }
    if three:
        res["three_class"] = agreement(human, judged, THREE_LABELS, seed=seed, groups=groups)
    res["human_labels"] = dict(Counter(human))
    res["judge_labels"] = dict(sorted(Counter(judged).items()))
    return res


def _answer_level(items: Sequence[LabelledClaim], judged: Sequence[str], seed: int) -> dict:
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(it.group_id, []).append(i)
    h = [
        "supported" if all(items[i].human == "supported" for i in idx) else "not_supported"
        for idx in groups.values()
    ]
    j = [
        "supported" if all(judged[i] == "supported" for i in idx) else "not_supported"
        for idx in groups.values()
    ]
    res = agreement(h, j, BINARY_LABELS, seed=seed)
    res["n_claims"] = len(items)
    res["claims_per_answer"] = float(np.mean([len(v) for v in groups.values()])) if groups else float("nan")
    res["note"] = (
        "an answer's human label is read from its loaded claims only (claims a loader leaves out, e.g. ExpertQA "
        "claims without usable evidence, do not count)"
    )
    return res


def evaluate_judge_on(
    items: Sequence[LabelledClaim],
    judge,
    verdicts: Sequence[ClaimVerdict] | None = None,
    seed: int = DEFAULT_SEED,
    progress: bool = True,
) -> dict:
    """Judge-vs-human agreement per benchmark, per subset and (where claims form answers) per answer.

    `verdicts` may be given (already judged, in item order) to avoid judging twice. Returns
    {"judge", "benchmarks": {b: {"binary", "three_class"?, "subsets": {s: {...}}, "answer_level"?}},
     "records": [{item_id, benchmark, subset, human, judge, method}]}.
    """
    items = list(items)
    if verdicts is None:
        verdicts = judge_items(items, judge, progress=progress)
    if len(verdicts) != len(items):
        raise ValueError(f"evaluate_judge_on: {len(items)} items but {len(verdicts)} verdicts")
    judged = [_verdict(v) for v in verdicts]
    out: dict = {"judge": getattr(judge, "name", str(judge)), "benchmarks": {}, "records": []}
    by_bench: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        by_bench.setdefault(it.benchmark, []).append(i)
    failed = [bool(v.detail.get("parse_failed")) if isinstance(v, ClaimVerdict) else False for v in verdicts]
    for bench, idx in sorted(by_bench.items()):
        three = bench in THREE_CLASS_BENCHMARKS
        grouped = bench in ANSWER_LEVEL_BENCHMARKS

        def groups_of(ids: list[int], grouped: bool = grouped) -> list[str] | None:
            return [items[i].group_id for i in ids] if grouped else None

        b = _block([items[i].human for i in idx], [judged[i] for i in idx], three, seed, groups_of(idx))
        b["parse_failures"] = sum(failed[i] for i in idx)  # scored "unsupported": counted, never hidden
        subs: dict[str, list[int]] = {}
        for i in idx:
            subs.setdefault(items[i].subset, []).append(i)
        if len(subs) > 1:
            b["subsets"] = {
                s: _block(
                    [items[i].human for i in sidx], [judged[i] for i in sidx], three, seed, groups_of(sidx)
                )
                for s, sidx in sorted(subs.items())
            }
        if bench in ANSWER_LEVEL_BENCHMARKS:
            b["answer_level"] = _answer_level([items[i] for i in idx], [judged[i] for i in idx], seed)
        out["benchmarks"][bench] = b
    for it, v, j, bad in zip(items, verdicts, judged, failed, strict=True):
        method = v.detail.get("method", "") if isinstance(v, ClaimVerdict) else ""
        out["records"].append(
            {"item_id": it.item_id, "benchmark": it.benchmark, "subset": it.subset, "human": it.human,
             "judge": j, "method": method, "parse_failed": bad, "claim_key": claim_key(it.claim)}
        )  # fmt: skip
    return out


def claim_key(claim: str) -> str:
    """The claim's text, normalised (case, spaces): the same claim in two benchmarks (AttributionBench's ExpertQA
    subset repeats ExpertQA's claims) is one item when benchmarks are pooled."""
    return " ".join(str(claim).lower().split())


def ai_vs_ai(
    verdicts_a: Sequence | Mapping, verdicts_b: Sequence | Mapping, seed: int = DEFAULT_SEED
) -> dict:
    """Agreement between two judges on the same claims (paired by position, or by key when given dicts).

    Rows of the confusion matrices are judge A. Binary and three-class.
    """
    if isinstance(verdicts_a, Mapping) and isinstance(verdicts_b, Mapping):
        keys = [k for k in verdicts_a if k in verdicts_b]
        a = [_verdict(verdicts_a[k]) for k in keys]
        b = [_verdict(verdicts_b[k]) for k in keys]
    else:
        a, b = [_verdict(v) for v in verdicts_a], [_verdict(v) for v in verdicts_b]
        if len(a) != len(b):
            raise ValueError(f"ai_vs_ai: {len(a)} verdicts against {len(b)}: pair them by claim id (dicts)")
    return {
        "binary": agreement([binary(x) for x in a], [binary(x) for x in b], BINARY_LABELS, seed=seed),
        "three_class": agreement(a, b, THREE_LABELS, seed=seed),
    }


def _whole_groups(items: Sequence[LabelledClaim], n: int, seed: int) -> list[int]:
    """Indices of whole answers (group_id) taken in a seeded random order until at least n claims are in; a
    prefix of one fixed order, so a larger n keeps every answer a smaller one took."""
    groups: dict[str, list[int]] = {}
    for i, it in enumerate(items):
        groups.setdefault(it.group_id, []).append(i)
    keys = sorted(groups)
    chosen: list[int] = []
    for k in np.random.default_rng(seed).permutation(len(keys)):
        if len(chosen) >= n:
            break
        chosen.extend(groups[keys[k]])
    return chosen


def sample_groups(items: Sequence[LabelledClaim], n: int, seed: int = DEFAULT_SEED) -> list[LabelledClaim]:
    """Whole answers (group_id) drawn at random until at least n claims are in (all when n >= len)."""
    items = list(items)
    if n >= len(items):
        return items
    return [items[i] for i in sorted(_whole_groups(items, n, seed))]


def agreement_sample(
    loaded: Mapping[str, Loaded] | None = None,
    sizes: Mapping[str, int | None] | None = None,
    seed: int = DEFAULT_SEED,
) -> list[LabelledClaim]:
    """The items every judge is measured on: per benchmark `sizes[b]` items (None: all), stratified by subset and
    human label, or by whole answers where claims form answers; the same items for every judge (fixed seed)."""
    loaded = loaded if loaded is not None else load_all()
    sizes = {**DEFAULT_SAMPLE_SIZES, **(sizes or {})}
    out: list[LabelledClaim] = []
    for bench, ld in sorted(loaded.items()):
        n = sizes.get(bench)
        items = ld.items
        if n is None or n >= len(items):
            out.extend(items)
        elif bench in GROUP_SAMPLED:
            out.extend(sample_groups(items, n, seed))
        else:
            out.extend(sample_stratified(items, n, seed))
    return out


def _row(judge: str, benchmark: str, subset: str, level: str, a: dict) -> dict:
    return {"judge": judge, "benchmark": benchmark, "subset": subset, "level": level, "n": a["n"],
            "kappa": a["kappa"], "kappa_ci": a["kappa_ci"], "balanced_accuracy": a["balanced_accuracy"],
            "raw_agreement": a["raw_agreement"], "constant_rater": a.get("constant_rater")}  # fmt: skip


def summary_table(result: dict) -> list[dict]:
    """Flat rows (benchmark, subset, level, n, kappa, CI, balanced accuracy, raw agreement) for the report."""
    rows: list[dict] = []
    for bench, b in result["benchmarks"].items():
        entries = [("all", "binary", b["binary"])]
        if "three_class" in b:
            entries.append(("all", "three_class", b["three_class"]))
        for s, sb in (b.get("subsets") or {}).items():
            entries.append((s, "binary", sb["binary"]))
        if "answer_level" in b:
            entries.append(("all", "answer", b["answer_level"]))
        rows.extend(_row(result["judge"], bench, sub, level, a) for sub, level, a in entries)
    return rows


# ------------------------------------------------------------------ judges that call a model


def model_judge_sample(
    items: Sequence[LabelledClaim], sizes: Mapping[str, int | None], seed: int = DEFAULT_SEED
) -> list[LabelledClaim]:
    """The first `sizes[b]` items of each benchmark in a nested, stratified order (finrag.core.sampling.nested_order;
    whole answers where claims form answers), so raising a size later reuses every recorded model call."""
    from finrag.core.sampling import nested_order
    from finrag.ingest.human_claims import stratum_of

    by_bench: dict[str, list[LabelledClaim]] = {}
    for it in items:
        by_bench.setdefault(it.benchmark, []).append(it)
    out: list[LabelledClaim] = []
    for bench, its in sorted(by_bench.items()):
        n = sizes.get(bench)
        if n is None or n >= len(its):
            out.extend(its)
            continue
        if bench in GROUP_SAMPLED:
            out.extend(its[i] for i in _whole_groups(its, n, seed))
        else:
            out.extend(nested_order(its, lambda it: stratum_of(it, ("subset", "human")), seed)[:n])
    return out


def every_dev_claim(loaded: Mapping[str, Loaded]) -> list[LabelledClaim]:
    """Every claim of every loaded benchmark, benchmarks in name order, each in its load order: the pool a model
    judge declares with `claims: all` (beyond the agreement sample the deterministic judges are measured on)."""
    return [it for _, ld in sorted(loaded.items()) for it in ld.items]


def run_claims(
    run: Mapping,
    model_sample: Sequence[LabelledClaim],
    sample: Sequence[LabelledClaim],
    loaded: Mapping[str, Loaded],
    seed: int = DEFAULT_SEED,
) -> list[LabelledClaim]:
    """The claims one model-judge run judges: every dev claim (`claims: all`), a smaller nested prefix of the
    agreement sample (`sample_sizes`), or by default the model-judge sample shared by the runs."""
    if run.get("claims") == "all":
        return every_dev_claim(loaded)
    if "sample_sizes" in run:
        return model_judge_sample(sample, run["sample_sizes"], seed=seed)
    return list(model_sample)


def sampled_rerun_of(name: str, runs: Mapping[str, Mapping]) -> str | None:
    """The run that run `name` samples again: `name` decodes at a temperature above 0 and the other run is the
    same judge on the same backend with the same params (the replicate index aside) decoded greedily. None when
    `name` is no such re-run. The report names each judge's re-run from this, not from the run's name."""

    def temperature(run: Mapping) -> float:
        return float((run.get("decoding") or {}).get("temperature", 0.0))

    def same_judge(run: Mapping) -> tuple:
        params = {k: v for k, v in (run.get("params") or {}).items() if k != "replicate"}
        return run["judge"], run["backend"], repr(sorted(params.items()))

    run = runs[name]
    if temperature(run) <= 0:
        return None
    return next(
        (
            other
            for other, r in runs.items()
            if other != name and temperature(r) == 0 and same_judge(r) == same_judge(run)
        ),
        None,
    )


def pair_rows(name_a: str, name_b: str, res: dict) -> list[dict]:
    """Report rows (like summary_table's) for an AI-vs-AI pair: binary and three-class, over all benchmarks."""
    return [
        {**_row(f"{name_a}~{name_b}", res["benchmark"], "all", level, a), "pair": f"{name_a} vs {name_b}"}
        for level, a in (("binary", res["binary"]), ("three_class", res["three_class"]))
    ]


def ai_pairs_by_benchmark(
    records: Mapping[str, Sequence[Mapping]], a: str, b: str, seed: int = DEFAULT_SEED
) -> list[dict]:
    """ai_vs_ai for judges a and b on the claims both judged, per benchmark and over all; `records[name]` are
    evaluate_judge_on records (item_id, benchmark, judge)."""
    va = {r["item_id"]: r for r in records[a]}
    vb = {r["item_id"]: r for r in records[b]}
    common = [k for k in va if k in vb]
    out = []
    benches = sorted({va[k]["benchmark"] for k in common})
    for bench in [*benches, "all"]:
        keys = [k for k in common if bench == "all" or va[k]["benchmark"] == bench]
        if bench == "all":  # a claim two benchmarks share counts once when pooled (ExpertQA's copy is kept)
            first: dict[str, str] = {}
            for k in sorted(keys, key=lambda k: va[k]["benchmark"] == "attributionbench"):  # stable sort
                first.setdefault(va[k].get("claim_key") or k, k)
            kept = set(first.values())
            keys = [k for k in keys if k in kept]
        if len(keys) < 2:
            continue
        res = ai_vs_ai({k: va[k]["judge"] for k in keys}, {k: vb[k]["judge"] for k in keys}, seed=seed)
        out.append({"benchmark": bench, **res})
    return out


def select_judge(summary: Sequence[Mapping], candidates: Sequence[str], benchmarks: Sequence[str]) -> dict:
    """The pre-registered rule for the study's groundedness judge: among `candidates`, the one whose lowest binary
    kappa with the humans over `benchmarks` is highest (a judge must be trustworthy everywhere, not on average);
    ties go to the earlier candidate (the cheaper one, listed first). Fixed before any answer is re-scored."""
    worst: dict[str, float] = {}
    for name in candidates:
        ks = [
            r["kappa"]
            for r in summary
            if r["pair"] == f"human vs {name}" and r["subset"] == "all" and r["level"] == "binary"
            and r["benchmark"] in benchmarks and r["kappa"] is not None and not np.isnan(r["kappa"])
        ]  # fmt: skip
        if len(ks) == len(benchmarks):
            worst[name] = float(min(ks))
    if not worst:
        raise ValueError(
            f"select_judge: none of {list(candidates)} was measured on all of {list(benchmarks)}"
        )
    best = max(candidates, key=lambda n: (worst.get(n, -np.inf), -list(candidates).index(n)))
    return {"rule": "max over candidates of the min binary kappa over benchmarks", "candidates": list(candidates),
            "benchmarks": list(benchmarks), "min_kappa": worst, "selected": best}  # fmt: skip


def transfer_kappas(
    loso: Mapping[str, Mapping], keys: Mapping[str, str], benchmarks: Sequence[str]
) -> dict[str, dict[str, float | None]]:
    """Each candidate's binary kappa on each benchmark from a model (or rule) that never saw that benchmark: the
    verifier_train stage's leave-one-source-out block, where `keys` names each candidate's entry."""
    return {
        name: {b: (loso.get(b, {}).get(key) or {}).get("kappa") for b in benchmarks}
        for name, key in keys.items()
    }


def select_judge_by_transfer(
    kappas: Mapping[str, Mapping[str, float | None]],
    cpu_hours: Mapping[str, float | None],
    candidates: Sequence[str],
    cpu_hours_max: float,
    service: Sequence[str],
) -> dict:
    """The study's groundedness judge, by the rule written 2026-12-06 before any answer was re-scored: among the
    candidates the service can run and whose measured cost to score every study claim is within `cpu_hours_max`,
    the one whose lowest leave-one-source-out kappa over the benchmarks is highest (a judge must carry over to a
    source it never saw, everywhere); ties go to the earlier candidate. A candidate without a measured cost or
    without a kappa on every benchmark is not admitted."""
    admitted, reasons, worst = [], {}, {}
    for name in candidates:
        ks = list((kappas.get(name) or {}).values())
        complete = bool(ks) and not any(k is None or np.isnan(k) for k in ks)
        if complete:
            worst[name] = float(min(k for k in ks if k is not None))
        hours = cpu_hours.get(name)
        if name not in service:
            reasons[name] = "the service cannot run it on a new answer"
        elif hours is None or hours > cpu_hours_max:
            reasons[name] = f"cost {hours} CPU-hours for the study's claims (bound {cpu_hours_max})"
        elif not complete:
            reasons[name] = "no leave-one-source-out kappa on every benchmark"
        else:
            admitted.append(name)
    if not admitted:
        raise ValueError(f"select_judge_by_transfer: no candidate admitted: {reasons}")
    best = max(admitted, key=lambda n: (worst[n], -list(candidates).index(n)))
    return {"rule": "max over admitted candidates of the min leave-one-source-out binary kappa over benchmarks",
            "candidates": list(candidates), "kappa_left_out": {n: dict(kappas.get(n) or {}) for n in candidates},
            "cpu_hours_for_study": {n: cpu_hours.get(n) for n in candidates}, "cpu_hours_max": cpu_hours_max,
            "not_admitted": reasons, "min_kappa": worst, "selected": best}  # fmt: skip


# ------------------------------------------------------------------ calibrating a scoring judge's threshold

CROSSFIT_FOLDS = 5


def crossfit_verdicts(
    items: Sequence[LabelledClaim], scores: Sequence[float], folds: int = CROSSFIT_FOLDS
) -> tuple[list[str], dict]:
    """Out-of-fold verdicts for a judge that scores claims (supported when score >= cut): the claims of fold f are
    cut at the kappa-maximising threshold fitted on the other folds only, so no claim's own label sets its cut.
    Folds are whole groups (a report, a question, an answer), tied where two benchmarks hold the same claim. One
    threshold for all benchmarks: a judge used on new filings cannot know which benchmark they resemble.
    Returns (verdicts, calibration: the threshold per fold and the one fitted on all claims)."""
    from finrag.score.verifier.build import crossfit_fold, tie_shared_claims
    from finrag.score.verifier.calibrate import best_threshold

    groups = tie_shared_claims([f"{it.benchmark}:{it.group_id}" for it in items], [it.claim for it in items])
    fold = np.array([crossfit_fold(g, folds) for g in groups])
    s = np.round(np.asarray(scores, dtype=float), 6)  # as the judge records them
    y = np.array([int(binary(it.human) == "supported") for it in items])
    by_fold = {f: best_threshold(s[fold != f], y[fold != f]) for f in range(folds)}
    cut = np.array([by_fold[f] for f in fold])
    verdicts = ["supported" if sc >= c else "unsupported" for sc, c in zip(s, cut, strict=True)]
    return verdicts, {
        "rule": "kappa-maximising threshold on the other folds' claims (grouped folds; one threshold for all "
        "benchmarks)",
        "folds": folds,
        "claims_per_fold": [int((fold == f).sum()) for f in range(folds)],
        "threshold_by_fold": {str(f): round(t, 6) for f, t in by_fold.items()},
        "threshold_all": round(best_threshold(s, y), 6),
    }


def round_robin(items: Sequence[LabelledClaim]) -> list[LabelledClaim]:
    """The benchmarks' items in turn, each in its own order: recording stopped at any point has covered an equal
    prefix of each benchmark's nested sample, so a smaller sample size replays whole."""
    by_bench: dict[str, list[LabelledClaim]] = {}
    for it in items:
        by_bench.setdefault(it.benchmark, []).append(it)
    queues = [by_bench[b] for b in sorted(by_bench)]
    return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]
