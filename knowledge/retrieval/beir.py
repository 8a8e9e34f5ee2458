"""Evaluation on a BEIR-layout data set (corpus.jsonl, queries.jsonl, qrels/<split>.tsv).

Metrics follow pytrec_eval as BEIR uses it: nDCG@10 (binary or graded gains, log2
discount), Recall@100 and MRR@10, averaged over the queries that have qrels.
Each configuration is run the way the portal runs it: the @10 metrics come from a search
with k=10 (so the candidate pools and the rerank depth are the product's), Recall@100
from a search with k=100.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from knowledge.retrieval.bm25 import BM25Index
from knowledge.retrieval.engine import HybridSearcher
from knowledge.retrieval.rerank import Reranker
from knowledge.retrieval.store import IndexData
from knowledge.retrieval.tokenize import tokenize


@dataclass
class BeirData:
    doc_ids: list[str]
    doc_texts: list[str]
    doc_sentences: list[list[str]]
    queries: dict[str, str]
    qrels: dict[str, dict[str, int]]
    corpus_hash: str = ""


def load_beir(folder: Path, *, split: str = "test", sentences: Path | None = None) -> BeirData:
    """Read a BEIR folder. `sentences` is an optional JSONL of {"doc_id", "sentences"} (SciFact
    ships the abstracts' sentence split); without it a document is one sentence per line of text."""
    folder = Path(folder)
    raw = (folder / "corpus.jsonl").read_bytes()
    docs = [json.loads(line) for line in raw.splitlines() if line.strip()]
    doc_ids = [str(d["_id"]) for d in docs]
    texts = [f"{d.get('title', '')} {d.get('text', '')}".strip() for d in docs]
    by_id: dict[str, list[str]] = {}
    digest = hashlib.sha256(raw)
    if sentences is not None and Path(sentences).exists():
        sraw = Path(sentences).read_bytes()
        digest.update(sraw)
        for line in sraw.splitlines():
            if line.strip():
                row = json.loads(line)
                by_id[str(row["doc_id"])] = list(row["sentences"])
    doc_sentences = []
    for d, did in zip(docs, doc_ids, strict=True):
        # The title is a sentence of its own: claims often restate it.
        title = [d["title"]] if d.get("title") else []
        doc_sentences.append(title + by_id.get(did, [s for s in d.get("text", "").splitlines() if s.strip()]))
    queries = {}
    for line in (folder / "queries.jsonl").read_text().splitlines():
        if line.strip():
            q = json.loads(line)
            queries[str(q["_id"])] = q["text"]
    qrels: dict[str, dict[str, int]] = {}
    with (folder / "qrels" / f"{split}.tsv").open() as fh:
        for row in csv.DictReader(fh, delimiter="\t"):
            qrels.setdefault(str(row["query-id"]), {})[str(row["corpus-id"])] = int(row["score"])
    queries = {qid: queries[qid] for qid in qrels if qid in queries}
    return BeirData(doc_ids, texts, doc_sentences, queries, qrels, digest.hexdigest())


def ndcg_at(ranked: list[str], rels: Mapping[str, int], k: int = 10) -> float:
    dcg = sum(rels.get(d, 0) / math.log2(i + 2) for i, d in enumerate(ranked[:k]))
    ideal = sorted((r for r in rels.values() if r > 0), reverse=True)[:k]
    idcg = sum(r / math.log2(i + 2) for i, r in enumerate(ideal))
    return dcg / idcg if idcg else 0.0


def recall_at(ranked: list[str], rels: Mapping[str, int], k: int = 100) -> float:
    relevant = {d for d, r in rels.items() if r > 0}
    return len(relevant.intersection(ranked[:k])) / len(relevant) if relevant else 0.0


def mrr_at(ranked: list[str], rels: Mapping[str, int], k: int = 10) -> float:
    for i, d in enumerate(ranked[:k]):
        if rels.get(d, 0) > 0:
            return 1.0 / (i + 1)
    return 0.0


def build_index(data: BeirData, doc_vectors: np.ndarray, sentence_vectors: np.ndarray) -> IndexData:
    offsets = np.concatenate([[0], np.cumsum([len(s) for s in data.doc_sentences])]).astype(np.int64)
    n = len(data.doc_ids)
    return IndexData(
        chunk_ids=np.arange(n, dtype=np.int64),
        document_ids=np.arange(n, dtype=np.int64),
        is_reference=np.zeros(n, dtype=bool),
        bm25=BM25Index.build(tokenize(t) for t in data.doc_texts),
        vectors=doc_vectors,
        sent_vectors=sentence_vectors,
        sent_offsets=offsets,
    )


@dataclass
class Config:
    name: str
    mode: str
    reranker: Reranker | None = None


@dataclass
class Metrics:
    ndcg10: float
    recall100: float
    mrr10: float
    queries: int
    per_query: dict[str, float] = field(default_factory=dict, repr=False)


def evaluate(searcher: HybridSearcher, data: BeirData, query_vectors: Mapping[str, np.ndarray],
             configs: Iterable[Config], *, limit: int | None = None) -> dict[str, Metrics]:
    qids = sorted(data.queries, key=lambda q: (len(q), q))[: limit or None]
    out: dict[str, Metrics] = {}
    for cfg in configs:
        nd, rc, mr, per = [], [], [], {}
        for qid in qids:
            text, vec, rels = data.queries[qid], query_vectors[qid], data.qrels[qid]

            def ranked(k: int, text: str = text, vec: np.ndarray = vec) -> list[str]:
                hits = searcher.search(text, query_vector=vec, k=k, mode=cfg.mode, reranker=cfg.reranker)
                return [data.doc_ids[h.position] for h in hits]

            top10 = ranked(10)
            nd.append(ndcg_at(top10, rels))
            mr.append(mrr_at(top10, rels))
            rc.append(recall_at(ranked(100), rels))
            per[qid] = nd[-1]
        out[cfg.name] = Metrics(float(np.mean(nd)), float(np.mean(rc)), float(np.mean(mr)), len(qids), per)
    return out


def cached_vectors(path: Path, texts: list[str], embed: Callable[[list[str]], np.ndarray]) -> np.ndarray:
    """Vectors of `texts` from `path` (.npy) if it exists with the right shape, else embed and save."""
    path = Path(path)
    if path.exists():
        cached = np.load(path)
        if cached.shape[0] == len(texts):
            return cached
    vectors = np.asarray(embed(texts), dtype=np.float32)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npy")
    np.save(tmp, vectors)
    tmp.replace(path)
    return vectors
