"""Retrieval quality on a BEIR data set: nDCG@10, Recall@100, MRR@10 per configuration.

    manage.py eval_retrieval --beir ../shared/data/scifact/beir [--json] [--limit N] [--split test]

Vectors of the corpus, its sentences and the queries are cached under
VAR_DIR/retrieval_eval/ keyed by embedding model and content hash, so only the first run
embeds (minutes on 2 cores); later runs take seconds.
"""

from __future__ import annotations

import hashlib
import json
import time
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError


def _weights(text: str) -> dict[str, float]:
    """ "bm25=1,dense=0.7" -> {"bm25": 1.0, "dense": 0.7}."""
    out = {}
    for part in filter(None, text.split(",")):
        name, _, value = part.partition("=")
        name = name.strip()
        try:
            out[name] = float(value)
        except ValueError:
            raise CommandError(f"--rrf-weights takes name=number pairs such as bm25=1,dense=0.7, not {text!r}.") from None
        if name not in ("bm25", "dense") or out[name] < 0:
            raise CommandError(f"--rrf-weights: {part!r} must weigh bm25 or dense by a number >= 0.")
    return out


class Command(BaseCommand):
    help = "Evaluate BM25, dense, hybrid and reranked retrieval on a BEIR data set."

    def add_arguments(self, parser):  # type: ignore[no-untyped-def]
        parser.add_argument("--beir", required=True, help="folder with corpus.jsonl, queries.jsonl, qrels/")
        parser.add_argument("--split", default="test", help="qrels split (test; tune on train)")
        parser.add_argument("--sentences", default=None,
                            help="JSONL of per-document sentences (default: ../corpus_sentences.jsonl if present)")
        parser.add_argument("--limit", type=int, default=None, help="evaluate only the first N queries")
        parser.add_argument("--json", action="store_true", help="print the metrics as JSON")
        parser.add_argument("--rrf-weights", default="bm25=1,dense=1", help="e.g. bm25=1,dense=0.7")
        parser.add_argument("--alpha", type=float, default=0.7, help="dense weight of min-max fusion")
        parser.add_argument("--beta", type=float, default=None, help="sentence weight of the sentence reranker")
        parser.add_argument("--llm", action="store_true", help="also evaluate the LLM reranker (costs calls)")
        parser.add_argument("--no-rerank", action="store_true",
                            help="skip the rerankers (and embedding the corpus's sentences)")

    def handle(self, *args, **opts):  # type: ignore[no-untyped-def]
        import numpy as np

        from knowledge.embedding_cache import default_embedder
        from knowledge.retrieval.beir import Config, build_index, cached_vectors, evaluate, load_beir
        from knowledge.retrieval.engine import HybridSearcher
        from knowledge.retrieval.rerank import SENTENCE_BETA, SentenceReranker

        weights = _weights(opts["rrf_weights"])  # before minutes of embedding, not after
        folder = Path(opts["beir"])
        if not (folder / "corpus.jsonl").exists():
            raise CommandError(f"{folder} has no corpus.jsonl: is it a BEIR folder?")
        sentences = Path(opts["sentences"]) if opts["sentences"] else folder.parent / "corpus_sentences.jsonl"
        started = time.monotonic()
        data = load_beir(folder, split=opts["split"], sentences=sentences)
        embedder = default_embedder()
        key = hashlib.sha256(f"{embedder.model_id}\n{data.corpus_hash}".encode()).hexdigest()[:20]
        cache = Path(settings.VAR_DIR) / "retrieval_eval"
        all_sentences = [s for doc in data.doc_sentences for s in doc]
        qids = sorted(data.queries)
        qkey = hashlib.sha256(f"{embedder.model_id}\n{json.dumps([data.queries[q] for q in qids])}".encode()).hexdigest()[:20]

        def embed(texts: list[str]):  # type: ignore[no-untyped-def]
            self.stderr.write(f"embedding {len(texts)} texts with {embedder.model_id} (cached afterwards)...")
            return embedder.embed(texts)

        docs = cached_vectors(cache / f"{key}-docs.npy", data.doc_texts, embed)
        if opts["no_rerank"]:
            sents = np.zeros((0, embedder.dim), dtype=np.float32)
            data.doc_sentences = [[] for _ in data.doc_ids]
        else:
            sents = cached_vectors(cache / f"{key}-sentences.npy", all_sentences, embed)
        qvecs = cached_vectors(cache / f"{qkey}-queries.npy", [data.queries[q] for q in qids], embed)
        query_vectors = dict(zip(qids, qvecs, strict=True))
        ready = time.monotonic()

        searcher = HybridSearcher(build_index(data, docs, sents), weights=weights,
                                  alpha=opts["alpha"])
        beta = SENTENCE_BETA if opts["beta"] is None else opts["beta"]
        configs = [
            Config("bm25", "bm25"),
            Config("dense", "dense"),
            Config("rrf", "rrf"),
            Config("minmax", "minmax"),
        ]
        if not opts["no_rerank"]:
            configs += [Config("rrf+sentence", "rrf", SentenceReranker(beta=beta)),
                        Config("minmax+sentence", "minmax", SentenceReranker(beta=beta))]
        if opts["llm"]:
            from knowledge.indexing.search import default_llm_scorer
            from knowledge.retrieval.rerank import LLMReranker

            grader = default_llm_scorer()
            configs.append(Config("rrf+llm", "rrf", LLMReranker(grader, lambda p: data.doc_texts[p])))
        results = evaluate(searcher, data, query_vectors, configs, limit=opts["limit"])
        finished = time.monotonic()
        report = {
            "dataset": str(folder), "split": opts["split"], "documents": len(data.doc_ids),
            "embedding_model": embedder.model_id,
            "rrf_weights": searcher.weights, "alpha": opts["alpha"], "beta": beta,
            "seconds": {"load_and_embed": round(ready - started, 1), "evaluate": round(finished - ready, 1)},
            "metrics": {name: {"ndcg@10": round(m.ndcg10, 4), "recall@100": round(m.recall100, 4),
                               "mrr@10": round(m.mrr10, 4), "queries": m.queries}
                        for name, m in results.items()},
        }
        if opts["json"]:
            self.stdout.write(json.dumps(report, indent=1))
            return
        self.stdout.write(f"{folder} ({opts['split']}, {report['documents']} documents, "
                          f"{embedder.model_id})")
        self.stdout.write(f"{'configuration':<18} {'nDCG@10':>8} {'R@100':>8} {'MRR@10':>8}  queries")
        for name, m in report["metrics"].items():
            self.stdout.write(f"{name:<18} {m['ndcg@10']:>8.4f} {m['recall@100']:>8.4f} {m['mrr@10']:>8.4f}  "
                              f"{m['queries']}")
        self.stdout.write(f"embed/load {report['seconds']['load_and_embed']}s, "
                          f"evaluate {report['seconds']['evaluate']}s")
