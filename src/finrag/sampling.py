"""Stratified samples with a fixed seed (the same sample on every machine and every run)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")


def stratified_sample(items: Sequence[T], key: Callable[[T], str], per_stratum: int, seed: int) -> list[T]:
    """Up to `per_stratum` items from each stratum, drawn with random.Random(seed); input order kept."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[key(it)].append(i)
    rng = random.Random(seed)
    chosen: set[int] = set()
    for name in sorted(groups):
        idx = groups[name]
        chosen.update(idx if len(idx) <= per_stratum else rng.sample(idx, per_stratum))
    return [items[i] for i in sorted(chosen)]
