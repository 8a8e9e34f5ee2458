"""Fixtures for the agent tests: a fake OpenAI-compatible server and a client bound to it."""

from __future__ import annotations

import pytest

from tests.fake_openai import FakeOpenAI


@pytest.fixture
def fake_openai():
    """A fake OpenAI server on 127.0.0.1 (tests/fake_openai.py); queue replies on it."""
    with FakeOpenAI() as server:
        yield server


@pytest.fixture
def llm_settings(fake_openai):
    """LLM settings pointing at the fake server, with short timeouts so failures are quick."""
    from agent.llm import LLMSettings

    return LLMSettings(
        model="gpt-4o-mini",
        base_url=fake_openai.base_url,
        api_key="sk-test",
        timeout=2.0,
        max_retries=3,
        prices={"gpt-4o-mini": (0.15, 0.60)},
        budget_seconds=10.0,
        backoff_base=0.05,
    )


@pytest.fixture
def llm_client(llm_settings):
    from agent.llm import LLMClient

    return LLMClient(llm_settings)
