"""Fixtures for the local roles: the real offline embedder (no database) and a Source maker."""

from __future__ import annotations

import pytest

from agent.types import Source


@pytest.fixture(scope="session")
def embed():
    """The project's local sentence embedder, called directly (no EmbeddingCache, no database)."""
    from agent.local.embed import get_embed

    return get_embed()


def make_source(chunk_id: int, text: str, *, title: str = "A Study of Widget Parsers", document_id: int = 1,
                section: str = "") -> Source:
    return Source(chunk_id=chunk_id, document_id=document_id, document_title=title, text=text, section=section,
                  query="test query")


@pytest.fixture
def pipeline(embed):
    """The offline roles end to end on given sources: plan, audit, generate, verify."""
    from agent.local.auditor import LocalAuditor
    from agent.local.generator import ExtractiveGenerator
    from agent.local.planner import RulePlanner
    from agent.verify import CitationVerifier

    planner, auditor, generator, verifier = (RulePlanner(), LocalAuditor(embed=embed),
                                             ExtractiveGenerator(embed=embed), CitationVerifier())

    def run(question: str, sources):
        plan = planner.plan(question)
        audit = auditor.audit(question, plan, sources, can_retry=False)
        return audit, verifier.verify(generator.generate(question, sources, audit), sources)

    return run
