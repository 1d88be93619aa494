"""The LLM judge: a model's one-word verdict per claim, read back from its reply (SUPPORTED / UNSUPPORTED /
CONTRADICTED); several claims with the same passages go in one call."""

from __future__ import annotations

import re
from collections.abc import Sequence

from finrag.core.contracts import ClaimVerdict, Verdict
from finrag.core.io import sha256_text
from finrag.llm.prompts.render import task_prompt
from finrag.score.claims import strip_citations
from finrag.score.judges.base import BaseJudge, batch_args

LLM_TEMPLATE_ID = "judge-claims@1"
_VERDICT_WORDS: list[tuple[str, Verdict]] = [
    (
        r"not\s+supported|unsupported|partially\s+supported|partly\s+supported|not\s+attributable|insufficient|"
        r"not\s+enough|cannot\s+be\s+determined|not\s+contradict\w*|no\b",
        "unsupported",
    ),
    (r"contradict\w*|refut\w*|false|incorrect|not\s+(?:true|correct|accurate|right)", "contradicted"),
    (r"supported|attributable|entail\w*|true|correct|yes\b", "supported"),
]
_VERDICT_RE = re.compile(
    r"(?<![a-z])(?:" + "|".join(f"(?P<v{i}>{p})" for i, (p, _) in enumerate(_VERDICT_WORDS)) + ")",
    re.IGNORECASE,
)


# the words the prompt asks for, in capitals: preferred over any lower-case word, which may be the claim echoed back
# ("1. The company has no debt - SUPPORTED")
_LABEL_RE = re.compile(r"(?<![A-Za-z])(NOT\s+SUPPORTED|UNSUPPORTED|CONTRADICTED|SUPPORTED)(?![A-Za-z])")
_LABELS: dict[str, Verdict] = {
    "NOT SUPPORTED": "unsupported",
    "UNSUPPORTED": "unsupported",
    "CONTRADICTED": "contradicted",
    "SUPPORTED": "supported",
}


def split_verdict(text: str) -> tuple[Verdict | None, str]:
    """(verdict, reason): the first verdict label in capitals in a model's reply ("SUPPORTED - ..."), else the
    first verdict word in any case ("**Unsupported**", "Not true - ..."), and what follows it; (None, text) when
    there is none. Negations count: "not correct" is contradicted, "not contradicted" is not supported."""
    text = text or ""
    m = _LABEL_RE.search(text)
    if m:
        verdict = _LABELS[" ".join(m.group(1).split())]
    else:
        m = _VERDICT_RE.search(text)
        if not m:
            return None, text.strip()
        verdict = next(v for i, (_, v) in enumerate(_VERDICT_WORDS) if m.group(f"v{i}"))
    return verdict, re.sub(r"^[\W_]+", "", text[m.end() :]).strip()


def parse_verdict(text: str) -> Verdict | None:
    """The first verdict word in a model's reply, or None."""
    return split_verdict(text)[0]


def parse_numbered_verdicts(text: str, n: int) -> dict[int, tuple[Verdict, str]]:
    """{k: (verdict, reason)} from lines "k. VERDICT - reason" (1-based k <= n); unparseable lines left out."""
    out: dict[int, tuple[Verdict, str]] = {}
    for m in re.finditer(r"(?m)^\W*(?:claim\s*)?(\d{1,3})\s*[.):\]-]\s*(.+)$", text or "", re.IGNORECASE):
        k = int(m.group(1))
        v, reason = split_verdict(m.group(2))
        if 1 <= k <= n and v and k not in out:
            out[k] = (v, reason[:300])
    return out


def passages_block(passages: Sequence[str], max_chars: int) -> str:
    if not passages:
        return "Passages: none."
    parts = []
    for i, p in enumerate(passages, 1):
        t = p.strip()
        if len(t) > max_chars:
            t = t[:max_chars] + " [...]"
        parts.append(f"[{i}] {t}")
    return "Passages:\n\n" + "\n\n".join(parts)


def cached_call(judge, messages: list[dict], item_prefix: str):
    """One judge prompt through the response cache (`judge.llm`, a CachedLLM, with the judge's decoding, replicate
    and template): (completion, cache key), the call and any cache hit counted in `judge.stats`. The item id, a
    hash of the prompt, only labels the call in the cache's log; it is not part of the key."""
    item_id = f"{item_prefix}:" + sha256_text("\n".join(m["content"] for m in messages))[:16]
    completion, key, hit = judge.llm.complete(
        messages, judge.decoding, replicate=judge.replicate, template_id=judge.template_id, item_id=item_id
    )
    judge.stats["calls"] += 1
    judge.stats["cache_hits"] += int(bool(hit))
    return completion, key


class LLMJudge(BaseJudge):
    """A model's one-word verdict per claim; several claims with the same passages go in one call.

    `llm` is anything with `.complete(messages, decoding, replicate=0, template_id=..., item_id=...)` returning
    (completion with .text, cache key, hit) — finrag.llm.cache.CachedLLM. Counts of calls and parse failures are
    kept in `self.stats`. A claim whose reply cannot be parsed even alone is "unsupported" with detail
    parse_failed (never silently supported).
    """

    name = "llm"

    def __init__(
        self,
        llm,
        decoding=None,
        batch_size: int = 8,
        max_passage_chars: int = 6000,
        template_id: str = LLM_TEMPLATE_ID,
        name: str | None = None,
        replicate: int = 0,
    ):
        if llm is None:
            raise ValueError("the llm judge needs an LLM (a finrag.llm.cache.CachedLLM)")
        self.llm = llm
        self.decoding = decoding if decoding is not None else {"temperature": 0.0, "max_tokens": 512}
        self.batch_size = max(1, int(batch_size))
        self.max_passage_chars = max_passage_chars
        self.template_id = template_id
        self.replicate = int(replicate)  # part of the cache key: a re-run with another index is a new sample
        if name:
            self.name = name
        self.stats = {"calls": 0, "cache_hits": 0, "batch_parse_failures": 0, "parse_failures": 0}

    def _messages(self, claims: Sequence[str], passages: Sequence[str]) -> list[dict]:
        return task_prompt(self.template_id).messages(
            passages_block=passages_block(passages, self.max_passage_chars),
            claims=[strip_citations(c) for c in claims],
        )

    def _call(self, claims: Sequence[str], passages: Sequence[str]) -> tuple[str, str]:
        completion, key = cached_call(self, self._messages(claims, passages), "judge")
        return completion.text or "", key

    def _one(self, claim: str, passages: Sequence[str], claim_id: str) -> ClaimVerdict:
        text, key = self._call([claim], passages)
        v, reason = split_verdict(text)
        detail = {"method": "llm", "cache_key": key, "raw": text[:500], "batched": False}
        if v is None:
            self.stats["parse_failures"] += 1
            detail["parse_failed"] = True
            v = "unsupported"
        return ClaimVerdict(
            claim_id=claim_id, verdict=v, judge=self.name, evidence=reason[:300], detail=detail
        )

    def judge(self, claim: str, passages: Sequence[str], claim_id: str = "") -> ClaimVerdict:
        return self._one(claim, list(passages), claim_id)

    def judge_batch(self, claims, passages, claim_ids=None) -> list[ClaimVerdict]:
        ids, per = batch_args(claims, passages, claim_ids)
        out: list[ClaimVerdict | None] = [None] * len(claims)
        groups: dict[tuple, list[int]] = {}
        for i, p in enumerate(per):
            groups.setdefault(tuple(p), []).append(i)
        for pas, idx in groups.items():
            for s in range(0, len(idx), self.batch_size):
                chunk = idx[s : s + self.batch_size]
                if len(chunk) == 1:
                    out[chunk[0]] = self._one(claims[chunk[0]], list(pas), ids[chunk[0]])
                    continue
                text, key = self._call([claims[i] for i in chunk], list(pas))
                parsed = parse_numbered_verdicts(text, len(chunk))
                if len(parsed) < len(chunk):
                    self.stats["batch_parse_failures"] += 1
                for k, i in enumerate(chunk, 1):
                    if k in parsed:
                        v, reason = parsed[k]
                        out[i] = ClaimVerdict(
                            claim_id=ids[i],
                            verdict=v,
                            judge=self.name,
                            evidence=reason,
                            detail={
                                "method": "llm",
                                "cache_key": key,
                                "batched": True,
                                "batch_size": len(chunk),
                            },
                        )
                    else:  # fall back to one-by-one for what the batch reply did not cover
                        out[i] = self._one(claims[i], list(pas), ids[i])
        return [v for v in out if v is not None]
