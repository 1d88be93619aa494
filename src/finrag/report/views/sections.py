"""Views of the study's sections (docs/results.md, docs/setup.md, docs/service.md, TECHNICAL_REPORT.md): every
row selection and sentence choice the templates used to make, made here from results/ as typed values."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from finrag.report.fmt import claims_judged, fmt, names, pct, pctci, pp
from finrag.report.views.base import MissingResults, Results, view
from finrag.report.views.judge_error import run_share

Row = dict[str, Any]

EXTRACTIVE_NOTE = (
    "the extractive baseline, **no language model** (it returns the line of the top-ranked passage that shares "
    "the most words with the question)"
)


def interval_side(ci: list | tuple | None) -> str:
    """Where a difference's 95% interval lies: 'above' 0, 'below' 0, or 'spans' 0 (also when there is none)."""
    if not ci or ci[0] is None or ci[1] is None:
        return "spans"
    if ci[0] > 0:
        return "above"
    if ci[1] < 0:
        return "below"
    return "spans"


def or_none(xs: list[str], sep: str = ", ") -> str:
    return sep.join(xs) if xs else "none"


# ------------------------------------------------------------------------------------------------ headline


@dataclass(frozen=True)
class HeadlineRun:
    series: str
    was: str
    strict: str
    now: str
    correct_was: str
    correct: str
    flagged: str
    declined: str
    carried: str  # correct and grounded with the judge's error carried (envelope over the human sets)


@dataclass(frozen=True)
class Headline:
    metric: str
    earlier_pick: str
    system: str
    value: str
    provisional: str
    runs: list[HeadlineRun]
    grader: Row
    grader_strict: Row
    n_uncertain_correct: str
    judge: str
    min_kappa: str
    judge_verdict: str


def top_flag(counts: dict[str, int], n_flagged: int) -> str:
    if not n_flagged:
        return ""
    name, n = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0]
    return f" (most: {name}, {n})"


def final_pick(e: Row) -> tuple[str, str]:
    """The final system's sentence parts: what the earlier rule picked (or nothing), and a provisional note."""
    old = e.get("final_system_earlier_rule") or {}
    earlier = ""
    if old.get("system"):
        earlier = (
            f"was **{old['system']['series']}** at {pct(old['value'])} {pctci(old['ci'])} by the earlier rule "
            "(the earlier grading, flags\n  ignored); "
        )
    missing = e["final_system"].get("candidates_missing") or []
    provisional = (
        f", **provisional**: declared candidates not\n  scored yet: {names(missing)}" if missing else ""
    )
    return earlier, provisional


@view("headline")
def headline(r: Results) -> Headline:
    e = r.need("eval_main")
    fs = r.need("eval_main", "final_system")
    g = r.need("grader_validation")
    trust = r.need("eval_main", "judge_trust")
    earlier, provisional = final_pick(e)
    runs = [
        HeadlineRun(
            series=x["series"],
            was=pct(x["earlier_correct_and_grounded"]["p"]),
            strict=pct(x["strict_correct_and_grounded_flags_ignored"]["p"]),
            now=pct(x["correct_and_grounded"]["p"]),
            correct_was=pct(x["earlier_correct"]["p"]),
            correct=pct(x["correct"]["p"]),
            flagged=f"{x['n_flagged']} of {x['n']} answers flagged{top_flag(x['flag_counts'], x['n_flagged'])}",
            declined=pct(x["declined"]["p"]),
            carried=pctci(run_share(r, x["series"], "correct_and_grounded")["envelope_ci"]),
        )
        for x in e["runs"]
        if x["context_mode"] == "retrieved" and not x["series"].endswith("-r*") and x["prompt_style"] != "cot"
    ]
    verdict = (
        "**Groundedness differences are descriptive only**: the study's judge"
        if trust.get("descriptive_only")
        else "**Groundedness differences are findings**: the study's judge"
    )
    relation = "below" if trust.get("descriptive_only") else "at or above"
    return Headline(
        metric=fs["metric"],
        earlier_pick=earlier,
        system=fs["system"]["series"] if fs.get("system") else "none",
        value=f"{pct(fs['value'])} {pctci(fs['ci'])}",
        provisional=provisional,
        runs=runs,
        grader=r.need("grader_validation", "overall"),
        grader_strict=r.need("grader_validation", "overall_strict"),
        n_uncertain_correct=fmt(g["n_uncertain_correct"]),
        judge=trust["judge"],
        min_kappa=fmt(trust["min_kappa"], 2),
        judge_verdict=f"{verdict} (`{trust['judge']}`) has a worst\n  human-agreement kappa {relation} the declared minimum",
    )


# ------------------------------------------------------------------------------------------------ status


@dataclass(frozen=True)
class Status:
    n_setups: int
    generation: str
    final_system: str
    judges: str
    predictions: str
    rps: str
    setup_s: str


def generation_status(r: Results) -> str:
    recorded = [k[len("generation_") :] for k in r.stems() if k.startswith("generation_")]
    if not recorded:
        raise MissingResults(
            "results/metrics/generation_*.json: no generation family is recorded (stage `generate`)"
        )
    open_ = [f for f in (r.planned_families or []) if f not in recorded]
    pending = (
        f"; not complete yet: {names(open_)} (recording resumes from `llm_cache/`; `finrag progress` counts the "
        "calls already there)"
        if open_
        else ""
    )
    return f"recorded: {names(recorded)} (`results/metrics/generation_*.json`){pending}"


def system_label(system: Row) -> str:
    if system["backend"] == "extractive":
        return f"**{system['series']}**: {EXTRACTIVE_NOTE}"
    return f"**{system['series']}** (`{system['generator']}`)"


@view("status")
def status(r: Results) -> Status:
    for stem in ("ingest", "eval_main", "grader_validation", "synthetic_study"):
        r.need(stem)
    a = r.need("judge_agreement")
    runs = r.need("judge_agreement", "model_judges", "runs")
    model_runs = ", ".join(
        f"{name} {claims_judged(x)}" + (" (every dev claim)" if x.get("every_dev_claim") else "")
        for name, x in sorted(runs.items())
    )
    judges = (
        f"{names(sorted(a['judges']))} on the full samples (verifier and study trained here, judged out of fold); "
        f"judges that call a model on a nested subsample of {a['model_judges']['n_items']} claims, claims each: "
        f"{model_runs}; in `results/metrics/judge_agreement.json`"
    )
    c = r.need("predictions", "counts")
    return Status(
        n_setups=len(r.need("retrieval_grid", "setups")),
        generation=generation_status(r),
        final_system=system_label(r.need("eval_main", "final_system", "system")),
        judges=judges,
        predictions=f"{c['held']} held, {c['did not hold']} did not hold, {c['pending']} pending",
        rps=f"{r.need('serve_load', 'summary', 'best_requests_per_s'):.0f}",
        setup_s=f"{r.need('setup_time', 'total_s'):.0f}",
    )


# ------------------------------------------------------------------------------------------------ ingest


@dataclass(frozen=True)
class Ingest:
    i: Row
    n_unavailable: int
    missing_docs: list[tuple[str, int]]  # (document, questions), by name
    dropout: str  # the sentence on what the dropout does, or "" when no question is unavailable
    standins: str
    damaged: list[Row]


def missing_documents(i: Row) -> Counter:
    return Counter(q["doc_ids"][0] for q in i["questions_unavailable"])


@view("ingest")
def ingest(r: Results) -> Ingest:
    i = r.need("ingest")
    for key in ("damaged_files", "damaged_pages", "questions_unavailable"):
        r.need("ingest", key)
    missing = missing_documents(i)
    dropout = ""
    if missing:
        top, n = sorted(missing.items(), key=lambda kv: (-kv[1], kv[0]))[0]
        dropout = (
            f"Every FinanceBench figure of the study is on the other {i['questions_available']}. The dropout is not "
            "random: it follows the\nfilings this mirror lacks (FinanceBench's largest PDFs, "
            f"{len(missing)} documents, with no EDGAR HTML stand-in;\n{top} alone takes {n} questions), so companies "
            "with long filings are under-represented. Likely direction:\nfinding the evidence among more pages is "
            "harder, so the retrieval, correctness and groundedness figures are\nprobably somewhat optimistic for "
            f"the full {i['questions_total']} questions. That direction is reasoned, not measured.\n"
        )
    damaged = [
        {
            "file": d["file"],
            "pages": d["page_ranges"] or "whole file",
            "reasons": "; ".join(f"{k} ({v})" if v else k for k, v in d["reasons"].items()),
        }
        for d in i.get("parse_damaged") or []
    ]
    return Ingest(
        i=i,
        n_unavailable=len(i["questions_unavailable"]),
        missing_docs=sorted(missing.items()),
        dropout=dropout,
        standins=or_none(i.get("html_standins_used") or []),
        damaged=damaged,
    )


view("ingest_detail")(ingest)


# ------------------------------------------------------------------------------------------------ retrieval


@dataclass(frozen=True)
class ByType:
    title: str
    rows: list[tuple[str, int, str, str]]  # (value, n, best setup's mean, mean of all setups)


@dataclass(frozen=True)
class Retrieval:
    g: Row
    best: Row
    n_setups: int
    questions_total: int
    selected: Row
    filtered: Row
    contexts: Row
    variance: list[tuple[str, str]]
    by_type: list[ByType]
    finance: Row
    finance_dense: Row
    reranker: Row
    reranker_worse: str


def by_type_tables(g: Row) -> list[ByType]:
    b = g["headline"]["best"]
    out = []
    for key, title in (("by_question_type", "question type"), ("by_reasoning", "reasoning type")):
        rows = g.get(key) or []
        by = key[3:]
        table = []
        for x in rows:
            if (x["chunker"], x["embedder"], x["method"]) != (b["chunker"], b["embedder"], b["method"]):
                continue
            peers = [y["mean"] for y in rows if y[by] == x[by] and y["mean"] is not None]
            table.append(
                (x[by], x["n"], fmt(x["mean"], 3), fmt(sum(peers) / len(peers), 3) if peers else "—")
            )
        if table:
            out.append(ByType(title, table))
    return out


def reranker_note(rr: Row) -> str:
    h = rr["heldout"]
    if h["trained_cross_encoder"]["mrr@10"] >= h["baseline_minilm_biencoder"]["mrr@10"]:
        return ""
    return (
        "The trained cross-encoder ranks **worse** than the untrained bi-encoder whose weights it starts from: "
        f"trained on\n{fmt(rr['data']['train_pairs'])} pairs for {rr['params']['epochs']} CPU epoch(s), it did not "
        "learn to rank better (more pairs and epochs are the next thing to try). The `hybrid_rerank` setups use\n"
        "it as trained (the grid measures what it does); a user can name any Hugging Face cross-encoder instead\n"
        "(`retrieve.reranker`).\n"
    )


@view("retrieval")
def retrieval(r: Results) -> Retrieval:
    g = r.need("retrieval_grid")
    shares = r.need("retrieval_grid", "variance_shares_recall_at_5")
    rr = r.need("reranker")
    return Retrieval(
        g=g,
        best=r.need("retrieval_grid", "headline", "best"),
        n_setups=len(g["setups"]),
        questions_total=r.need("ingest", "questions_total"),
        selected=r.need("selected_setup"),
        filtered=r.need("retrieval_filtered"),
        contexts=r.need("contexts"),
        variance=[
            (k, fmt(v, 3))
            for k, v in sorted(shares.items())
            if isinstance(v, int | float) and not isinstance(v, bool) and k != "n_obs"
        ],
        by_type=by_type_tables(g),
        finance=r.need("retrieval_finance"),
        finance_dense=r.need("retrieval_finance_dense"),
        reranker=rr,
        reranker_worse=reranker_note(rr),
    )


view("retrieval_detail")(retrieval)


# ------------------------------------------------------------------------------------------------ scoring


@dataclass(frozen=True)
class Trust:
    judge: str
    agreement: str
    note: str
    descriptive: str


def trust_of(r: Results) -> Trust:
    jt = r.need("eval_main", "judge_trust")
    agreement = "; ".join(
        f"{x['benchmark']} {fmt(x['kappa'], 3)} {_ci3(x['kappa_ci'])}, n={x['n']}" for x in jt["agreement"]
    )
    descriptive = ""
    if jt.get("descriptive_only"):
        descriptive = (
            " Its worst kappa is below the\nminimum declared in `params.yaml` (`score.min_judge_kappa` "
            f"{fmt(jt['min_kappa'], 2)}), so every groundedness difference between systems here is\n"
            "**descriptive only**, not a finding."
        )
    return Trust(judge=jt["judge"], agreement=agreement, note=jt["note"], descriptive=descriptive)


def _ci3(pair) -> str:
    from finrag.report.fmt import ci

    return ci(pair, 3)


@dataclass(frozen=True)
class Scoring:
    e: Row
    trust: Trust
    questions_total: int
    n_unavailable: int
    judges: str
    decoding: str
    flag_names: list[str]
    llm_grader: str
    selection: str
    provisional: str
    earlier: str
    extractive: str
    overlap: str
    llm_judge: str
    only_extractive: str
    splitter_note: str
    correlation_notes: list[str]
    replicate_decoding: str
    replicates: list[tuple[str, int, str, str]]
    judge_costs: list[str]
    judges_meta: str
    extractive_detail: str
    two_by_two: list[Row]
    trick: list[Row]
    declining: list[Row]
    constant_rater: str
    splitter_judged: str
    splitters: list[Row]
    llm_same: str


def decoding_sentence(r: Results) -> str:
    t = r.need("generation_qwen", "decoding", "temperature")
    d = r.need("generation_qwen_replicates", "decoding")
    greedy = " (greedy)" if t == 0 else ""
    return (
        f"The local model's runs are decoded at temperature {t}{greedy};\na sampled series `-r*` is the same prompt "
        f"sampled several times (temperature {d['temperature']}, top-p {d['top_p']},\nseed {d['seed']} + the "
        "replicate index), and its row shows its first replicate (mean ± sd over replicates in the\ntechnical report)."
    )


def llm_grader_sentence(e: Row) -> str:
    g = e.get("llm_grader")
    if g:
        return (
            "Uncertain grades (near the content-word threshold, or a yes/no read softly) went to the LLM grader\n"
            f"({g['model']}, `{g['template_id']}`): asked {fmt(g['asked'])} times,\n{fmt(g['unreadable'])} replies "
            "unreadable (deterministic verdict kept)."
        )
    base = (
        "Uncertain grades (near the content-word threshold, a yes/no read softly, a table line) are never counted "
        "correct."
    )
    sens = e.get("grader_sensitivity")
    if not sens:
        return (
            base
            + "\nThe optional LLM grader (`score.grader_sensitivity`, the local 1.5B model through the response "
            "cache), which would give them\na verdict as a separate, labelled sensitivity row, is off in this study so "
            "far: its calls are not recorded yet."
        )
    return base + "\n" + sensitivity_text(sens)


def sensitivity_text(sens: Row) -> str:
    """The LLM grader's sensitivity row as sentences: per candidate, both ways, and the rule's pick with it."""
    parts = []
    for x in sens["runs"]:
        v = x["llm_verdicts"]
        parts.append(
            f"{x['series']}: {x['uncertain']} uncertain ({v['correct']} called correct, {v['incorrect']} incorrect, "
            f"{v['refusal']} refusals, {v['unreadable']} unreadable); correct {pct(x['correct']['p'])} → "
            f"{pct(x['correct_with_llm']['p'])}, correct and grounded {pct(x['correct_and_grounded']['p'])} → "
            f"{pct(x['correct_and_grounded_with_llm']['p'])}"
        )
    fs = sens["final_system_with_llm"]
    pick = (
        f"the rule would pick **{fs['system']['series']}** ({pct(fs['value'])} {pctci(fs['ci'])})"
        if fs.get("system")
        else "the rule would pick no system"
    )
    return (
        f"**Sensitivity, not the study's grade**: the LLM grader ({sens['model']}, `{sens['template_id']}`) gave the "
        f"{fmt(sens['asked'])} uncertain grades of the rule's candidates a verdict: "
        + "; ".join(parts)
        + f". Taking its verdicts, {pick}; the study counts uncertain as not correct. The LLM grader's verdicts are "
        "not checked against people (a 1.5B model: read them as an upper bound on what the uncertain grades could "
        "add, not as a correction)."
    )


def overlap_sentence(fs: Row) -> str:
    ranking = fs.get("ranking") or []
    if len(ranking) < 2 or ranking[1]["ci"][1] < fs["ci"][0]:
        return ""
    second = ranking[1]
    return (
        f" It overlaps the runner-up's ({second['series']},\n{pct(second['value'])} {pctci(second['ci'])}), so the "
        "rule's pick is not shown to be better than the runner-up."
    )


def splitter_note(sp: Row) -> str:
    det, gen = sp["splitters"][0], sp["splitters"][1]
    if gen["no_claim"] >= det["no_claim"]:
        return ""
    more = ""
    if gen["claims_per_answer"] > det["claims_per_answer"]:
        more = (
            f",\nand writes {fmt(gen['claims_per_answer'] / det['claims_per_answer'], 1)} times as many claims per "
            "answer"
        )
    return (
        f"The LLM splitter finds claims in {det['no_claim'] - gen['no_claim']} answers where the deterministic "
        f"splitter finds none{more}: every score in this report uses the deterministic splitter."
    )


def correlation_note(c: Row) -> str:
    if c["ci"][0] is not None and c["p_value"] is not None:
        how = "those resamples have no rho and are left out of the interval and the p-value in its row"
    else:
        how = (
            "too many to leave out without biasing the interval, so its row gives rho alone, with no interval and "
            "no p-value (n/a)"
        )
    return (
        f"{c['generator']}: one of the two variables is constant in {fmt(c['degenerate_resamples'])} of the "
        "bootstrap resamples (nearly every answer\nhas the same groundedness); "
        f"{how}; rho itself rests on the few answers that differ."
    )


def mean_sd(x: Row) -> str:
    return pct(x["mean"]) + ("" if x["sd"] is None else f" ± {pct(x['sd'])}")


def earlier_pick_sentence(e: Row) -> str:
    old = e.get("final_system_earlier_rule") or {}
    if not old.get("system"):
        return ""
    return (
        "By the earlier rule (the earlier grading, flags ignored, every retrieved system a candidate) on the same\n"
        f"answers the pick was **{old['system']['series']}**, {pct(old['value'])} {pctci(old['ci'])}.\n"
    )


EXTRACTIVE_PICK = (
    "That system is the extractive baseline and uses **no language model**: it returns, word for word, the line of "
    "the\ntop-ranked passage that shares the most words with the question, and cites that passage. It is grounded "
    "almost by\nconstruction, and its correctness measures the search as much as any answering.\n"
)


@view("scoring")
def scoring(r: Results) -> Scoring:
    e = r.need("eval_main")
    fs = r.need("eval_main", "final_system")
    for key in ("llm_judge", "splitters", "chance_support", "cost"):
        r.need("eval_main", key)
    rule = fs["rule"]
    missing = fs.get("candidates_missing") or []
    lj = e["llm_judge"]
    d = r.need("generation_qwen_replicates", "decoding")
    return Scoring(
        e=e,
        trust=trust_of(r),
        questions_total=r.need("ingest", "questions_total"),
        n_unavailable=len(r.need("ingest", "questions_unavailable")),
        judges=names(e["meta"]["judges"]),
        decoding=decoding_sentence(r),
        flag_names=list(e["runs"][0]["flag_counts"]),
        llm_grader=llm_grader_sentence(e),
        selection=(
            f"declared {rule.get('declared', 'earlier')}: highest share {fs['metric']},\n{'/'.join(rule['contexts'])} "
            f"context{', among the declared candidates' if rule.get('candidates') else ''}"
        ),
        provisional=(
            f"Provisional: the declared candidates {names(missing)} are not scored yet (their answers are being "
            "recorded), so the pick is among the others.\n"
            if missing
            else ""
        ),
        earlier=earlier_pick_sentence(e),
        extractive=EXTRACTIVE_PICK if fs["system"]["backend"] == "extractive" else "",
        overlap=overlap_sentence(fs),
        llm_judge=names(lj["judges"][1]),
        only_extractive=(
            ""
            if any(x["backend"] != "extractive" for x in e["runs"])
            else "Only the model-free extractive baseline is scored so far: the local model's runs are being recorded "
            "(see the status table).\n"
        ),
        splitter_note=splitter_note(e["splitters"]),
        correlation_notes=[correlation_note(c) for c in e["correlation"] if c["degenerate_resamples"]],
        replicate_decoding=(
            f"; the replicates of `qwen_replicates` are sampled at temperature {d['temperature']}, top-p "
            f"{d['top_p']}, seed {d['seed']} + the replicate index (`results/metrics/generation_qwen_replicates.json`)"
        ),
        replicates=[
            (x["series"], x["n_replicates"], mean_sd(x["correct"]), mean_sd(x["fully_grounded"]))
            for x in e["replicates"]
        ],
        judge_costs=[
            f"Judging cost, {j['judge']}{'' if 'splitter' in j['judge'] else ' judge'}: {fmt(j['calls'])} model calls "
            f"for {fmt(j['claims'])} claims of {fmt(j['answers'])} answers,\n{fmt(j['input_tokens'])} prompt tokens, "
            f"{fmt(j['output_tokens'])} generated tokens, {fmt(j['model_seconds'], 0)} model seconds, "
            f"${fmt(j['cost_usd'], 2)}."
            for j in e["cost"]["judges"]
            if j["calls"]
        ],
        judges_meta=names(e["meta"]["judges"])
        + (
            f", LLM judge on {e['meta']['n_llm_sampled']} sampled answers"
            if e["meta"].get("llm_judges")
            else ""
        ),
        extractive_detail=(
            " It is the extractive baseline and uses **no\nlanguage model**: it returns, word for word, the line of the "
            "top-ranked passage that shares the most words with\nthe question, and cites that passage."
            if fs["system"]["backend"] == "extractive"
            else ""
        ),
        two_by_two=[
            with_defaults(x, ("n_flagged", "correct_grounded_unflagged", "not_correct_grounded_unflagged"))
            for x in e["two_by_two"]
        ],
        trick=[
            {
                **with_defaults(x, ("n_flagged",)),
                **{
                    k: share_or_dash(x.get(k))
                    for k in ("correct", "declined", "flagged_false_premise", "used_made_up_figure")
                },
            }
            for x in e["trick"]
        ],
        declining=[with_defaults(x, ("n_flagged",)) for x in e["declining"]],
        constant_rater=(
            f"; one judge gives\nthe same verdict to every claim ({lj['claims']['constant_rater']}), so kappa is 0 by "
            "construction and no interval is given"
            if lj["claims"].get("constant_rater")
            else ""
        ),
        splitter_judged=(
            "both judges judge both sets of claims"
            if e["splitters"].get("llm_judged")
            else f"the {names(e['meta']['judges'])} judge judges both sets of claims, the LLM judge only the "
            "deterministic ones (its cost on the\nLLM splitter's claims is not spent here)"
        ),
        splitters=[
            {
                "splitter": x["splitter"],
                "claims": fmt(x["claims"]),
                "per_answer": fmt(x["claims_per_answer"], 2),
                "no_claim": x["no_claim"],
                "primary": f"{pct(x['primary_fully_grounded']['p'])} {pctci(x['primary_fully_grounded']['ci'])}",
                "llm": (
                    f"{pct(x['llm_fully_grounded']['p'])} {pctci(x['llm_fully_grounded']['ci'])}"
                    if x.get("llm_fully_grounded")
                    else "not judged"
                ),
            }
            for x in e["splitters"]["splitters"]
        ],
        llm_same=llm_same(e["splitters"]["same_verdict"]),
    )


def with_defaults(x: Row, keys: tuple[str, ...]) -> Row:
    return {**x, **{k: x.get(k, "n/a") for k in keys}}


def share_or_dash(x: Row | None) -> str:
    return pct(x["p"]) if x else "—"


def llm_same(same: Row) -> str:
    s = same.get("llm")
    if not s:
        return ""
    return f", LLM judge\n{pct(s['raw_agreement'])} (kappa {fmt(s['kappa'], 3)} {_ci3(s['kappa_ci'])})"


view("scoring_detail")(scoring)


# ------------------------------------------------------------------------------------------------ conditions


@dataclass(frozen=True)
class Conditions:
    c: Row
    level3_rank: str
    position: list[Row]
    dose: list[Row]
    model_size: list[Row]
    size_cost: str
    holm: str
    n_extractive: int
    draw: str
    pending: str
    position_detail: list[Row]
    gold_positions: list[tuple[str, list[str]]]
    dose_detail: list[Row]
    size_detail: list[Row]


def share_text(s: Row) -> str:
    if s["value"] is None:
        return f"n/a (n={s['n']})"
    if "k" in s:
        return f"{pct(s['value'])} {pctci(s['ci'])} ({s['k']}/{s['n']})"
    return f"{fmt(s['value'], 3)} {_ci3(s['ci'])} (n={s['n']})"


def diff_text(d: Row) -> str:
    return "n/a" if d["difference"] is None else f"{pp(d['difference'])} {pctci(d['ci'])}"


def p_text(d: Row) -> str:
    return "n/a" if d["p"] is None else f"{fmt(d['p'], 3)}; Holm {fmt(d['p_holm'], 3)}"


def level3_rank(rows: list[Row]) -> str:
    scored = [s["evidence_recall_at_5"] for s in rows if s["evidence_recall_at_5"] is not None]
    for s in rows:
        if (
            s["filter"] == "company_period"
            and s["method"] == "dense+route"
            and s["evidence_recall_at_5"] is not None
        ):
            rank = sum(1 for x in scored if x > s["evidence_recall_at_5"]) + 1
            return f", and it is the setup\nranked {rank} of the {len(rows)} dense and hybrid setups measured there"
    return ""


def holm_sentence(c: Row) -> str:
    p = c["multiple_tests"]["smallest_p_holm"]
    if p is None or p < 0.05:
        return ""
    size = " or model size" if c["model_size"] else ""
    return (
        f", so no\neffect in this section (passage order, retrieval level{size}) survives the correction: read the "
        "rows as\nestimates with their intervals, not as findings. On so few pairs a bootstrap interval can exclude "
        "0 where the row's\np is above 0.05 (two different tests): such a row is suggestive, no more"
    )


def draw_sentence(c: Row) -> str:
    e, q = c["dose"].get("extractive"), c["dose"].get("qwen0.5b-plain")
    if not (e and q and e["evidence_recall"][0] is not None and q["evidence_recall"][0] is not None):
        return ""
    return (
        f"The draw is a small sample of all {e['questions']} (level 1 shows its questions evidence recall\n"
        f"{fmt(q['evidence_recall'][0], 3)}, against {fmt(e['evidence_recall'][0], 3)} over all questions): the "
        "local\nmodel's shares estimate its accuracy on the draw; the paired differences are what these rows measure."
    )


def size_cost(c: Row) -> str:
    large = [
        c["costs"]["runs"][x["runs"][1]]
        for x in c["model_size"].values()
        if x["runs"][1] in c["costs"]["runs"]
    ]
    if not large:
        return ""
    secs = sum(x["model_seconds"] for x in large)
    n = sum(x["answers"] for x in large)
    cut = sum(x["cut_at_max_tokens"] for x in large)
    t = c["costs"]["llamacpp_threads"]
    return (
        f"\nThe 1.5B answers cost {fmt(secs, 0)} model-seconds for {n} answers ({fmt(secs / n, 0)} s an answer on "
        f"average, on\n{t} threads: CPU time is about {t}× that; model time as recorded with each call, some of it\n"
        f"while the machine was shared with other work), {cut} of them cut at the token limit; per run in the "
        "technical report.\n"
    )


def pair_cells(m: Row, a: str, b: str, d: str) -> str:
    return f"{pct(m[a]['value'])} → {pct(m[b]['value'])} | {pp(m[d]['difference'])} {pctci(m[d]['ci'])}"


@view("conditions")
def conditions(r: Results) -> Conditions:
    c = r.need("conditions")
    position = [
        {
            "name": g,
            "questions": x["questions"],
            "correct": pair_cells(
                x["metrics"]["correct"], "gold_first", "shuffled", "shuffled_minus_gold_first"
            ),
            "p": fmt(x["metrics"]["correct"]["shuffled_minus_gold_first"]["p"], 3),
            "grounded": pair_cells(
                x["metrics"]["fully_grounded"], "gold_first", "shuffled", "shuffled_minus_gold_first"
            ),
        }
        for g, x in c["position"].items()
    ]
    dose = [
        {
            "name": g,
            "questions": x["questions"],
            "recall": " / ".join(fmt(v, 3) for v in x["evidence_recall"]),
            "correct": " / ".join(pct(lv["value"]) for lv in x["metrics"]["correct"]["levels"]),
            "trend": f"{pp(x['metrics']['correct']['trend']['per_level'])} {pctci(x['metrics']['correct']['trend']['ci'])}",
            "p": fmt(x["metrics"]["correct"]["trend"]["p"], 3),
            "grounded": " / ".join(pct(lv["value"]) for lv in x["metrics"]["fully_grounded"]["levels"]),
        }
        for g, x in c["dose"].items()
    ]
    size = []
    for g, x in c["model_size"].items():
        u = x["metrics"].get("grounded_unflagged")
        size.append(
            {
                "name": g,
                "questions": x["questions"],
                "correct": pair_cells(x["metrics"]["correct"], "small", "large", "large_minus_small"),
                "p": fmt(x["metrics"]["correct"]["large_minus_small"]["p"], 3),
                "grounded": pair_cells(x["metrics"]["fully_grounded"], "small", "large", "large_minus_small"),
                "unflagged": pair_cells(u, "small", "large", "large_minus_small") if u else "n/a | n/a",
            }
        )
    gold_positions = [
        (
            g,
            [
                f"{b['shuffled_correct']}/{b['n']}; {b['gold_first_correct']}/{b['n']}" if b else "n/a"
                for b in (x["by_gold_position"].get(k) for k in "12345")
            ],
        )
        for g, x in c["position"].items()
        if "by_gold_position" in x
    ]

    def detail(block: dict, a: str, b: str, d: str) -> list[Row]:
        return [
            {
                "name": g,
                "metric": name.replace("_", " "),
                "a": share_text(m[a]),
                "b": share_text(m[b]),
                "diff": diff_text(m[d]),
                "p": p_text(m[d]),
            }
            for g, x in block.items()
            for name, m in x["metrics"].items()
        ]

    dose_detail = [
        {
            "name": g,
            "metric": name.replace("_", " "),
            "levels": [share_text(lv) for lv in m["levels"]],
            "trend": "n/a"
            if m["trend"]["per_level"] is None
            else f"{pp(m['trend']['per_level'])} {pctci(m['trend']['ci'])}",
            "p": p_text(m["trend"]),
            "n": m["trend"]["n"],
        }
        for g, x in c["dose"].items()
        for name, m in x["metrics"].items()
    ]
    pending = c.get("pending_runs") or []
    return Conditions(
        c=c,
        level3_rank=level3_rank(r.need("retrieval_finance_dense", "setups")),
        position=position,
        dose=dose,
        model_size=size,
        size_cost=size_cost(c),
        holm=holm_sentence(c),
        n_extractive=r.need("conditions", "dose", "extractive", "questions"),
        draw=draw_sentence(c),
        pending=or_none(pending),
        position_detail=detail(c["position"], "gold_first", "shuffled", "shuffled_minus_gold_first"),
        gold_positions=gold_positions,
        dose_detail=dose_detail,
        size_detail=detail(c["model_size"], "small", "large", "large_minus_small"),
    )


view("conditions_detail")(conditions)


# ------------------------------------------------------------------------------------------------ grader


@dataclass(frozen=True)
class Grader:
    g: Row
    o: Row
    n_files: int


@view("grader")
def grader(r: Results) -> Grader:
    g = r.need("grader_validation")
    return Grader(g=g, o=r.need("grader_validation", "overall"), n_files=len(g["per_file"]))


view("grader_detail")(grader)


# ------------------------------------------------------------------------------------------------ agreement


@dataclass(frozen=True)
class Lesson:
    every: Row
    independent: Row | None
    every_says: str
    independent_says: str
    verdict: str  # does the seed study's lesson hold here: "holds", "does not hold" or "cannot be told"
    verdict_sentence: str
    left_out: str


LESSON_SAYS = {
    "above": "the judges agree more with each other than with the humans (the interval lies above 0)",
    "below": "the judges agree less with each other than with the humans (the interval lies below 0)",
    "spans": "the interval spans 0: neither more nor less agreement with each other than with the humans can be told",
}
LESSON_SIDE = {"above": "above 0", "below": "below 0", "spans": "spans 0"}
LESSON_VERDICT = {
    "above": ("holds", "it holds here"),
    "below": ("does not hold", "here it does not hold; the opposite does, narrowly"),
    "spans": ("cannot be told", "here it can be neither confirmed nor refuted"),
}


def lesson_of(s: Row) -> Lesson:
    """The seed study's lesson (AI judges agree with each other more than with humans), read over every pair and
    over the pairs that share no part: a direction is stated only where both intervals agree (a pair that shares a
    part agrees partly by construction; the independent pairs alone are a subset chosen after the fact)."""
    ind = s["independent_pairs"] if s["independent_pairs"].get("rows") else None
    every_side = interval_side(s["every_pair"].get("ci"))
    side = interval_side(ind["ci"]) if ind else "spans"
    if ind is None or side != every_side:
        verdict, sentence = LESSON_VERDICT["spans"]
        if ind is not None and (side != "spans" or every_side != "spans"):
            sentence = (
                f"the two readings disagree (every pair: {LESSON_SIDE[every_side]}; the pairs that share no part: "
                f"{LESSON_SIDE[side]}), so here it can be neither confirmed nor refuted"
            )
    else:
        verdict, sentence = LESSON_VERDICT[side]
    left_out = (
        f"{len(s['left_out'])} pair-benchmark rows left out where a judge gives one verdict to every such claim"
        if s.get("left_out")
        else "no row left out: no judge gives one verdict to every claim of a pair"
    )
    return Lesson(
        every=s["every_pair"],
        independent=ind,
        every_says=LESSON_SAYS[interval_side(s["every_pair"].get("ci"))],
        independent_says=LESSON_SAYS[side] if ind else "",
        verdict=verdict,
        verdict_sentence=sentence,
        left_out=left_out,
    )


def lesson_row(label: str, s: Row | None) -> str:
    if not s:
        return ""
    ci = f" [{fmt(s['ci'][0], 3)}, {fmt(s['ci'][1], 3)}]" if s.get("ci") else ""
    return (
        f"| {label} | {s['rows']} | {fmt(s['mean_ai'], 3)} | {fmt(s['mean_human'], 3)} | "
        f"{fmt(s['mean_difference'], 3)}{ci} |\n"
    )


@dataclass(frozen=True)
class Agreement:
    a: Row
    human_rows: list[Row]
    ai_rows: list[Row]
    ai_scope: str
    n_matrix: int
    lesson: Lesson
    lesson_table: str
    sample: str
    sample_scope: str
    deterministic: str
    greedy: str
    resampled: str
    verifier: Row
    loso: list[tuple[str, Row]]
    sj: Row
    left_out_benchmarks: str
    candidates: list[Row]
    study_claims: str
    model_costs: str
    cost_machine: str
    first_rule: str
    scored_by: str
    loaded: list[tuple[str, Row, str]]
    no_own_labels: str
    model_runs: list[Row]
    constant: str
    calibration: str


def sample_scope(runs: dict, n_items: int) -> str:
    short = [
        n for n, x in sorted(runs.items()) if claims_judged(x) < n_items and not x.get("every_dev_claim")
    ]
    wide = [n for n, x in sorted(runs.items()) if x.get("every_dev_claim")]
    text = f"; {names(wide)} on every dev claim of the three sets, beyond the sample the other judges are tabled on"
    text = text if wide else ""
    if short:
        return (
            text
            + f"; {names(short)} on the first part of it, their n in the tables): the CPU allows\nno more yet; the "
            "intervals show what that costs."
        )
    return text + ")."


def resampled_sentence(runs: dict) -> str:
    again = [n for n, x in sorted(runs.items()) if x.get("sampled_rerun_of")]
    if not again:
        return " No sampled re-run is recorded."
    of = names(runs[n]["sampled_rerun_of"] for n in again)
    how = names(f"{n} at temperature {runs[n]['decoding']['temperature']}" for n in again)
    return (
        f" A sampled re-run exists for {of} only\n({how}, in the pairs above); the others' sampled re-runs are not "
        "recorded."
    )


def calibration_paragraph(runs: dict) -> str:
    calibrated = [n for n, x in sorted(runs.items()) if "calibration" in x]
    if not calibrated:
        return ""
    many = len(calibrated) > 1
    who = " and ".join(f"`{n}`" for n in calibrated)
    what = "are calibrated LLM judges" if many else "is the calibrated LLM judge"
    models = names(f"{n} on {runs[n]['model']}" for n in calibrated)
    folds = runs[calibrated[0]]["calibration"]["folds"]
    cuts = "".join(
        f"The cuts per fold{' for ' + n if many else ''}:\n"
        + ", ".join(fmt(t, 3) for _, t in sorted(runs[n]["calibration"]["threshold_by_fold"].items()))
        + f"; fitted on all its\nclaims: {fmt(runs[n]['calibration']['threshold_all'], 3)} (the cut a new claim "
        "would get).\n"
        for n in calibrated
    )
    return (
        f"{who} {what}\n({models}): the model asked for one word, SUPPORTED or UNSUPPORTED, and\nits verdict read "
        "from the first token's log-probabilities (log P(supported) - log P(not supported) over the top 20\n"
        f"alternatives) instead of from the word it writes. The cut is fitted out of fold: {folds} folds of whole\n"
        "reports, questions or answers (claims two benchmarks share kept together), each fold's claims cut at the\n"
        "kappa-maximising threshold of the other folds, one threshold for all benchmarks.\n"
        f"{cuts}{'None has a' if many else 'It has no'} re-run row: the verdict reads the\nfirst token's "
        "log-probabilities, which llama.cpp computes from the model's logits before any sampling, so a re-run\nat any "
        "temperature returns the same scores (the word it would sample is not read); the self-agreement is 1 by\n"
        f"construction, not a measurement. `finrag agreement --judge {'|'.join(calibrated)}` replays "
        f"{'each' if many else 'it'} on a labels file with\n{'its' if many else 'this'} cut and names the claims that "
        "would need a model call.\n"
    )


def scored_by(r: Results, selected: str) -> str:
    jt = r.need("eval_main", "judge_trust")
    if jt["judge"] == selected:
        return (
            f"The FinanceBench answers in the scoring section are judged by **{selected}**, and each groundedness\n"
            "figure there carries this kappa beside it."
        )
    return (
        f"The FinanceBench answers in the scoring section are judged by `{names(r.need('eval_main', 'meta', 'judges'))}`,"
        " not by the selected\njudge: re-scoring them with it is not done yet."
    )


@view("agreement")
def agreement(r: Results) -> Agreement:
    a = r.need("judge_agreement")
    mj = r.need("judge_agreement", "model_judges")
    runs = mj["runs"]
    drawn = mj.get("pairs_drawn")
    lesson = lesson_of(r.need("judge_agreement", "model_judges", "seed_lesson"))
    sj = r.need("judge_agreement", "selected_judge")
    cost = r.need("judge_cost")
    vt = r.need("verifier_train")
    constant = sorted(
        {
            x["judge"]
            for x in a["summary"]
            if x["level"] == "binary"
            and x["subset"] == "all"
            and x["pair"].startswith("human vs ")
            and "second" in (x.get("constant_rater") or "")
        }
    )
    first = sj["by_first_rule"]
    return Agreement(
        a=a,
        human_rows=[
            x
            for x in a["summary"]
            if x["subset"] == "all" and x["level"] == "binary" and x["pair"].startswith("human")
        ],
        ai_rows=[
            x
            for x in a["summary"]
            if x["level"] == "binary"
            and not x["pair"].startswith("human")
            and (drawn is None or x["pair"] in drawn)
        ],
        ai_scope=(
            "every pair measured"
            if drawn is None
            else "the pairs drawn in the forest plot\nbelow; every other pair of "
            f"{names(mj.get('pairs_among') or [])} is in the matrix that follows and in the technical report"
        ),
        n_matrix=len(mj.get("pairs_among") or []),
        lesson=lesson,
        lesson_table=lesson_row("every pair", lesson.every)
        + lesson_row("pairs that share no part", lesson.independent),
        sample=names(
            f"{x['benchmark']} {x['n']}"
            for x in a["summary"]
            if x["pair"] == "human vs llm" and x["level"] == "binary" and x["subset"] == "all"
        ),
        sample_scope=sample_scope(runs, mj["n_items"]),
        deterministic=names(sorted(a["judges"])),
        greedy=names(
            n for n, x in sorted(runs.items()) if not (x.get("decoding") and x["decoding"].get("temperature"))
        ),
        resampled=resampled_sentence(runs),
        verifier=vt,
        loso=sorted((vt.get("leave_one_source_out") or {}).items()),
        sj=sj,
        left_out_benchmarks=" / ".join(sj["kappa_left_out"][sj["selected"]]),
        candidates=[
            {
                "name": n,
                "hours": fmt(sj["cpu_hours_for_study"][n], 3),
                "kappas": " / ".join(fmt(k, 3) for k in sj["kappa_left_out"][n].values()),
                "worst": fmt(sj["min_kappa"][n], 3) if n in sj["min_kappa"] else "n/a",
                "admitted": "yes" if n not in sj["not_admitted"] else "no: " + sj["not_admitted"][n],
            }
            for n in sj["candidates"]
        ],
        study_claims=fmt(cost["study_claims"]),
        model_costs=", ".join(
            f"{n} {fmt(x['cpu_hours_for_study'], 1)} CPU-hours ({fmt(1 / x['mean_latency_s'], 2)} claims/s; recorded "
            f"{names(x['recorded_days'])})"
            for n, x in cost["judges"].items()
            if x.get("recorded_calls")
        ),
        cost_machine=f"{cost['machine']['cpus']} cores, CPU flags {names(cost['machine']['cpu_flags'])}",
        first_rule=f"**{first['selected']}** (worst case:\n"
        + ", ".join(f"{n} {fmt(k, 3)}" for n, k in sorted(first["min_kappa"].items()))
        + ")",
        scored_by=scored_by(r, sj["selected"]),
        loaded=[
            (
                b,
                x,
                "; ".join(
                    f"{why}: {n}" for why, n in sorted(x["excluded"].items(), key=lambda kv: kv[0].lower())
                ),
            )
            for b, x in sorted(a["loaded"].items())
        ],
        no_own_labels=(
            "**No human labels of finrag's own answers have been collected yet** (`finrag label` records them into "
            "`labels/`);\nthe agreement below is on external benchmarks only.\n"
            if r.need("judge_agreement", "loaded", "finrag", "n_items") == 0
            else ""
        ),
        model_runs=[
            {
                "name": n,
                "model": x["model"],
                "claims": claims_judged(x),
                "requests": x["requests"],
                "parse_failures": x["judge_stats"].get("parse_failures", "n/a"),
                "labels": "; ".join(
                    f"{b}: " + ", ".join(f"{v} {k}" for v, k in sorted(y["judge_labels"].items()))
                    for b, y in sorted(x["benchmarks"].items())
                ),
            }
            for n, x in sorted(runs.items())
        ],
        constant=(
            f"Judges that gave one verdict to every sampled claim of some benchmark: {names(constant)}; every pair\n"
            "that includes them there says nothing beyond that.\n"
            if constant
            else ""
        ),
        calibration=calibration_paragraph(runs),
    )


view("agreement_detail")(agreement)


# ------------------------------------------------------------------------------------------------ predictions


@dataclass(frozen=True)
class Predictions:
    counts: Row
    rows: list[Row]
    caveats: list[tuple[str, str, str]]


@view("predictions")
def predictions(r: Results) -> Predictions:
    p = r.need("predictions")
    rows = [
        {
            "id": x["id"],
            "statement": x["statement"],
            "condition": x["condition"],
            "observed": fmt(x["observed"], 3),
            "status": x["status"]
            + (f": {x['pending_because']}" if x.get("pending_because") else "")
            + (" (caveat below)" if x.get("caveats") else ""),
        }
        for x in p["predictions"]
    ]
    caveats = [(x["id"], c["date"], c["text"]) for x in p["predictions"] for c in x.get("caveats") or []]
    return Predictions(counts=r.need("predictions", "counts"), rows=rows, caveats=caveats)


# ------------------------------------------------------------------------------------------------ synthetic


@dataclass(frozen=True)
class Synthetic:
    s: Row
    answers: Row
    generation: Row
    sample_size: int
    in_sample: str


@view("synthetic")
def synthetic(r: Results) -> Synthetic:
    s = r.need("synthetic_study")
    gen = r.need("synthetic_generation")
    src = r.need("synthetic_study", "abstention", "threshold_source")
    return Synthetic(
        s=s,
        answers=r.need("synthetic_study", "answers"),
        generation=gen,
        sample_size=gen["sample_size"],
        in_sample=(
            ": fitted on the same questions, so the abstaining baseline's accuracy is optimistic"
            if src == "youden_in_sample"
            else ""
        ),
    )


view("synthetic_detail")(synthetic)


# ------------------------------------------------------------------------------------------------ replay and serve


def machine_text(x: Row) -> str:
    m = x["machine"]
    flags = m.get("cpu_flags")
    if flags is None:
        how = "CPU flags not recorded"
    else:
        how = f"CPU flags {'/'.join(flags) if flags else 'none of note'}"
    return f"commit `{x['commit'][:10]}`, {m['cpus']} cores, {how}"


@dataclass(frozen=True)
class Replay:
    r: Row
    main: Row
    on: str
    setup_s: str
    setup_on: str
    rebuild: Row
    rebuild_on: str
    changed_after: str
    stale_after: str
    identical: str


@view("replay")
def replay(r: Results) -> Replay:
    rt = r.need("replay_time")
    main = r.need("replay_time", "main_command")
    rb = r.need("rebuild_cost")
    st = r.need("setup_time")
    return Replay(
        r=rt,
        main=main,
        on=machine_text(rt),
        setup_s=fmt(st["total_s"], 1),
        setup_on=machine_text(st),
        rebuild=rb,
        rebuild_on=machine_text(rb),
        changed_after=or_none(main["changed_after"]),
        stale_after=or_none(main["stale_after"], "; "),
        identical="yes" if rt["byte_identical"] else "no: " + names(rt["changed"]),
    )


@dataclass(frozen=True)
class Serve:
    s: Row
    rps_goal: str
    p99_goal: str
    search: str
    backend_note: str
    setup: Row
    cold: str
    steps: str
    mixed: Row
    mixed_good: Row
    mixed_malformed: Row
    mixed_goal: str


@view("serve")
def serve(r: Results) -> Serve:
    s = r.need("serve_load")
    st = r.need("setup_time")
    live = r.need("serve_load", "live")
    fallback = live["search"].get("fallback")
    system = r.need("eval_main", "final_system", "system")
    return Serve(
        s=s,
        rps_goal="yes" if s["summary"]["meets_rps_goal"] else "**no**",
        p99_goal="yes" if s["summary"]["meets_p99_goal"] else "**no**",
        search=live["search"]["method"] + (f", fallback: {fallback}" if fallback else ""),
        backend_note=(
            "(no language model), so it is not comparable with the seed\nstudy's 8.4 s live median, which called an LLM"
            if system["backend"] == "extractive"
            else f"(`{system['generator']}`, a small local model on CPU), so it is not comparable with the seed\n"
            "study's 8.4 s live median, which called a large model through its API"
        ),
        setup=st,
        cold=", uv starting from an empty package cache" if st.get("cold_package_cache") else "",
        steps=" · ".join(f"{x['step']} {fmt(x['seconds'], 1)} s" for x in st["steps"]),
        mixed=r.need("serve_load", "mixed"),
        mixed_good=r.need("serve_load", "mixed", "by_name", "good"),
        mixed_malformed=r.need("serve_load", "mixed", "by_name", "malformed"),
        mixed_goal="met" if r.need("serve_load", "summary", "meets_mixed_goal") else "**not met**",
    )
