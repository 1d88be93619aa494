"""The README is what a reviewer reads: at most 250 lines, the findings within its first 60 lines, each naming
the results file it comes from, and every relative link in it and in docs/ resolving."""

from __future__ import annotations

import re
from pathlib import Path

from finrag.report.render import broken_links

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _findings() -> list[str]:
    body = README.split("<!-- finrag:begin findings -->\n", 1)[1].split("<!-- finrag:end findings -->", 1)[0]
    return [line for line in body.splitlines() if line.startswith("- ")]


def test_the_readme_is_short_and_its_findings_come_first():
    lines = README.splitlines()
    assert len(lines) <= 250
    start = next(i for i, line in enumerate(lines) if line == "<!-- finrag:begin findings -->")
    assert start < 60, f"the findings start at line {start + 1}"
    end = next(i for i, line in enumerate(lines) if line == "<!-- finrag:end findings -->")
    assert 0 < end - start - 1 <= 40


def test_every_finding_names_the_results_file_it_comes_from():
    findings = _findings()
    assert findings
    for line in findings:
        files = re.findall(r"`(results/[^`]+\.json)`", line)
        assert files, line
        assert all((ROOT / f).is_file() for f in files), line


def test_the_readme_keeps_its_two_commands():
    assert "uv run pytest" in README  # .ci/run calls the README's test command
    assert "uv run dvc repro" in README


def test_every_relative_link_in_the_readme_and_docs_resolves():
    docs = [ROOT / "README.md", ROOT / "TECHNICAL_REPORT.md", *sorted((ROOT / "docs").glob("*.md"))]
    for path in docs:
        name = str(path.relative_to(ROOT))
        assert broken_links(ROOT, name, path.read_text(encoding="utf-8")) == [], name


def test_a_broken_link_is_found(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("x", encoding="utf-8")
    text = "[a](docs/a.md) [b](docs/b.md) [web](https://x.org) [here](#top) [a2](docs/a.md#part)"
    assert broken_links(tmp_path, "README.md", text) == ["docs/b.md"]
    assert broken_links(tmp_path, "docs/a.md", "[up](../README.md)") == ["../README.md"]
