"""On-disk layout of one immutable index version, and loading it back (memory-mapped).

    <dir>/manifest.json          format, counts, dimension, embedding model
    <dir>/chunk_ids.npy          int64, one per indexed chunk (row order of everything below)
    <dir>/document_ids.npy       int64
    <dir>/is_reference.npy       bool
    <dir>/bm25_vocab.json        term -> row of W
    <dir>/bm25_{data,indices,indptr}.npy   W as CSR (n_terms, n_chunks)
    <dir>/bm25_{counts,lengths}.npy   the term count of each entry of W, each chunk's length
                                 (what an incremental version merges, knowledge.retrieval.merge)
    <dir>/bm25_impacts.npy       uint8, W's entries as multiples of manifest["bm25_step"] x their
    <dir>/bm25_impact_mult.npy   term's multiplier, and bm25_impact_error.npy their rounding (int64,
                                 one a term; an index written before them has uint16 impacts and
                                 neither file: all 1), and
    <dir>/bm25_term_max.npy      float64, each term's largest weight: the first stage of
                                 BM25Index.top (both optional: an index written without them
                                 makes them in memory on first search)
    <dir>/bm25_{skip_ptr,skip_doc,skip_off,gaps}.npy   W's chunk ids compressed, what the first
                                 stage reads instead of bm25_indices (knowledge.retrieval.
                                 bm25_postings; optional as well)
    <dir>/vectors.npy            float32 (n_chunks, dim), L2-normalised
    <dir>/sq8_{trained,codes,error}.npy   from dense_sq8.SQ8_MIN_ROWS chunks up: the 8-bit copy of
                                 the vectors (faiss quantiser, uint8 codes, per-dimension error)
    <dir>/sent_vectors.npy       float32 (n_sentences, dim), sentences of every chunk in order
    <dir>/sent_offsets.npy       int64 (n_chunks + 1): chunk i owns rows offsets[i]:offsets[i+1]

A version is written into a temporary sibling folder and renamed into place, so a reader
sees either nothing or a complete version, never a half-written one.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
from scipy import sparse

from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.bm25_postings import encode
from knowledge.retrieval.dense import dense_search
from knowledge.retrieval.dense_sq8 import SQ8_MIN_ROWS, SQ8Blocks, encode_sq8

FORMAT = 1
# The files of BM25Index.postings, in its order.
POSTINGS = ("bm25_skip_ptr", "bm25_skip_doc", "bm25_skip_off", "bm25_gaps")


@dataclass
class IndexData:
    chunk_ids: np.ndarray
    document_ids: np.ndarray
    is_reference: np.ndarray
    bm25: BM25Index
    vectors: np.ndarray
    sent_vectors: np.ndarray
    sent_offsets: np.ndarray
    meta: dict = field(default_factory=dict)
    # The 8-bit first stage of dense search, as read from disk; None: made on first use
    # when the index is large enough (dense_sq8).
    sq8: SQ8Blocks | None = None

    @property
    def size(self) -> int:
        return len(self.chunk_ids)

    @cached_property
    def dense_sq8(self) -> SQ8Blocks | None:
        """The 8-bit first stage for dense search, or None below SQ8_MIN_ROWS (float32 is used)."""
        if self.sq8 is not None:
            return self.sq8
        vectors = np.asarray(self.vectors)
        if self.size < SQ8_MIN_ROWS or vectors.ndim != 2 or vectors.shape[0] != self.size:
            return None
        return SQ8Blocks.build(vectors)

    def dense_top(self, vector: np.ndarray, k: int, allowed: np.ndarray | None = None,
                  threads: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """The k best (positions, cosines) of `vector` (dense.dense_search)."""
        return dense_search(self.vectors, vector, k, allowed, threads=threads, sq8=self.dense_sq8)

    @cached_property
    def _documents(self) -> tuple[np.ndarray, np.ndarray]:
        """(distinct document ids, for each row the index of its document among them)."""
        return np.unique(np.asarray(self.document_ids), return_inverse=True)

    def rows_of(self, document_ids: np.ndarray) -> np.ndarray | None:
        """Boolean mask of the rows whose document is in `document_ids`; None if that is every row.

        Decided per document and then gathered per row: one set lookup over the few distinct
        documents and a gather, instead of a set lookup for every one of up to 1M rows.
        """
        documents, row_document = self._documents
        keep = np.isin(documents, document_ids)
        return None if keep.all() else keep[row_document]


@contextmanager
def atomic_folder(target: Path) -> Iterator[Path]:
    """A temporary sibling folder of `target` to fill; renamed to `target` when the block
    ends without an error (removed otherwise), so a reader sees all of it or nothing. What
    is written last inside (the manifest) marks a complete folder."""
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        yield tmp
        tmp.replace(target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def write_index(data: IndexData, target: Path) -> Path:
    """Write `data` to `target` atomically (temporary folder + rename). Returns `target`."""
    target = Path(target)
    with atomic_folder(target) as tmp:
        w = data.bm25.weights.tocsr()
        arrays = {
            "chunk_ids": np.asarray(data.chunk_ids, dtype=np.int64),
            "document_ids": np.asarray(data.document_ids, dtype=np.int64),
            "is_reference": np.asarray(data.is_reference, dtype=bool),
            "bm25_data": w.data.astype(np.float64),
            "bm25_indices": w.indices.astype(np.int32),
            "bm25_indptr": w.indptr.astype(np.int64),
            "vectors": np.asarray(data.vectors, dtype=np.float32),
            "sent_vectors": np.asarray(data.sent_vectors, dtype=np.float32),
            "sent_offsets": np.asarray(data.sent_offsets, dtype=np.int64),
        }
        bm25 = data.bm25
        if (bm25.impacts is None or bm25.impact_mult is None or bm25.impact_error is None or bm25.term_max is None
                or np.isnan(bm25.term_max).any()):
            bm25.quantize()
        arrays["bm25_impacts"] = np.asarray(bm25.impacts, dtype=np.uint8)
        arrays["bm25_impact_mult"] = np.asarray(bm25.impact_mult, dtype=np.int64)
        arrays["bm25_impact_error"] = np.asarray(bm25.impact_error, dtype=np.int64)
        arrays["bm25_term_max"] = np.asarray(data.bm25.term_max, dtype=np.float64)
        if data.bm25.postings is None:
            data.bm25.postings = encode(w.indptr, w.indices)
        arrays.update(zip(POSTINGS, data.bm25.postings, strict=True))
        if data.bm25.counts is not None and data.bm25.lengths is not None:
            arrays["bm25_counts"] = np.asarray(data.bm25.counts, dtype=np.int32)
            arrays["bm25_lengths"] = np.asarray(data.bm25.lengths, dtype=np.int64)
        if arrays["vectors"].ndim == 2 and len(arrays["vectors"]) >= SQ8_MIN_ROWS:
            arrays["sq8_trained"], arrays["sq8_codes"], arrays["sq8_error"] = encode_sq8(arrays["vectors"])
        for name, array in arrays.items():
            np.save(tmp / f"{name}.npy", array)
        (tmp / "bm25_vocab.json").write_text(json.dumps(data.bm25.vocab))
        manifest = {
            **data.meta,
            "format": FORMAT,
            "chunks": len(arrays["chunk_ids"]),
            "terms": int(w.shape[0]),
            "dim": int(arrays["vectors"].shape[1]) if arrays["vectors"].ndim == 2 else 0,
            "sentences": len(arrays["sent_vectors"]),
            "sq8": "sq8_codes" in arrays,
            "bm25_step": data.bm25.impact_step,
        }
        # The manifest goes last: its presence marks a complete folder.
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return target


def read_index(source: Path) -> IndexData:
    """Load a version written by write_index; large arrays are memory-mapped, not read."""
    source = Path(source)
    manifest = json.loads((source / "manifest.json").read_text())

    def arr(name: str) -> np.ndarray:
        return np.load(source / f"{name}.npy", mmap_mode="r")

    def optional(name: str) -> np.ndarray | None:
        """A small file read whole, None when the version was written without it."""
        return np.load(source / f"{name}.npy") if (source / f"{name}.npy").exists() else None

    vocab = json.loads((source / "bm25_vocab.json").read_text())
    quantized = (source / "bm25_impacts.npy").exists() and "bm25_step" in manifest
    compressed = all((source / f"{name}.npy").exists() for name in POSTINGS)
    weights = sparse.csr_matrix(
        (arr("bm25_data"), arr("bm25_indices"), arr("bm25_indptr")),
        shape=(manifest["terms"], manifest["chunks"]),
    )
    return IndexData(
        chunk_ids=np.asarray(arr("chunk_ids")),
        document_ids=np.asarray(arr("document_ids")),
        is_reference=np.asarray(arr("is_reference")),
        bm25=BM25Index(vocab=vocab, weights=weights,
                       counts=arr("bm25_counts") if (source / "bm25_counts.npy").exists() else None,
                       lengths=arr("bm25_lengths") if (source / "bm25_lengths.npy").exists() else None,
                       # Read whole (one float per term): the searches fill in NaNs, if any.
                       term_max=np.load(source / "bm25_term_max.npy") if quantized else None,
                       impacts=arr("bm25_impacts") if quantized else None,
                       impact_step=float(manifest["bm25_step"]) if quantized else 0.0,
                       impact_mult=optional("bm25_impact_mult") if quantized else None,
                       impact_error=optional("bm25_impact_error") if quantized else None,
                       postings=tuple(arr(name) for name in POSTINGS) if compressed else None),
        vectors=arr("vectors"),
        sent_vectors=arr("sent_vectors"),
        sent_offsets=np.asarray(arr("sent_offsets")),
        meta=manifest,
        # The codes are copied into faiss's own buffers (read once); the float32 vectors stay
        # memory-mapped and only the rescored candidates' rows are read.
        sq8=SQ8Blocks.from_codes(arr("sq8_trained"), arr("sq8_codes"), arr("sq8_error"))
        if manifest.get("sq8") else None,
    )
