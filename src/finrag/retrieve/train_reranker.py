"""A cross-encoder re-ranker: trained here from the packaged MiniLM on TAT-QA dev, or any Hugging Face one.

Why train one: no cross-encoder ships offline, and the grid needs a re-ranking condition. TAT-QA (CC BY 4.0)
has real annual-report contexts (one table + paragraphs) whose questions name their evidence, which gives
question -> passage relevance labels without touching FinanceBench (the evaluation set).

Data (all deterministic from `seed`):
- passages of a context: its table rendered as pipe rows, and each paragraph;
- positives of a question: the paragraphs in `rel_paragraphs`, plus the table when `answer_from` is `table` or
  `table-text` (when a table answer also lists paragraphs, those stay positives: the annotators marked them);
- negatives: `hard_negatives` other passages of the same report, and `random_negatives` from other reports;
- the split is by CONTEXT (a report never contributes to both sides), `heldout_fraction` held out.

Held-out evaluation ranks, for each question, all passages of its own report plus `eval_random_negatives`
passages of other held-out reports, and reports MRR@10, recall@1 and recall@3 (share of the question's
positives in the top 1 / top 3) and hit@1, for the trained model and for the untrained baseline (cosine of the
MiniLM bi-encoder the cross-encoder starts from).
"""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from finrag.core.device import choose_device, device_type
from finrag.core.io import write_json
from finrag.ingest.tatqa import render_table

log = logging.getLogger(__name__)


@dataclass
class RerankerParams:
    seed: int = 13
    heldout_fraction: float = 0.2
    max_train_pairs: int = 3000  # the cost knob: pairs seen once per epoch (~4 CPU-s per 16-pair step)
    hard_negatives: int = 2
    random_negatives: int = 2
    eval_random_negatives: int = 10
    epochs: int = 1
    batch_size: int = 16
    learning_rate: float = 5e-5
    warmup_ratio: float = 0.1
    max_length: int = 256
    max_steps: int = -1  # > 0 caps optimizer steps (for tests)
    max_eval_questions: int | None = None  # None = every held-out question
    threads: int | None = None
    # bf16 autocast for training and evaluation. Off: measured no faster than fp32 for MiniLM training here
    # (7.0-7.7 vs 7.8 CPU-s per 16x256-token step, AMX CPU). "auto" = on where the CPU has native bf16.
    bf16: str | bool = False

    @classmethod
    def from_dict(cls, d: dict | None) -> RerankerParams:
        d = dict(d or {})
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown reranker params: {sorted(unknown)}")
        return cls(**d)


# --------------------------------------------------------------------------------------------------- data


@dataclass
class Context:
    uid: str
    passages: list[str]  # [table, paragraph 1, paragraph 2, ...]
    questions: list[tuple[str, set[int]]]  # (question, indices of positive passages)


def load_tatqa(path: str | Path) -> list[Context]:
    """TAT-QA contexts with their passages and each question's positive passage indices."""
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    out = []
    for ci, c in enumerate(raw):
        paras = sorted(c.get("paragraphs", []), key=lambda p: int(p["order"]))
        passages = [render_table(c["table"]["table"])] + [p["text"] for p in paras]
        order_to_idx = {str(p["order"]): i + 1 for i, p in enumerate(paras)}
        qs = []
        for q in c.get("questions", []):
            pos = {order_to_idx[str(o)] for o in q.get("rel_paragraphs", []) if str(o) in order_to_idx}
            if q.get("answer_from") in ("table", "table-text"):
                pos.add(0)
            if pos:
                qs.append((q["question"], pos))
        out.append(Context(uid=c["table"].get("uid", str(ci)), passages=passages, questions=qs))
    return out


def split_contexts(
    contexts: list[Context], heldout_fraction: float, seed: int
) -> tuple[list[Context], list[Context]]:
    """Split by context (report), never by question, with a seeded shuffle of the uids."""
    idx = sorted(range(len(contexts)), key=lambda i: contexts[i].uid)
    random.Random(seed).shuffle(idx)
    n_held = max(1, round(len(idx) * heldout_fraction))
    held = set(idx[:n_held])
    return [contexts[i] for i in sorted(set(idx) - held)], [contexts[i] for i in sorted(held)]


def training_pairs(contexts: list[Context], p: RerankerParams) -> list[tuple[str, str, int]]:
    """(question, passage, label) with positives, hard (same report) and random (other report) negatives;
    questions are sampled (seeded) so the pair count stays near `max_train_pairs`."""
    rng = random.Random(p.seed)
    per_q = []
    for ci, c in enumerate(contexts):
        for question, pos in c.questions:
            pairs = [(question, c.passages[i], 1) for i in sorted(pos)]
            hard = [i for i in range(len(c.passages)) if i not in pos]
            pairs += [
                (question, c.passages[i], 0) for i in rng.sample(hard, min(p.hard_negatives, len(hard)))
            ]
            for _ in range(p.random_negatives):
                other = contexts[rng.choice([j for j in range(len(contexts)) if j != ci] or [ci])]
                pairs.append((question, rng.choice(other.passages), 0))
            per_q.append(pairs)
    rng.shuffle(per_q)
    out: list[tuple[str, str, int]] = []
    for pairs in per_q:
        if len(out) + len(pairs) > p.max_train_pairs and out:
            break
        out += pairs
    rng.shuffle(out)
    return out


def eval_candidates(contexts: list[Context], p: RerankerParams) -> list[tuple[str, list[str], set[int]]]:
    """(question, candidate passages, indices of the positives among them) for held-out ranking."""
    rng = random.Random(p.seed + 1)
    out = []
    for ci, c in enumerate(contexts):
        for question, pos in c.questions:
            others = [t for j, o in enumerate(contexts) if j != ci for t in o.passages]
            cand = list(c.passages) + rng.sample(others, min(p.eval_random_negatives, len(others)))
            out.append((question, cand, set(pos)))
    if p.max_eval_questions is not None and len(out) > p.max_eval_questions:
        out = rng.sample(out, p.max_eval_questions)
    return out


def ranking_metrics(scored: list[tuple[list[float], set[int]]]) -> dict[str, float]:
    """MRR@10, recall@1, recall@3 (share of positives ranked in the top k) and hit@1, averaged over questions.
    Ties are broken by candidate order, which puts the report's own passages first for every scorer alike."""
    mrr, r1, r3, h1 = [], [], [], []
    for scores, pos in scored:
        order = sorted(range(len(scores)), key=lambda j: (-scores[j], j))
        ranks = [r for r, j in enumerate(order, 1) if j in pos]
        first = min(ranks)
        mrr.append(1.0 / first if first <= 10 else 0.0)
        r1.append(sum(r <= 1 for r in ranks) / len(pos))
        r3.append(sum(r <= 3 for r in ranks) / len(pos))
        h1.append(float(first == 1))
    n = len(scored)
    return {
        "n_questions": n,
        "mrr@10": float(np.mean(mrr)) if n else float("nan"),
        "recall@1": float(np.mean(r1)) if n else float("nan"),
        "recall@3": float(np.mean(r3)) if n else float("nan"),
        "hit@1": float(np.mean(h1)) if n else float("nan"),
    }


# ------------------------------------------------------------------------------------------------ scoring


def _biencoder_scores(cands, threads: int | None) -> list[tuple[list[float], set[int]]]:
    from finrag.retrieve.embedding import make_embedder

    emb = make_embedder("minilm", precision="fp32", threads=threads)
    texts = sorted({t for _, cand, _ in cands for t in cand})
    vecs = dict(zip(texts, emb.embed_passages(texts), strict=True))
    out = []
    for q, cand, pos in cands:
        qv = emb.embed_query(q)
        out.append(([float(vecs[t] @ qv) for t in cand], pos))
    return out


def _crossencoder_scores(
    model, cands, batch_size: int, bf16: bool = False
) -> list[tuple[list[float], set[int]]]:
    import torch

    flat = [(q, t) for q, cand, _ in cands for t in cand]
    with torch.autocast("cpu", dtype=torch.bfloat16, enabled=bf16):
        scores = model.predict(flat, batch_size=batch_size, show_progress_bar=False, convert_to_numpy=True)
    scores = np.asarray(scores, dtype=np.float64).reshape(len(flat))
    out, s = [], 0
    for _, cand, pos in cands:
        out.append((scores[s : s + len(cand)].tolist(), pos))
        s += len(cand)
    return out


def _need_training_extras() -> None:
    from sentence_transformers.util import is_training_available

    if not is_training_available():
        raise RuntimeError(
            "training the reranker needs sentence-transformers' training extras 'datasets' and 'accelerate' "
            "(pip install 'sentence-transformers[train]')"
        )


def train_reranker(
    tatqa_path: str | Path, out_dir: str | Path, params: dict | RerankerParams | None = None
) -> dict:
    """Train a MiniLM cross-encoder on TAT-QA (split by report), evaluate it and the bi-encoder baseline on
    the held-out reports, and write `out_dir/model/` and `out_dir/metrics.json` (both atomically)."""
    import torch
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss

    from finrag.core.machine import cpu_has_native_bf16
    from finrag.retrieve.weights import minilm_path

    _need_training_extras()
    from datasets import Dataset
    from transformers import set_seed

    p = params if isinstance(params, RerankerParams) else RerankerParams.from_dict(params)
    if p.threads:
        torch.set_num_threads(p.threads)
    bf16 = cpu_has_native_bf16() if p.bf16 == "auto" else bool(p.bf16)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    t0 = time.time()

    contexts = load_tatqa(tatqa_path)
    train_ctx, held_ctx = split_contexts(contexts, p.heldout_fraction, p.seed)
    pairs = training_pairs(train_ctx, p)
    cands = eval_candidates(held_ctx, p)
    n_pos = sum(lab for _, _, lab in pairs)
    log.info(
        "reranker: %d train pairs (%d positive) from %d reports; %d held-out questions from %d reports",
        len(pairs),
        n_pos,
        len(train_ctx),
        len(cands),
        len(held_ctx),
    )

    set_seed(p.seed)
    device = choose_device()
    model = CrossEncoder(
        str(minilm_path()), num_labels=1, max_length=p.max_length, device=device, local_files_only=True
    )
    baseline = ranking_metrics(_biencoder_scores(cands, p.threads))

    train_ds = Dataset.from_dict(
        {
            "query": [q for q, _, _ in pairs],
            "passage": [t for _, t, _ in pairs],
            "label": [float(y) for *_, y in pairs],
        }
    )
    pos_weight = torch.tensor((len(pairs) - n_pos) / max(n_pos, 1))
    loss = BinaryCrossEntropyLoss(model, pos_weight=pos_weight)
    work = out_dir / ".trainer"
    steps = p.max_steps if p.max_steps > 0 else p.epochs * -(-len(pairs) // p.batch_size)
    args = CrossEncoderTrainingArguments(
        output_dir=str(work),
        num_train_epochs=p.epochs,
        max_steps=p.max_steps,
        per_device_train_batch_size=p.batch_size,
        learning_rate=p.learning_rate,
        warmup_steps=int(p.warmup_ratio * steps),
        bf16=bf16 and device == "cpu",
        fp16=device_type(device) == "cuda",
        seed=p.seed,
        data_seed=p.seed,
        use_cpu=device == "cpu",
        save_strategy="no",
        eval_strategy="no",
        logging_steps=max(1, min(50, len(pairs) // p.batch_size // 10)),
        report_to="none",
        dataloader_num_workers=0,
        disable_tqdm=False,
    )
    t_train = time.time()
    trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=train_ds, loss=loss)
    result = trainer.train()
    train_s = time.time() - t_train

    t_eval = time.time()
    model.eval()
    trained = ranking_metrics(_crossencoder_scores(model, cands, 64, bf16))
    eval_s = time.time() - t_eval

    tmp_model = out_dir / ".model.tmp"
    shutil.rmtree(tmp_model, ignore_errors=True)
    model.save_pretrained(str(tmp_model))
    final = out_dir / "model"
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp_model, final)
    shutil.rmtree(work, ignore_errors=True)

    metrics = {
        "params": asdict(p),
        "data": {
            "source": "TAT-QA dev (CC BY 4.0)",
            "train_reports": len(train_ctx),
            "heldout_reports": len(held_ctx),
            "train_pairs": len(pairs),
            "train_positive_pairs": n_pos,
            "heldout_questions": len(cands),
            "mean_candidates": float(np.mean([len(c) for _, c, _ in cands])) if cands else 0.0,
        },
        "heldout": {"trained_cross_encoder": trained, "baseline_minilm_biencoder": baseline},
        "train_loss": float(result.training_loss),
        "train_steps": int(result.global_step),
        "seconds": {
            "train": round(train_s, 1),
            "eval": round(eval_s, 1),
            "total": round(time.time() - t0, 1),
        },
        "torch_threads": torch.get_num_threads(),
        "bf16": bf16,
        "model_dir": str(final),
    }
    write_json(out_dir / "metrics.json", metrics)
    return metrics
