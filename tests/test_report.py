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
    shutil.copytree(ROOT / "docs", tmp_path / "docs")
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
    path = repo / "docs" / "results.md"
    text = path.read_text(encoding="utf-8")
    start = text.index("<!-- finrag:begin ingest -->")
    end = text.index("<!-- finrag:end ingest -->")
    body = text[start:end]
    digit = next(i for i, ch in enumerate(body) if ch.isdigit() and i > 30)
    changed = body[:digit] + str((int(body[digit]) + 1) % 10) + body[digit + 1 :]
    path.write_text(text[:start] + changed + text[end:], encoding="utf-8")
    assert not _ok(repo)


def test_a_changed_finding_in_the_readme_fails(repo):
    _edit(repo / "README.md", "(`results/metrics/retrieval_grid.json`)", "(`results/metrics/ingest.json`)")
    assert not _ok(repo)


@pytest.mark.parametrize(
    "breakage",
    [
        ("<!-- finrag:begin findings -->\n", ""),  # begin marker deleted: the section's text goes unchecked
        ("<!-- finrag:end findings -->", ""),  # end marker deleted
        ("<!-- finrag:begin findings -->", "<!--  finrag:begin findings -->"),  # malformed marker
    ],
)
def test_a_broken_marker_fails(repo, breakage):
    _edit(repo / "README.md", *breakage)
    assert not _ok(repo)


def test_a_deleted_or_repeated_section_fails(repo):
    readme = repo / "docs" / "results.md"
    text = readme.read_text(encoding="utf-8")
    start = text.index("<!-- finrag:begin agreement -->")
    end = text.index("<!-- finrag:end agreement -->") + len("<!-- finrag:end agreement -->")
    readme.write_text(text[:start] + text[end:], encoding="utf-8")
    problems = structure_problems("docs/results.md", readme.read_text(encoding="utf-8"))
    assert problems and "missing ['agreement']" in problems[0]
    readme.write_text(text[:end] + "\n" + text[start:end] + text[end:], encoding="utf-8")
    assert (
        "repeated ['agreement']"
        in structure_problems("docs/results.md", readme.read_text(encoding="utf-8"))[0]
    )
    assert not _ok(repo)


def test_a_missing_linked_plot_fails(repo):
    (repo / "results" / "plots" / "agreement_forest.png").unlink()
    assert not _ok(repo)


def test_a_missing_results_file_fails_the_report_with_one_line_naming_it(repo):
    from finrag.report.render import RenderError

    (repo / "results" / "metrics" / "grader_validation.json").unlink()
    with pytest.raises(RenderError, match=r"results/metrics/grader_validation.json is missing"):
        run(repo, check=True)


def test_every_expected_section_has_a_template():
    templates = ROOT / "src" / "finrag" / "report" / "templates"
    for names in SECTIONS.values():
        for name in names:
            assert (templates / f"{name}.md.j2").is_file(), name
