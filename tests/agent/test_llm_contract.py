"""The contract with a real language model: llama-server and the smallest shipped model,
through the real Celery worker, on a real paper.

Three questions go through the `embedded` backend exactly as `make run` would send them.
Quality is not asserted (docs/benchmarks.md measures it); the contract is: every run ends
DONE, every role reply parsed into its schema on the first try in json_schema mode (no
repair request, no fallback to JSON mode), and every citation that reached the answer is
verified. The server and model come from `make llm` (.ci/run runs it before the tests);
without them the test skips, and fails in CI.
"""

from __future__ import annotations

import os
import socket

import pytest
from django.conf import settings as django_settings

from agent import services
from agent.embedded import build, catalog, server
from agent.models import Run
from tests.conftest import skip_or_fail

pytestmark = [pytest.mark.llm, pytest.mark.worker, pytest.mark.shared, pytest.mark.slow]

# The smallest shipped model whose replies pass the contract (docs/llm.md, "CI").
CONTRACT_MODEL = os.environ.get("GROUNDED_CONTRACT_MODEL", "smollm2-135m-instruct-q4_1")
QUESTIONS = (
    "What does Doc2query append to each document before it is indexed?",
    "Which ranking function scores the expanded documents?",
    "Which passage collection is the query predictor trained on?",
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def embedded_server(tmp_path_factory):
    """llama-server with the contract model on a free 127.0.0.1 port, for this module."""
    cache = django_settings.LLM_CACHE
    model = catalog.MODELS[CONTRACT_MODEL]
    binary = build.server_binary(cache)
    if not binary.is_file() or not catalog.is_ready(model, cache):
        skip_or_fail(f"llama-server or {model.title} is not built in {cache}: run `make llm "
                     f"EMBEDDED_MODEL={model.key}`")
    spec = server.ServerSpec(binary=binary, model_path=catalog.model_path(model, cache), alias=model.key,
                             port=_free_port())
    log = tmp_path_factory.mktemp("llama") / "server.log"
    proc = server.start(spec, log=log)
    try:
        server.wait_ready(proc, spec.base_url, timeout=120, log=log)
        yield spec
    finally:
        server.stop(proc)


@pytest.fixture
def embedded_backend(embedded_server, settings, monkeypatch):
    """This process and the worker it starts both use the `embedded` backend on that server."""
    for name, value in {
        "PORTAL_LLM_BACKEND": "embedded",
        "PORTAL_LLM_PORT": str(embedded_server.port),
        "PORTAL_LLM_EMBEDDED_MODEL": embedded_server.alias,
        "PORTAL_LLM_CACHE": str(django_settings.LLM_CACHE),
    }.items():
        monkeypatch.setenv(name, value)
    settings.LLM_BACKEND = "embedded"
    settings.LLM_MODEL = embedded_server.alias
    settings.OPENAI_BASE_URL = f"{embedded_server.base_url}/v1"
    return embedded_server


@pytest.mark.django_db(transaction=True)
@pytest.mark.timeout(900)
def test_the_embedded_model_answers_through_the_worker_within_its_schemas(
    embedded_backend, ready_collection, alice, celery_worker_process,
):
    runs = [services.run_create(collection=ready_collection, user=alice, question=q, config_name="agentic")
            for q in QUESTIONS]
    ids = [r.pk for r in runs]
    celery_worker_process(lambda: Run.objects.filter(pk__in=ids, status__in=Run.FINAL).count() == len(ids),
                          timeout=780, interval=1.0)
    log = celery_worker_process.log.read_text()

    for run in Run.objects.filter(pk__in=ids).prefetch_related("citations"):
        assert run.status == Run.Status.DONE, f"{run.question!r}: {run.error}"
        assert run.config["backend"] == "embedded"
        assert run.config["model"] == embedded_backend.alias
        assert run.llm_calls >= 1, f"{run.question!r} never reached the model"
        assert all(c.verified for c in run.citations.all()), [(c.marker, c.quote) for c in run.citations.all()]
    # Each role reply parsed into its schema at once, with the server's json_schema grammar.
    assert "did not match" not in log, log[-4000:]
    assert "does not take response_format" not in log, log[-4000:]
