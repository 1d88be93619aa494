"""Views of what a reviewer reads first (README.md) and of the technical report's conclusions: the study in one
paragraph, the findings, the correct x grounded picture, the earlier study's findings beside finrag's, the
limitations. Every figure comes from a results file and every finding names that file; every verdict is decided
here by a rule stated beside it."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass

from finrag.core.stats import wilson_interval
from finrag.report.fmt import fmt, names, pct, pctci, pp
from finrag.report.views.base import Results, view
from finrag.report.views.judge_error import (
    SHARE_LABELS,
    SHARES,
    run_share,
    selected_corrected,
)
from finrag.report.views.sections import Row, interval_side, lesson_of

(
    REPRODUCED,
    PARTLY,
    NOT_REPRODUCED,
    CONSISTENT,
    CONTRADICTED,
    INCONCLUSIVE,
    NOT_TESTABLE,
    NOT_COMPARABLE,
    NEW,
) = (
    "reproduced",
    "partly reproduced",
    "not reproduced",  # its figure is not met, though its headline is not refuted either
    "consistent with it",  # its figure lies inside finrag's interval, which is too wide to call it reproduced
    "contradicted",
    "inconclusive",
    "not testable here",
    "not comparable",  # measured here, but of a different system: set side by side, not tested
    "new",
)
VERDICT_ORDER = (
    REPRODUCED, PARTLY, NOT_REPRODUCED, CONSISTENT, CONTRADICTED, INCONCLUSIVE, NOT_TESTABLE, NOT_COMPARABLE
)  # fmt: skip


def ref(r: Results, stem: str) -> str:
    return f"`{r.path(stem)}`"


def model_name(generator: str) -> str:
    """`llamacpp/qwen2.5-coder-0.5b-instruct-q4_k_m` -> `qwen2.5-coder-0.5b-instruct-q4_k_m`; the model-free
    baseline is named as such."""
    return generator.split("/", 1)[-1] if is_model(generator) else "extractive baseline"


def is_model(generator: str) -> bool:
    return not generator.startswith("extractive")


# ------------------------------------------------------------------------------------------------ the study


@dataclass(frozen=True)
class Study:
    questions_total: int
    questions_available: int
    documents: int
    pages: str
    trick: int
    generators: str
    setups: int
    judge: str
    final_system: str


@view("study")
def study(r: Results) -> Study:
    i = r.need("ingest")
    q = r.need("questions", "available_by_kind")
    runs = r.need("eval_main", "runs")
    generators = sorted({model_name(x["generator"]) for x in runs if is_model(x["generator"])})
    return Study(
        questions_total=i["questions_total"],
        questions_available=i["questions_available"],
        documents=i["documents"],
        pages=fmt(i["pages"]),
        trick=sum(n for k, n in q.items() if k.startswith("trick")),
        generators=names(f"`{g}`" for g in generators) or "none",
        setups=len(r.need("retrieval_grid", "setups")),
        judge=r.need("eval_main", "judge_trust", "judge"),
        final_system=r.need("eval_main", "final_system", "system", "series"),
    )


@dataclass(frozen=True)
class Terms:
    main_n: int
    trick: int
    draw_n: int
    judge: str


@view("terms")
def terms(r: Results) -> Terms:
    """The words the findings use, defined before them (a reader meets `@2`, `-r*` and the draws there first)."""
    _, row = size_row(r)
    return Terms(
        main_n=r.need("eval_main", "final_system", "n"),
        trick=sum(n for k, n in r.need("questions", "available_by_kind").items() if k.startswith("trick")),
        draw_n=row["questions"],
        judge=r.need("eval_main", "judge_trust", "judge"),
    )


# ------------------------------------------------------------------------------------------------ findings


@dataclass(frozen=True)
class Finding:
    headline: str  # the sentence, with its figure, interval and n
    source: str  # the results file it comes from, as `results/...`


def proportion(k: int, n: int) -> tuple[float, list[float]]:
    lo, hi = wilson_interval(k, n)
    return (k / n if n else float("nan")), [lo, hi]


def version_of(run: Row) -> str:
    return str(run["templates"][0]).split("@")[-1]


def latest_runs(r: Results) -> list[Row]:
    """One answer per question per row: each system's first replicate (no `-r*` mean), and of a language model only
    the runs of its latest prompt version, so that no question counts twice in a share and no first-round prompt
    (its echoes and copies) is pooled with the second's."""
    runs = [x for x in r.need("eval_main", "runs") if not x["series"].endswith("-r*")]
    latest: dict[str, str] = {}
    for x in runs:
        latest[x["generator"]] = max(latest.get(x["generator"], ""), version_of(x))
    return [x for x in runs if version_of(x) == latest[x["generator"]]]


def unbacked_correct(r: Results) -> tuple[Row, int, int]:
    """The selected system's model and prompt given the evidence pages (the oracle context, latest prompt version):
    its run, its correct answers and how many of those the judge does not find fully grounded."""
    fs = r.need("eval_main", "final_system", "system")
    rows = [
        x
        for x in latest_runs(r)
        if x["generator"] == fs["generator"]
        and x["prompt_style"] == fs["prompt_style"]
        and x["context_mode"].startswith("oracle")
    ]
    if not rows:
        raise_missing(r, "eval_main", f"run of {fs['series']}'s model and prompt on the oracle context")
    row = rows[0]
    correct = row["correct"]["k"]
    return row, correct - row["strict_correct_and_grounded_flags_ignored"]["k"], correct


def unbacked_carried(r: Results, series: str) -> list[float] | None:
    """1 minus the run's corrected grounded share of its correct answers (envelope over the human sets)."""
    s = run_share(r, series, "grounded_of_correct")
    if not s["n"]:
        return None
    lo, hi = s["envelope_ci"]
    return [round(1 - hi, 4), round(1 - lo, 4)]


def raise_missing(r: Results, stem: str, what: str) -> None:
    from finrag.report.views.base import MissingResults

    raise MissingResults(f"{r.path(stem)} has no {what}")


def final_finding(r: Results) -> Finding:
    fs = r.need("eval_main", "final_system")
    missing = fs.get("candidates_missing") or []
    provisional = f" Provisional: {names(missing)} not scored yet." if missing else ""
    old = fs_old = r.need("eval_main").get("final_system_earlier_rule") or {}
    was = ""
    if fs_old.get("system"):
        was = f" (by the first-round grading, flags ignored: {old['system']['series']}, {pct(old['value'])})"
    corrected = selected_corrected(r, fs["system"]["series"])
    if run_share(r, fs["system"]["series"], "correct_and_grounded")["envelope_ci"][0] == 0:
        corrected += (
            " (its lower end is 0: with this judge's error the grounded half of the endpoint adds little)"
        )
    sens = r.need("eval_main").get("grader_sensitivity")
    if sens and sens["final_system_with_llm"].get("system"):
        other = sens["final_system_with_llm"]
        was += (
            f"; with the LLM grader's verdicts on uncertain grades (a sensitivity row), "
            f"{other['system']['series']}, {pct(other['value'])}"
        )
    return Finding(
        f"**The selected system is right and fully grounded on few questions**: {fs['system']['series']}, "
        f"{'provisionally ' if missing else ''}picked by the rule declared in `params.yaml`, {pct(fs['value'])} {pctci(fs['ci'])} correct and grounded, n = "
        f"{fs['n']}{was}; carried through the judge's error, {corrected} ({ref(r, 'judge_error')}).{provisional}",
        ref(r, "eval_main"),
    )


def search_finding(r: Results) -> Finding:
    b = r.need("retrieval_grid", "headline", "best")
    n = r.need("retrieval_grid", "questions_scored")
    return Finding(
        f"**Search misses much of the evidence**: the best of {len(r.need('retrieval_grid', 'setups'))} setups "
        f"({b['chunker']}/{b['embedder']}/{b['method']}) puts {pct(b['evidence_recall_at_5'])} "
        f"{pctci(b['evidence_recall_at_5_ci'])} of a question's evidence pages in its top 5, n = {n} questions; the "
        f"right report {pct(b['right_report_at_5'])}.",
        ref(r, "retrieval_grid"),
    )


def unbacked_finding(r: Results) -> Finding:
    row, k, n = unbacked_correct(r)
    p, ci = proportion(k, n)
    carried = unbacked_carried(r, row["series"])
    told = run_share(r, row["series"], "grounded_of_correct")["can_tell"]
    headline = (
        "**Correct is not always grounded, as judged**"
        if told
        else "**Whether correct answers are grounded cannot be told with this judge**"
    )
    return Finding(
        f"{headline}: as judged, given the evidence pages, {pct(p)} {pctci(ci)} of "
        f"{row['series']}'s correct answers are not fully grounded ({k} of n = {n}; the selected system's model and "
        f"prompt); with the judge's error carried, {pctci(carried) if carried else 'n/a'} ({ref(r, 'judge_error')}).",
        ref(r, "eval_main"),
    )


def artefact_finding(r: Results) -> Finding:
    runs = [
        x
        for x in r.need("eval_main", "runs")
        if x["context_mode"] == "retrieved" and not x["series"].endswith("-r*")
    ]
    flagged = sum(x["n_flagged"] for x in runs)
    n = sum(x["n"] for x in runs)
    per_run = [x["n_flagged"] / x["n"] for x in runs]
    was = sum(x["earlier_correct"]["p"] * x["n"] for x in runs) / n
    now = sum(x["correct"]["p"] * x["n"] for x in runs) / n
    # the same questions answered by several runs: a pooled interval would treat them as independent, so the
    # spread over runs is given instead
    return Finding(
        f"**Much of what the first-round grading counted correct was not a clear answer**: strict grading (an uncertain "
        f"grade is not correct) moves the retrieved runs' share correct from {pct(was)} to {pct(now)} ({len(runs)} runs, "
        f"n = {n} answers). Separately, {pct(flagged / n)} of those answers carry an answer-quality flag (copied "
        f"passages, echoed prompts, cut-offs; {pct(min(per_run))} to {pct(max(per_run))} by run), which counts them as "
        "not grounded in the primary endpoint; a flag does not change correct.",
        ref(r, "eval_main"),
    )


def judge_finding(r: Results) -> Finding:
    jt = r.need("eval_main", "judge_trust")
    worst = min(jt["agreement"], key=lambda x: x["kappa"])
    status = (
        "below the declared minimum, so groundedness differences are descriptive only"
        if jt.get("descriptive_only")
        else "at or above the declared minimum"
    )
    return Finding(
        f"**The groundedness judge agrees only weakly with people**: `{jt['judge']}`'s worst kappa with human labels is "
        f"{fmt(worst['kappa'], 3)} {_ci3(worst['kappa_ci'])} ({worst['benchmark']}, n = {worst['n']} claims), {status} "
        f"({fmt(jt['min_kappa'], 2)}).",
        ref(r, "judge_agreement"),
    )


def judge_error_finding(r: Results) -> Finding:
    runs = [x for x in r.need("judge_error", "runs") if x["context_mode"] in ("retrieved", "oracle")]
    rates = r.need("judge_error", "rates")
    youden = [v["youden"] for v in rates.values()]
    per_share = {k: sum(x["shares"][k]["can_tell"] for x in runs) for k in SHARES}
    told = ", ".join(f"{SHARE_LABELS[k]} {n} of {len(runs)}" for k, n in per_share.items())
    rows = r.need("judge_error", "ppi_validation", "rows")
    best = max((1 - x["ppi_width"] / x["labels_only_width"] for x in rows), default=0.0)
    return Finding(
        f"**Carried through the judge's error, the groundedness shares can hardly be told**: corrected with "
        f"`{r.need('judge_error', 'judge')}`'s error rates on the {len(rates)} human sets (Youden's J "
        f"{fmt(min(youden), 2)} to {fmt(max(youden), 2)}), the runs' shares whose interval is narrower than half of "
        f"[0, 1]: {told}; the correct-and-grounded ones only because few answers are correct. Labels of finrag's own "
        f"answers would fix it; no judge here makes them go further (prediction-powered intervals at most "
        f"{pct(best)} narrower than labels alone, 500 draws per judge and set).",
        ref(r, "judge_error"),
    )


def _ci3(pair) -> str:
    from finrag.report.fmt import ci

    return ci(pair, 3)


def grader_finding(r: Results) -> Finding:
    s = r.need("grader_validation", "overall_strict")
    return Finding(
        f"**The correctness grader agrees with people's labels on large models' answers (in-sample)**: kappa {fmt(s['binary_kappa'], 3)} "
        f"{_ci3(s['binary_kappa_ci'])} (correct vs not, strict rule) on n = {fmt(s['n'])} FinanceBench answers of "
        "large models labelled by people; in-sample (its rules were tuned on them) and not measured on this study's "
        "own answer kinds (extractive lines, small-model outputs), which only the hand-labelled grading cases in the "
        "tests check.",
        ref(r, "grader_validation"),
    )


LESSON_HEADLINE = {
    "holds": "**AI judges agree with each other more than with people**",
    "does not hold": "**AI judges agree with each other less, not more, than with people**",
    "cannot be told": "**Whether AI judges agree more with each other than with people cannot be told here**",
}


def lesson_figures(s: Row) -> str:
    every = s["every_pair"]
    text = (
        f"over every pair, AI-vs-AI minus human-vs-AI kappa is {fmt(every['mean_difference'], 3)} "
        f"{_ci3(every.get('ci'))} (n = {every['rows']} pair-benchmark rows)"
    )
    ind = s.get("independent_pairs") or {}
    if ind.get("rows"):
        text += (
            f"; over the pairs that share no part, {fmt(ind['mean_difference'], 3)} {_ci3(ind.get('ci'))} "
            f"(n = {ind['rows']})"
        )
    return text


def lesson_finding(r: Results) -> Finding:
    s = r.need("judge_agreement", "model_judges", "seed_lesson")
    lesson = lesson_of(s)
    return Finding(
        f"{LESSON_HEADLINE[lesson.verdict]}: {lesson_figures(s)}; a direction is stated only where both agree.",
        ref(r, "judge_agreement"),
    )


SIZE_HEADLINE = {
    "above": "**The larger model answers correctly more often**",
    "above, not after Holm": "**A larger model is not shown to answer better once the stage's many tests are counted**",
    "below": "**The larger model answers correctly less often**",
    "spans": "**A larger model is not shown to answer better**",
}


def size_row(r: Results) -> tuple[str, Row]:
    rows = r.need("conditions", "model_size")
    if not rows:
        raise_missing(r, "conditions", "model_size rows")
    # the latest prompt version's pair ("plain@2, ..."), given the evidence pages where there is such a row
    name = max(rows, key=lambda g: (version_in(g), "oracle" in g))
    return name, rows[name]


def version_in(label: str) -> int:
    """'plain@2, retrieved' -> 2; a label without a version is the first round's (1)."""
    head = label.split(",", 1)[0]
    return int(head.split("@", 1)[1]) if "@" in head and head.split("@", 1)[1].isdigit() else 1


def size_finding(r: Results) -> Finding:
    name, row = size_row(r)
    m = row["metrics"]["correct"]
    d = m["large_minus_small"]
    side = interval_side(d["ci"])
    if side == "above" and (d.get("p_holm") is None or d["p_holm"] >= 0.05):
        side = "above, not after Holm"
    return Finding(
        f"{SIZE_HEADLINE[side]}: Qwen2.5-Coder 1.5B vs 0.5B ({name}), correct "
        f"{pct(m['small']['value'])} → {pct(m['large']['value'])}, difference {pp(d['difference'])} pp "
        f"{pctci(d['ci'])}, n = {row['questions']} questions (Holm-adjusted p {fmt(d.get('p_holm'), 3)}).",
        ref(r, "conditions"),
    )


def predictions_finding(r: Results) -> Finding:
    c = r.need("predictions", "counts")
    n = sum(c.values())
    return Finding(
        f"**Predictions written first**: {c['held']} of n = {n} held, {c['did not hold']} did not, "
        f"{c['pending']} pending.",
        ref(r, "predictions"),
    )


FINDINGS = (
    final_finding,
    search_finding,
    unbacked_finding,
    artefact_finding,
    judge_finding,
    judge_error_finding,
    grader_finding,
    lesson_finding,
    size_finding,
    predictions_finding,
)


@dataclass(frozen=True)
class Findings:
    findings: list[Finding]


@view("findings")
def findings(r: Results) -> Findings:
    return Findings([f(r) for f in FINDINGS])


# ------------------------------------------------------------------------------------------------ correct x grounded


@dataclass(frozen=True)
class Cell:
    count: int
    share: str


@dataclass(frozen=True)
class PictureRow:
    generator: str
    series: str
    context: str
    n: int
    cells: list[Cell]  # correct & grounded, correct & not, wrong & grounded, wrong & not
    unbacked: str  # share of the correct answers that are not fully grounded
    unbacked_corrected: (
        str  # that share's interval with the judge's error carried (envelope over the human sets)
    )


@dataclass(frozen=True)
class Picture:
    rows: list[PictureRow]
    judge: str
    source: str


@view("picture")
def picture(r: Results) -> Picture:
    """One row per system (each answer once: the latest prompt version, first replicate), so that every share's
    Wilson interval is over independent questions; the first round's pooled cells stay in the technical report."""
    rows = []
    for x in latest_runs(r):
        n, correct = x["n"], x["correct"]["k"]
        both = x["strict_correct_and_grounded_flags_ignored"]["k"]
        grounded = x["fully_grounded"]["k"]
        counts = [both, correct - both, grounded - both, n - correct - grounded + both]
        p, ci = proportion(correct - both, correct)
        carried = unbacked_carried(r, x["series"])
        rows.append(
            PictureRow(
                generator=model_name(x["generator"]),
                series=x["series"],
                context=x["context_mode"],
                n=n,
                cells=[Cell(c, pct(c / n if n else None)) for c in counts],
                unbacked=f"{pct(p)} {pctci(ci)} of {correct}" if correct else "no correct answer",
                unbacked_corrected=pctci(carried) if carried else "n/a",
            )
        )
    return Picture(rows=rows, judge=r.need("eval_main", "judge_trust", "judge"), source=ref(r, "eval_main"))


# ------------------------------------------------------------------------------------------------ the earlier study

# The earlier study's findings and figures, quoted from its report (the project brief's summary of it):
# static text by design, since finrag did not measure them.
EARLIER = {
    1: ("Search is the weakest link", "evidence recall@5 18% (dense, best of 36); right report in top 5 77%"),
    2: (
        "Dense search wins; BM25 lands on the wrong company",
        "recall@5 dense 18%, hybrid 10%, BM25 3%; method explains 78.9% of the variance",
    ),
    3: (
        "About a third of correct answers are not fully backed",
        "31% of Claude's correct answers with the right pages (110 of 351)",
    ),
    4: (
        "The automatic checker is often wrong about those",
        "checker right on 50% of 30 reviewed correct-but-ungrounded answers",
    ),
    5: (
        "AI checkers agree with each other more than with a human",
        "judge vs second AI judge κ 0.72, vs the human 0.52 [0.27, 0.75]",
    ),
    6: (
        "Better search helps grounding only a little",
        "correlation of evidence found and grounded 0.30 (Claude), 0.31 (Qwen 3B)",
    ),
    7: (
        "Quoting sources changed nothing measurable",
        "groundedness +0 pp, citation quality +1 pp with the right pages",
    ),
    8: (
        "Allowing to decline stopped false-premise corrections",
        "Claude flagged 4 of 10 false premises (plain), 0 of 10 (decline)",
    ),
    9: ("One run is one sample", "correct and fully grounded 6.7% ± 1.3 pp over three runs; first run 8.0%"),
    10: ("Strong vs small model", "right pages: Claude 70% correct, Qwen 3B 18%"),
    11: ("Trick questions", "false premise: Claude flagged 30%, Qwen 3B 5%"),
    12: ("The service", "26 requests/s on cached answers; fresh download to first answer 277 s"),
}


@dataclass(frozen=True)
class Comparison:
    number: str
    finding: str
    theirs: str
    ours: str  # finrag's figure, from results/
    verdict: str
    rule: str  # how the verdict is decided
    source: str


EARLIER_RECALL = 0.18  # the earlier study's best evidence recall@5 (finding 1)


def best_with_evidence(r: Results) -> Row | None:
    """The language-model run correct most often given the evidence pages (latest prompt versions)."""
    runs = [x for x in latest_runs(r) if is_model(x["generator"]) and x["context_mode"].startswith("oracle")]
    return max(runs, key=lambda x: (x["correct"]["p"], x["series"])) if runs else None


def c1_search(r: Results) -> tuple[str, str, str]:
    b = r.need("retrieval_grid", "headline", "best")
    ci = b["evidence_recall_at_5_ci"]
    gen = best_with_evidence(r)
    # "the weakest link": search finds less of the evidence than the model, given all of it, answers correctly
    weaker_still = gen is not None and gen["correct"]["ci"][1] < b["evidence_recall_at_5"]
    if ci[0] >= 0.5:
        verdict = CONTRADICTED
    elif ci[1] < 0.5:
        verdict = PARTLY if weaker_still else REPRODUCED
    else:
        verdict = INCONCLUSIVE
    inside = ci[0] <= EARLIER_RECALL <= ci[1]
    generation = (
        f"; given the evidence pages the best model run ({gen['series']}) is correct on {pct(gen['correct']['p'])} "
        f"{pctci(gen['correct']['ci'])}"
        if gen
        else ""
    )
    return (
        f"best of {len(r.need('retrieval_grid', 'setups'))}: evidence recall@5 {pct(b['evidence_recall_at_5'])} "
        f"{pctci(ci)} (the earlier {pct(EARLIER_RECALL)} lies {'inside' if inside else 'outside'} it), right report "
        f"{pct(b['right_report_at_5'])}, n = {b['n']}{generation}",
        verdict,
        "search misses most evidence (recall@5 interval below 50%) and the model given all of it is correct more "
        "often than that: reproduced; search misses most but the model is weaker still (its correct interval lies "
        "below the recall): partly; recall interval above 50%: contradicted",
    )


def between_setup_share(setups: list[Row], factor: str, metric: str = "evidence_recall_at_5") -> float:
    """The share of the variance between the setups' mean recall that one factor's levels explain (as the earlier
    study's 78.9%: a share of the differences between setups, not of setup x question)."""
    values = [x[metric] for x in setups]
    mean = sum(values) / len(values)
    total = sum((v - mean) ** 2 for v in values)
    groups: dict[str, list[float]] = {}
    for x in setups:
        groups.setdefault(str(x[factor]), []).append(x[metric])
    between = sum(len(g) * (sum(g) / len(g) - mean) ** 2 for g in groups.values())
    return between / total if total else 0.0


def c2_dense(r: Results) -> tuple[str, str, str]:
    by = r.need("retrieval_grid", "headline", "mean_recall_at_5_by_method")
    setups = r.need("retrieval_grid", "setups")
    share = between_setup_share(setups, "method")
    per_obs = r.need("retrieval_grid", "variance_shares_recall_at_5", "method")
    report: dict[str, list[float]] = {}
    for x in setups:
        report.setdefault(x["method"], []).append(x["right_report_at_5"])
    best = max(by, key=by.get)
    if best != "dense":
        verdict = CONTRADICTED
    else:
        verdict = REPRODUCED if share >= 0.5 else (PARTLY if share >= 0.25 else NOT_REPRODUCED)
    return (
        "mean recall@5 "
        + ", ".join(f"{m} {pct(v)}" for m, v in sorted(by.items(), key=lambda kv: -kv[1]))
        + f"; method explains {pct(share)} of the variance between the {len(setups)} setups ({pct(per_obs)} of setup x "
        "question); right report in the top 5: "
        + ", ".join(
            f"{m} {pct(sum(v) / len(v))}" for m, v in sorted(report.items(), key=lambda kv: -sum(kv[1]))
        ),
        verdict,
        "dense best on mean recall@5 and the method explains at least half the variance between setups: "
        "reproduced; a quarter to half: partly; less than a quarter: not reproduced (its central figure is not "
        "met); another method best: contradicted",
    )


def c3_unbacked(r: Results) -> tuple[str, str, str]:
    row, k, n = unbacked_correct(r)
    p, ci = proportion(k, n)
    carried = unbacked_carried(r, row["series"]) or [0.0, 1.0]
    verdict = REPRODUCED if carried[0] > 0.1 else (CONTRADICTED if carried[1] < 0.1 else INCONCLUSIVE)
    return (
        f"{pct(p)} {pctci(ci)} of {row['series']}'s correct answers with the evidence pages ({k} of "
        f"{n}); with the judge's error carried {pctci(carried)}",
        verdict,
        "on the interval with the judge's error carried: reproduced if it lies above 10% (a substantial share), "
        "contradicted if below",
    )


def c4_review(r: Results) -> tuple[str, str, str]:
    n = r.need("judge_agreement", "loaded", "finrag", "n_items")
    figure = (
        "no person has labelled finrag's own answers"
        if n == 0
        else f"{n} claims of finrag's answers labelled, none reviewed as correct-but-ungrounded"
    )
    return figure, NOT_TESTABLE, "needs a human review of finrag's own correct-but-ungrounded answers"


def c5_lesson(r: Results) -> tuple[str, str, str]:
    s = r.need("judge_agreement", "model_judges", "seed_lesson")
    lesson = lesson_of(s)
    verdict = {"holds": REPRODUCED, "does not hold": CONTRADICTED, "cannot be told": INCONCLUSIVE}[
        lesson.verdict
    ]
    return (
        lesson_figures(s),
        verdict,
        "the difference's interval above 0 over every pair and over the pairs that share no part: reproduced; "
        "below 0 over both: contradicted; otherwise inconclusive",
    )


def c6_correlation(r: Results) -> tuple[str, str, str]:
    rows = [c for c in r.need("eval_main", "correlation") if is_model(c["generator"])]
    if not rows:
        raise_missing(r, "eval_main", "correlation row for a language model")
    c = max(rows, key=lambda x: x["n"])
    ci = c["ci"]
    # a judge near chance attenuates any correlation with what it judges: "weak" is then the judge's, not the data's
    judged_told = any(
        x["shares"]["fully_grounded"]["can_tell"]
        for x in r.need("judge_error", "runs")
        if is_model(x["generator"])
    )
    if ci[0] is None or ci[1] is None or not judged_told:
        verdict = INCONCLUSIVE
    elif not ci[0] <= EARLIER_CORRELATION <= ci[1]:
        verdict = CONTRADICTED
    else:
        verdict = REPRODUCED if ci[0] > 0 else INCONCLUSIVE
    return (
        f"Spearman ρ {fmt(c['spearman_rho'], 3)} {_ci3(ci)} ({model_name(c['generator'])}, n = {c['n']} answers)"
        + (
            ""
            if judged_told
            else "; no model run's fully-grounded share can be told with the judge's error carried"
        ),
        verdict,
        "the interval holds the earlier 0.30 and lies above 0: reproduced; it excludes 0.30: contradicted; inconclusive "
        "when it holds both 0.30 and 0, or when the judge's error leaves every model run's groundedness untold (a "
        "judge near chance pulls any correlation towards 0)",
    )


EARLIER_CORRELATION = 0.30  # the earlier study's evidence-found vs grounded correlation (finding 6)


def prompt_pair(r: Results, a: str, b: str, context: str) -> tuple[Row, Row] | None:
    """The latest prompt version's runs of styles a and b on one generator and context (first replicates)."""
    runs = [
        x
        for x in r.need("eval_main", "runs")
        if x["context_mode"] == context and not x["series"].endswith("-r*")
    ]
    best = None
    for x in runs:
        if x["prompt_style"] != a or not is_model(x["generator"]):
            continue
        version = x["templates"][0].split("@")[-1]
        for y in runs:
            same = (y["prompt_style"], y["generator"], y["templates"][0].split("@")[-1]) == (
                b,
                x["generator"],
                version,
            )
            if same and (best is None or version > best[0]):
                best = (version, x, y)
    return (best[1], best[2]) if best else None


def c7_quote(r: Results) -> tuple[str, str, str]:
    pair = prompt_pair(r, "plain", "quote", "oracle")
    rule = "the two prompts' fully-grounded intervals overlap: reproduced; apart: contradicted"
    if pair is None:
        return "no plain and quote runs of one model with the evidence pages", NOT_TESTABLE, rule
    plain, quote = pair
    a, b = plain["fully_grounded"], quote["fully_grounded"]
    overlap = a["ci"][0] <= b["ci"][1] and b["ci"][0] <= a["ci"][1]
    told = all(run_share(r, x["series"], "fully_grounded")["can_tell"] for x in pair)
    verdict = INCONCLUSIVE if not told else (REPRODUCED if overlap else CONTRADICTED)
    ca, cb = (run_share(r, x["series"], "fully_grounded")["envelope_ci"] for x in pair)
    return (
        f"fully grounded: plain {pct(a['p'])} {pctci(a['ci'])}, quote {pct(b['p'])} {pctci(b['ci'])} "
        f"({plain['series']} / {quote['series']}, n = {plain['n']}); with the judge's error carried, plain "
        f"{pctci(ca)}, quote {pctci(cb)}: " + ("both can be told" if told else "the study cannot tell them"),
        verdict,
        rule + "; inconclusive where the judge's error leaves either share untold",
    )


def false_premise_runs(r: Results) -> dict[str, Row]:
    """One language model's false-premise rows by prompt style (eval_main's `trick_runs`): the latest version of
    each style, retrieved context, one answer per question; the selected system's model where it has such rows."""
    newest: dict[tuple[str, str], Row] = {}
    for t in r.need("eval_main", "trick_runs"):
        if t["kind"] != "trick_false_premise" or not is_model(t["generator"]):
            continue
        if t["context_mode"] != "retrieved" or t["series"].endswith("-r*"):
            continue
        key = (t["generator"], t["prompt_style"])
        if key not in newest or version_of(t) > version_of(newest[key]):
            newest[key] = t
    if not newest:
        return {}
    selected = r.need("eval_main", "final_system", "system", "generator")
    generator = min({g for g, _ in newest}, key=lambda g: (g != selected, g))
    return {style: t for (g, style), t in newest.items() if g == generator}


def c8_decline(r: Results) -> tuple[str, str, str]:
    rule = (
        "the plain prompt flags false premises more often than the decline prompt, the two intervals apart: "
        "reproduced; the decline prompt more often, apart: contradicted; intervals that overlap: inconclusive; the "
        "plain prompt flagging none: not testable (nothing to stop)"
    )
    runs = false_premise_runs(r)
    if "plain" not in runs or "decline" not in runs:
        return "no plain and decline runs of one model on the false-premise questions", NOT_TESTABLE, rule
    a, b = runs["plain"]["flagged_false_premise"], runs["decline"]["flagged_false_premise"]
    apart = a["ci"][1] < b["ci"][0] or b["ci"][1] < a["ci"][0]
    verdict = INCONCLUSIVE if not apart else (REPRODUCED if a["p"] > b["p"] else CONTRADICTED)
    if a["k"] == 0:
        verdict = NOT_TESTABLE  # the plain prompt never flags a false premise: there is nothing to stop
    declined = runs["decline"]["declined"]
    return (
        f"false premise flagged: plain {pct(a['p'])} {pctci(a['ci'])}, decline {pct(b['p'])} {pctci(b['ci'])} "
        f"(declined {pct(declined['p'])}), {runs['plain']['series']} / {runs['decline']['series']}, n = {a['n']} "
        "each",
        verdict,
        rule,
    )


def c9_replicates(r: Results) -> tuple[str, str, str]:
    reps = [x for x in r.need("eval_main", "replicates") if x["n_replicates"] > 1]
    rule = (
        "the runs' correct-and-grounded shares differ by more than one run's binomial standard error: reproduced; "
        "by less: consistent with it (sampling noise alone); identical: contradicted"
    )
    if not reps:
        return "no series run more than once", NOT_TESTABLE, rule
    x = max(reps, key=lambda s: (s["n_replicates"], s["correct_and_grounded"]["mean"], s["series"]))
    m = x["correct_and_grounded"]
    values = m["values"]
    n = next(y["n"] for y in r.need("eval_main", "runs") if y["series"] == x["series"])
    se = math.sqrt(m["mean"] * (1 - m["mean"]) / n) if n else 0.0
    spread = max(values) - min(values)
    verdict = CONTRADICTED if spread == 0 else (REPRODUCED if spread > se else CONSISTENT)
    return (
        f"{x['series']}: correct and fully grounded "
        + ", ".join(pct(v) for v in values)
        + f" over {x['n_replicates']} runs (mean {pct(m['mean'])} ± {pp(m['sd'] or 0.0)} pp; one run's binomial "
        f"standard error {pp(se)} pp, n = {n})",
        verdict,
        rule,
    )


def c10_size(r: Results) -> tuple[str, str, str]:
    name, row = size_row(r)
    m = row["metrics"]["correct"]
    d = m["large_minus_small"]
    return (
        f"Qwen 1.5B vs 0.5B ({name}): correct {pct(m['large']['value'])} vs {pct(m['small']['value'])}, "
        f"{pp(d['difference'])} pp {pctci(d['ci'])}, Holm-adjusted p {fmt(d.get('p_holm'), 3)}, n = {row['questions']}",
        NOT_TESTABLE,
        "the earlier study set a strong model (Claude) against a 3B one; finrag has two small local models only, so "
        "its figure stands beside the finding, untested",
    )


EARLIER_FLAGGED, EARLIER_MADE_UP = 0.05, 13 / 40  # the earlier Qwen 3B on false premises (finding 11)


def c11_trick(r: Results) -> tuple[str, str, str]:
    rule = (
        "the earlier small model's two figures (flagged 5%, used the made-up figure 32.5%) both inside finrag's "
        "intervals: consistent with it (the intervals are too wide to call it reproduced); one inside: partly "
        "reproduced; neither: contradicted"
    )
    t = false_premise_runs(r).get("plain")
    if t is None:
        return (
            "no plain-prompt answers of a language model to the false-premise questions",
            NOT_TESTABLE,
            rule,
        )
    f, u = t["flagged_false_premise"], t["used_made_up_figure"]
    inside = [f["ci"][0] <= EARLIER_FLAGGED <= f["ci"][1], u["ci"][0] <= EARLIER_MADE_UP <= u["ci"][1]]
    verdict = CONSISTENT if all(inside) else (PARTLY if any(inside) else CONTRADICTED)
    return (
        f"{t['series']} flagged {pct(f['p'])} {pctci(f['ci'])} of false premises (the earlier small model "
        f"{pct(EARLIER_FLAGGED)}) and used the made-up figure in {pct(u['p'])} {pctci(u['ci'])} (the earlier "
        f"{pct(EARLIER_MADE_UP)}, 13 of 40), n = {t['n']}",
        verdict,
        rule,
    )


def c12_service(r: Results) -> tuple[str, str, str]:
    s = r.need("serve_load", "summary")
    t = r.need("setup_time", "total_s")
    met = s["meets_rps_goal"] and s["meets_p99_goal"]
    return (
        f"{fmt(s['best_requests_per_s'], 0)} requests/s on cached answers; {fmt(t, 0)} s from clone to first answer; "
        f"finrag's own load goal (10× the earlier rate, its p99 bound) {'met' if met else 'not met'}",
        NOT_COMPARABLE,
        "a different service on a different machine: the figures stand side by side; finrag's goal is its own, "
        "not a test of the earlier finding",
    )


COMPARISONS = {
    1: ("retrieval_grid", c1_search),
    2: ("retrieval_grid", c2_dense),
    3: ("eval_main", c3_unbacked),
    4: ("judge_agreement", c4_review),
    5: ("judge_agreement", c5_lesson),
    6: ("eval_main", c6_correlation),
    7: ("eval_main", c7_quote),
    8: ("eval_main", c8_decline),
    9: ("eval_main", c9_replicates),
    10: ("conditions", c10_size),
    11: ("eval_main", c11_trick),
    12: ("serve_load", c12_service),
}


def new_rows(r: Results) -> list[Comparison]:
    g = r.need("grader_validation", "overall_strict")
    jt = r.need("eval_main", "judge_trust")
    worst = min(jt["agreement"], key=lambda x: x["kappa"])
    art = artefact_finding(r).headline.split(": ", 1)[1]
    return [
        Comparison(
            "new",
            "The grader against people's labels",
            "—",
            f"κ {fmt(g['binary_kappa'], 3)} {_ci3(g['binary_kappa_ci'])}, n = {fmt(g['n'])}",
            NEW,
            "—",
            ref(r, "grader_validation"),
        ),
        Comparison(
            "new",
            "The groundedness judge against people's labels",
            "—",
            f"worst κ {fmt(worst['kappa'], 3)} ({worst['benchmark']}, n = {worst['n']})",
            NEW,
            "—",
            ref(r, "judge_agreement"),
        ),
        Comparison(
            "new",
            "Artefacts counted as correct or grounded",
            "—",
            art.rstrip("."),
            NEW,
            "—",
            ref(r, "eval_main"),
        ),
    ]


@dataclass(frozen=True)
class Earlier:
    rows: list[Comparison]
    tally: str


@view("earlier")
def earlier(r: Results) -> Earlier:
    rows = []
    for number, (stem, fn) in COMPARISONS.items():
        finding, theirs = EARLIER[number]
        ours, verdict, rule = fn(r)
        rows.append(Comparison(str(number), finding, theirs, ours, verdict, rule, ref(r, stem)))
    tally = Counter(x.verdict for x in rows)
    return Earlier(
        rows=rows + new_rows(r),
        tally=", ".join(f"{tally[v]} {v}" for v in VERDICT_ORDER if tally[v]),
    )


# ------------------------------------------------------------------------------------------------ limitations


@dataclass(frozen=True)
class Limitations:
    items: list[str]


@view("limitations")
def limitations(r: Results) -> Limitations:
    i = r.need("ingest")
    jt = r.need("eval_main", "judge_trust")
    own = r.need("judge_agreement", "loaded", "finrag", "n_items")
    fs = r.need("eval_main", "final_system")
    worst = min(jt["agreement"], key=lambda x: x["kappa"])
    judge = (
        f"its worst kappa with people is {fmt(worst['kappa'], 3)}, below the declared {fmt(jt['min_kappa'], 2)}: "
        "groundedness differences are descriptive only"
        if jt.get("descriptive_only")
        else f"its worst kappa with people is {fmt(worst['kappa'], 3)}"
    )
    items = [
        f"**One judge, checked on other benchmarks.** Groundedness is judged by `{jt['judge']}`; {judge} "
        f"({ref(r, 'judge_agreement')}).",
        "**No person has labelled finrag's own answers**"
        + (f" ({own} claims so far)" if own else "")
        + ": that the scorers carry over to them is an assumption, not a measurement.",
        f"**{len(i['questions_unavailable'])} of {i['questions_total']} FinanceBench questions are missing**: their "
        "filings (the largest PDFs) are not in the mirror, so long filings are under-represented and the figures are "
        f"probably somewhat optimistic ({ref(r, 'ingest')}).",
        f"**Small samples and small models.** The selected system is scored on n = {fs['n']} questions; only two "
        "small local models (0.5B and 1.5B parameters, 4-bit) answer, so no strong-model figure is measured here.",
        "**Mostly single runs.** Only a few series are sampled more than once; intervals cover which questions were "
        "drawn, not the grader's or the judge's errors (the judge's error is carried separately: "
        f"{ref(r, 'judge_error')}).",
        "**The grader's kappa is in-sample**: its rules were adjusted after its disagreements with the same human "
        f"labels were read ({ref(r, 'grader_validation')}).",
        '**"Fully grounded" can still be wrong**: a faithful quote about the wrong year is grounded and incorrect.',
    ]
    return Limitations(items)


# ------------------------------------------------------------------------------------------------ conclusions


@dataclass(frozen=True)
class Conclusions:
    findings: list[Finding]
    tally: str
    contradicted: str


@view("conclusions")
def conclusions(r: Results) -> Conclusions:
    e = earlier(r)
    contra = [f"{x.number}. {x.finding}" for x in e.rows if x.verdict == CONTRADICTED]
    return Conclusions(
        findings=findings(r).findings,
        tally=e.tally,
        contradicted="; ".join(contra) if contra else "none",
    )
