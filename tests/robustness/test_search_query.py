"""`finrag search` with a query that has no searchable words (empty, blank, punctuation or stop words only)
exits 2 with one clear line on stderr instead of printing nothing; a real query still prints its hits."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from factories import page_chunk
from finrag.cli import app
from finrag.core.io import write_jsonl
from finrag.retrieve.search import Tokenizer

TEXTS = [
    "Revenue was $412 million in 2022.",
    "The board met eleven times during the year.",
    "Employees numbered 1,200 at year end.",
    "No material legal proceedings are pending.",
]


@pytest.fixture
def chunks(tmp_path):
    rows = [page_chunk("DOC", i, t) for i, t in enumerate(TEXTS)]
    path = tmp_path / "tiny.jsonl"
    write_jsonl(path, rows)
    return path


def _search(query: str, chunks):
    return CliRunner().invoke(app, ["search", query, "--setup", "tiny/none/bm25", "--chunks", str(chunks)])


@pytest.mark.parametrize("query", ["", "   ", "the of and is", "What was it?", "?!", "¿...?"])
def test_query_without_searchable_words_exits_2_with_one_line(query, chunks):
    res = _search(query, chunks)
    assert res.exit_code == 2, (res.exit_code, res.stdout, res.stderr)
    assert res.stdout == ""
    assert res.stderr.strip().splitlines() == [
        "finrag: search: the query has no searchable words (empty, punctuation or only stop words)"
    ]


def test_a_real_query_still_prints_its_hits(chunks):
    res = _search("What was revenue?", chunks)
    assert res.exit_code == 0, res.stderr
    hits = [json.loads(line) for line in res.stdout.splitlines()]
    assert [h["text"] for h in hits] == [TEXTS[0]]


def test_query_terms_are_what_bm25_can_match():
    assert Tokenizer("en")("What was the revenue in 2022?") == ["revenue", "2022"]
    assert Tokenizer("en")("the of and") == [] and Tokenizer("en")("") == []
    assert Tokenizer("es")("¿Cuál fue el ingreso?") == ["ingreso"]
