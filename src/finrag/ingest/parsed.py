"""What both filing parsers share: `IngestError`, `Parsed` (the pages plus the damage the parser measured on
them: a partly damaged file is parsed and says which pages lost text, never loses it in silence) and the text
encoding sniffer (UTF-16/32 HTML)."""

from __future__ import annotations

from pathlib import Path


class IngestError(ValueError):
    """A filing that cannot be parsed. The message is one line naming the file and why."""

    def __init__(self, path: str | Path, why: str) -> None:
        self.path = str(path)
        self.why = " ".join(str(why).split())
        super().__init__(f"{self.path}: {self.why}")


class Parsed(list):
    """The pages of one filing (a plain list of Page, as before) and the damage the parser measured.

    `damage` holds one record per finding, {"page": 0-based page or None for the whole file, "reason": ...};
    a healthy file has none. The pages of a damaged file are still all there, with whatever text was left.
    """

    def __init__(self, pages=(), damage=()) -> None:
        super().__init__(pages)
        self.damage: list[dict] = [dict(d) for d in damage]

    @property
    def damaged_pages(self) -> list[int]:
        return sorted({d["page"] for d in self.damage if d.get("page") is not None})

    def reasons(self) -> dict[str, int]:
        return damage_reasons(self.damage)

    def warning(self) -> str | None:
        """One line naming the damaged pages and why, or None for a healthy file."""
        if not self.damage:
            return None
        pages = self.damaged_pages
        why = "; ".join(f"{k}: {n} page{'s' if n > 1 else ''}" if n else k for k, n in self.reasons().items())
        where = (
            f"{len(pages)} of {len(self)} pages damaged: {page_ranges(pages)}" if pages else "file damaged"
        )
        return f"{where} ({why})"


def damage_reasons(damage: list[dict]) -> dict[str, int]:
    """Each kind of damage and on how many pages (0: a finding about the whole file), commonest first."""
    seen: dict[str, set] = {}
    for d in damage:
        seen.setdefault(d["reason"], set()).add(d.get("page"))
    counts = ((k, len(v - {None})) for k, v in seen.items())
    return dict(sorted(counts, key=lambda kv: (-kv[1], kv[0])))


def page_ranges(pages: list[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> '0-2, 5, 7-8' (0-based page numbers, as everywhere in the corpus)."""
    out: list[list[int]] = []
    for p in sorted(set(pages)):
        if out and out[-1][1] == p - 1:
            out[-1][1] = p
        else:
            out.append([p, p])
    return ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in out)


def text_encoding(head: bytes) -> str | None:
    """'utf-16' / 'utf-16-le' / 'utf-16-be' / 'utf-32' when the bytes are UTF-16 or UTF-32 text, else None.

    A byte-order mark decides; without one, UTF-16 text of mostly ASCII markup has a NUL in every other byte
    (odd bytes for little-endian, even for big-endian), which no 8-bit HTML has.
    """
    if head.startswith((b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff")):
        return "utf-32"
    if head.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    sample = head[:4096]
    sample = sample[: len(sample) // 2 * 2]
    if len(sample) < 16:
        return None
    half = len(sample) // 2
    even, odd = sample[0::2].count(0), sample[1::2].count(0)
    if odd >= 0.4 * half and even <= 0.05 * half:
        return "utf-16-le"
    if even >= 0.4 * half and odd <= 0.05 * half:
        return "utf-16-be"
    return None
