"""The verifier's training data as one deterministic, seeded build: inline-XBRL claims from the training-only
EDGAR filings and TAT-QA dev claims (`pairs.jsonl`); and the three human-labelled sets, each claim with its
cross-fitting group and fold (`human_rows`), so a fold model never sees a report or question it is scored on."""

from __future__ import annotations

import hashlib
import json
import random
from collections import Counter
from pathlib import Path

from tqdm import tqdm

from finrag.core.io import write_jsonl
from finrag.ingest.human_claims import ATTRIBUTIONBENCH_FILE, LOADERS, binary
from finrag.score.verifier.pairs import ClaimPair, best_window
from finrag.score.verifier.tatqa_claims import tatqa_pairs
from finrag.score.verifier.xbrl_claims import filing_pairs, training_filings

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


def claim_text_key(claim: str) -> str:
    """A claim's words, case and spacing folded: how one claim is recognised in two benchmarks' files."""
    return " ".join(claim.lower().split())


def tie_shared_claims(groups: list[str], claims: list[str]) -> list[str]:
    """Each group replaced by the first (sorted) group of its connected component, where two groups connect when
    they hold the same claim text. Why: AttributionBench re-distributes ExpertQA (442 of ExpertQA's 741 dev claims
    are also in AttributionBench's dev file, with the evidence formatted differently); grouped by each benchmark's
    own question ids, a claim sat in one fold as an AttributionBench row and in the other as an ExpertQA row, so
    the model scoring it had been trained on it (what that did to the dev figures: docs/verifier_generalisation.md)."""
    parent: dict[str, str] = {}

    def root(g: str) -> str:
        while parent.setdefault(g, g) != g:
            g = parent[g]
        return g

    first: dict[str, str] = {}
    for g, c in zip(groups, claims, strict=True):
        key = claim_text_key(c)
        a, b = root(g), root(first.setdefault(key, g))
        if a != b:
            parent[max(a, b)] = min(a, b)  # the smaller name is the root: the same on every run
    return [root(g) for g in groups]


def human_rows(mirror: Path, k: int) -> list[dict]:
    """Every human-labelled dev claim with its whole evidence, its hash key, cross-fitting group and fold (a
    claim two benchmarks share is in one group: `tie_shared_claims`)."""
    abq = _ab_questions(mirror)
    items = [(bench, it) for bench in HUMAN_SETS for it in LOADERS[bench](mirror).items]
    groups = tie_shared_claims([crossfit_group(it, abq) for _, it in items], [it.claim for _, it in items])
    return [
        {"key": item_key(it.claim, it.passages), "benchmark": bench, "group": g, "fold": crossfit_fold(g, k),
         "label": int(binary(it.human) == "supported"), "claim": it.claim, "passages": it.passages}
        for (bench, it), g in zip(items, groups, strict=True)
    ]  # fmt: skip


def build_training_data(mirror: Path, out_dir: Path, p: dict) -> dict:
    """Write `pairs.jsonl` (every synthetic pair) and `stats.json`; return the counts."""
    rng = random.Random(p["seed"])
    pairs: list[ClaimPair] = []
    filings = training_filings(mirror)
    for path, company in tqdm(filings, desc="xbrl claims", disable=not p.get("progress", True)):
        pairs.extend(filing_pairs(path, company, rng, p["xbrl_per_filing"]))
    pairs.extend(tatqa_pairs(mirror, rng))
    for x in pairs:  # one evidence window a pair, chosen without the label (the claim's closest)
        if len(x.evidence.split()) > p["max_words"]:
            x.evidence = best_window(x.claim, [x.evidence], p["max_words"])
    out_dir.mkdir(parents=True, exist_ok=True)
    write_jsonl(out_dir / "pairs.jsonl", [x.model_dump() for x in pairs])
    stats = {
        "filings": len(filings),
        "pairs": len(pairs),
        "by_source": dict(sorted(Counter(x.source for x in pairs).items())),
        "by_source_label": {
            f"{s}:{lab}": n for (s, lab), n in sorted(Counter((x.source, x.label) for x in pairs).items())
        },
        "by_kind": dict(sorted(Counter(f"{x.source}:{x.kind}" for x in pairs).items())),
    }
    (out_dir / "stats.json").write_text(json.dumps(stats, indent=2, sort_keys=True), encoding="utf-8")
    return stats
