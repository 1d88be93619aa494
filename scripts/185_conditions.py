"""Stage conditions: the study-validity comparisons. Scores the condition families' answers with the score stage's
judge and grader, takes the frozen conditions' runs from its per-answer records, and writes the position effect
(gold-first vs shuffled oracle order) and the dose-response over three retrieval levels, paired per question, with
intervals, tests and each run's model time -> results/metrics/conditions.json and a plot."""

from __future__ import annotations

from pathlib import Path

from _stage import main
from finrag.core.contracts import Question
from finrag.core.io import read_jsonl, write_json
from finrag.core.provenance import provenance
from finrag.generate.params import GenerateParams
from finrag.generate.run import run_stats
from finrag.retrieve.conditions import condition_files
from finrag.retrieve.contexts import load_frozen_contexts
from finrag.retrieve.metrics import evidence_pages, evidence_recall
from finrag.score.conditions import (
    ConditionsParams,
    adjust_for_multiple_tests,
    by_gold_position,
    dose_table,
    model_size_table,
    plot_conditions,
    position_table,
)
from finrag.score.evaluate import load_answers, score_answers
from finrag.score.judges.base import make_judge
from finrag.score.params import ScoreParams
from finrag.score.record import ScoredAnswer


def run() -> None:
    p, sp = ConditionsParams.load(), ScoreParams.load()
    questions = {q.qid: q for q in read_jsonl(Path(p.questions), Question)}
    files = sorted(str(f) for fam in p.families for f in (Path(p.answers_dir) / fam).glob("*.jsonl"))
    answers = load_answers(files)
    judge = make_judge(sp.judge.name, **dict(sp.judge.params))
    scored = score_answers(
        answers,
        questions,
        judge,
        citations=sp.citations,
        grader_params=dict(sp.grader) or None,
        replicate_suffix=sp.replicate_suffix,
        progress=sp.progress,
    )
    named = {r for g in p.position.values() for r in (g.gold_first, g.shuffled)}
    named |= {r for g in p.dose.values() for r in g.runs}
    named |= {r for g in p.model_size.values() for r in (g.small, g.large)}
    records = [r for r in read_jsonl(Path(p.records), ScoredAnswer) if r.run_id in named] + scored
    present = {r.run_id for r in records}
    pending = sorted(named - present)  # declared runs not yet recorded: their rows are left out, named here
    complete = p.model_copy(
        update={
            "position": {g: v for g, v in p.position.items() if {v.gold_first, v.shuffled} <= present},
            "dose": {g: v for g, v in p.dose.items() if set(v.runs) <= present},
            "model_size": {g: v for g, v in p.model_size.items() if {v.small, v.large} <= present},
        }
    )
    recall: dict[str, dict] = {}
    for level in p.levels:
        frozen = level in ("retrieved", "oracle")
        path = Path(p.contexts) if frozen else condition_files(Path(p.conditions_dir), [level])[level]
        _setup, contexts = load_frozen_contexts(path, Path(p.chunks_dir))
        recall[level] = {qid: evidence_recall(questions[qid], ps) for (qid, mode), ps in contexts.items()
                         if mode == level or not frozen}  # fmt: skip
    threads = GenerateParams.load().backends.get("llamacpp", {}).get("n_threads")
    by_run: dict[str, list] = {}
    for a in answers:
        by_run.setdefault(a.run_id, []).append(a)
    position, dose = position_table(records, complete), dose_table(records, complete, recall)
    evidence_of = {qid: evidence_pages(q) for qid, q in questions.items()}
    for label, runs in complete.position.items():  # where the gold passage landed in the shuffled order
        position[label]["by_gold_position"] = by_gold_position(
            records, by_run.get(runs.shuffled, []), evidence_of, runs
        )
    model_size = model_size_table(records, complete)
    tests = adjust_for_multiple_tests({"position": position, "dose": dose, "model_size": model_size})
    out = {
        "position": position,
        "dose": dose,
        "model_size": model_size,
        "multiple_tests": tests,
        "n_resamples": p.n_resamples,
        "levels": p.levels,
        "pending_runs": pending,
        "costs": {
            "runs": {run: run_stats(rows) for run, rows in sorted(by_run.items())},
            "llamacpp_threads": threads,
        },
        "judge": judge.name,
    }
    plot_conditions(position, dose, Path(p.plot_out))
    out["_provenance"] = provenance("185_conditions", p, inputs=[p.records, *files])
    write_json(Path(p.metrics_out), out)


if __name__ == "__main__":
    main(run)
