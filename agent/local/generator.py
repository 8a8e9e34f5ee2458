"""Local generator: extractive answers built from the audited supporting sentences.

- No audit (the plain-RAG baselines): the answer-eligible sentences of the top sources
  most similar to the question, always answered, each citing its chunk.
- SUFFICIENT / PARTIALLY_SUFFICIENT: 1-3 supporting sentences, best per fact first, then
  the facts' second-best ones close enough to their best, likeliest first (ComposeParams,
  fitted on the calibration halves by bench/calibrate_compose.py), stated in
  fact order and, within one chunk, in reading order; near-duplicates dropped; a yes/no
  question gets "Yes" or "No" first. A fact's best sentence that leans on the one before it
  (it opens by referring back: "For each of these ...", "This means ...") is preceded by
  that sentence, in place of a second-best one (lead_sentence). A partial answer notes which
  facts had no evidence, a part of a multi-part question by its place ("part 2 of 2: ...");
  an answer that states nothing for a part is partial whatever the verdict (_missing_parts).
- Conflicting evidence: neither sentence is stated as fact; both are reported, cited.
- FALSE_PREMISE: says the premise does not hold and quotes the contradicting sentence.
- CLARIFY: asks which paper or result is meant and offers rephrasings built from the
  retrieved documents' titles and sections; a request to summarise or compare whole papers
  says plainly that an extractive answer cannot do that.
- INSUFFICIENT_REFUSE: what was searched, the closest evidence, why it was not enough.
Every sentence quotes its chunk verbatim, so the verifier can check it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from agent.local.answer_type import need_of, offers, points_elsewhere, polarity
from agent.local.eligibility import eligible, is_injection, is_label
from agent.local.embed import EmbedFn, get_embed
from agent.local.text import anchor_terms, content_terms, split_sentences, term_set, words
from agent.types import (
    AuditResult,
    Draft,
    DraftSentence,
    Outcome,
    Source,
    SupportingSentence,
    SupportLabel,
    Verdict,
)

BASELINE_SENTENCES = 3
MAX_ANSWER_SENTENCES = 3
_USABLE = (SupportLabel.SUPPORTED, SupportLabel.PARTIAL)


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


class ExtractiveGenerator:
    def __init__(self, embed: EmbedFn | None = None, params: ComposeParams | None = None) -> None:
        self._embed = embed
        self.params = params or ComposeParams()

    def generate(self, question: str, sources: list[Source], audit: AuditResult | None) -> Draft:
        marker = {s.chunk_id: n for n, s in enumerate(sources, start=1)}
        if audit is None:
            return self._baseline(question, sources)
        if audit.verdict == Verdict.CLARIFY:
            return clarify_draft(question, sources, whole_document="summar" in audit.reason,
                                 suggested=audit.suggestions, documents=audit.suggestion_documents)
        if audit.verdict == Verdict.FALSE_PREMISE and audit.premise.chunk_id in marker:
            p = audit.premise
            return Draft(outcome=Outcome.FALSE_PREMISE, sentences=[
                DraftSentence(
                    text=f'The premise does not hold ("{p.premise.rstrip(".")}"): the source says "{p.quote}"',
                    citations=[marker[p.chunk_id]], quote=p.quote,
                )
            ])
        if audit.verdict in (Verdict.INSUFFICIENT_REFUSE, Verdict.INSUFFICIENT_RETRY, Verdict.FALSE_PREMISE):
            from agent.llm_roles import refusal_draft

            return refusal_draft(question, sources, audit)
        conflicted = {q for c in audit.conflicts for q in c.quotes}
        sentences = _answer_sentences(question, audit, marker, sources, conflicted, self.params)
        sentences = [s for s in sentences if s.quote not in conflicted]
        if audit.paper and sentences:
            # The question named no paper: the answer says which one it is from.
            sentences[0] = sentences[0].model_copy(update={"text": f"In {audit.paper}: {sentences[0].text}"})
        for c in audit.conflicts:
            if all(cid in marker for cid in c.chunk_ids):
                sentences.append(DraftSentence(text=f'The sources disagree: one says "{c.quotes[0]}"',
                                               citations=[marker[c.chunk_ids[0]]], quote=c.quotes[0]))
                sentences.append(DraftSentence(text=f'Another says "{c.quotes[1]}"',
                                               citations=[marker[c.chunk_ids[1]]], quote=c.quotes[1]))
        outcome = Outcome.ANSWER if audit.verdict == Verdict.SUFFICIENT and not audit.conflicts else Outcome.PARTIAL
        notes = []
        missing = _missing_parts(audit, sentences, marker, self.params)
        if missing and outcome == Outcome.ANSWER:
            # A part the answer says nothing about: the answer is partial, whatever the verdict.
            outcome = Outcome.PARTIAL
        if outcome == Outcome.PARTIAL and missing:
            notes.append("No supporting evidence was found for: " + "; ".join(missing))
        if audit.conflicts:
            notes.append("The retrieved passages contradict each other on: "
                         + "; ".join(dict.fromkeys(c.fact for c in audit.conflicts)))
        return Draft(outcome=outcome, sentences=sentences, missing_note=" ".join(notes))

    def _baseline(self, question: str, sources: list[Source]) -> Draft:
        cands = []
        raws = []
        for n, src in enumerate(sources, start=1):
            for raw in split_sentences(src.text):
                quote = eligible(raw)
                if quote and len(quote) <= 600:
                    cands.append((n, quote))
                    raws.append(raw)  # the text the index already embedded (EmbeddingCache)
        if not cands:
            return Draft(outcome=Outcome.ANSWER, sentences=[])
        embed = self._embed or get_embed()
        vecs = embed([question, *raws])
        sims = vecs[1:] @ vecs[0]
        order = np.argsort(-sims)[:BASELINE_SENTENCES]
        return Draft(outcome=Outcome.ANSWER, sentences=[
            DraftSentence(text=cands[i][1], citations=[cands[i][0]], quote=cands[i][1]) for i in sorted(order)
        ])


def _usable(fact_sentences: list[SupportingSentence], marker: dict[int, int],
            params: ComposeParams) -> list[SupportingSentence]:
    """The fact's sentences worth stating: those with its best label, close enough to its best
    score (ComposeParams.margin, .ratio), `params.per_fact` at most."""
    usable = [s for s in fact_sentences if s.label in _USABLE and s.chunk_id in marker]
    if not usable:
        return []
    best = usable[0]
    return [s for s in usable if s.label == best.label
            and (s.score >= best.score - params.margin or s.score >= params.ratio * best.score)][:params.per_fact]


def _answer_sentences(question: str, audit: AuditResult, marker: dict[int, int],
                      sources: list[Source] | None = None, conflicted: set[str] | None = None,
                      params: ComposeParams | None = None) -> list[DraftSentence]:
    """The best sentence of each fact first, then second-best ones, 3 at most, no near-duplicates;
    facts in order, and within a fact the best sentence first (two from one chunk in reading order).
    A best sentence that leans on the sentence before it (lead_sentence) comes after that
    sentence, which takes the place of a second-best one; so does the sentence after a best
    sentence that lacks the kind of answer asked for when that one holds it (follow_on_sentence,
    with ComposeParams.follow_on). A sentence in `conflicted` (the caller reports it as
    disputed, not as fact) gets neither."""
    params = params or ComposeParams()
    per_fact = [_usable(f.sentences, marker, params) for f in audit.facts]
    chosen: list[tuple[int, int, SupportingSentence]] = []
    seen_terms: list[set[str]] = []
    for rank in range(max((len(p) for p in per_fact), default=0)):
        turn = [(i, picks[rank]) for i, picks in enumerate(per_fact) if rank < len(picks)]
        if rank > 0 and params.second_order == "score":
            turn.sort(key=lambda item: -item[1].score)
        for i, s in turn:
            if len(chosen) >= MAX_ANSWER_SENTENCES:
                break
            terms = term_set(s.quote)
            if any(_near_duplicate(terms, t) for t in seen_terms):
                continue
            seen_terms.append(terms)
            chosen.append((i, rank, s))

    yesno = need_of(question).kind == "yesno"
    undisputed = [c for c in chosen if c[2].quote not in (conflicted or set())]
    leads = {} if yesno else _leads(undisputed, audit, sources or [], seen_terms)
    follows = _follow_ons(undisputed, audit, sources or [], seen_terms, leads, params.follow_on) \
        if params.follow_on else {}
    # A lead or a follow-on takes the place of the last second-best sentence; with none left,
    # the last lead goes, then the last follow-on.
    while len(chosen) + len(leads) + len(follows) > MAX_ANSWER_SENTENCES:
        spare = [n for n, (_, rank, _) in enumerate(chosen) if rank > 0]
        if spare:
            chosen.pop(spare[-1])
        elif leads:
            leads.pop(list(leads)[-1])
        else:
            follows.pop(list(follows)[-1])

    first_of_chunk: dict[tuple[int, int], int] = {}
    for i, rank, s in chosen:
        first_of_chunk.setdefault((i, s.chunk_id), rank)
    chosen.sort(key=lambda item: (item[0], first_of_chunk[(item[0], item[2].chunk_id)], item[2].quote_start))
    out: list[DraftSentence] = []
    for i, rank, s in chosen:
        if (i, rank) in leads:
            lead = leads[(i, rank)]
            out.append(DraftSentence(text=lead, citations=[marker[s.chunk_id]], quote=lead))
        out.append(DraftSentence(text=s.quote, citations=[marker[s.chunk_id]], quote=s.quote))
        if (i, rank) in follows:
            after = follows[(i, rank)]
            out.append(DraftSentence(text=after, citations=[marker[s.chunk_id]], quote=after))
    if out and yesno:
        # The best-ranked sentence that clearly affirms or denies decides, and goes first so
        # the Yes or No reads as its conclusion; when none does, the answer quotes without a
        # Yes or No it could not back.
        ranked = sorted(range(len(chosen)), key=lambda n: (chosen[n][1], chosen[n][0]))
        decided = next(((n, a) for n, a in ((n, polarity(question, chosen[n][2].quote)) for n in ranked) if a), None)
        if decided is not None:
            n, answer = decided
            first = out.pop(n)
            out.insert(0, first.model_copy(update={"text": f"{answer.capitalize()}: {first.text}"}))
    return out


def _missing_parts(audit: AuditResult, sentences: list[DraftSentence], marker: dict[int, int],
                   params: ComposeParams | None = None) -> list[str]:
    """What the audit found missing, each part of a multi-part question named as one ("part 2
    of 2: why is it added?"), and any part the answer holds no sentence for although the
    audit did not list it (its only sentences were disputed or not among the sources)."""
    params = params or ComposeParams()
    stated = [term_set(s.quote) for s in sentences if s.quote]
    parts: dict[str, str] = {}  # what the note says of a part -> how it names it
    for n, f in enumerate(audit.facts):
        # The auditor may name a part as the planner worded it, without what it added.
        named = next((m for m in audit.missing if f.fact.startswith(m)), "")
        # A part's sentence dropped as a near-duplicate of another part's is stated by that one.
        held = any(any(_near_duplicate(term_set(s.quote), t) for t in stated) for s in _usable(f.sentences, marker, params))
        if named or not held:
            text = named or f.fact
            parts[text] = f"part {n + 1} of {len(audit.facts)}: {text}" if len(audit.facts) > 1 else text
    return [*parts.values(), *(m for m in audit.missing if m not in parts)]


def _near_duplicate(a: set[str], b: set[str]) -> bool:
    return len(a & b) / max(len(a | b), 1) >= 0.7


def _leads(chosen: list[tuple[int, int, SupportingSentence]], audit: AuditResult, sources: list[Source],
           seen_terms: list[set[str]]) -> dict[tuple[int, int], str]:
    """(fact, rank) of each fact's best sentence that leans on the sentence before it -> that sentence."""
    texts = {s.chunk_id: s.text for s in sources}
    out: dict[tuple[int, int], str] = {}
    for i, rank, s in chosen:
        if rank > 0 or s.chunk_id not in texts:
            continue
        lead = lead_sentence(audit.facts[i].fact, s.quote, texts[s.chunk_id])
        if lead and not any(_near_duplicate(term_set(lead), t) for t in seen_terms):
            out[(i, rank)] = lead
    return out


def _follow_ons(chosen: list[tuple[int, int, SupportingSentence]], audit: AuditResult, sources: list[Source],
                seen_terms: list[set[str]], leads: dict[tuple[int, int], str], mode: str,
                ) -> dict[tuple[int, int], str]:
    """(fact, rank) of each fact's best sentence -> the sentence after it that the answer
    reads next (follow_on_sentence in `mode`)."""
    texts = {s.chunk_id: s.text for s in sources}
    stated = {s.quote for _, _, s in chosen} | set(leads.values())
    out: dict[tuple[int, int], str] = {}
    for i, rank, s in chosen:
        if rank > 0 or s.chunk_id not in texts:
            continue
        after = follow_on_sentence(audit.facts[i].fact, s.quote, texts[s.chunk_id], mode=mode)
        if after and after not in stated and not any(_near_duplicate(term_set(after), t) for t in seen_terms):
            out[(i, rank)] = after
            stated.add(after)
    return out


def follow_on_sentence(fact: str, quote: str, chunk_text: str, *, mode: str = "type") -> str:
    """The sentence after `quote` in its chunk when the answer should read it next, else "".
    It must be answer-eligible, not merely point elsewhere, and hold the kind of answer `fact`
    asks for when read after `quote` (agent.local.answer_type.offers). `mode` "type": only
    when `quote` itself does not hold that kind of answer (no number next to the focus, no
    name, no reason, ...); "value": when it names a value (a number, a name, an identifier:
    text.anchor_terms) that neither `fact` nor `quote` has; "next": always."""
    need = need_of(fact)
    if mode == "type" and offers(need, fact, quote) >= 1.0:
        return ""
    sentences = split_sentences(chunk_text)
    at = next((n for n, raw in enumerate(sentences) if eligible(raw) == quote), -1)
    if at < 0 or at + 1 >= len(sentences):
        return ""
    after = eligible(sentences[at + 1])
    if not after or points_elsewhere(after) or offers(need, fact, after, context=quote) < 1.0:
        return ""
    if mode == "value" and not set(anchor_terms(after)) - term_set(fact) - term_set(quote):
        return ""
    return after


# Words that, among a sentence's first four, refer back to what the sentence before said
# ("For each of these we use ...", "They are trained ...", "This yields ...").
_BACK_REFERENCES = frozenset({"it", "its", "they", "their", "them", "this", "these", "those", "such", "latter",
                              "former", "both"})
# What "this"/"these" name when they point at the paper itself, not at the sentence before.
_SELF = frozenset({"paper", "publication", "work", "study", "section", "survey", "article", "chapter", "appendix",
                   "figure", "table", "setting", "way", "end", "case"})


def lead_sentence(fact: str, quote: str, chunk_text: str) -> str:
    """The sentence before `quote` in its chunk when `quote` leans on it, else "": the quote
    opens by referring back ("For each of these we use dk = 64.", "This means ..."). The
    sentence before must be answer-eligible, say something of the fact (a content term of
    it) and not merely point elsewhere ("... in three ways:")."""
    sentences = split_sentences(chunk_text)
    at = next((n for n, raw in enumerate(sentences) if eligible(raw) == quote), -1)
    if at <= 0:
        return ""
    before = eligible(sentences[at - 1])
    if not before or points_elsewhere(before):
        return ""
    wanted = set(content_terms(fact))
    if not wanted & term_set(before):
        return ""
    opening = words(quote)[:4]
    refers_back = False
    for n, w in enumerate(opening):
        if w in _BACK_REFERENCES:
            refers_back = not (w in ("this", "these") and n + 1 < len(opening) and opening[n + 1] in _SELF)
            break
        if content_terms(w):
            # A pronoun after the sentence's own subject ("Lumen fetches its results") refers to
            # that subject, not to the sentence before.
            break
    return before if refers_back else ""


_TOPICS = {"results": "the main results", "result": "the main result", "findings": "the main findings",
           "method": "the method", "approach": "the approach", "conclusion": "the conclusion",
           "contribution": "the main contribution", "contributions": "the main contributions",
           "limitations": "the limitations", "evaluation": "the evaluation", "experiments": "the experiments",
           "dataset": "the dataset", "datasets": "the datasets"}
_SKIP_SECTIONS = {"references", "bibliography", "acknowledgements", "acknowledgments", "appendix", "abstract"}


def suggestions(question: str, sources: list[Source], *, limit: int = 4) -> list[str]:
    """2-4 concrete questions about the documents and sections retrieved for a vague one:
    the asked-about topic (results, method, ...) in each retrieved paper, then the sections
    that matched, then the method and results of the papers when that is still too few."""
    asked = [_TOPICS[w] for w in re.findall(r"[a-z]+", question.lower()) if w in _TOPICS]
    topic = asked[0] if asked else "the main result"
    titles: list[str] = []
    for s in sources:
        title = (s.document_title or s.file_name).strip()
        if title and title not in titles and not is_injection(s.text):
            titles.append(title)
    out: list[str] = [f'What is {topic} of "{t}"?' if not topic.endswith("s") else f'What are {topic} of "{t}"?'
                      for t in titles[:2]]
    for s in sources:
        section = re.sub(r"^[\d\.\s]+", "", s.section or "").strip()
        title = (s.document_title or s.file_name).strip()
        if (not section or not title or len(section) > 60 or section.lower() in _SKIP_SECTIONS
                or not re.search(r"[a-z]", section) or is_label(section) or is_injection(s.text)):
            continue
        q = f'What does "{title}" report in its section "{section}"?'
        if q not in out:
            out.append(q)
        if len(out) >= limit:
            break
    for t in titles[:2]:
        for extra in (f'What method does "{t}" propose?', f'What are the main results of "{t}"?'):
            if len(out) < 2 and extra not in out:
                out.append(extra)
    return out[:limit]


WHOLE_DOCUMENT_NOTE = ("Not possible with the offline backend: summarising or comparing whole papers "
                       "(it only quotes sentences it can cite).")


def clarify_draft(question: str, sources: list[Source], *, whole_document: bool,
                  suggested: list[str] | None = None, documents: dict[str, list[int]] | None = None) -> Draft:
    """A request to clarify; `suggested`: the auditor's rephrasings naming the papers that
    answer the question differently (agent.local.clarify), else ones built from the sources;
    `documents`: the ids of the documents each is about."""
    note = ""
    if suggested:
        text = ("The question does not say which paper it is about, and several papers in this collection speak "
                "to it. Which one do you mean?")
        return Draft(outcome=Outcome.CLARIFY, sentences=[DraftSentence(text=text)], suggestions=list(suggested),
                     suggestion_documents=dict(documents or {}))
    if whole_document:
        text = ("This offline backend answers by quoting single sentences it can cite, so it cannot summarise "
                "or compare whole papers. Ask about one result, method or number instead, for example one of "
                "the questions below.")
        # What the run page and the API show as the reason (Run.missing_evidence): a task the
        # backend cannot do, not a lack of evidence.
        note = WHOLE_DOCUMENT_NOTE
    else:
        text = ("The question does not say which paper, result or term it is about, so there is nothing "
                "specific to look for. Which one do you mean? For example:")
    return Draft(outcome=Outcome.CLARIFY, sentences=[DraftSentence(text=text)],
                 suggestions=suggestions(question, sources), missing_note=note)
