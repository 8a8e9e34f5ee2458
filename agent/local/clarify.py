"""Clarify from evidence: a question about "they" or "the model" that several papers answer differently.

A terse question such as "What learning rate did they use?" is a fair question about one
paper (QASPER asks this way) and an ambiguous one over a collection of many. The wording
alone cannot tell which: the evidence can. The auditor (agent.local.auditor) asks the user
to choose (Verdict.CLARIFY) when all of these hold:

1. the question names nothing (no name, acronym, identifier or number: agent.local.text.
   anchor_terms) and refers to something it leaves unresolved: a pronoun ("they", "their",
   "it", "its") or a definite noun for a paper's own thing ("the model", "the authors",
   "the paper", "the proposed method"; `unresolved_referent`);
2. its one need's answering candidates (the auditor's ranked sentences, P(answers) at least
   ClarifyParams.ratio of the best one's, among the first ClarifyParams.top) come from two
   or more papers; two documents of one paper (two versions of a preprint) count once;
3. those papers' best sentences say different things (not near-duplicates, term Jaccard
   below ClarifyParams.same_jaccard), so picking one would be a guess.
An answered need whose quoted sentences (its first ClarifyParams.shown candidates, those
close enough to the best one to be stated) come from two papers is asked back too: the
answer would mix two papers' statements about "they".
When no sentence answers it (the audit's last verdict is a refusal), the papers are those of
the sentences most relevant to it instead (support within ClarifyParams.relevant_ratio of
the best one's, in the queries' top chunks): the question may well be answerable once it
says which of them it means, and a refusal would not tell the asker so.

With one paper in scope (a one-paper collection, or every candidate from one paper) the
question is answered. So it is when the evidence itself says which paper is meant although
several speak to it (`resolving_paper`; off by default, ClarifyParams.lead_share): one paper holds a majority of the queries' top chunks
(ClarifyParams.lead_share) and its sentence leads the evidence weighed above. The auditor
then audits the question again on that paper's chunks alone and answers from it, naming it
("In LongLLMLingua: ..."), or refuses saying that paper does not state it; when the majority
paper's sentence does not lead (another paper's answers better), the two compete and the
question is asked back. The rephrasings (`rephrasings`) put each of those papers in place of the
referent, best candidate first: "What learning rate did the authors of Sentence-BERT use?".
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from agent.local.compose import ComposeParams
from agent.local.text import anchor_terms, content_terms, term_set
from agent.types import Source

# "they"/"it" as a reference; not the empty "it" of "is it true that", "it is possible to".
_PRONOUN = (r"(?P<pro>they|them|their|its|it(?!\s+(?:(?:is|was|would\s+be)\s+)?(?:true|possible|likely|necessary|"
            r"known|clear|important|the\s+case)\b))")
# A definite noun for one paper's own thing, not said whose ("the model", "the authors";
# "the model of X" names it, and then the question has a name anyway): the paper, its
# authors, what it proposes, and the parts every empirical study has its own of (its
# baselines, annotators, data splits, metrics, results). A noun a participle qualifies
# ("the predicted queries", "the compressed prompts") is something the study itself made.
_OWN = (r"(?P<det>the|this|these)\s+(?P<adj>(?:proposed|main|new|final|best|original|presented|introduced)\s+)?"
        r"(?P<noun>models?|paper|authors?|methods?|approach|system|framework|architecture|dataset|benchmark|"
        r"study|work|technique|algorithm|retriever|experiments?|baselines?|annotators?|corpus|metrics?|results?|"
        r"(?:training|test|development|dev|evaluation|validation)\s+(?:sets?|splits?|data)|"
        r"[a-z]+ed\s+(?!by\b|to\b|with\b|in\b|on\b|for\b|from\b|as\b)[a-z]+s)")
_REFERENT = re.compile(rf"\b(?:{_PRONOUN}|{_OWN})\b", re.IGNORECASE)
# Nouns that stand for the paper itself (replaced by its name), and those for its authors.
_PAPER = frozenset({"paper", "study", "work"})
_AUTHORS = frozenset({"authors", "author"})
_CLAUSE_BREAK = re.compile(r"[,;:]|[.?!]\s|\band\b", re.IGNORECASE)
_ARXIV_ID = re.compile(r"^\d{4}\.\d{4,5}(?:v\d+)?[\s_]+")


@dataclass(frozen=True)
class ClarifyParams:
    """Which answering candidates count as the question's possible answers. Chosen on the
    calibration halves (docs/benchmarks.md, "Clarify from evidence", stop 28)."""

    # A paper counts when its best candidate's P(answers) is at least `ratio` of the best
    # candidate's, and is among the `top` candidates of the need.
    ratio: float = 0.5
    top: int = 5
    # Two papers' best sentences sharing this share of their terms give the same answer.
    same_jaccard: float = 0.6
    # With no answering sentence: a paper counts when its most relevant sentence's support is
    # at least this share of the most relevant one's (among the `top` most relevant).
    relevant_ratio: float = 0.8
    # At most this many rephrasings (the UI offers each as a button).
    limit: int = 4
    # An answer quotes its need's first `shown` sentences, the next ones when their P(answers)
    # is within `quoted_margin` of the best one's: when those are from two papers, the answer
    # itself says the question is not about one paper. The generator decides what is quoted,
    # so both are its values (agent.local.compose.ComposeParams.per_fact, .margin), not copies.
    shown: int = ComposeParams.per_fact
    quoted_margin: float = ComposeParams.margin
    # Asked of a collection, a question about "they" is still about one paper when that paper
    # holds at least this share of the queries' top chunks and leads the evidence
    # (`resolving_paper`): it is answered (or refused) from that paper, saying which. Above 1:
    # never, the default: 0.5 (any of 0.3-0.57 on the calibration halves) refused one more
    # unanswerable calibration question, but held out it answered two unanswerable ones
    # another paper states and a vague "is it better?", and no answerable one
    # (docs/benchmarks.md, "One paper in mind", stop 30).
    lead_share: float = 1.01


def unresolved_referent(question: str) -> str:
    """The referent the question leaves unresolved ("they", "the model"), or "" when it has
    none or names something (then the name, not the referent, says what it is about)."""
    if anchor_terms(question):
        return ""
    m = _REFERENT.search(question)
    if not m:
        return ""
    # An earlier clause or sentence that says something is what it refers to ("What is 'late
    # chunking', and how does it differ ...", "For the rewriter: what model is it ...").
    before = question[: m.start()]
    earlier = _CLAUSE_BREAK.split(before)[:-1]
    return "" if any(content_terms(c) for c in earlier) else m.group(0)


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


# A name as papers write their system's: a capital or digit past its first letter ("E5",
# "MIRAGE", "In-Context RALM", "monoT5"), one or two such words.
_NAME_WORD = r"[A-Za-z][A-Za-z0-9]*(?:-[A-Za-z0-9]+)*"
_NAME = rf"{_NAME_WORD}(?:\s+{_NAME_WORD})?"
# Where a paper gives its system a name: "This paper presents E5", "we dub In-Context RALM",
# "we propose the Medical ... Evaluation (MIRAGE)".
_NAMING = re.compile(
    rf"\b(?:presents?|propos(?:es?|ed)|introduc(?:es?|ed)|dub(?:bed)?|call(?:ed)?|named|termed)\s+"
    rf"(?:(?:the|a|an)\s+[^.()]{{0,120}}?\((?P<acronym>[A-Z][A-Za-z0-9-]+)\)|(?P<name>{_NAME})\b(?![-\w]))")
# It is the name the text uses when the text says it this many times.
NAME_MIN_MENTIONS = 3


def _name_like(word: str) -> bool:
    return any(ch.isupper() or ch.isdigit() for ch in word[1:])


def short_name(title: str, text: str) -> str:
    """The short name a paper's text gives what it presents ("E5" of "This paper presents E5,
    a family of ...", "In-Context RALM" of "... we dub In-Context RALM"), found in `text` (its
    opening: title, abstract, introduction) and said there at least NAME_MIN_MENTIONS times;
    else "". A title that starts with a short name ("Sentence-BERT: ...") needs none."""
    head, colon, _ = title.partition(":")
    if colon and 0 < len(head.split()) <= 3:
        return ""
    for m in _NAMING.finditer(text):
        words = (m.group("name") or m.group("acronym") or "").split()
        # The name's words, as long as they look like one ("E5" of "E5 1", not "a family").
        name = " ".join(words[: next((i for i, w in enumerate(words) if not _name_like(w)), len(words))])
        if name and len(re.findall(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text)) >= NAME_MIN_MENTIONS:
            return name
    return ""


def paper_name(source: Source) -> str:
    """How a rephrasing names a paper: the short name its text uses (Source.document_name,
    `short_name`), else the short name a title starts with ("Sentence-BERT" of
    "Sentence-BERT: Sentence Embeddings ..."), else the quoted title, without an arXiv id a
    file-name title starts with."""
    if source.document_name:
        return source.document_name
    title = _ARXIV_ID.sub("", (source.document_title or source.file_name).strip()).strip()
    title = re.sub(r"\.(?:pdf|md|txt|html?)$", "", title, flags=re.IGNORECASE)
    head, colon, _ = title.partition(":")
    if colon and 0 < len(head.split()) <= 3:
        return head.strip()
    return f'"{title}"' if len(title.split()) > 1 else title


def paper_key(source: Source) -> object:
    """What tells one paper from another: its document id, else its title."""
    return source.document_id if source.document_id is not None else source.document_title


def answering_papers(ranked: list[tuple[float, Source, str]], params: ClarifyParams | None = None, *,
                     ratio: float | None = None) -> list[Source]:
    """The papers whose sentences answer the need differently, best first: one source per
    paper (`ranked`: the need's candidates, best first, as (P(answers), source, quote)).
    Documents whose titles or best sentences are near-duplicates (two versions of one
    preprint) are one paper."""
    p = params or ClarifyParams()
    if not ranked:
        return []
    floor = ranked[0][0] * (p.ratio if ratio is None else ratio)
    kept: list[tuple[Source, set[str], set[str]]] = []
    seen: set[object] = set()
    for answers, source, quote in ranked[: p.top]:
        key = paper_key(source)
        if answers < floor or key in seen:
            continue
        seen.add(key)
        title, said = term_set(source.document_title or source.file_name), term_set(quote)
        if any(_jaccard(title, t) >= p.same_jaccard or _jaccard(said, s) >= p.same_jaccard for _, t, s in kept):
            continue
        kept.append((source, title, said))
    return [s for s, _, _ in kept]


def rephrase(question: str, referent: str, name: str) -> str:
    """The question with `name` in place of its first unresolved referent: "they" and "the
    authors" become "the authors of X", "it" and "the paper" X, "its"/"their" X's, "the
    model" "the model in X". A possessive of a quoted title reads badly: then "In X, ...".
    """
    m = _REFERENT.search(question)
    if not m:
        return f"In {name}, {question[:1].lower()}{question[1:]}"
    pro = (m.group("pro") or "").lower()
    noun = (m.group("noun") or "").lower()
    if pro in ("its", "their") or (pro == "it" and name.startswith('"')):
        if name.startswith('"'):
            return f"In {name}, {question[:1].lower()}{question[1:]}"
        swap = f"{name}'s"
    elif pro == "it" or noun in _PAPER:
        swap = name
    elif pro in ("they", "them") or noun in _AUTHORS:
        swap = f"the authors of {name}"
    else:
        swap = f"{m.group('det').lower()} {m.group('adj') or ''}{m.group('noun')} in {name}"
    out = question[: m.start()] + swap + question[m.end():]
    return out[:1].upper() + out[1:]


def rephrasings(question: str, papers: list[Source], params: ClarifyParams | None = None) -> dict[str, list[int]]:
    """Each paper's rephrasing, best first, with the document ids it is to be asked of: asked
    of the whole collection, a rephrasing can still be read against another paper that names
    this one ("For BERT, we used ..." in a paper about T5), so the UI and the API ask it of its
    paper only."""
    p = params or ClarifyParams()
    referent = unresolved_referent(question)
    out: dict[str, list[int]] = {}
    for source in papers:
        q = rephrase(question, referent, paper_name(source))
        if q not in out and len(out) < p.limit:
            out[q] = [source.document_id] if source.document_id is not None else []
    return out


def quoted_papers(ranked: list[tuple[float, Source, str]], p: ClarifyParams) -> list[Source]:
    """The papers an answer would quote (ClarifyParams.shown, .quoted_margin), best first."""
    if not ranked:
        return []
    quoted = [r for r in ranked[: p.shown] if r[0] >= ranked[0][0] - p.quoted_margin]
    return answering_papers(quoted, p, ratio=0.0)


def clarify_from_evidence(question: str, ranked: list[tuple[float, Source, str]],
                          params: ClarifyParams | None = None, *,
                          relevant: list[tuple[float, Source, str]] | None = None,
                          answered: bool = False) -> dict[str, list[int]]:
    """The rephrasings to offer instead of an answer, each with the ids of the documents it is
    about (see the module docstring and `rephrasings`), or {} when
    the question is to be answered: it names what it is about, has no unresolved referent, or
    its answering candidates come from one paper or say the same thing. `ranked`: the need's
    answering candidates, best first, as (P(answers), source, quote); `relevant`, given when
    nothing answers it: its most relevant sentences, as (support, source, quote); `answered`:
    the audit answers the need, so its first ClarifyParams.shown candidates would be quoted."""
    p = params or ClarifyParams()
    if not unresolved_referent(question):
        return {}
    papers = answering_papers(ranked, p)
    if len(papers) < 2 and answered:
        papers = quoted_papers(ranked, p)
    if len(papers) < 2 and relevant:
        papers = answering_papers(relevant, p, ratio=p.relevant_ratio)
    return rephrasings(question, papers, p) if len(papers) >= 2 else {}


def resolving_paper(ranked: list[tuple[float, Source, str]], sources: list[Source],
                    params: ClarifyParams | None = None, *,
                    relevant: list[tuple[float, Source, str]] | None = None) -> Source | None:
    """The one paper the evidence points to although several papers' sentences speak to the
    question, or None when two or more compete: the paper that holds a majority of the
    queries' top chunks (at least ClarifyParams.lead_share of the `sources` not in the deeper
    pool, more than any other paper) and whose sentence leads the evidence clarify weighs
    (the best answering candidate of `ranked`, or the most relevant sentence of `relevant`
    when nothing answers). Retrieval ranks a chunk by all of the question's words, so a
    majority says the question's own terms ("the predicted queries", "per document") are
    that paper's; an answering sentence from another paper says a rival reading exists."""
    p = params or ClarifyParams()
    top = [s for s in sources if not s.pool]
    led = relevant or ranked
    if not top or not led:
        return None
    counts = Counter(paper_key(s) for s in top).most_common(2)
    key, held = counts[0]
    if held / len(top) < p.lead_share or (len(counts) > 1 and counts[1][1] == held):
        return None
    return led[0][1] if paper_key(led[0][1]) == key else None
