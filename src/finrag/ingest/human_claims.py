"""Human-labelled claim benchmarks, mapped onto one contract (`LabelledClaim`) so every judge is measured alike.

Label mappings (decided here, stated once, used everywhere):

- FinDVer: `entailment_label` True -> "supported"; False -> "contradicted" (the statement is false given the
  report paragraphs the annotators marked, i.e. refuted, not merely unverifiable). Binary agreement folds
  "contradicted" and "unsupported" into "not supported". Statements whose report is absent from the mirror
  (no `context_paragraphs`) are excluded and counted.
- AttributionBench: "attributable" -> "supported", "not attributable" -> "unsupported" (binary only).
- ExpertQA: `support` "Complete" -> "supported"; "Partial", "Incomplete", "Missing" -> "unsupported" (the
  evidence does not establish the whole claim). Excluded and counted: claims with no evidence at all, claims
  whose evidence is only a URL (the expert read the web page, we only have the address), and claims whose
  support label is "N/A" or absent. subset is the answering system; group_id is the answer (question +
  system), for answer-level agreement over the claims kept.
- finrag's own labels (`labels/*.jsonl` in git, written by the labelling page): verdict used as given. A torn
  last line (a crash mid-append) is skipped with a warning, as the labelling page does.

Each loader reads its file at the mirror layout under `root`, or the one file given as `file` (`finrag
agreement --labels`), so errors name the file the user gave.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from finrag.core.config import mirror_dir, repo_root
from finrag.core.contracts import LabelledClaim, Verdict
from finrag.core.io import read_jsonl
from finrag.core.stats import DEFAULT_SEED

FINDVER_FILE = "humanlabels/findver/findver_testmini_dev_half.jsonl"
ATTRIBUTIONBENCH_FILE = "humanlabels/attributionbench/dev_all_subset_balanced.jsonl"
EXPERTQA_FILE = "humanlabels/expertqa/rand_val.jsonl"

EXPERTQA_SUPPORT: dict[str, Verdict] = {
    "Complete": "supported",
    "Partial": "unsupported",
    "Incomplete": "unsupported",
    "Missing": "unsupported",
}
ATTRIBUTIONBENCH_LABEL: dict[str, Verdict] = {"attributable": "supported", "not attributable": "unsupported"}

# "[3] https://example.org/page\n\n<text the expert saw>": the marker and the address are not evidence text.
_EVIDENCE_HEAD = re.compile(r"^\s*\[\d+\]\s*(?:https?://|www\.)\S*\s*")


@dataclass
class Loaded:
    """What a loader found: the items, how many source records it read, and what it left out and why."""

    benchmark: str
    items: list[LabelledClaim] = field(default_factory=list)
    n_source: int = 0
    excluded: dict[str, int] = field(default_factory=dict)

    def summary(self) -> dict:
        return {
            "benchmark": self.benchmark,
            "n_source": self.n_source,
            "n_items": len(self.items),
            "excluded": dict(self.excluded),
            "labels": dict(Counter(i.human for i in self.items)),
            "subsets": dict(Counter(i.subset for i in self.items)),
        }


def _path(rel: str, root: Path | None, file: Path | None = None) -> Path | None:
    if file is not None:
        return Path(file)
    base = root if root is not None else mirror_dir()
    if base is None:
        return None
    p = Path(base) / rel
    return p if p.exists() else None


def load_findver(root: Path | None = None, *, file: Path | None = None) -> Loaded:
    """FinDVer testmini half: statements about one filing, True/False, with the annotated report paragraphs."""
    out = Loaded("findver")
    p = _path(FINDVER_FILE, root, file)
    if p is None:
        return out
    excluded: Counter = Counter()
    for r in read_jsonl(p):
        out.n_source += 1
        paras = r.get("context_paragraphs") or []
        texts = [c["text"] for c in paras if (c.get("text") or "").strip()]
        if not texts:
            excluded["no_context_paragraphs"] += 1
            continue
        label = r["entailment_label"]
        if not isinstance(label, bool):
            raise ValueError(f"{p}: {r['example_id']}: entailment_label is {label!r}, expected true/false")
        out.items.append(
            LabelledClaim(
                item_id=f"findver:{r['example_id']}",
                benchmark="findver",
                subset=r["subset"],
                claim=r["statement"],
                passages=texts,
                human="supported" if label else "contradicted",
                group_id=r.get("report", ""),
                human_raw=str(label),
            )
        )
    out.excluded = dict(excluded)
    return out


def load_attributionbench(root: Path | None = None, *, file: Path | None = None) -> Loaded:
    """AttributionBench dev (balanced): claim + evidence passages, human attributable / not attributable."""
    out = Loaded("attributionbench")
    p = _path(ATTRIBUTIONBENCH_FILE, root, file)
    if p is None:
        return out
    excluded: Counter = Counter()
    for lineno, r in enumerate(read_jsonl(p), 1):
        out.n_source += 1
        refs = [x for x in (r.get("references") or []) if (x or "").strip()]
        if not refs:
            excluded["no_evidence_text"] += 1
            continue
        label = r.get("attribution_label")
        if label not in ATTRIBUTIONBENCH_LABEL:
            raise ValueError(
                f"{p}:{lineno}: attribution_label {label!r} not in {sorted(ATTRIBUTIONBENCH_LABEL)}"
            )
        out.items.append(
            LabelledClaim(
                item_id=f"attributionbench:{r['id']}",
                benchmark="attributionbench",
                subset=r.get("src_dataset", ""),
                claim=r["claim"],
                passages=refs,
                human=ATTRIBUTIONBENCH_LABEL[label],
                group_id=r["id"],
                human_raw=label,
            )
        )
    out.excluded = dict(excluded)
    return out


def expertqa_evidence_text(evidence: str) -> str:
    """The text of one ExpertQA evidence item without its "[n] URL" head ("" when it is only an address)."""
    return _EVIDENCE_HEAD.sub("", evidence, count=1).strip()


def load_expertqa(root: Path | None = None, *, file: Path | None = None) -> Loaded:
    """ExpertQA validation: claims of expert-reviewed answers, each with its evidence and a support judgment."""
    out = Loaded("expertqa")
    p = _path(EXPERTQA_FILE, root, file)
    if p is None:
        return out
    excluded: Counter = Counter()
    for qi, r in enumerate(read_jsonl(p)):
        for system, ans in sorted(r["answers"].items()):
            group = f"expertqa:q{qi}:{system}"
            for ci, cl in enumerate(ans.get("claims") or []):
                out.n_source += 1
                support = cl.get("support")
                evid = cl.get("evidence") or []
                texts = [expertqa_evidence_text(e) for e in evid]
                if not evid:
                    excluded["no_evidence"] += 1
                    continue
                if not any(texts):
                    excluded["evidence_url_only"] += 1
                    continue
                if not all(texts):
                    # the expert saw pages we only have addresses for: the text we hold is not what was judged
                    excluded["evidence_partly_url_only"] += 1
                    continue
                if support not in EXPERTQA_SUPPORT:
                    excluded[f"support_{support or 'absent'}"] += 1
                    continue
                out.items.append(
                    LabelledClaim(
                        item_id=f"{group}:c{ci}",
                        benchmark="expertqa",
                        subset=system,
                        claim=cl["claim_string"],
                        passages=texts,
                        human=EXPERTQA_SUPPORT[support],
                        group_id=group,
                        human_raw=support,
                    )
                )
    out.excluded = dict(excluded)
    return out


def load_finrag_labels(labels_dir: Path | None = None, *, file: Path | None = None) -> Loaded:
    """finrag's own claim labels (labelling page output); latest label per (answer, claim, labeller) wins.

    Every `*.jsonl` under labels_dir (default: the repository's labels/), or only `file` when given.
    """
    out = Loaded("finrag")
    if file is not None:
        files = [Path(file)]
    else:
        d = Path(labels_dir) if labels_dir is not None else repo_root() / "labels"
        d = d if d.is_absolute() else repo_root() / d
        if not d.is_dir():
            return out
        files = sorted(d.glob("*.jsonl"))
    latest: dict[tuple, dict] = {}
    for f in files:
        for lineno, r in enumerate(read_jsonl(f, torn_tail=True), 1):
            out.n_source += 1
            if r.get("verdict") not in ("supported", "unsupported", "contradicted"):
                raise ValueError(
                    f"{f}:{lineno}: verdict {r.get('verdict')!r} is not supported/unsupported/contradicted"
                )
            key = (r["answer_id"], r["claim_id"], r.get("labeller", ""))
            if key not in latest or str(r.get("time", "")) >= str(latest[key].get("time", "")):
                latest[key] = r
    out.excluded = (
        {"superseded_by_later_label": out.n_source - len(latest)} if out.n_source > len(latest) else {}
    )
    for (answer_id, claim_id, labeller), r in sorted(latest.items()):
        passages = [p["text"] if isinstance(p, dict) else str(p) for p in r.get("passages") or []]
        out.items.append(
            LabelledClaim(
                item_id=f"finrag:{answer_id}:{claim_id}:{labeller}",
                benchmark="finrag",
                subset=labeller,
                claim=r["claim"],
                passages=passages,
                human=r["verdict"],
                group_id=str(answer_id),
                human_raw=r["verdict"],
            )
        )
    return out


LOADERS = {
    "findver": load_findver,
    "attributionbench": load_attributionbench,
    "expertqa": load_expertqa,
    "finrag": load_finrag_labels,
}


def load_all(root: Path | None = None, labels_dir: Path | None = None) -> dict[str, Loaded]:
    """Every benchmark that is present; absent ones come back empty (n_source 0), never as an error."""
    out = {name: fn(root) for name, fn in LOADERS.items() if name != "finrag"}
    out["finrag"] = load_finrag_labels(labels_dir)
    return out


def binary(verdict: str) -> str:
    """Binary agreement label: "contradicted" and "unsupported" are both "not_supported"."""
    return "supported" if verdict == "supported" else "not_supported"


def stratum_of(item: LabelledClaim, by: Sequence[str]) -> tuple:
    return tuple(getattr(item, k) for k in by)


def sample_stratified(
    items: Iterable[LabelledClaim],
    n: int,
    seed: int = DEFAULT_SEED,
    by: Sequence[str] = ("benchmark", "subset", "human"),
) -> list[LabelledClaim]:
    """n items drawn without replacement, proportionally per stratum (largest remainder), reproducibly.

    Proportional allocation keeps each benchmark's label balance and subset mix as in the source, so a kappa on
    the sample estimates the kappa on the whole set. Returns everything (in source order) when n >= len(items).
    """
    from finrag.core.sampling import proportional_sample

    return proportional_sample(list(items), n, lambda it: stratum_of(it, by), seed)
