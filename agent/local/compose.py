"""What an answer states of its audited evidence (ComposeParams): the generator composes by
it, and the clarify rule reads it to know which sentences an answer would quote. A module of
its own so that both read one setting (the generator reaches the LLM roles, which the pure
auditor and clarify modules must not import)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ComposeParams:
    """How many of a fact's audited sentences the answer states, and which neighbours it
    adds. Chosen by bench/calibrate_compose.py on the calibration halves (docs/benchmarks.md,
    "Answer composition", stop 27)."""

    # At most this many of each fact's audited sentences (the auditor lists them best first,
    # AuditorParams.sentences_per_fact of them).
    per_fact: int = 2
    # A fact's next-best sentence is stated when its P(answers) is within `margin` of the best
    # one's, or at least `ratio` times it; otherwise it is padding. 0.3 (was 0.08 by hand):
    # the second-ranked sentence held the gold span where the best did not often enough.
    margin: float = 0.3
    ratio: float = 1.01
    # Which sentence after a fact's best one (in its chunk) the answer reads next
    # (follow_on_sentence): "" none; "type" when the best one lacks the kind of answer its
    # fact asks for and the next one holds it; "value" when the next one names a value (a
    # number, a name, an identifier) that neither the fact nor the best one has; "next"
    # the next answer-eligible sentence whatever it says.
    follow_on: str = ""
    # The order in which the facts' second-best sentences take the slots left: "fact" (the
    # first fact's first) or "score" (the highest P(answers) first, whatever its fact).
    second_order: str = "score"
