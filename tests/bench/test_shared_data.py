"""bench/_shared_data.py: where the bench scripts find the shared data, and what they say
when it is nowhere."""

from __future__ import annotations

import sys

import pytest

from tests.agent.test_blind_spans import load_bench


@pytest.fixture
def shared(monkeypatch, tmp_path):
    """The module, loaded afresh, with its two candidate folders moved under tmp_path."""
    monkeypatch.delenv("GROUNDED_SHARED_DATA", raising=False)
    module = load_bench("_shared_data")
    monkeypatch.setattr(module, "CANDIDATES", (tmp_path / "beside" / "data", tmp_path / "var" / "shared" / "data"))
    yield module
    sys.modules.pop("_shared_data", None)


def test_the_environment_variable_wins(shared, monkeypatch, tmp_path):
    (tmp_path / "beside" / "data").mkdir(parents=True)
    monkeypatch.setenv("GROUNDED_SHARED_DATA", str(tmp_path / "elsewhere"))
    assert shared.shared_data() == tmp_path / "elsewhere"


def test_the_folder_beside_the_checkout_comes_before_a_link_in_var(shared, tmp_path):
    (tmp_path / "var" / "shared" / "data").mkdir(parents=True)
    assert shared.shared_data() == tmp_path / "var" / "shared" / "data"
    (tmp_path / "beside" / "data").mkdir(parents=True)
    assert shared.shared_data() == tmp_path / "beside" / "data"


def test_nothing_found_says_what_to_set(shared, tmp_path):
    assert shared.shared_data() == tmp_path / "beside" / "data"
    with pytest.raises(SystemExit) as ended:
        shared.require(shared.shared_data() / "papers")
    message = str(ended.value.code)
    assert "GROUNDED_SHARED_DATA=" in message and "ln -s" in message and str(tmp_path / "var" / "shared") in message


def test_a_part_that_is_there_is_returned(shared, tmp_path):
    (tmp_path / "beside" / "data" / "papers").mkdir(parents=True)
    assert shared.require(shared.shared_data() / "papers") == tmp_path / "beside" / "data" / "papers"
