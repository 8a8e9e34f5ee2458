"""Runs: validation, the answer task (claimed once, always final), Citation rows, retries, `ask`."""

from __future__ import annotations

import json

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command

from agent import services, tasks
from agent.configs import build_roles, get_config
from agent.loop import AgentLoop
from agent.models import Citation, Run, RunStep
from agent.steps import STEP_MODELS, STEP_SCHEMA_VERSION
from agent.types import Outcome, Source
from knowledge.indexing.build import index_rebuild
from tests.factories import make_chunk, make_document

pytestmark = pytest.mark.django_db

TEXTS = [
    ("Doc2query", "doc2query.pdf", 2, "We predict 10 queries using top-k random sampling and append them to each "
     "document. We do not put any special markup to distinguish the original document text from the predicted "
     "queries. The expanded documents are indexed with BM25."),
    ("Sentence-BERT", "sbert.pdf", 4, "We fine-tune SBERT with a siamese network. Our default pooling strategy is "
     "MEAN. We evaluate the pooling strategies MEAN, MAX and CLS."),
    ("Cats", "cats.txt", 1, "Domestic cats sleep for most of the day and hunt small rodents at night."),
]


@pytest.fixture
def indexed(collection):
    for title, name, page, text in TEXTS:
        doc = make_document(collection=collection, title=title, original_name=name)
        make_chunk(document=doc, text=text, page_start=page, page_end=page)
    index_rebuild(collection=collection)
    collection.refresh_from_db()
    return collection


@pytest.mark.parametrize(("question", "code"), [
    ("   ", "empty"),
    ("x" * 5000, "too_long"),
    ("What is BM25?\x00\x01", "binary"),
    ("bad \x1b[31m escape", "binary"),
])
def test_it_rejects_bad_questions_with_a_clear_message(collection, alice, question, code):
    with pytest.raises(ValidationError) as err:
        services.run_create(collection=collection, user=alice, question=question, enqueue=False)
    assert err.value.code == code
    assert Run.objects.count() == 0


def test_it_rejects_an_unknown_configuration(collection, alice):
    with pytest.raises(ValidationError, match="Unknown configuration"):
        services.run_create(collection=collection, user=alice, question="What?", config_name="magic", enqueue=False)


def test_it_records_config_and_hash(collection, alice):
    run = services.run_create(collection=collection, user=alice, question="  What is BM25? ", enqueue=False)
    assert run.question == "What is BM25?"
    assert run.status == Run.Status.QUEUED and run.config_name == "agentic"
    assert run.config["max_retries"] == 2 and run.config["backend"] == "local" and len(run.config_hash) == 64


def test_it_queues_the_task_only_after_commit(collection, alice, django_capture_on_commit_callbacks, monkeypatch):
    sent = []
    monkeypatch.setattr(tasks.answer_run, "apply_async", lambda args=(), **kw: sent.append(args[0]))
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        run = services.run_create(collection=collection, user=alice, question="What is BM25?")
        assert sent == []
    assert len(callbacks) == 1 and sent == [run.pk]


def test_the_task_answers_with_citation_rows(indexed, alice):
    run = services.run_create(collection=indexed, user=alice, question="Why does Doc2query wrap its predicted "
                              "queries in special markup?", enqueue=False)
    tasks.answer_run(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    assert run.outcome == Outcome.FALSE_PREMISE and run.verdict == "FALSE_PREMISE"
    cit = Citation.objects.get(run=run, marker=1)
    assert cit.document_title == "Doc2query" and cit.page == 2 and cit.verified
    assert cit.chunk_text[cit.quote_start:].lower().startswith("we do not put any special markup")
    assert "[1]" in run.answer
    kinds = list(run.steps.values_list("kind", flat=True))
    assert kinds[:3] == ["plan", "retrieve", "audit"] and kinds[-2:] == ["generate", "verify"]
    # Every row reads back as its step model, and writing that model again gives the same JSON.
    for row in run.steps.all():
        step = row.record()
        assert isinstance(step, STEP_MODELS[row.kind]) and row.schema_version == STEP_SCHEMA_VERSION
        assert step.columns() == (row.input, row.output)
    assert run.latency_ms is not None and run.progress_current == run.progress_max > 0
    assert run.context_chunk_ids and run.finished_at is not None


def test_an_llm_rerankers_calls_are_counted_on_the_retrieve_step_and_the_run(indexed, alice, settings, fake_openai):
    settings.OPENAI_BASE_URL, settings.OPENAI_API_KEY, settings.LLM_MAX_RETRIES = fake_openai.base_url, "sk-test", 0
    # The reranker grades the pooled passages in one call; the roles stay local (no calls).
    fake_openai.responder = lambda body: {"scores": [{"id": 1, "score": 8}]}
    run = services.run_create(collection=indexed, user=alice, question="What is the default pooling strategy "
                              "of Sentence-BERT?", config_name="hybrid", enqueue=False)
    Run.objects.filter(pk=run.pk).update(config={**run.config, "rerank": "llm"})
    tasks.answer_run(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.DONE, run.error
    retrieve = run.steps.get(kind="retrieve")
    assert len(fake_openai.chat_requests) == 1
    assert (retrieve.llm_calls, run.llm_calls) == (1, 1)
    assert retrieve.prompt_tokens > 0 and run.prompt_tokens == retrieve.prompt_tokens


def test_a_redelivered_task_does_not_run_the_loop_twice(indexed, alice, monkeypatch):
    run = services.run_create(collection=indexed, user=alice, question="What is the default pooling strategy "
                              "of Sentence-BERT?", enqueue=False)
    calls = []
    original = AgentLoop.run

    def counting(self, question):
        calls.append(question)
        return original(self, question)

    monkeypatch.setattr(AgentLoop, "run", counting)
    tasks.answer_run(run.pk)
    steps = RunStep.objects.filter(run=run).count()
    tasks.answer_run(run.pk)  # the broker delivers it again
    run.refresh_from_db()
    assert len(calls) == 1
    assert RunStep.objects.filter(run=run).count() == steps
    assert run.attempts == 1 and run.status == Run.Status.DONE


def test_a_delivery_that_finds_the_run_taken_leaves_it_alone(indexed, alice):
    run = services.run_create(collection=indexed, user=alice, question="What is BM25?", enqueue=False)
    Run.objects.filter(pk=run.pk).update(status=Run.Status.RUNNING)  # another worker has it
    tasks.answer_run(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.RUNNING and not run.steps.exists()


def test_a_run_that_breaks_ends_failed_with_a_reason(indexed, alice, monkeypatch):
    from agent.retrieval import CollectionRetriever

    def broken(self, query, *, k):
        raise RuntimeError("index file is corrupt")

    monkeypatch.setattr(CollectionRetriever, "retrieve", broken)
    run = services.run_create(collection=indexed, user=alice, question="What is BM25?", enqueue=False)
    tasks.answer_run(run.pk)
    run.refresh_from_db()
    assert run.status == Run.Status.FAILED
    assert "index file is corrupt" in run.error and run.finished_at is not None


def test_the_task_ignores_a_run_deleted_while_queued(collection, alice, caplog):
    run = services.run_create(collection=collection, user=alice, question="What is BM25?", enqueue=False)
    run_id = run.pk
    run.delete()
    with caplog.at_level("INFO", logger="agent.services"):
        tasks.answer_run(run_id)  # the delivery arrives after the delete: nothing raised
    assert f"run {run_id} is gone" in caplog.text
    assert not Run.objects.filter(pk=run_id).exists() and not RunStep.objects.filter(run_id=run_id).exists()


class ScriptedRetriever:
    """A deterministic fake: the question itself finds only a distractor; keyword queries
    that name the missing terms find the evidence."""

    def __init__(self):
        self.queries = []
        self.distractor = Source(chunk_id=1, document_title="Cats", text="Domestic cats sleep for most of the day.")
        self.evidence = Source(chunk_id=2, document_title="MonoT5", file_name="monot5.pdf", page=2,
                               text="We apply a softmax only on the logits of the true and false tokens. Hence, we "
                                    "rerank the documents according to the probabilities assigned to the true token.")

    def retrieve(self, query, *, k):
        self.queries.append(query)
        return [self.distractor] if query.endswith("?") else [self.evidence, self.distractor]


def test_a_retry_finds_evidence_the_first_pass_missed():
    cfg = get_config("agentic")
    retriever = ScriptedRetriever()
    result = AgentLoop(cfg, build_roles(cfg, "local"), retriever, concurrent=False).run(
        "How does the MonoT5 reranker rerank documents using the probabilities of the true token?")
    assert result.retries >= 1
    assert len(retriever.queries) >= 2 and not retriever.queries[1].endswith("?")
    assert result.answer.outcome == Outcome.ANSWER
    assert [c.chunk_id for c in result.answer.citations] == [2]
    # Evidence of the first pass is kept.
    assert [s.chunk_id for s in result.sources] == [1, 2]
    no_retry = get_config("agentic_no_retry")
    single = AgentLoop(no_retry, build_roles(no_retry, "local"), ScriptedRetriever(), concurrent=False).run(
        "How does the MonoT5 reranker rerank documents using the probabilities of the true token?")
    assert single.answer.outcome == Outcome.REFUSAL


def test_the_baseline_always_answers_from_the_top_five():
    cfg = get_config("hybrid")
    retriever = ScriptedRetriever()
    question = "What do domestic cats do for most of the day?"
    result = AgentLoop(cfg, build_roles(cfg, "local"), retriever, concurrent=False).run(question)
    assert result.answer.outcome == Outcome.ANSWER and result.audit is None
    assert retriever.queries == [question]


def test_the_baselines_answer_about_something_else_is_dropped_by_the_verifier():
    # No audit, one search, and an answer drafted from whatever came back; the verifier still
    # drops a sentence whose quote is not about the question (agent.verify.relevance).
    cfg = get_config("hybrid")
    retriever = ScriptedRetriever()
    result = AgentLoop(cfg, build_roles(cfg, "local"), retriever, concurrent=False).run("Who won the World Cup?")
    assert result.audit is None and retriever.queries == ["Who won the World Cup?"]
    assert result.answer.outcome == Outcome.REFUSAL and not result.answer.citations
    assert any(d.startswith("off the question") for d in result.answer.dropped), result.answer.dropped


def test_ask_prints_the_run_as_json(indexed, capsys):
    call_command("ask", "--collection", indexed.slug, "--json", "--config", "agentic",
                 "What is the default pooling strategy of Sentence-BERT?")
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "done" and data["outcome"] in ("ANSWER", "PARTIAL")
    assert data["citations"][0]["file_name"] == "sbert.pdf" and data["citations"][0]["page"] == 4
    assert "MEAN" in data["citations"][0]["chunk_text"]
    assert {s["kind"] for s in data["steps"]} >= {"plan", "retrieve", "audit", "generate", "verify"}
    assert data["retrieved"] and data["latency_ms"] is not None


def test_ask_answers_a_file_of_questions_one_json_line_each(indexed, tmp_path, capsys):
    path = tmp_path / "q.json"
    oos = "What nDCG@10 does Doc2query reach on the BEIR benchmark?"  # a near miss: no BEIR here
    path.write_text(json.dumps([oos, {"question": "What do domestic cats hunt?"}]))
    call_command("ask", "--collection", indexed.slug, "--questions", str(path))
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [d["question"] for d in lines] == [oos, "What do domestic cats hunt?"]
    assert lines[0]["outcome"] == "REFUSAL"
    # A refusal says what was searched and shows the closest evidence, cited.
    assert "Searched for" in lines[0]["answer"] and "closest evidence" in lines[0]["answer"]
    assert lines[0]["citations"] and lines[0]["citations"][0]["verified"]
    assert lines[1]["outcome"] in ("ANSWER", "PARTIAL")
