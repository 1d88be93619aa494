"""Loaders of the human-labelled claim benchmarks: counts, label sets, exclusions (on the real mirror files)."""

from __future__ import annotations

import json
import re
from collections import Counter

import pytest

from finrag.core.contracts import LabelledClaim
from finrag.ingest.human_claims import (
    expertqa_evidence_text,
    load_all,
    load_attributionbench,
    load_expertqa,
    load_findver,
    load_finrag_labels,
    sample_stratified,
)


def test_findver_counts_labels_and_exclusions(mirror):
    ld = load_findver(mirror)
    assert ld.n_source == 361
    assert ld.excluded == {"no_context_paragraphs": 3}  # reports >= 4 MiB absent from the snapshot
    assert len(ld.items) == 358
    assert Counter(i.human for i in ld.items) == {"supported": 187, "contradicted": 171}
    assert Counter(i.subset for i in ld.items) == {"numeric": 136, "ie": 119, "knowledge": 103}
    assert {i.human_raw for i in ld.items} == {"True", "False"}
    assert all(i.passages and all(p.strip() for p in i.passages) for i in ld.items)
    assert len({i.item_id for i in ld.items}) == len(ld.items)


def test_attributionbench_counts_and_balance(mirror):
    ld = load_attributionbench(mirror)
    assert ld.n_source == len(ld.items) == 1198
    assert ld.excluded == {}
    assert Counter(i.human for i in ld.items) == {"supported": 599, "unsupported": 599}
    assert set(Counter(i.subset for i in ld.items)) == {
        "ExpertQA",
        "Stanford-GenSearch",
        "LFQA",
        "AttributedQA",
    }
    assert len({i.item_id for i in ld.items}) == 1198


def test_expertqa_url_only_evidence_excluded_and_counted(mirror):
    ld = load_expertqa(mirror)
    assert ld.n_source == 1237
    assert ld.excluded["evidence_url_only"] == 252
    assert ld.excluded["no_evidence"] == 216
    assert ld.excluded["support_N/A"] == 27
    assert len(ld.items) + sum(ld.excluded.values()) == ld.n_source
    assert {i.human for i in ld.items} == {"supported", "unsupported"}
    assert {i.human_raw for i in ld.items} <= {"Complete", "Partial", "Incomplete", "Missing"}
    assert all(i.human == ("supported" if i.human_raw == "Complete" else "unsupported") for i in ld.items)
    # the "[n] URL" head is gone and every kept passage has text
    for it in ld.items:
        for p in it.passages:
            assert (
                p.strip()
                and not re.match(r"\s*\[\d+\]\s*(?:https?://|www\.)", p)
                and not p.startswith("http")
            )
    groups = Counter(i.group_id for i in ld.items)
    assert max(groups.values()) > 1  # answers hold several claims: answer-level agreement is possible


def test_evidence_head_stripping():
    assert expertqa_evidence_text("[3] https://a.org/x\n\nThe text.") == "The text."
    assert expertqa_evidence_text("[12] https://a.org/x") == ""
    assert expertqa_evidence_text("[1] www.a.org some words") == "some words"


def test_absent_mirror_and_labels_give_empty_results(tmp_path):
    for fn in (load_findver, load_attributionbench, load_expertqa):
        ld = fn(tmp_path)
        assert ld.items == [] and ld.n_source == 0
    ld = load_finrag_labels(tmp_path / "no_such_dir")
    assert ld.items == [] and ld.n_source == 0
    assert set(load_all(tmp_path, tmp_path / "none")) == {"findver", "attributionbench", "expertqa", "finrag"}


def _label(answer_id, claim_id, verdict, time, labeller="ann"):
    return {
        "answer_id": answer_id,
        "claim_id": claim_id,
        "claim": f"claim {claim_id}",
        "passages": ["p one", {"n": 2, "text": "p two"}],
        "verdict": verdict,
        "note": "",
        "labeller": labeller,
        "time": time,
    }


def test_finrag_labels_latest_wins(tmp_path):
    rows = [
        _label("a1", "c1", "supported", "2026-01-01T10:00"),
        _label("a1", "c1", "contradicted", "2026-01-02T10:00"),  # the same labeller changed their mind
        _label("a1", "c2", "unsupported", "2026-01-01T10:00"),
        _label("a1", "c1", "supported", "2026-01-01T10:00", labeller="other"),
    ]
    (tmp_path / "batch1.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    ld = load_finrag_labels(tmp_path)
    assert ld.n_source == 4 and len(ld.items) == 3
    assert ld.excluded == {"superseded_by_later_label": 1}
    by = {(i.group_id, i.item_id.split(":")[2], i.subset): i for i in ld.items}
    assert by[("a1", "c1", "ann")].human == "contradicted"
    assert by[("a1", "c1", "other")].human == "supported"
    assert by[("a1", "c2", "ann")].passages == ["p one", "p two"]


def test_finrag_labels_bad_verdict_names_file_and_line(tmp_path):
    rows = [_label("a1", "c1", "supported", "t"), _label("a1", "c2", "maybe", "t")]
    (tmp_path / "x.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    with pytest.raises(ValueError, match=r"x\.jsonl:2"):
        load_finrag_labels(tmp_path)


def _items(n_sup, n_uns, bench="b", subset="s"):
    out = []
    for k in range(n_sup + n_uns):
        out.append(
            LabelledClaim(
                item_id=f"{bench}{subset}{k}",
                benchmark=bench,
                subset=subset,
                claim="c",
                passages=["p"],
                human="supported" if k < n_sup else "unsupported",
            )
        )
    return out


def test_sample_stratified_is_proportional_and_reproducible():
    items = _items(60, 40) + _items(30, 70, subset="t")
    a = sample_stratified(items, 50, seed=1)
    b = sample_stratified(items, 50, seed=1)
    c = sample_stratified(items, 50, seed=2)
    assert [i.item_id for i in a] == [i.item_id for i in b]
    assert [i.item_id for i in a] != [i.item_id for i in c]
    assert len(a) == 50 and len({i.item_id for i in a}) == 50
    cnt = Counter((i.subset, i.human) for i in a)
    quota = {
        ("s", "supported"): 15,
        ("s", "unsupported"): 10,
        ("t", "supported"): 7.5,
        ("t", "unsupported"): 17.5,
    }
    assert all(abs(cnt[k] - q) <= 0.5 for k, q in quota.items())
    assert sample_stratified(items, 1000) == items
    assert sample_stratified(items, 0) == []
