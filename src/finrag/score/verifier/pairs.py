"""The verifier's training contract (`ClaimPair`) and the pieces every pair builder shares: number formatting,
controlled value perturbation, and the evidence window of a pair."""

from __future__ import annotations

import random
import re
from collections.abc import Sequence

from pydantic import BaseModel

from finrag.score.claims import content_stems


class ClaimPair(BaseModel):
    """One training example: a claim, the evidence it is checked against, 1 = supported / 0 = not."""

    claim: str
    evidence: str
    label: int
    source: str  # xbrl | tatqa | findver | attributionbench | expertqa
    kind: str  # supported, or the perturbation that made the negative (value, scale, sign, ...)
    group: str  # filing / report / question: cross-fitting never splits a group


SCALE_WORD = {0: "", 3: " thousand", 6: " million", 9: " billion"}


def format_money(value: float, scale: int, decimals: int) -> str:
    """A dollar amount as a filing writes it at `scale` (e.g. -1234e6 at 6 -> "-$1,234 million")."""
    shown = abs(value) / 10**scale
    sign = "-" if value < 0 else ""
    return f"{sign}${shown:,.{decimals}f}{SCALE_WORD.get(scale, '')}"


def perturb_value(rng: random.Random, value: float, decimals: int) -> float:
    """The value moved by 5-60% either way (never within 1%, so no rounding reading makes it right)."""
    factor = rng.choice([rng.uniform(1.05, 1.6), rng.uniform(0.4, 0.95)])
    out = value * factor
    step = 10.0 ** (-decimals)
    return round(out / step) * step if abs(out) >= step else out


_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9(\"'])|\n+")


def windows(text: str, max_words: int = 160, stride: int = 120) -> list[str]:
    """Overlapping word windows of a passage, cut at line/sentence ends where possible (a pair keeps the one
    closest to its claim: `best_window`)."""
    units = [u.strip() for u in _SPLIT.split(text) if u.strip()]
    if not units:
        return []
    out: list[str] = []
    cur: list[str] = []
    n = 0
    for u in units:
        words = u.split()
        while len(words) > max_words:  # a unit longer than a window (a long table line): cut it
            if cur:
                out.append(" ".join(cur))
                cur, n = [], 0
            out.append(" ".join(words[:max_words]))
            words = words[stride:]
        if n + len(words) > max_words and cur:
            out.append(" ".join(cur))
            keep: list[str] = []
            kept = 0
            for prev in reversed(cur):  # carry the tail over: facts at a window edge are seen whole once
                if kept + len(prev.split()) > max_words - stride:
                    break
                keep.insert(0, prev)
                kept += len(prev.split())
            cur, n = keep, kept
        cur.append(" ".join(words))
        n += len(words)
    if cur:
        out.append(" ".join(cur))
    return out


def best_window(claim: str, passages: Sequence[str], max_words: int = 160) -> str:
    """The window sharing most content stems with the claim (ties: the earlier): for training, where one
    window per pair must be chosen without knowing the label."""
    want = set(content_stems(claim))
    best, best_score = "", -1.0
    for p in passages:
        for w in windows(p, max_words=max_words):
            have = set(content_stems(w))
            score = len(want & have) + 0.001 * len(have)
            if score > best_score:
                best, best_score = w, score
    return best
