"""The report check: it must fail whenever README/TECHNICAL_REPORT and results/ disagree, including when a
rendered section is deleted, duplicated or taken out of its markers' reach, or a linked plot is missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from finrag.report.render import SECTIONS, run, structure_problems

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A copy of the committed documents, params and results (no data needed: results/ is in git)."""
    for name in ("README.md", "TECHNICAL_REPORT.md", "params.yaml"):
        shutil.copy(ROOT / name, tmp_path / name)
    shutil.copytree(ROOT / "results", tmp_path / "results")
    return tmp_path


def _edit(path: Path, old: str, new: str, count: int = 1) -> None:
    text = path.read_text(encoding="utf-8")
    assert old in text, old
    path.write_text(text.replace(old, new, count), encoding="utf-8")


def _ok(root: Path) -> bool:
    return all(r.ok for r in run(root, check=True))


def test_the_committed_documents_match_results(repo):
    assert _ok(repo)


def test_a_changed_figure_inside_a_section_fails(repo):
    text = (repo / "README.md").read_text(encoding="utf-8")
    start = text.index("<!-- finrag:begin ingest -->")
    end = text.index("<!-- finrag:end ingest -->")
    body = text[start:end]
    digit = next(i for i, ch in enumerate(body) if ch.isdigit() and i > 30)
    changed = body[:digit] + str((int(body[digit]) + 1) % 10) + body[digit + 1 :]
    (repo / "README.md").write_text(text[:start] + changed + text[end:], encoding="utf-8")
    assert not _ok(repo)


@pytest.mark.parametrize(
    "breakage",
    [
        ("<!-- finrag:begin scoring -->\n", ""),  # begin marker deleted: the section's text goes unchecked
        ("<!-- finrag:end scoring -->", ""),  # end marker deleted
        ("<!-- finrag:begin scoring -->", "<!--  finrag:begin scoring -->"),  # malformed marker
    ],
)
def test_a_broken_marker_fails(repo, breakage):
    _edit(repo / "README.md", *breakage)
    assert not _ok(repo)


def test_a_deleted_or_repeated_section_fails(repo):
    readme = repo / "README.md"
    text = readme.read_text(encoding="utf-8")
    start = text.index("<!-- finrag:begin agreement -->")
    end = text.index("<!-- finrag:end agreement -->") + len("<!-- finrag:end agreement -->")
    readme.write_text(text[:start] + text[end:], encoding="utf-8")
    problems = structure_problems("README.md", readme.read_text(encoding="utf-8"))
    assert problems and "missing ['agreement']" in problems[0]
    readme.write_text(text[:end] + "\n" + text[start:end] + text[end:], encoding="utf-8")
    assert "repeated ['agreement']" in structure_problems("README.md", readme.read_text(encoding="utf-8"))[0]
    assert not _ok(repo)


def test_a_missing_linked_plot_fails(repo):
    (repo / "results" / "plots" / "agreement_forest.png").unlink()
    assert not _ok(repo)


def test_a_missing_results_file_fails_the_check(repo):
    (repo / "results" / "metrics" / "grader_validation.json").unlink()
    assert not _ok(repo)


def test_every_expected_section_has_a_template():
    templates = ROOT / "src" / "finrag" / "report" / "templates"
    for names in SECTIONS.values():
        for name in names:
            assert (templates / f"{name}.md.j2").is_file(), name


def test_the_agreement_sentence_names_only_the_model_judges_on_a_shorter_prefix():
    from finrag.report.render import render_section

    def run(n_per_bench):
        return {  # as the stage writes a greedy or log-probability run
            "benchmarks": {b: {"binary": {"n": n}} for b, n in zip(("a", "b"), n_per_bench, strict=True)},
            "decoding": None,
            "sampled_rerun_of": None,
            "every_dev_claim": False,
        }

    results = {
        "judge_agreement": {
            "summary": [],
            "judges": {
                "numeric": {},
                "verifier": {},
            },  # the stage always writes the judges run on the full samples
            "model_judges": {"n_items": 20, "runs": {"full": run((10, 10)), "short": run((10, 3))}},
        }
    }
    text = render_section("agreement", results)
    assert "; short on the first part of it" in text
    assert "full on the first part" not in text
    # each judge against its own re-run: the deterministic ones named, and a missing sampled re-run said so
    assert "numeric, verifier are deterministic" in text and "No sampled re-run is recorded." in text
    results["judge_agreement"]["model_judges"]["runs"].pop("short")
    assert "first part of it" not in render_section("agreement", results)
    results["judge_agreement"]["model_judges"]["runs"]["pool"] = {**run((30, 40)), "every_dev_claim": True}
    assert "; pool on every dev claim of the three sets" in render_section("agreement", results)
    results["judge_agreement"]["model_judges"]["runs"].pop("pool")
    # a sampled re-run is named by what the stage found it re-samples (its decoding), not by its name
    results["judge_agreement"]["model_judges"]["runs"]["again"] = {
        **run((10, 10)),
        "sampled_rerun_of": "full",
        "decoding": {"temperature": 0.7},
    }
    text = render_section("agreement", results)
    assert (
        "exists for full only\n(again at temperature 0.7, in the pairs above)" in text and "greedily" in text
    )
    assert "log-probabilities (full)" in text  # the sampled re-run is not listed with the greedy ones
