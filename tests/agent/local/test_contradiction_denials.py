"""Recognising a correction: a denial of training denies each kind of training and
an acronym the sentence negates stands for the words it spells; a negated finding ("we do not
observe ...") denies its whole object; an alternative chosen may share the claim's verb; a
fronted "Instead of B, A" and a choice of "A over B" set B aside; a value a passage gives a
symbol ("top-k ... we set k = 3") is read in the symbol's place by the premise check. Sentences written for these
tests (none comes from a benchmark set); the expected failures are corrections these surface
cues cannot read."""

from __future__ import annotations

import pytest

from agent.local.contradiction import contradiction_cue, number_substitution, rankings
from agent.local.contradiction.negation import denied_findings
from agent.local.contradiction.symbols import bound_readings
from agent.local.contradiction.terms import kind_of, spelled_by
from agent.types import Outcome, Verdict


@pytest.mark.parametrize(
    "claim, sentence, cue",
    [
        # Denying training denies fine-tuning; "the LM" is the claim's "language model".
        ("Kestrel fine-tunes the language model on shipping manifests",
         "Kestrel reads shipping manifests with a frozen LM, without any additional training of the LM.", "negation"),
        ("Kestrel pretrains its encoder on customs forms",
         "The encoder is used as released, without any training on customs forms.", "negation"),
        # An acronym is one term: naming the language model alone is not two negated terms.
        ("Kestrel ranks the manifests with a language model", "Kestrel ranks the manifests, unlike systems with no LM.",
         ""),
        # Training something else is not denied by a denial of fine-tuning (no kind the other way).
        ("Kestrel trains the tagger on manifests", "Kestrel does not fine-tune the parser on manifests.", ""),
    ],
)
def test_a_denied_training_denies_each_kind_of_training(claim, sentence, cue):
    assert contradiction_cue(claim, sentence) == cue


def test_kinds_and_acronyms():
    assert kind_of("fine-tun") == "train" and kind_of("pretrain") == "train" and kind_of("decod") == ""
    assert spelled_by("lm", "Kestrel fine-tunes the language model") == {"languag", "model"}
    assert spelled_by("lm", "Kestrel fine-tunes the tagger") == set()


@pytest.mark.parametrize(
    "sentence, cue",
    [
        # "region" is the seventh content word after "not": a finding's object is a whole phrase.
        ("We do not observe any obvious dependence of the eviction schedule on the user region.", "negation"),
        ("We find no sign that the eviction schedule follows the user region in any way.", "negation"),
        # Words the sentence states outside the negated finding are not denied by it.
        ("Entries are grouped by user region, and we see no obvious dependence of the eviction schedule on the user "
         "region.", ""),
        # A negated verb that is no finding keeps the short reach.
        ("We do not tune the eviction schedule, a fixed timer chosen once, on the user region.", ""),
    ],
)
def test_a_negated_finding_denies_its_whole_object(sentence, cue):
    assert contradiction_cue("Kestrel's cache entries expire by user region", sentence) == cue


def test_denied_findings_reach_the_end_of_the_clause_only():
    assert {"user", "region"} <= denied_findings("We do not observe any obvious dependence of the schedule on the "
                                                 "user region.")
    assert not denied_findings("We do not observe obvious gains, but the user region matters.") & {"user", "region"}


@pytest.mark.parametrize(
    "claim, sentence, cue",
    [
        # The chosen alternative shares the claim's verb ("decodes"): still another choice.
        ("Kestrel uses beam search for decoding", "Kestrel decodes greedily rather than with beam search.",
         "alternative"),
        ("Kestrel tags English manifests", "Kestrel tags Spanish manifests rather than English ones.", "alternative"),
        # A claim that asserts both sides is not denied by one of them chosen over the other.
        ("Kestrel combines keyword scores and vector scores",
         "Kestrel ranks by vector scores rather than keyword scores alone.", ""),
        # Fronted.
        ("Kestrel keeps its index on disk", "Instead of keeping the index on disk, Kestrel holds it in memory.",
         "alternative"),
        # A choice of A over B.
        ("Kestrel relies on dense retrieval", "Kestrel opts for sparse retrieval over dense retrieval.",
         "alternative"),
        ("Kestrel prefers short manifests over long ones", "Kestrel prefers long manifests over short ones.",
         "alternative"),
        # "over" after a verb of choice that means "across" is no choice between two things.
        ("Kestrel relies on dense retrieval", "Kestrel chose dense retrieval over the whole archive.", ""),
    ],
)
def test_an_alternative_set_aside(claim, sentence, cue):
    assert contradiction_cue(claim, sentence) == cue


def test_a_choice_over_another_is_a_ranking():
    assert rankings("Kestrel prefers long manifests over short ones.") == [({"long", "manifest"}, {"short", "one"})]
    # "chose X to Y" is a purpose.
    assert rankings("We chose the tagger to save memory.") == []


@pytest.mark.xfail(reason="a paraphrase with no negation or opposite word: 'kept frozen' means not trained, which "
                          "surface cues do not know", strict=True)
def test_a_paraphrased_denial_is_not_read():
    assert contradiction_cue("Kestrel trains its retriever", "The retriever is kept frozen throughout.") == "negation"


@pytest.mark.xfail(reason="a superlative claim against another system ranked first ahead of it: no ranking in the "
                          "claim to reverse, and the claim's name is still in the sentence", strict=True)
def test_a_superlative_given_to_another_system_is_not_read():
    assert contradiction_cue("Kestrel was the best system on the manifests benchmark",
                             "Heron was the best system on the manifests benchmark, ahead of Kestrel.") != ""


@pytest.mark.xfail(reason="a name at the end of the claim has no right-hand neighbour, so no full frame: another "
                          "name there is only a weak-frame rival", strict=True)
def test_another_name_at_the_end_of_the_claim_is_not_read():
    assert contradiction_cue("Kestrel indexes its archive with FAISS", "Kestrel indexes its archive with Annoy.") \
        == "entity"


def test_a_value_bound_to_a_symbol_elsewhere_is_read_in_its_place():
    passage = ("Kestrel filters manifests by agreement. A manifest is kept only if it falls in the top-k lists. "
               "In other words, two rankers must agree. Here we set k = 3 after inspecting a sample.")
    [(reading, span)] = bound_readings("A manifest is kept only if it falls in the top-k lists.", passage)
    assert reading == "A manifest is kept only if it falls in the top-3 lists."
    assert span.startswith("A manifest is kept") and span.endswith("k = 3 after inspecting a sample.")
    claim = "Kestrel keeps a manifest only if it falls in the top-5 lists"
    assert number_substitution(claim, reading, ranks=True)
    assert not number_substitution(claim.replace("top-5", "top-3"), reading, ranks=True)
    # A rank written as one word is a number for that reading only, not for the general cue.
    assert not number_substitution(claim, "Heron keeps the top-16 lists.")


def test_a_symbol_given_two_values_or_none_nearby_is_not_read():
    two = "We set k = 3 for receipts. A receipt is kept if it is in the top-k lists. For manifests k = 5."
    assert bound_readings("A receipt is kept if it is in the top-k lists.", two) == []
    far = ("A receipt is kept if it is in the top-k lists. One. Two. Three. Here we set k = 3.")
    assert bound_readings("A receipt is kept if it is in the top-k lists.", far) == []
    # "a" is an article, not a symbol.
    assert bound_readings("We keep a list.", "We keep a list. Here a = 3.") == []


KESTREL = "Kestrel: Agreement Filters for Manifests"


def test_the_premise_check_corrects_a_value_given_by_its_symbol(pipeline):
    from tests.agent.local.conftest import make_source

    sources = [
        make_source(1, "Kestrel filters its training manifests by agreement between two rankers. A manifest pair is "
                       "kept only if it falls in the top-k ranked lists of both rankers. In other words, the "
                       "rankers must agree. Here we set k = 3 after inspecting a sample of pairs.", title=KESTREL),
    ]
    audit, answer = pipeline("Why does Kestrel keep a manifest pair only if it falls in the top-5 ranked lists?",
                             sources)
    assert audit.verdict == Verdict.FALSE_PREMISE
    assert answer.outcome == Outcome.FALSE_PREMISE and "k = 3" in answer.citations[0].quote
