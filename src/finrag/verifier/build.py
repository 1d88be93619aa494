"""The verifier's training data as one deterministic, seeded build: inline-XBRL claims from the training-only
EDGAR filings, TAT-QA dev claims, and the three human-labelled sets (each pair tagged with its cross-fitting
group, so a fold model never sees a report, question or answer it is scored on)."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from finrag.humanlabels import ATTRIBUTIONBENCH_FILE, binary, load_all
from finrag.io import write_jsonl
from finrag.verifier.pairs import ClaimPair, best_window
from finrag.verifier.tatqa_claims import tatqa_pairs
from finrag.verifier.xbrl_claims import filing_pairs, training_filings

HUMAN_SETS = ("findver", "attributionbench", "expertqa")


def crossfit_fold(group: str, k: int) -> int:
    """The fold of a group: a stable hash, so the same report/question lands in the same fold on any machine."""
    return int(hashlib.sha256(group.encode("utf-8")).hexdigest(), 16) % k


def item_key(claim: str, passages: list[str]) -> str:
    """What identifies a labelled claim across files (ids differ between a dev file and a held-out one)."""
    h = hashlib.sha256(claim.strip().encode("utf-8"))
    for p in passages:
        h.update(b"\x00" + p.strip().encode("utf-8"))
    return h.hexdigest()[:24]


def _ab_questions(mirror: Path) -> dict[str, str]:
    p = Path(mirror) / ATTRIBUTIONBENCH_FILE
    if not p.exists():
        return {}
    out = {}
    for line in p.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            out[f"attributionbench:{r['id']}"] = r.get("question", r["id"])
    return out


def crossfit_group(item, ab_questions: dict[str, str]) -> str:
    """FinDVer: the report; AttributionBench: the question (several claims answer one); ExpertQA: the question
    (all systems' answers to it)."""
    if item.benchmark == "attributionbench":
        return "attributionbench:" + ab_questions.get(item.item_id, item.item_id).strip().lower()
    if item.benchmark == "expertqa":
        return ":".join(item.group_id.split(":")[:2])
    return f"{item.benchmark}:{item.group_id}"


def human_pairs(mirror: Path, max_words: int) -> tuple[list[ClaimPair], dict[str, str]]:
    """Every human-labelled claim as a pair (its best window), and item_key -> cross-fitting group."""
    loaded = load_all(mirror, labels_dir=Path("/nonexistent"))
    abq = _ab_questions(mirror)
    pairs, groups = [], {}
    for bench in HUMAN_SETS:
        for it in loaded[bench].items:
            g = crossfit_group(it, abq)
            groups[item_key(it.claim, it.passages)] = g
            pairs.append(
                ClaimPair(claim=it.claim, evidence=best_window(it.claim, it.passages, max_words), group=g,
                          label=int(binary(it.human) == "supported"), source=bench, kind=it.human)  # fmt: skip
            )
    return pairs, groups


def build_training_data(mirror: Path, out_dir: Path, p: dict) -> dict:
    """Write `pairs.jsonl` (every pair) and `groups.json` (human item -> group); return the counts."""
    rng = random.Random(p["seed"])
    pairs: list[ClaimPair] = []
    filings = training_filings(mirror)
    for path, company in tqdm(filings, desc="xbrl claims", disable=not p.get("progress", True)):
        pairs.extend(filing_pairs(path, company, rng, p["xbrl_per_filing"]))
    pairs.extend(tatqa_pairs(mirror, rng))
    hp, groups = human_pairs(mirror, p["max_words"])
    pairs.extend(hp)
    for x in pairs:  # the evidence a 256-token model reads: one window, chosen without the label
        if len(x.evidence.split()) > p["max_words"]:
            x.evidence = best_window(x.claim, [x.evidence], p["max_words"])
    out_dir.mkdir(parents=True, exist_ok=True)
    write_jsonl(out_dir / "pairs.jsonl", [x.model_dump() for x in pairs])
    (out_dir / "groups.json").write_text(json.dumps(groups, sort_keys=True, indent=0), encoding="utf-8")
    stats = {
        "filings": len(filings),
        "pairs": len(pairs),
        "by_source": dict(sorted(Counter(x.source for x in pairs).items())),
        "by_source_label": {f"{s}:{lab}": n for (s, lab), n in sorted(Counter((x.source, x.label) for x in pairs).items())},
        "by_kind": dict(sorted(Counter(f"{x.source}:{x.kind}" for x in pairs).items())),
        "human_groups": len(set(groups.values())),
    }
    (out_dir / "stats.json").write_text(json.dumps(stats, indent=2, sort_keys=True), encoding="utf-8")
    return stats
