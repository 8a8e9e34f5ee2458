"""Web search routing (issue 18): does the loop stay on the collection when the papers hold the
answer, go to the web when they do not, and answer from the (fake) web with verified citations?

    .venv/bin/python bench/web_routing.py              # ingest (or reuse) the papers, then run
    .venv/bin/python bench/web_routing.py --out /tmp/web-routing.json

A labelled set over four shared papers: IN questions are about the papers, WEB questions
about things they do not contain. The web is a local fake SearxNG plus article-like HTML
pages on 127.0.0.1 (tests/fake_web.py), one page per WEB question and two distractors; the
fetcher reaches it only through PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS (DEBUG only).
Each question is an ordinary Run (run_create + run_execute in-process, local backend), with
web search enabled for the collection and allowed by the asker.

Figures: the share routed correctly (IN -> collection only, WEB -> web), and the share of WEB
questions answered (ANSWER or PARTIAL) with at least one verified citation of the right page.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import _devbench_common as common

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.fake_web import FakeWeb, Page, article  # noqa: E402

PAPERS = ["1904.08375v2_doc2query", "1908.10084v1_sentence_bert", "2003.06713v1_monot5_doc_ranking_seq2seq",
          "2405.20139v1_gnn_rag"]

IN = [
    "When a pretrained T5 model is used as a passage reranker, how is the model's output turned into a relevance score?",
    "Which target tokens does the T5 reranker generate for relevant and non-relevant documents?",
    "Which datasets is document expansion by query prediction evaluated on?",
    "What model does Doc2query use to predict queries for a document?",
    "Which pooling strategies does Sentence-BERT compare?",
    "How long does finding the most similar pair in a collection of 10,000 sentences take with BERT?",
    "What does GNN-RAG use the graph neural network for?",
    "Which KGQA benchmarks is GNN-RAG evaluated on?",
]

# question, page path, title, paragraphs (the answer is in the second one).
WEB = [
    ("When did the Eiffel Tower open to the public?", "/wiki/eiffel-tower", "Eiffel Tower", [
        "The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris, France.",
        "The Eiffel Tower opened to the public on 31 March 1889, after two years of construction.",
        "It was designed by the engineering company of Gustave Eiffel for the 1889 World's Fair."]),
    ("What is the boiling point of liquid nitrogen at sea level?", "/wiki/liquid-nitrogen", "Liquid nitrogen", [
        "Liquid nitrogen is nitrogen in a liquid state at a low temperature.",
        "At sea level, liquid nitrogen boils at minus 196 degrees Celsius, which is 77 kelvin.",
        "It is used as a coolant for computers, in cryotherapy and to preserve biological samples."]),
    ("Who wrote the novel Middlemarch?", "/wiki/middlemarch", "Middlemarch", [
        "Middlemarch, A Study of Provincial Life is a novel set in a fictional English town in 1829 to 1832.",
        "The novel Middlemarch was written by George Eliot, the pen name of Mary Ann Evans.",
        "It was first published in eight instalments in 1871 and 1872."]),
    ("What is the capital of Australia?", "/wiki/canberra", "Canberra", [
        "Australia is a federation of six states and two mainland territories.",
        "Canberra is the capital of Australia and was chosen as a compromise between Sydney and Melbourne.",
        "The city was designed by the architects Walter Burley Griffin and Marion Mahony Griffin."]),
    ("What is the speed of sound in dry air at 20 degrees Celsius?", "/wiki/speed-of-sound", "Speed of sound", [
        "The speed of sound is the distance travelled per unit of time by a sound wave through a medium.",
        "In dry air at 20 degrees Celsius, the speed of sound is 343 metres per second.",
        "Sound travels faster in liquids and solids than in gases."]),
    ("In which year did Apollo 11 land on the Moon?", "/wiki/apollo-11", "Apollo 11", [
        "Apollo 11 was the American spaceflight that first landed humans on the Moon.",
        "Apollo 11 landed on the Moon on 20 July 1969, with Neil Armstrong and Buzz Aldrin aboard the lunar module.",
        "Michael Collins stayed in lunar orbit in the command module Columbia."]),
    ("What is the chemical formula of table salt?", "/wiki/sodium-chloride", "Sodium chloride", [
        "Sodium chloride, commonly known as table salt, is an ionic compound.",
        "The chemical formula of table salt is NaCl, one sodium ion for each chloride ion.",
        "Sea water holds about 35 grams of dissolved salts per litre."]),
    ("How many bones are in the adult human skeleton?", "/wiki/human-skeleton", "Human skeleton", [
        "The human skeleton is the internal framework of the human body.",
        "The adult human skeleton has 206 bones, while a newborn has around 270.",
        "Bones fuse together during development, which reduces the count."]),
    ("What is the tallest mountain in Africa?", "/wiki/kilimanjaro", "Mount Kilimanjaro", [
        "Mount Kilimanjaro is a dormant volcano in Tanzania.",
        "Mount Kilimanjaro is the tallest mountain in Africa, rising 5,895 metres above sea level.",
        "It has three volcanic cones: Kibo, Mawenzi and Shira."]),
    ("How long is the Great Wall of China?", "/wiki/great-wall", "Great Wall of China", [
        "The Great Wall of China is a series of fortifications built across northern China.",
        "A 2012 survey measured the Great Wall of China with all its branches at 21,196 kilometres long.",
        "Its best-known sections were built during the Ming dynasty."]),
    # Near the papers' field: the papers mention these subjects but do not hold the answer,
    # so the collection's weak matches must not be mistaken for evidence.
    ("Who developed the BM25 ranking function?", "/wiki/okapi-bm25", "Okapi BM25", [
        "Okapi BM25 is a ranking function used by search engines to estimate the relevance of documents.",
        "BM25 was developed by Stephen Robertson, Karen Sparck Jones and colleagues at City University London.",
        "The name comes from the Okapi information retrieval system, where it was first implemented."]),
    ("What is the maximum input length of the original BERT model in tokens?", "/wiki/bert-model", "BERT", [
        "BERT is a language model introduced by researchers at Google in October 2018.",
        "The original BERT model accepts a maximum input length of 512 tokens.",
        "Longer texts have to be truncated or split into several windows."]),
    ("Which company developed the T5 model?", "/wiki/t5-model", "T5 (language model)", [
        "T5, the Text-to-Text Transfer Transformer, casts every language task as text generation.",
        "The T5 model was developed by Google Research and released in 2019.",
        "It was trained on the Colossal Clean Crawled Corpus, known as C4."]),
    ("How many parameters does GPT-3 have?", "/wiki/gpt-3", "GPT-3", [
        "GPT-3 is a large language model released by OpenAI in 2020.",
        "GPT-3 has 175 billion parameters, more than a hundred times as many as GPT-2.",
        "It is a decoder-only transformer trained to predict the next token."]),
]
DISTRACTORS = [
    ("/blog/travel-tips", "Travel tips", ["Pack light and carry a water bottle when you visit a tower or a mountain.",
                                           "Book tickets early in the summer months."]),
    ("/news/science", "Science news", ["Researchers measured the speed of a new chemical reaction in salt water.",
                                        "The study was published in a journal this year."]),
]


def build_web(web: FakeWeb) -> None:
    for _, path, title, paragraphs in WEB:
        web.add(path, Page(body=article(title, paragraphs), title=title))
    for path, title, paragraphs in DISTRACTORS:
        web.add(path, Page(body=article(title, paragraphs), title=title))


def ask(collection, user, question: str):
    from agent.services import run_create, run_execute

    run = run_create(collection=collection, user=user, question=question, enqueue=False, web_allowed=True)
    started = time.perf_counter()
    run = run_execute(run_id=run.pk)
    return run, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--var", type=Path, default=ROOT / "var" / "bench-web-routing")
    parser.add_argument("--out", type=Path)
    parser.add_argument("--no-partial", action="store_true",
                        help="PORTAL_WEB_SEARCH_ON_PARTIAL=0: only an insufficient verdict goes to the web")
    args = parser.parse_args()
    with FakeWeb() as web:
        build_web(web)
        os.environ.update({"PORTAL_DEBUG": "1", "PORTAL_WEB_SEARCH_PROVIDER": "searxng",
                           "PORTAL_WEB_SEARCH_URL": web.base_url, "PORTAL_WEB_SEARCH_ALLOW_LOOPBACK_FOR_TESTS": "1",
                           "PORTAL_WEB_SEARCH_ON_PARTIAL": "0" if args.no_partial else "1"})
        common.django_setup(args.var)
        from agent.models import RunStep

        user, collection = common.collection_with_papers(PAPERS, slug="web-routing")
        collection.web_search_enabled = True
        collection.save(update_fields=["web_search_enabled"])
        rows = []
        labelled = [(q, "kb_only", "") for q in IN] + [(q, "web", path) for q, path, _, _ in WEB]
        for question, expected, path in labelled:
            searches = len(web.searches)
            run, seconds = ask(collection, user, question)
            route = run.steps.filter(kind=RunStep.Kind.ROUTE).first()
            decision = route.record().decision.value if route else "none"
            web_cites = [c for c in run.citations.all() if c.source_url]
            right_page = [c for c in web_cites if c.verified and path and c.source_url.endswith(path)]
            rows.append({
                "question": question, "expected_route": expected, "route": decision,
                "collection_verdict": route.input.get("verdict") if route else "",
                "route_reason": route.record().reason if route else "", "outcome": run.outcome,
                "answer": run.answer, "web_citations": [(c.source_url, c.quote) for c in web_cites],
                "answered_from_right_page": run.outcome in ("ANSWER", "PARTIAL") and bool(right_page),
                "searched": len(web.searches) > searches, "seconds": round(seconds, 2),
            })
            print(f"{expected:>7} -> {decision:<7} {run.outcome:<13} {seconds:5.1f}s  {question}", flush=True)
    in_rows = [r for r in rows if r["expected_route"] == "kb_only"]
    web_rows = [r for r in rows if r["expected_route"] == "web"]
    summary = {
        "route_on_partial": not args.no_partial,
        "questions": len(rows),
        "routed_correctly": sum(r["route"] == r["expected_route"] for r in rows),
        "in_collection_routed_kb_only": sum(r["route"] == "kb_only" for r in in_rows),
        "in_collection_searched_the_web": sum(r["searched"] for r in in_rows),
        "needs_web_routed_web": sum(r["route"] == "web" for r in web_rows),
        "needs_web_answered_with_verified_web_citation": sum(r["answered_from_right_page"] for r in web_rows),
        "median_seconds_in": statistics.median(r["seconds"] for r in in_rows),
        "median_seconds_web": statistics.median(r["seconds"] for r in web_rows),
        "load": Path("/proc/loadavg").read_text().split()[:3],
    }
    print(json.dumps(summary, indent=2))
    if args.out:
        args.out.write_text(json.dumps({"summary": summary, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()
