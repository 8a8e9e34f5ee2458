"""The local auditor's premise check (agent.local.auditor): does a retrieved sentence
contradict what the question presupposes (agent.local.planner.presupposition), assert it,
or neither?

A relevant sentence that disagrees (a surface cue of agent.local.contradiction, or
P(CONTRADICT) of the fitted classifier agent.local.entailment, AuditorParams.premise_*)
makes the premise false and is quoted as the correction; a sentence that holds the
premise's numbers and relation confirms it; otherwise the answer may not assume it.
Every presupposition of the question is checked (check_premises), and a name written with
its version that no retrieved passage mentions makes the question one the collection
cannot answer (PremiseCheck.unknown).
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from typing import TYPE_CHECKING

import numpy as np

from agent.local.candidates import Candidate, doc_key, gate_anchors, without_citations
from agent.local.contradiction import (
    alias,
    contradiction_cue,
    number_substitution,
    spell_digits,
    substituted_numbers,
    value_substitution,
)
from agent.local.contradiction.negation import affirmed_stems, denied_clause, negated_stems
from agent.local.contradiction.origin import credited_elsewhere
from agent.local.contradiction.roles import swapped_role
from agent.local.contradiction.sequence import swapped_step
from agent.local.contradiction.symbols import bound_readings
from agent.local.eligibility import eligible
from agent.local.entailment import fired_cue
from agent.local.scoring import score_sentences
from agent.local.text import (
    anchor_coverage,
    anchor_terms,
    content_terms,
    coverage,
    split_sentences,
    stem,
    term_set,
)
from agent.types import PremiseCheck, Source
from agent.verify import find_quote

if TYPE_CHECKING:
    from agent.local.auditor import AuditorParams


def check_premises(premises: list[str], pvecs: np.ndarray, cands: list[Candidate], sources: list[Source],
                   sent_vecs: np.ndarray, doc_terms: dict[object, set[str]], sibling_map: dict[str, set[str]],
                   *, params: AuditorParams, asked: str = "", trace: list[dict] | None = None) -> PremiseCheck:
    """Every presupposition of the question (agent.types.Plan.premises) checked in turn: the
    first one a sentence contradicts is the premise corrected. Otherwise the result is the
    main premise's (the first): whether it is confirmed decides whether the answer may
    assume it. The others come from the question's own clauses ("Why was A preferred over
    B?" after a stated claim), so they are checked for a contradiction only: a clause the
    evidence does not restate is what the answer says, not a premise it leans on."""
    if not premises:
        return PremiseCheck()
    everywhere = " ".join(f"{s.document_title} {s.text}" for s in sources)
    unknown = [name for premise in premises for name, pattern in _names_with_versions(premise)
               if not re.search(pattern, everywhere, re.IGNORECASE)]
    checks = []
    kinds = set(content_terms(asked))
    for n, (premise, pvec) in enumerate(zip(premises, pvecs)):
        # A clause's presupposition that says next to nothing ("it measures", "X has a
        # value") would be "contradicted" by any sentence sharing a word with it.
        if n and len(set(content_terms(premise)) - kinds) < 2:
            continue
        check = check_premise(premise, pvec, cands, sources, sent_vecs, doc_terms, sibling_map,
                              params=params, asked=asked, trace=trace)
        if check.contradicted:
            return check
        checks.append(check)
    if unknown:
        return checks[0].model_copy(update={"confirmed": False, "unknown": unknown,
                                            "reason": "no retrieved passage mentions " + ", ".join(unknown)})
    return checks[0]


def check_premise(premise: str, pvec: np.ndarray | None, cands: list[Candidate], sources: list[Source],
                  sent_vecs: np.ndarray, doc_terms: dict[object, set[str]], sibling_map: dict[str, set[str]],
                  *, params: AuditorParams, asked: str = "", trace: list[dict] | None = None) -> PremiseCheck:
    """Whether the retrieved sentences contradict, assert or say nothing of the premise.
    `asked`: the noun the question asks about ("how many GPUs"), which the premise names as
    a kind, not as a value another name could replace. `trace`, when given, receives one
    row per sentence read (its relevance, cue, P(CONTRADICT) and role), for
    bench/premises.py to show why a premise was or was not corrected."""
    if not premise or pvec is None:
        return PremiseCheck(premise=premise)
    if not cands:
        return PremiseCheck(premise=premise, confirmed=False, reason="no retrieved sentence speaks to it")
    p = params
    fixed = frozenset(anchor_terms(asked)) | frozenset(content_terms(asked))
    # Numbers are what a false premise often gets wrong: the premise is about the
    # document when its names are there, whatever numbers it gives.
    anchors = [a for a in anchor_terms(premise) if not any(c.isdigit() for c in a)]
    best = None
    rival = None
    confirmed = False
    best_confirming = 0.0
    # The closest sentence that neither disagrees nor drops a number of the premise: how
    # near the evidence comes to stating it (PremiseCheck.support, for the waiver).
    support = 0.0
    wanted_numbers = _numbers_of(premise)
    terms = content_terms(premise)
    df: dict[str, int] = defaultdict(int)
    for cand in cands:
        for t in cand.terms:
            df[t] += 1
    idf = {t: math.log(1 + len(cands) / (1 + df[t])) for t in terms}
    # A false premise may get a name wrong as well ("... from the Bing API" where the paper
    # says Google): a document that has all of the premise's names but one, its subject
    # included, is searched for a sentence giving another name in that place, and for nothing else.
    subject = _subject(premise)
    loose_anchors = [*anchors, subject] if subject and subject not in anchors else anchors
    relevant = []
    loose = []
    # (relevance, numbers) of each relevant sentence that disagrees in nothing: one that gives
    # the premise's own values voids another's "other number" (_numbers_stated).
    stated: list[tuple[float, set[str]]] = []
    # A name with a version ("Llama 3.1", "GPT-4") names that version only: a document about
    # "Llama 2" says nothing of it, so it is about the premise only when it holds the version too.
    versions = _versioned_names(premise)
    texts: dict[object, str] = defaultdict(str)
    if versions:
        for s in sources:
            texts[doc_key(s)] += f" {s.document_title} {s.text}"
    # A document that writes a hyphenated name of the premise as its acronym ("SBERT" for
    # "Sentence-BERT") is about it as much as one that writes it out.
    acronyms: dict[object, set[str]] = {}
    for sc in score_sentences(premise, pvec, [c.quote for c in cands], sent_vecs, w_coverage=p.w_coverage):
        cand = cands[sc.index]
        source = sources[cand.source_index]
        held = _with_acronyms(doc_terms[doc_key(source)], anchors, acronyms)
        about = not anchors or anchor_coverage(anchors, held) >= p.anchor_min
        if versions and not all(v.search(texts[doc_key(source)]) for v in versions):
            continue
        # A short sentence leans on the one before it ("We try MEAN and MAX. The default
        # is MEAN."): its relevance counts the terms of that context too.
        in_context = coverage(terms, cand.terms | term_set(cand.context))
        relevance = max(sc.support, p.w_coverage * in_context + (1 - p.w_coverage) * sc.similarity)
        if relevance >= min(p.premise_contradict_min, p.premise_support_min, p.premise_value_min) and about:
            relevant.append((sc, cand, source, relevance))

        elif (relevance >= p.premise_contradict_min and len(loose_anchors) >= 2
              and anchor_coverage(loose_anchors, held) * len(loose_anchors) >= len(loose_anchors) - 1):
            loose.append((sc, cand, source, relevance))
        elif trace is not None:
            trace.append({"premise": premise, "quote": cand.quote, "relevance": round(relevance, 3),
                          "about": about, "role": "irrelevant", "searched": source.premise_search})
    named = premise_search(premise, [s for s in sources if not s.premise_search])[1]
    # One pass of the fitted classifier over the relevant sentences (their vectors are
    # the ones already computed: no model run here).
    contradicts, rows = p.premise_model.contradiction(
        premise, pvec, [c.quote for _, c, _, _ in relevant],
        sent_vecs[[sc.index for sc, _, _, _ in relevant]] if relevant else sent_vecs[:0],
        contexts=[c.context for _, c, _, _ in relevant], sibling_map=sibling_map)
    for (sc, cand, source, relevance), p_false, row in zip(relevant, contradicts, rows):
        cue = fired_cue(row)
        # A sentence that would assert the premise but for a negation of the clause that
        # carries it denies it ("... is not necessarily responsible for ..."), and never confirms it.
        if not cue and denied_clause(premise, cand.quote) and _asserts(premise, cand, denial=True, asked=fixed):
            cue = "negation"
        # "X invented the Y" against a sentence crediting the Y to a cited work.
        if not cue and credited_elsewhere(premise, cand.quote):
            cue = "origin"
        # "X chose A as their B" against a list giving A another role and B another name.
        if not cue and swapped_role(premise, cand.quote):
            cue = "role"
        # "trained with PPO after SFT" against "SFT followed by DPO": another step in that place.
        if not cue and swapped_step(premise, cand.quote):
            cue = "sequence"
        # "kept if it falls in the top-5 lists" against "... in the top-k lists. ... Here we
        # set k = 2.": the sentence read with the value the passage gives its symbol, quoted
        # from the one sentence to the other.
        # Only in a paper the premise names, when the retrieved passages show which
        # (premise_search's documents): "the top-k documents" of another paper's reranker
        # gives no value of the premise's top k.
        quote = cand.quote
        if not cue and _numbers_of(premise) and (named is None or source.document_id in named):
            # The sentence as read: its words a line break cut are joined in `source` too.
            said = cand.quote if cand.stored else (cand.raw or cand.quote)
            bound = next(((r, span) for r, span in bound_readings(said, source.text)
                          if number_substitution(premise, r, ranks=True)), None)
            if bound is not None and find_quote(bound[1], source.text) >= 0:
                cue, quote = "number", bound[1]
        if not cue and wanted_numbers and p_false < p.premise_false_min:
            stated.append((relevance, _numbers_of(cand.quote)))
        if trace is not None:
            trace.append({"premise": premise, "quote": cand.quote, "relevance": round(relevance, 3),
                          "support": round(sc.support, 3), "cue": cue, "p_false": round(float(p_false), 3),
                          "asserts": _asserts(premise, cand), "role": "relevant",
                          "searched": source.premise_search})
        if not cue and p_false < p.premise_false_min and _near(premise, cand, wanted_numbers, fixed):
            support = max(support, relevance)
        # A surface cue, or the classifier (which weighs the cues with the rest), from a
        # sentence about the premise's own subject and relation. A sentence only the premise
        # search found (Source.premise_search) was searched for as the premise's relation with
        # whatever value the paper gives: it corrects the premise by giving another value in
        # that place, not by a negation or the classifier alone, which over its wider reading
        # deny what the sentence only mentions ("... given for training, but not the paths ...").
        disagrees = bool(cue) or p_false >= p.premise_false_min
        if source.premise_search and (not cue or cue == "negation"):
            disagrees = False
        # A value given in the premise's place passes a gate of its own (premise_value_min),
        # in a sentence of the question's own chunks: the premise search reads many more of
        # the paper's sentences that share the relation's words, and a number among them is
        # often another quantity ("6,900 queries" against "the top 1000 documents per query").
        value = bool(cue) and cue != "negation" and not source.premise_search
        gate = p.premise_value_min if value else p.premise_contradict_min
        if disagrees and relevance >= gate and _same_topic(premise, cand, fixed):
            # Of several disagreeing sentences, the one that shares the premise's rarer
            # terms is about the same statement ("The default configuration is MEAN."
            # against a premise about the default), not a neighbouring one.
            rank = (relevance + _weighted_share(terms, cand, idf)) / 2
            if best is None or rank > best[4]:
                best = (relevance, source, quote, cue or f"classifier, P={p_false:.2f}", rank)
        elif not cue and p_false < p.premise_false_min and sc.support >= p.premise_support_min \
                and _asserts(premise, cand):
            # A sentence that leaves out the premise's numbers ("eight heads") or names does
            # not assert it, however close its wording.
            confirmed = True
            if sc.coverage >= 1.0:
                best_confirming = max(best_confirming, relevance)
        elif (not cue and relevance >= p.premise_contradict_min and _rival(premise, cand, p, fixed)
              and _same_topic(premise, cand, fixed)):
            rank = (relevance + _weighted_share(terms, cand, idf)) / 2
            if rival is None or rank > rival[4]:
                rival = (relevance, source, cand.quote, _RIVAL, rank)
    for _, cand, source, relevance in loose:
        rank = (relevance + _weighted_share(terms, cand, idf)) / 2
        if trace is not None:
            trace.append({"premise": premise, "quote": cand.quote, "relevance": round(relevance, 3), "role": "loose",
                          "searched": source.premise_search,
                          "cue": "entity" if value_substitution(premise, cand.quote, context=cand.context,
                                                                fixed=fixed) else ""})
        if not _same_topic(premise, cand, fixed):
            continue
        # The name the document lacks may be the one the sentence sets aside, written out
        # ("RLHF": "trained with SFT only, without reinforcement learning from human feedback").
        kind = ("entity" if value_substitution(premise, cand.quote, context=cand.context, fixed=fixed)
                else "sequence" if swapped_step(premise, cand.quote)
                else "alternative" if contradiction_cue(premise, cand.quote) == "alternative" else "")
        if kind:
            if best is None or rank > best[4]:
                best = (relevance, source, cand.quote, kind, rank)
        elif _rival(premise, cand, p, fixed) and (rival is None or rank > rival[4]):
            rival = (relevance, source, cand.quote, _RIVAL, rank)
    # A premise that one passage states in full (every one of its terms), at least as
    # closely as another denies it, is disputed, not false: the fact's own audit reports
    # the disagreement. (An on-topic sentence that merely shares some terms, such as one
    # that lists the alternatives, confirms nothing.)
    if best is not None and best_confirming >= best[0]:
        best = None
    if best is not None and best[3] == "number" and _numbers_stated(premise, best, stated):
        best = None
    # A premise no sentence asserts, with a sentence that states its relation with another
    # name where the premise has one ("Lumen reranks with T5" against "How does Lumen use
    # BERT to rerank?"): a weaker sign than a cue, so it decides only when nothing confirms.
    if best is None and not confirmed and rival is not None:
        best = rival
    if best is None:
        return PremiseCheck(premise=premise, confirmed=confirmed, support=round(support, 4),
                            reason="" if confirmed else "no retrieved sentence asserts it")
    _, source, text, cue, _ = best
    text = _quotable(text, source)
    return PremiseCheck(
        premise=premise, contradicted=True, chunk_id=source.chunk_id, quote=text, confirmed=False,
        reason=f"the evidence disagrees with the premise ({cue})",
    )


# A capitalised name and the version number right after it: "Llama 3.1", "Llama-2", "GPT-4",
# "Qwen2.5" (not "GPT 43B", a size, nor "Table 3", which is no name the premise asserts).
_VERSIONED = re.compile(r"\b([A-Z][A-Za-z]+(?:-[A-Za-z]+)*)[\s\-]?(v?\d+(?:\.\d+)*)(?![\w.]*\d)(?![A-Za-z])")
_NOT_NAMES = frozenset({"table", "figure", "fig", "section", "sec", "appendix", "eq", "equation", "step", "stage",
                        "layer", "version", "chapter", "page", "line", "round", "phase", "top", "task", "setting",
                        "experiment", "method", "model", "type", "level", "part", "case", "example", "rule", "group"})


def _names_with_versions(premise: str) -> list[tuple[str, str]]:
    """(as written, pattern) of each name the premise writes with its version; the pattern
    matches the name with that version however it is joined ("Llama 2", "Llama-2",
    "Llama2", "SQuAD v2.0"), and no other version."""
    out = []
    for m in _VERSIONED.finditer(premise):
        name, version = m.group(1), m.group(2).lstrip("v")
        # A year is no version of a name ("NeurIPS 2021" may be written "NeurIPS'21"):
        # the number cue compares years.
        if name.lower() in _NOT_NAMES or re.fullmatch(r"(?:19|20)\d\d", version):
            continue
        out.append((m.group(0), rf"\b{re.escape(name)}[\s\-]?v?{re.escape(version)}(?![\d.]*\d)"))
    return out


def _versioned_names(premise: str) -> list[re.Pattern[str]]:
    return [re.compile(pattern, re.IGNORECASE) for _, pattern in _names_with_versions(premise)]


def _with_acronyms(held: set[str], anchors: list[str], memo: dict[object, set[str]]) -> set[str]:
    """The document's terms, plus each hyphenated anchor of the premise it holds as an acronym."""
    key = id(held)
    if key not in memo:
        from agent.local.contradiction import acronym_of

        found = {a for a in anchors if "-" in a and a not in held and any(acronym_of(t, a) for t in held)}
        memo[key] = held | found if found else held
    return memo[key]


_RIVAL = "entity: another name where the premise has one, and no sentence asserts the premise"


def _rival(premise: str, cand: Candidate, p: AuditorParams, fixed: frozenset[str]) -> bool:
    """The sentence states the premise's relation with another name in a weaker frame
    (AuditorParams.premise_rival_frame; above 1, never)."""
    return p.premise_rival_frame <= 1 and value_substitution(
        premise, cand.quote, context=cand.context, frame=p.premise_rival_frame, fixed=fixed)


def _subject(premise: str) -> str:
    """The premise's capitalised first word, as a name's stem ("Lumen fetch ..." -> "lumen")."""
    from agent.local.text import STOPWORDS, stem

    first = re.match(r"\s*([A-Z][\w\-]+)", premise)
    return stem(first.group(1).lower()) if first and first.group(1).lower() not in STOPWORDS else ""


def _quotable(quote: str, source: Source) -> str:
    """The quote a correction can cite: a sentence too short to stand as evidence ("The
    default configuration is MEAN.") is quoted with the sentence before it, which says
    what it is the default of."""
    from agent.verify import eligibility

    if not eligibility(quote):
        return quote
    sentences = split_sentences(source.text)
    for i in range(1, len(sentences)):
        before, sentence = sentences[i - 1], sentences[i]
        if eligible(sentence) == quote and eligible(before):
            joined = f"{eligible(before)} {quote}"
            if find_quote(joined, source.text) >= 0 and not eligibility(joined):
                return joined
    return quote


def _asserts(premise: str, cand: Candidate, *, denial: bool = False, asked: frozenset[str] = frozenset()) -> bool:
    """The sentence (with its context) could assert the premise: every number of the premise
    (spelled-out counts too) and every name of it (or an alias: "SBERT" for
    "Sentence-BERT") is there, and at least half of its relation words. For a sentence
    that denies something (`denial`), the relation words must be its own: the sentence
    before may lend it its names, but "Extended-context models are not necessarily better
    at using input context" after a sentence saying that models and their extended-context
    counterparts perform the same denies another relation than that one. The noun the
    question asks about (`asked`: "Which loss did X devise to train the verifier?") is what
    an answer would fill in, not part of the relation a denial must hold: "The verifier is
    not trained at all" denies training it with any loss."""
    from agent.local.contradiction import spell_digits
    from agent.local.text import numbers

    wanted = numbers(spell_digits(premise))
    if wanted and not wanted <= numbers(spell_digits(f"{cand.quote} {cand.context}")):
        return False
    # "Lumen reranks passages with T5" does not say that Lumen uses BERT to rerank them: every
    # name of the premise, its subject included, must be there (or an alias of it). The
    # sentence before and the title supply them only to a sentence that names nothing else
    # ("we", "our model"): "Quill reranked passages with BERT" in Lumen's paper is about Quill.
    if not _names_held(premise, cand):
        return False
    # Nor does one that has the premise's names but not its relation: "World Cup 2022 was
    # the last with 32 teams" does not say that anyone won the 2022 World Cup. At least half
    # of the premise's common words (not names, not numbers) must be there. Its capitalised
    # subject is a name too (checked above), never a relation word: "Mixtral's experts
    # specialise by topic" is not asserted by "We introduce Mixtral 8x7B, a Sparse Mixture of
    # Experts", which holds the subject and one word of three.
    names = set(anchor_terms(premise)) | {_subject(premise)}
    relation = [t for t in content_terms(premise) if t not in names and not any(c.isdigit() for c in t)]
    if denial:
        # Its subject may still come from the title or the sentence before ("Osprey ..."),
        # and a hyphenated word counts once, not once more for each of its parts.
        parts = {p for t in relation if "-" in t for p in t.split("-")}
        relation = [t for t in relation if t not in parts and t not in asked]
        return not relation or coverage(relation, cand.terms) >= 0.5
    # The relation words must be stated, not denied: a word the sentence only has inside a
    # negation's scope is not lent by the sentence before either ("Surprisingly, we do not
    # observe obvious patterns in the assignment of experts based on the topic." does not
    # assert that experts specialise by topic).
    said = affirmed_stems(cand.quote)
    held = (said | term_set(cand.context)) - (negated_stems(cand.quote) - said) if negated_stems(cand.quote) else (
        cand.terms | term_set(cand.context))
    return not relation or coverage(relation, held) >= 0.5


def _names_held(premise: str, cand: Candidate) -> bool:
    """Every name of the premise, its subject included, is in the sentence (or an alias of
    it). The sentence before and the title supply them only to a sentence that names nothing
    else ("we", "our model"): "Quill reranked passages with BERT" in Lumen's paper is about Quill."""
    wanted_names = {a for a in anchor_terms(premise) if not any(c.isdigit() for c in a)} | {_subject(premise)} - {""}
    if not wanted_names:
        return True
    own = set(anchor_terms(cand.quote))
    # A number names nothing else ("the project required 1,400 hours" is still about
    # the project its title names): only another name makes the sentence about another subject.
    others = {h for h in own if not _is_number(h) and not any(alias(h, n) for n in wanted_names)}
    names_there = own if others else own | set(anchor_terms(cand.context))
    terms_there = cand.terms if others else cand.terms | term_set(cand.context)
    return all(n in terms_there or any(alias(n, h) for h in names_there) for n in wanted_names)


def _same_topic(premise: str, cand: Candidate, fixed: frozenset[str]) -> bool:
    """Whether a sentence is about what the premise says, so that it can deny it: it names
    the premise's subject or one of its names (with the sentence before and the title), and
    its own words hold one of the premise's relation words (not a name, not a number, not
    the noun asked about). "Modular RAG inherits and develops from the previous paradigm"
    shares only a name with "steps make up the Naive RAG process": it speaks of another relation."""
    names = set(anchor_terms(premise)) | {_subject(premise)} - {""}
    relation = {t for t in content_terms(premise) if t not in names and t not in fixed
                and not any(c.isdigit() for c in t)}
    if relation and not relation & cand.terms:
        return False
    wanted = {n for n in names if not _is_number(n)}
    own = {h for h in [*anchor_terms(cand.quote), _subject(cand.quote)] if h and not _is_number(h)}
    # A sentence naming nothing ("we employ h = 8 heads") speaks of its document's subject,
    # which the check already found to be the premise's.
    if not wanted or not own:
        return True
    around = cand.terms | term_set(cand.context)
    near = anchor_terms(f"{cand.quote} {cand.context}")
    return any(n in around or any(alias(n, h) for h in near) for n in wanted)


def _weighted_share(terms: list[str], cand: Candidate, idf: dict[str, float]) -> float:
    """Share of the terms (weighted by rarity among the candidates) the sentence holds; a
    term only its context (the sentence before, the title) holds counts half."""
    total = sum(idf.get(t, 0.0) for t in terms)
    if not total:
        return 0.0
    around = term_set(cand.context)
    held = sum(idf.get(t, 0.0) * (1.0 if t in cand.terms else 0.5 if t in around else 0.0) for t in terms)
    return held / total


def _numbers_stated(premise: str, best: tuple, stated: list[tuple[float, set[str]]]) -> bool:
    """Whether a sentence at least as relevant as the one giving another number (best) gives
    the very values it replaces, and disagrees in nothing: the premise's "models capped at
    1,024 tokens" is stated by "a maximum length of 1,024 tokens", and "the index is refreshed
    every 4 tokens" counts another quantity of tokens, not a correction."""
    replaced = substituted_numbers(premise, best[2])
    return bool(replaced) and any(relevance >= best[0] and replaced <= held for relevance, held in stated)


def _numbers_of(text: str) -> set[str]:
    """The numbers a text states, spelled-out counts included ("eight heads" -> {"8"})."""
    from agent.local.contradiction import spell_digits
    from agent.local.text import numbers

    return numbers(spell_digits(text))


def _near(premise: str, cand: Candidate, wanted_numbers: set[str], fixed: frozenset[str]) -> bool:
    """Whether a sentence could come close to stating the premise, short of asserting it
    (_asserts): with its context (the sentence before, the title) it holds every number of
    the premise, it holds every name (_names_held), and its own words hold one of the premise's
    relation words other than the noun asked about. "Lumen reranks passages with T5" is not
    near "Lumen uses BERT to rerank", nor "The Harrow Cup 2021 had 16 teams" near "someone won
    the 2021 Harrow Cup"."""
    if not wanted_numbers <= _numbers_of(f"{cand.quote} {cand.context}") or not _names_held(premise, cand):
        return False
    names = set(anchor_terms(premise)) | {_subject(premise)} - {""}
    relation = {t for t in content_terms(premise) if t not in names and t not in fixed
                and not any(c.isdigit() for c in t)}
    return not relation or bool(relation & cand.terms)


def waive_unconfirmed(need_p: float, premise: PremiseCheck, params: AuditorParams) -> bool:
    """Whether a one-need question whose premise no sentence confirms may still be answered
    (PARTIAL, saying the premise is unconfirmed): its need is very likely answered
    (AuditorParams.premise_unconfirmed_min), or it is answered and the evidence comes close
    to stating the premise (PremiseCheck.support >= AuditorParams.premise_waive_support).
    Both thresholds are chosen by bench/premise_waiver.py on whole runs of the calibration
    halves: answerable questions refused against false premises answered as if true."""
    if not premise.premise or premise.confirmed or premise.contradicted or premise.unknown:
        return False
    return need_p >= params.premise_unconfirmed_min or (
        need_p >= params.need_min and premise.support >= params.premise_waive_support)


def _is_number(term: str) -> bool:
    """A term of digits and punctuation only ("1", "400", "0.01"): a value, not a name."""
    return bool(re.fullmatch(r"[\d.,]+", term))


def answer_confirms(premise: str, asked: str, cand: Candidate, document_terms: set[str]) -> bool:
    """Whether the sentence that answers a one-need question also states what the question
    presupposes: an answer fills the slot the presupposition leaves open ("the experiments
    were run on an RTX-3090 GPU" states that they were run on some GPU). It must name the
    asked noun itself (`asked`: "GPU", "annotation hours"; a question that asks for no noun
    has nothing this can check), hold every number of the premise and half of its relation
    words (with the sentence before), and come from a document holding each of the premise's
    names (the names the sentence adds are the answer, so a title or the document lends the
    subject, which _asserts lends only to a sentence naming nothing else)."""
    from agent.local.contradiction import spell_digits
    from agent.local.text import numbers

    noun = content_terms(asked)
    if not premise or not noun or coverage(noun, cand.terms) < 1.0:
        return False
    around = cand.terms | term_set(cand.context)
    wanted = numbers(spell_digits(premise))
    if wanted and not wanted <= numbers(spell_digits(f"{cand.quote} {cand.context}")):
        return False
    # Cited authors ("the Gao et al. survey") name the paper, not something its sentence says.
    names = {a for a in gate_anchors(premise) if not any(c.isdigit() for c in a)} - set(noun)
    held = around | document_terms
    near = anchor_terms(f"{cand.quote} {cand.context}")
    if not all(n in held or any(alias(n, h) for h in near) for n in names):
        return False
    relation = [t for t in content_terms(premise) if t not in names and t not in noun
                and not any(c.isdigit() for c in t)]
    return not relation or coverage(relation, around) >= 0.5


# A value a false premise may get wrong: a number, a size or a rank ("16", "0.05", "25%",
# "128k", "345M", "top-5"; spelled-out counts are read as digits first). A name with a
# digit in it ("GPT-2", "T5-11B", "Doc2query") is a name, not a value.
# Quotes and punctuation around a word, and its possessive ending ("SBERT's").
_PUNCT = re.compile(r"^[^\w]+|(?:['\u2019]s)?[^\w%]*$")
_VALUE = re.compile(r"^(?:\d[\d,.]*(?:%|[kKmMbBx])?|[a-z]+-\d[\d.]*)$")
# How many documents a premise search reads at most: a premise names one paper, or two.
PREMISE_SEARCH_DOCUMENTS = 2
# The words that lead into a noun phrase (prepositions, determiners): left out with it.
_DANGLING_ACCORDING = re.compile(r",?\s*\baccording(?:\s+to)?(?=\s*(?:[,.;:?!]|$))", re.IGNORECASE)


def _clean_query(text: str) -> str:
    return re.sub(r"\s+([,.;:?!])", r"\1", re.sub(r"\s+", " ", text)).strip(" ,;")


_LEADING = frozenset({"on", "in", "of", "for", "to", "with", "by", "from", "at", "into", "over", "about",
                      "the", "a", "an", "its", "their", "this", "these", "those", "some"})


def premise_search(premise: str, sources: list[Source], *, documents_only: bool = False
                   ) -> tuple[str, list[int] | None]:
    """The search for the sentence that states what the premise presupposes, whatever
    value it gives ("Why is MAX pooling SBERT's default?": the sentence saying which
    pooling is the default): the query, and the documents it searches (None: the whole
    collection). ("", None) when it would add nothing to the question's own searches.

    1. The documents: those among `sources` (the question's own search) whose retrieved
       text holds the premise's names (its anchors and capitalised subject, an acronym of a
       hyphenated one counting: "SBERT" / "Sentence-BERT"), all of them or all but one (the
       one may be the premise's wrong value: "Google" in "X uses Google Search"); of those,
       the ones holding the most, at most PREMISE_SEARCH_DOCUMENTS, in the order found.
    2. The query: the premise without its values (numbers, sizes, ranks); searching named
       documents, without its names too, which name the paper or may be the wrong value,
       so what is left is the relation ("the default pooling strategy"), whatever the
       paper fills it with (a query left with no content word keeps the names). Cited
       authors are neither (candidates.without_citations), and the prepositions and
       determiners of a word left out go with it ("on the" of "on the Transformer"): the
       query reads as the premise's words, in order.
    """
    premise = without_citations(premise)
    text = spell_digits(premise)
    tokens = [(m.group(0), _PUNCT.sub("", m.group(0))) for m in re.finditer(r"\S+", text)]
    values = {i for i, (_, bare) in enumerate(tokens) if _VALUE.match(bare)}
    subject = _subject(premise)
    names = {i for i, (_, bare) in enumerate(tokens) if i not in values and bare and _is_name(bare, i)}
    if subject and tokens and stem(tokens[0][1].lower()) == subject:
        names.add(0)
    # A name no retrieved passage holds is no paper's name: it is the value the premise may
    # get wrong ("the Google search engine" where the paper uses Bing), left out like a number.
    heard = term_set(" ".join(f"{s.document_title} {s.text}" for s in sources))
    values |= {i for i in names if not any(anchor_coverage([a], _with_acronyms(heard, [a], {}))
                                           for a in _stems(tokens[i][1]))}
    names -= values
    wanted = list(dict.fromkeys(a for i in sorted(names) for a in _stems(tokens[i][1])))
    if subject and subject not in wanted:
        wanted.append(subject)
    documents = _named_documents(wanted, sources)
    if documents_only:
        return "", documents or None

    def query(drop: set[int]) -> str:
        gone = set(drop)
        for i in sorted(drop & names, reverse=True):
            j = i - 1
            while j >= 0 and j not in gone and tokens[j][1].lower() in _LEADING and not tokens[j][0].endswith(","):
                gone.add(j)
                j -= 1
        kept = " ".join(raw for i, (raw, _) in enumerate(tokens) if i not in gone)
        # "according to" whose object went (a value, a name) introduces nothing.
        return _clean_query(_DANGLING_ACCORDING.sub("", kept))

    relation = query(values | names) if documents else ""
    found = relation if content_terms(relation) else query(values)
    if not documents and not values:
        return "", None
    return found, documents or None


def premise_statement(premise: str, sources: list[Source]) -> tuple[str, list[int] | None]:
    """The premise's own retrieval (RunConfig.premise_sentences): the query is the premise as
    stated, names and values kept, less its cited authors (candidates.without_citations); the
    documents are premise_search's (the papers it names among the question's retrieved
    ones), None when it names none (the whole collection). premise_search asks for the
    relation with whatever value fills it; this one asks for the sentence closest to the
    statement itself, which is where a paper gives the premise's relation with another
    value in its place ("We use the Bing search engine as the retriever." for "X uses the
    Google search engine as the retriever"). ("", None) for an empty premise."""
    statement = without_citations(premise).strip()
    if not content_terms(statement):
        return "", None
    return statement, premise_search(premise, sources, documents_only=True)[1]


def _stems(name: str) -> list[str]:
    """A name as anchor terms ("SBERT's" -> ["sbert"])."""
    return anchor_terms(f"x {name}")


def _is_name(token: str, position: int) -> bool:
    """A name as agent.local.text.anchor_terms reads one: a digit or an inner capital, or a
    capitalised word that does not start the premise."""
    from agent.local.text import STOPWORDS

    if token.lower() in STOPWORDS:
        return False
    return (any(c.isdigit() for c in token) or any(c.isupper() for c in token[1:])
            or (position > 0 and token[0].isupper() and len(token) > 2))


def _named_documents(names: list[str], sources: list[Source]) -> list[int]:
    """The documents among the sources that hold the premise's names (premise_search, step 1):
    all of them or all but one, the most of any document; of those, the ones whose retrieved
    chunks name them most often (a paper about X names X in most of its passages, a survey
    citing X in one), at most PREMISE_SEARCH_DOCUMENTS, and a second one only when it names
    them as often as the first."""
    if not names:
        return []
    terms: dict[int, set[str]] = defaultdict(set)
    chunks: dict[int, list[set[str]]] = defaultdict(list)
    for s in sources:
        if s.document_id is not None and not s.from_web:
            bag = term_set(f"{s.document_title} {s.section} {s.text}")
            terms[s.document_id] |= bag
            chunks[s.document_id].append(bag)
    memo: dict[object, set[str]] = {}
    held = {doc: round(anchor_coverage(names, _with_acronyms(bag, names, memo)) * len(names))
            for doc, bag in terms.items()}
    most = max(held.values(), default=0)
    if most < max(1, len(names) - 1):
        return []
    mentions = {doc: sum(anchor_coverage(names, bag) > 0 for bag in chunks[doc]) for doc, n in held.items() if n == most}
    ranked = sorted(mentions, key=lambda doc: -mentions[doc])
    return [doc for doc in ranked if mentions[doc] == mentions[ranked[0]]][:PREMISE_SEARCH_DOCUMENTS]
