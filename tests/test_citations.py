"""ALCE-style citation recall / precision on hand examples, and offset-citation verification."""

from __future__ import annotations

import pytest

from finrag.core.contracts import Citation, ClaimVerdict, Passage
from finrag.score.citations import (
    citation_scores,
    numbered_passages,
    sentence_citations,
    verify_offset_citation,
    verify_offset_citations,
)
from finrag.score.judges.base import BaseJudge
from finrag.score.judges.numeric import NumericJudge


class KeywordJudge(BaseJudge):
    """Supported when every word in CAPITALS of the claim occurs in the joined passages (a transparent judge)."""

    name = "keyword"

    def __init__(self):
        self.calls = 0

    def judge(self, claim, passages, claim_id=""):
        self.calls += 1
        need = [w.strip(".,") for w in claim.split() if w.isupper() and len(w) > 1]
        text = " ".join(passages)
        ok = bool(passages) and all(w in text for w in need)
        return ClaimVerdict(claim_id=claim_id, verdict="supported" if ok else "unsupported", judge=self.name)


PASSAGES = ["ALPHA and BETA are here.", "BETA only.", "GAMMA lives here.", "Nothing relevant."]


def test_recall_and_precision_hand_example():
    answer = (
        "ALPHA and BETA rose [1]. "  # supported by [1]: recall 1, citation precise
        "BETA and GAMMA fell [2][3]. "  # needs both: recall 1, both precise
        "ALPHA grew [1][4]. "  # [1] alone suffices, [4] adds nothing: recall 1, [4] imprecise
        "DELTA shrank [3]. "  # not supported: recall 0, [3] imprecise
        "GAMMA moved. "  # uncited: recall 0 (ALCE)
        "BETA held [9]."  # [9] names no passage: recall 0, imprecise
    )
    s = citation_scores(answer, PASSAGES, KeywordJudge())
    assert s["n_sentences"] == 6 and s["n_cited_sentences"] == 5
    assert s["n_citations"] == 7 and s["n_invalid_citations"] == 1
    assert s["citation_recall"] == pytest.approx(3 / 6)
    assert s["citation_recall_cited"] == pytest.approx(3 / 5)
    assert s["citation_precision"] == pytest.approx(4 / 7)  # [1]; [2], [3]; [1] precise
    third = s["sentences"][2]
    assert third["precise"] == {1: True, 4: False} and third["text"] == "ALPHA grew."


def test_redundant_pair_each_supporting_alone_are_both_precise():
    # each of [1] and [2] supports BETA alone: ALCE counts both as precise (condition A)
    s = citation_scores("BETA is up [1][2].", PASSAGES, KeywordJudge())
    assert s["citation_precision"] == 1.0 and s["citation_recall"] == 1.0


def test_refusals_are_not_scored_and_empty_answer_gives_none():
    s = citation_scores("I cannot answer this from the provided passages.", PASSAGES, KeywordJudge())
    assert s["n_sentences"] == 0 and s["citation_recall"] is None and s["citation_precision"] is None


def test_with_numeric_judge_and_passage_numbers():
    passages = [
        Passage(n=3, chunk_id="a", doc_id="D", pages=[1], text="Acme's revenue was $5.2 billion in 2023."),
        Passage(n=7, chunk_id="b", doc_id="D", pages=[2], text="Acme's revenue was $4.8 billion in 2022."),
    ]
    ans = "Acme's revenue was $5.2 billion in 2023 [3]. It grew from $4.8 billion in 2022 [3]."
    s = citation_scores(ans, passages, NumericJudge())
    assert [x["supported_by_citations"] for x in s["sentences"]] == [True, False]
    assert s["citation_recall"] == 0.5
    fixed = citation_scores(ans.replace("2022 [3]", "2022 [7]"), passages, NumericJudge())
    assert fixed["citation_recall"] == 1.0 and fixed["citation_precision"] == 1.0


def test_sentence_markers():
    got = sentence_citations("Sales rose [1, 2]. Costs fell [3-4][6]. Flat.")
    assert [(g["text"], g["cited"]) for g in got] == [
        ("Sales rose.", [1, 2]),
        ("Costs fell.", [3, 4, 6]),
        ("Flat.", []),
    ]


def test_offset_verification():
    text = "Net sales were $8.1 billion in the quarter."
    passages = [Passage(n=1, chunk_id="a", doc_id="D", pages=[0], text=text)]
    pmap = numbered_passages(passages)
    s, e = text.index("$8.1"), text.index(" in the")
    assert (
        verify_offset_citation(Citation(passage=1, start=s, end=e, cited_text="$8.1 billion"), pmap) == "ok"
    )
    assert (
        verify_offset_citation(Citation(passage=1, start=s, end=e, cited_text="$8.2 billion"), pmap)
        == "text_mismatch"
    )
    assert verify_offset_citation(Citation(passage=1, start=10, end=999), pmap) == "bad_offsets"
    assert verify_offset_citation(Citation(passage=1, start=5, end=5), pmap) == "bad_offsets"
    assert verify_offset_citation(Citation(passage=1, start=-1, end=4), pmap) == "bad_offsets"
    assert verify_offset_citation(Citation(passage=2, start=0, end=4), pmap) == "unknown_passage"
    assert verify_offset_citation(Citation(passage=1), pmap) == "no_offsets"
    res = verify_offset_citations(
        [
            Citation(passage=1, start=s, end=e, cited_text="$8.1 billion"),
            Citation(passage=1),
            Citation(passage=1, start=0, end=99),
        ],
        passages,
    )
    assert res["n"] == 3 and res["n_with_offsets"] == 2 and res["n_valid"] == 1 and res["valid_share"] == 0.5
    assert res["by_status"] == {"ok": 1, "no_offsets": 1, "bad_offsets": 1}


def test_numbered_passages_reads_passages_by_the_given_text_function():
    from finrag.score.claims import as_seen

    passages = [Passage(n=2, chunk_id="a", doc_id="BLOCK_2016_10K", pages=[1], text="Revenue rose.")]
    assert numbered_passages(passages) == {2: "Revenue rose."}
    assert numbered_passages(passages, text=as_seen) == {2: "(BLOCK_2016_10K)\nRevenue rose."}
    assert numbered_passages(["x", "y"], text=as_seen) == {1: "x", 2: "y"}
