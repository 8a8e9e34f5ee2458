"""The local roles' embedding cache: one per embedding space, so two models' vectors never mix."""

from __future__ import annotations

import numpy as np

from agent.local.embed import cached


def _constant_model(value: float, calls: list[int]):
    def embed(texts):
        calls.append(len(texts))
        return np.full((len(texts), 384), value, dtype=np.float32)

    return embed


def test_two_unnamed_models_keep_their_own_vectors():
    calls_a, calls_b = [], []
    first, second = cached(_constant_model(1.0, calls_a)), cached(_constant_model(2.0, calls_b))

    assert first(["a sentence"])[0, 0] == 1.0
    assert second(["a sentence"])[0, 0] == 2.0  # not the first model's cached row
    assert first(["a sentence"])[0, 0] == 1.0
    assert calls_a == [1] and calls_b == [1]  # each model ran once; the repeat came from its cache


def test_wrappers_of_one_named_space_share_rows():
    calls = []
    space = "test-space-shared-rows"
    cached(_constant_model(3.0, calls), space)(["shared text"])
    again = cached(_constant_model(4.0, calls), space)(["shared text"])

    assert again[0, 0] == 3.0 and calls == [1]
