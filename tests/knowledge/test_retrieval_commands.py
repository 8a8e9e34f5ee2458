"""manage.py search and eval_retrieval, and the BEIR metrics they report."""

from __future__ import annotations

import json
import math
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from knowledge.indexing.build import index_rebuild
from knowledge.retrieval.beir import mrr_at, ndcg_at, recall_at
from tests.factories import make_chunk, make_document


def test_metrics_match_hand_computed_values():
    rels = {"a": 1, "b": 1}
    # Relevant at ranks 2 and 4: DCG = 1/log2(3) + 1/log2(5); IDCG = 1 + 1/log2(3).
    assert ndcg_at(["x", "a", "y", "b"], rels) == pytest.approx(
        (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3)))
    assert mrr_at(["x", "a", "y", "b"], rels) == 0.5
    assert recall_at(["x", "a", "y"], rels) == 0.5
    assert ndcg_at(["x"] * 10 + ["a"], rels) == 0.0  # rank 11 is past the cut-off
    assert mrr_at(["x"] * 10 + ["a"], rels) == 0.0


@pytest.mark.django_db
def test_search_command_prints_each_retrievers_rank(collection):
    for text in ("Okapi BM25 ranks by term frequency.", "Cats sleep most of the day.",
                 "Dense retrievers compare embeddings.", "Zebrafish regrow heart tissue."):
        make_chunk(document=make_document(collection=collection, title=text[:10]), text=text)
    index_rebuild(collection=collection)
    out = StringIO()
    call_command("search", "okapi term frequency", "--collection", collection.slug, "-k", "2", "--json", stdout=out)
    result = json.loads(out.getvalue())
    assert result["hits"][0]["text"] == "Okapi BM25 ranks by term frequency."
    assert set(result["hits"][0]["ranks"]) == {"bm25", "dense"}
    out = StringIO()
    call_command("search", "okapi", "--collection", collection.slug, "--mode", "rerank", stdout=out)
    assert "bm25#1" in out.getvalue() and "sentence#" in out.getvalue()
    with pytest.raises(CommandError):
        call_command("search", "x", "--collection", "no-such-collection")


@pytest.mark.django_db
def test_eval_retrieval_reports_metrics_and_reuses_its_vector_cache(tmp_path, settings):
    settings.VAR_DIR = tmp_path / "var"
    beir = tmp_path / "beir"
    (beir / "qrels").mkdir(parents=True)
    docs = [("d1", "Okapi BM25", "BM25 ranks documents by term frequency."),
            ("d2", "Cats", "Cats sleep most of the day."),
            ("d3", "Zebrafish", "Zebrafish regrow heart tissue after injury.")]
    (beir / "corpus.jsonl").write_text("\n".join(json.dumps({"_id": i, "title": t, "text": x}) for i, t, x in docs))
    (beir / "queries.jsonl").write_text("\n".join(json.dumps(q) for q in (
        {"_id": "q1", "text": "term frequency ranking"}, {"_id": "q2", "text": "fish heart regeneration"})))
    (beir / "qrels" / "test.tsv").write_text("query-id\tcorpus-id\tscore\nq1\td1\t1\nq2\td3\t1\n")
    out = StringIO()
    call_command("eval_retrieval", "--beir", str(beir), "--json", stdout=out)
    report = json.loads(out.getvalue())
    assert report["metrics"]["bm25"]["ndcg@10"] == 1.0
    assert report["metrics"]["rrf"]["queries"] == 2
    assert set(report["metrics"]) == {"bm25", "dense", "rrf", "minmax", "rrf+sentence", "minmax+sentence"}
    cached = sorted(p.name for p in (settings.VAR_DIR / "retrieval_eval").iterdir())
    assert len(cached) == 3  # documents, sentences, queries
    err = StringIO()
    call_command("eval_retrieval", "--beir", str(beir), "--json", stdout=StringIO(), stderr=err)
    assert "embedding" not in err.getvalue()  # the second run embeds nothing
    for bad in ("1.0,0.7", "bm25=1,colbert=2", "dense=-1"):
        with pytest.raises(CommandError, match="--rrf-weights"):
            call_command("eval_retrieval", "--beir", str(beir), "--rrf-weights", bad, stdout=StringIO())
