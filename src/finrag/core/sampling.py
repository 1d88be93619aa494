"""Stratified samples with a fixed seed (the same sample on every machine and every run)."""

from __future__ import annotations

import random
from collections import defaultdict
from collections.abc import Callable, Sequence
from typing import TypeVar

import numpy as np

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


def per_stratum_ranks(items: Sequence[T], key: Callable[[T], str], seed: int) -> list[int]:
    """Each item's position in its stratum's shuffled order (the stratum shuffled by its own generator, seeded by
    `seed` and the stratum's name): the draw order behind `per_stratum_sample`."""
    groups: dict[str, list[int]] = defaultdict(list)
    for i, it in enumerate(items):
        groups[key(it)].append(i)
    ranks = [0] * len(items)
    for name, idx in groups.items():
        order = list(idx)
        random.Random(f"{seed}:{name}").shuffle(order)  # str seeds hash with SHA-512: stable across processes
        for rank, i in enumerate(order):
            ranks[i] = rank
    return ranks


def per_stratum_sample(items: Sequence[T], key: Callable[[T], str], per_stratum: int, seed: int) -> list[T]:
    """Up to `per_stratum` items from each stratum, each stratum shuffled by its own generator (seeded by `seed`
    and the stratum's name); input order kept. Unlike `stratified_sample`, a stratum's draw does not move when
    other strata are added (a new run family), and raising `per_stratum` keeps every item drawn before: both
    matter when each drawn item costs recorded model calls that must replay."""
    ranks = per_stratum_ranks(items, key, seed)
    return [it for it, rank in zip(items, ranks, strict=True) if rank < per_stratum]


def proportional_sample(items: Sequence[T], n: int, key: Callable[[T], tuple], seed: int) -> list[T]:
    """n items without replacement, allocated to strata in proportion to their size (largest remainder),
    drawn with numpy's default_rng(seed); input order kept. Everything when n >= len(items)."""
    items = list(items)
    if n >= len(items):
        return items
    if n <= 0:
        return []
    strata: dict[tuple, list[int]] = {}
    for i, it in enumerate(items):
        strata.setdefault(key(it), []).append(i)
    keys = sorted(strata, key=repr)
    sizes = np.array([len(strata[k]) for k in keys], dtype=float)
    quota = sizes * n / sizes.sum()
    alloc = np.floor(quota).astype(int)
    order = sorted(range(len(keys)), key=lambda j: (-(quota[j] - alloc[j]), repr(keys[j])))
    for j in order[: n - int(alloc.sum())]:
        alloc[j] += 1
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for k, a in zip(keys, alloc, strict=True):
        chosen.extend(int(x) for x in rng.choice(strata[k], size=int(a), replace=False))
    return [items[i] for i in sorted(chosen)]


def nested_order(items: Sequence[T], key: Callable[[T], tuple], seed: int) -> list[T]:
    """All items in an order whose every prefix is (close to) proportionally stratified by `key`.

    Why: an expensive judge (an LLM) is run on the first n items, and n grows as compute allows; with a nested
    order the first 40 are also among the first 300, so every recorded call is reused when n is raised.
    Within a stratum of m items the i-th (random order) is placed at (i + u) / m, u a per-stratum random offset,
    and all items are sorted by that position (systematic sampling across strata).
    """
    items = list(items)
    strata: dict[tuple, list[int]] = {}
    for i, it in enumerate(items):
        strata.setdefault(key(it), []).append(i)
    rng = np.random.default_rng(seed)
    placed: list[tuple[float, str, int]] = []
    for k in sorted(strata, key=repr):
        idx = strata[k]
        perm = rng.permutation(len(idx))
        u = float(rng.random())
        placed.extend(((r + u) / len(idx), repr(k), idx[p]) for r, p in enumerate(perm))
    return [items[i] for _, _, i in sorted(placed)]
