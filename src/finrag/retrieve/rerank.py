"""Re-ranking at search time: a sentence-transformers cross-encoder over (query, passage) pairs.

Kept apart from finrag.retrieve.train_reranker (which trains the model in its own DVC stage) so that changing how the model is
*used* re-runs the retrieval stages and never the training.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from finrag.core.device import choose_device, device_type, gpu_precision
from finrag.core.io import sha256_text
from finrag.core.kvstore import SqliteKV


class CrossEncoderReranker:
    """search.Reranker over a sentence-transformers CrossEncoder: a folder (e.g. the one `train_reranker`
    writes) or a Hugging Face id already in the local cache (e.g. cross-encoder/ms-marco-MiniLM-L6-v2).

    `precision` auto runs in bf16 where the CPU has native bf16 (as the embedders do). bf16 logits are coarse
    (steps of 1/128 between 1 and 2), so many candidates tie and keep their first-stage order; `fp32_head` runs
    the classification head (and so the score) in fp32 on the bf16 encoder's output. With `cache_dir`, every
    (query, passage) score is kept in SQLite under the model's revision: the nine grid setups re-rank many of
    the same candidates (BM25 half of the fusion is shared by the three embedders of a chunker), a killed
    stage resumes, and a re-run scores nothing twice.
    """

    def __init__(
        self,
        path_or_name: str | Path,
        *,
        batch_size: int = 32,
        max_length: int | None = None,
        precision: str = "fp32",
        cache_dir: str | Path | None = None,
        fp32_head: bool = False,
    ):
        from sentence_transformers import CrossEncoder

        from finrag.retrieve.embed_base import resolve_precision
        from finrag.retrieve.weights import weights_hash

        folder = Path(path_or_name).expanduser()
        self.name = str(folder) if folder.is_dir() else str(path_or_name)
        self.batch_size = batch_size
        self.device = choose_device()
        self.precision = gpu_precision(self.device, precision) or resolve_precision(precision)
        self.model = CrossEncoder(self.name, device=self.device, max_length=max_length, local_files_only=True)
        wrev = weights_hash(folder) if folder.is_dir() else self.name
        head = "\0fp32-head" if fp32_head and self.precision == "bf16" else ""  # old revisions unchanged
        self.revision = sha256_text(f"{wrev}\0{self.precision}\0{self.model.max_length}{head}")[:16]
        if head:
            _fp32_head(self.model)
        self._scores = None
        if cache_dir is not None:
            self._scores = SqliteKV(Path(cache_dir) / f"rerank-{self.revision}.sqlite", "s", "REAL")

    def _predict(self, query: str, texts: list[str]) -> list[float]:
        import torch

        half = {"bf16": torch.bfloat16, "fp16": torch.float16}.get(self.precision)
        with torch.autocast(device_type(self.device), dtype=half or torch.bfloat16, enabled=half is not None):
            out = self.model.predict(
                [(query, t) for t in texts],
                batch_size=self.batch_size,
                show_progress_bar=False,
                convert_to_numpy=True,
            )
        return [float(x) for x in np.asarray(out, dtype=np.float64).reshape(len(texts))]

    def score(self, query: str, texts: list[str]) -> list[float]:
        if not texts:
            return []
        if self._scores is None:
            return self._predict(query, texts)
        qh = sha256_text(query)[:24]
        keys = [f"{qh}:{sha256_text(t)[:24]}" for t in texts]
        known = self._scores.get_many(list(dict.fromkeys(keys)))
        todo = {k: t for k, t in zip(keys, texts, strict=True) if k not in known}  # each new pair once
        if todo:
            rows = list(zip(todo, self._predict(query, list(todo.values())), strict=True))
            self._scores.put_many(rows)
            known.update(rows)
        return [known[k] for k in keys]


def _fp32_head(cross_encoder) -> None:
    """Make the classifier of a sequence-classification model compute in fp32 even under bf16 autocast."""
    import torch

    head = getattr(cross_encoder.model, "classifier", None)
    if head is None:
        raise ValueError("fp32_head: the cross-encoder has no `classifier` module to keep in fp32")
    forward = head.forward

    def fp32_forward(x, *args, **kwargs):
        with torch.autocast("cpu", enabled=False):
            return forward(x.float(), *args, **kwargs).float()

    head.forward = fp32_forward
