"""Rule-based planner: complexity, facts, 1-3 sub-queries and the question's premise.

1. Split the question into sentences; a declarative sentence before the question is a
   premise the question takes for granted ("BEIR includes a docT5query baseline. How...").
2. A comparison ("X and Y both ...", "between X and Y", "X vs Y", "compare X with Y",
   "Did each of them ...: X and Y") yields one sub-query per side, each with the shared topic.
3. Otherwise each asking clause ("..., and how ...?") becomes a need (a fact that asks) and a
   sub-query, carrying the subject the question named before it (`_needs`).
4. Every question presupposes something, whatever its form, and that is the premise the
   auditor checks: "Why/How/When does X do Y?" presupposes X does Y; "What/Which N does X
   do?" presupposes X does some N; "Who invented X?" that someone invented X; "Since X,
   ..." / "Following X, ..." / "Now that X, ..." / "After X did Y, ..." presuppose X; a
   request embeds one ("Explain why X does Y"); "In what way / At which layer does X do
   Y?" presupposes X does Y; a question word left in place ("X was trained on how many
   N?") presupposes the statement without it. A yes/no question asks its proposition
   rather than presupposing it, and "What is X?" presupposes only that X exists.
   Plan.premises lists them all: a stated claim, each question clause's, and a relative
   clause's inside one; Plan.premise is the first.
5. A question with nothing specific to search for ("what about the results?", "summarize
   it") is marked `clarify="vague"`; a request to summarise or compare whole papers,
   which an extractive backend cannot do, `clarify="whole_document"`.
"""

from __future__ import annotations

import re

from agent.local.contradiction import spell_digits
from agent.local.text import STOPWORDS, american_spelling, anchor_terms, content_terms
from agent.types import Complexity, Plan
from knowledge.text.classify import PARTICIPLE as _PARTICIPLE
from knowledge.text.classify import has_verb

_WH = r"(?:what|how|which|who|whom|when|where|why|did|does|do|is|are|was|were|can|could|has|have)"
_CLAUSE_SPLIT = re.compile(rf",?\s+and\s+(?={_WH}\b)|;\s+", re.IGNORECASE)
_SENTENCES = re.compile(r"(?<=[.?!])\s+(?=[A-Z])")
_COMPARISONS = [
    re.compile(r"^how\s+(?:do|does|did)\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+(?:differ|compare)\b(?P<rest>.*)$", re.IGNORECASE),
    re.compile(r"^(?P<a>.+?)\s+and\s+(?P<b>.+?)\s+both\b(?P<rest>.*)$", re.IGNORECASE),
    re.compile(r"\bbetween\s+(?P<a>.+?)\s+and\s+(?P<b>.+?)(?P<rest>[?.,].*|$)", re.IGNORECASE),
    re.compile(r"^(?P<pre>.*?)\b(?P<a>[\w\-\. ]+?)\s+(?:vs\.?|versus)\s+(?P<b>[\w\-\. ]+)(?P<rest>.*)$", re.IGNORECASE),
    re.compile(r"\bcompare\s+(?P<a>.+?)\s+(?:with|to|and)\s+(?P<b>.+?)(?P<rest>[?.,].*|$)", re.IGNORECASE),
    re.compile(r"^(?P<pre>.*?):\s+(?P<a>[^:]+?)\s+and\s+(?P<b>(?:the\s+)?[^:.]+?)\.\s*(?P<rest>.*)$", re.IGNORECASE),
]
_AUX = r"(?:do|does|did|is|are|was|were|has|have|had|can|could|would|will|should)"
# "Compare the D of A with those of B": one dimension, asked of each side.
_COMPARE_OF = re.compile(r"\bcompare\s+(?P<dim>.+)\s+of\s+(?P<a>.+?)\s+(?:with|to|against)\s+(?:that|those)\s+of\s+"
                         r"(?P<b>.+?)\s*[?.!]*$", re.IGNORECASE)
_SINCE_PREMISE = re.compile(r"^(?:since|given that|because|as|now that|seeing that|considering that)\s+(?P<body>[^,]+),",
                            re.IGNORECASE)
# "After/Once X did Y, ..." presupposes that X did Y, when the clause names something and
# has a verb ("After training, ..." is no clause; "Once the index is built, ..." is a step of
# a procedure, not a claim: both are left to the main clause).
_TEMPORAL_PREMISE = re.compile(
    r"^(?i:after|once)\s+(?P<body>[^,]*?\b[A-Z][\w\-\.]*[^,]*?\b(?:\w+ed|is|are|was|were|has|have|had)\b[^,]*),")
# A request that embeds a question ("Explain why X does Y", "Tell me how X does Y")
# presupposes what the embedded question does; its clause is already in statement order.
_REQUEST = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would)\s+you\s+)?(?:please\s+)?(?:explain|describe|tell\s+me|show\s+me|"
    r"clarify|outline|say|i\s+wonder|i'?d\s+like\s+to\s+know|i\s+want\s+to\s+know)\s+"
    r"(?:(?P<noun_wh>what|which|how\s+many|how\s+much)\s+(?P<noun>[\w\-]+)\s+(?P<clause>[A-Z]?[\w\-'\.]+\s.+)"
    r"|(?P<wh>why|how|when|where|whether|if)\s+(?P<body>.+))$",
    re.IGNORECASE)
# "In what way / To what extent / At which layer does X do Y": X does Y (at some layer).
_PREP_WH = re.compile(
    rf"^(?P<prep>in|to|at|for|by|on|from|with|under|into|through|during|of)\s+(?:what|which|whose|how\s+many)\s+"
    rf"(?P<noun>[\w\-]+(?:\s+[\w\-]+)?)\s+(?P<aux>{_AUX})\s+(?P<body>.+?)\??$",
    re.IGNORECASE)
_MANNER_NOUNS = frozenset({"way", "ways", "extent", "reason", "degree", "sense", "purpose", "manner", "respect",
                           "end", "point"})
# "Lumen reranks passages with which model?": the question word in place of the thing asked.
# Not after a clause break ("..., which is faster?", "Compare X: how many N?" ask questions of
# their own), nor before a verb, nor in a request ("Compare X with Y ...").
_IN_SITU = re.compile(rf"(?<![,:;] )\b(?:which|what|how\s+many|how\s+much)\s+(?!{_AUX}\b)(?=[\w\-]+)", re.IGNORECASE)
_IMPERATIVE = re.compile(r"^(?:please\s+)?(?:compare|contrast|list|name|give|explain|describe|tell|show|summari[sz]e|"
                         r"outline|find|state|report|define|identify|specify|enumerate|discuss|characteri[sz]e)\b",
                         re.IGNORECASE)
_COMPARE_VERB = re.compile(r"\b(?:compare[sd]?|differ[s]?|stack\s+up|measure\s+up)\s+(?:to|with|against|from)\b",
                           re.IGNORECASE)
_HOW_COME = re.compile(r"^how\s+come\s+(?P<body>.+?)\??$", re.IGNORECASE)
_FOLLOWING = re.compile(r"^following\s+[^,]+,\s*(?P<body>.+)$", re.IGNORECASE)
# "How/When/Where does X do Y" -> "X do Y"; "How many N did X use" -> "X use N";
# "How long/often/well does X do Y" -> "X do Y" (the degree is what is asked).
_WH_AUX = re.compile(
    rf"^(?P<wh>how|when|where|why)(?:\s+(?:many|much)(?:\s+(?P<noun>[\w\-\s]+?))?"
    rf"|\s+(?:long|often|far|well|fast|large|big|small|old|soon|early|late|frequently|accurately))?"
    rf"\s+(?P<aux>{_AUX})\s+(?P<body>.+?)\??$",
    re.IGNORECASE)
# "What is the reason (that) X ..." / "What makes X do Y" / "What allows X to Y": a question
# about a cause presupposes its effect ("X ...", "X do Y").
_CAUSE = re.compile(
    r"^(?:what\s+(?:is|was|are|were)\s+the\s+(?:main\s+)?(?:reason|reasons|cause|causes|explanation|motivation)"
    r"\s+(?:that|why|for\s+which|behind|for)?\s*"
    r"|what\s+(?P<verb>makes|made|make|causes|caused|allows|allowed|enables|enabled|lets|let|leads|led|explains"
    r"|explained|drives|drove|motivates|motivated|prompts|prompted|inspires|inspired|forces|forced|pushes|pushed"
    r"|encourages|encouraged|permits|permitted)\s+(?:to\s+)?)(?P<body>.+?)\??$",
    re.IGNORECASE)
# "..., which/who uses eight experts" / "the model that Lumen distilled": a relative clause
# presupposes what it says of the noun it qualifies, in any question form (yes/no too).
_NONRESTRICTIVE = re.compile(
    r"(?P<np>(?:\b(?:the|its|their|a|an)\s+)?(?:[\w\-\.]+\s+){0,2}[\w\-\.]+),\s+(?:which|who)\s+"
    r"(?!(?:is|are|was|were)\s+(?!\w+(?:ed|en)\b)|of\b)(?P<rel>[a-z][\w\-]*\s+[^,?]+)", re.IGNORECASE)
# A relative clause set off by commas inside a question: an aside the main clause reads without.
_ASIDE = re.compile(r",\s+(?:which|who)\s+[^,?]+,")
_RESTRICTIVE = re.compile(
    r"\bthe\s+(?P<n>[\w\-]+(?:\s+[\w\-]+)?)\s+(?:that|which|whom)\s+"
    r"(?P<subj>[A-Z][\w\-\.]*(?:\s+[A-Z][\w\-\.]*)*|the\s+[\w\-]+|it|they|we)\s+(?P<verb>[a-z]+(?:ed|s))\b")
# "What/Which N does X do" -> "X do N" (that some N exists that X does).
_WHAT_NOUN_AUX = re.compile(
    rf"^(?:what|which)\s+(?P<noun>(?:[\w\-]+\s+){{0,3}}?[\w\-]+)\s+(?P<aux>{_AUX})\s+(?P<body>.+?)\??$",
    re.IGNORECASE)
_BE = frozenset({"is", "are", "was", "were"})
# Before a participle these make it an adjective ("the unsupervised evaluation"), not a passive's verb.
_DETERMINERS = frozenset({"the", "a", "an", "its", "their", "his", "her", "our", "this", "these", "those", "each",
                          "every", "some", "any", "no"})
# "What does X measure/mean/stand for?" asks for a definition, as "What is X?" does: it
# presupposes only X. (In the past, "What did the authors measure?" asks what was measured.)
_DEFINITION = re.compile(r"^what\s+(?:does|do)\s+.+\s+(?:measure|mean|stand\s+for|refer\s+to|denote|represent)$",
                         re.IGNORECASE)
# "What did X invent" -> "X invent (something)".
_WHAT_AUX = re.compile(r"^(?:what|whom|who)\s+(?P<aux>do|does|did|has|have|had)\s+(?P<body>.+?)\??$",
                       re.IGNORECASE)
# "Who invented X" / "Which model outperforms X" -> "someone invented X" / "model outperforms X".
_WHO_VERB = re.compile(r"^(?:who|which\s+(?!(?:in|on|at|for|with|from|of|by|to|during|under|within|across|among|about)\b)"
                       r"(?P<noun>[\w\-]+))\s+(?P<body>(?!is\b|are\b|was\b|were\b)[a-z]\w+\s+.+?)\??$",
                       re.IGNORECASE)
# "Which of the 10 languages of X has the most N?" -> "one of the 10 languages of X has the most N".
_WHICH_OF = re.compile(r"^(?:which|who)\s+of\s+(?P<rest>the\s+.+?)\??$", re.IGNORECASE)
_VERB_FORM = re.compile(rf"^(?:{_AUX}|\w+ed|\w+s)$", re.IGNORECASE)
# Words that name no paper, result or term: a question made only of these is vague.
_GENERIC = frozenset(content_terms(
    "result results finding findings conclusion conclusions summary summarize summarise overview it this that "
    "they them paper papers work study studies method methods approach approaches main key tell explain more "
    "detail details thing things stuff idea ideas point points contribution contributions anything everything "
    "interesting important discuss say says said mention mentioned talk document documents article articles "
    "section part here there about now else also well good bad new novel gist takeaway takeaways please "
    "describe description show list give happen happened going know mean meant these those one ones "
    "compare comparison contrast difference differences differ similarity similarities common"
))
_COLLECTION = frozenset(content_terms("collection corpus"))
_WHOLE_DOCUMENT = re.compile(
    r"\b(?:summari[sz]e|summary of|sum up|overview of|tl;?dr|give me the gist|gist of|literature review|"
    r"(?:compare|contrast) (?:the|these|those|all|both)?\s*(?:two\s+|three\s+)?(?:papers|documents|articles))\b"
    r"|\bwhat (?:is|are) (?:the |this |these )?(?:[\w\-]+ ){0,3}(?:papers?|articles?|documents?) about\b",
    re.IGNORECASE)
# "Compare the Lumen paper with the Quill paper", "What do these papers have in common?": a
# comparison of whole papers, when nothing narrower than the papers is named.
_WHOLE_COMPARISON = re.compile(
    r"\b(?:compare|comparison|contrast|differences?|similarities|in common|differ)\b", re.IGNORECASE)
_DOCUMENT_NOUN = re.compile(r"\b(?:papers?|articles?|documents?|studies|collection|works)\b", re.IGNORECASE)



def _clean(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" ,;")


def _side(text: str) -> str:
    text = re.sub(r"^(?:the|a|an|both|how do|how does|did|does)\s+", "", _clean(text), flags=re.IGNORECASE)
    return text


def _is_question(sentence: str) -> bool:
    """An asking sentence: a question, or a request ("Compare A with B.", "List the ..."),
    which asks as much as a question and claims nothing."""
    return (sentence.rstrip().endswith("?") or bool(re.match(rf"^{_WH}\b", sentence, re.IGNORECASE))
            or bool(_IMPERATIVE.match(sentence.strip())) or bool(_ASK_LEAD.match(sentence.strip())))


def _topic(text: str, drop: str = "") -> str:
    """The content words of `text`, without those of `drop`: the shared part of a comparison."""
    dropped = set(content_terms(drop + " compare comparison differ difference"))
    kept = [w for w in re.findall(r"[\w\-\.@']+", text) if content_terms(w) and content_terms(w)[0] not in dropped]
    return " ".join(kept[:12])


# A full stop that ends an abbreviation ends no sentence ("In the Gao et al. RAG survey, ...").
_ABBREVIATION = re.compile(r"\b(?:et\s+al|e\.g|i\.e|cf|vs|fig|eq|sec|no|approx|resp)\.$", re.IGNORECASE)
_PRONOUN = re.compile(r"\b(?:it|they|them)\b", re.IGNORECASE)


def _whole_sentences(sentences: list[str]) -> list[str]:
    """The sentences, a piece cut after an abbreviation joined to the piece after it."""
    out: list[str] = []
    for s in sentences:
        if out and _ABBREVIATION.search(out[-1]) and not re.match(rf"{_WH}\b", s, re.IGNORECASE):
            out[-1] = f"{out[-1]} {s}"
        else:
            out.append(s)
    return out


def _names_of(text: str) -> set[str]:
    """The text's names ("Doc2query", "E5", "BERT", a capitalised first word: "Ragas use ..."),
    not its plain numbers ("16", "0.05")."""
    from agent.local.text import stem

    first = re.match(r"\s*([A-Z][\w\-]+)", text)
    lead = {stem(first.group(1).lower())} if first and first.group(1).lower() not in STOPWORDS else set()
    return lead | {a for a in anchor_terms(text) if not re.fullmatch(r"[\d.,%]+", a)}


def _well_formed(presupposed: str, clause: str) -> bool:
    """Whether a question clause's presupposition has a subject of its own: one that names
    nothing and whose subject is the very thing asked ("some share are copied from the input
    document", cut from "Of the words Doc2query predicts, what share are new and what share
    are copied ...?"; "left afterwards text pairs"), that only says some N exists ("weight
    decay has some effect on recall"), or a pronoun standing for something named
    elsewhere ("which algorithm fine-tunes it") says nothing a sentence could deny."""
    if _names_of(presupposed):
        return True
    noun = asked_noun(clause).lower()
    text = presupposed.lower()
    headless = text.startswith("some ") or (bool(noun) and (text.startswith(noun) or text.endswith(noun)
                                                             or f"some {noun}" in text))
    return not headless and not _PRONOUN.search(presupposed)


def _premises(sentences: list[str]) -> list[str]:
    """Every presupposition of the question, a stated claim first ("X reportedly costs 25%
    more. Why ...?" presupposes the claim, and what the "why" question does too). A clause's
    presupposition that lost its subject is left out (_well_formed)."""
    found: list[str] = []
    asks = []
    sentences = _whole_sentences(sentences)
    for s in sentences:
        if not _is_question(s) and not _REQUEST.match(_clean(s).rstrip(".")):
            m = _FOLLOWING.match(s.strip())
            found.append(_clean(m.group("body") if m else s))
        else:
            asks.append(s)
    for s in asks:
        # "Which X did Y, and what do they recommend?": each clause presupposes its own, and
        # a relative clause inside one what it says ("Why does Quill, which uses eight
        # experts, route ...?" presupposes that Quill uses eight experts as well).
        clauses = [_clean(c) for c in _CLAUSE_SPLIT.split(s)]
        for n, clause in enumerate(clauses):
            # "..., and which in the Y paper?" asks the first clause's question of another place.
            clause = _borrowed(clauses[0], clause) if n else clause
            found.extend(p for p in (presupposition(_ASIDE.sub("", clause)), _relative_clause(clause.rstrip("?").strip()))
                         if p and _well_formed(p, clause) and not _fragment(p))
    return [p for p in dict.fromkeys(_clean(p).rstrip(".") for p in found) if p]


_PREPOSITION = r"(?:in|on|at|for|with|from|by|during|under|within|across|among|over|after|before)"
# A later clause that is a question word and a place or time only: "and which in the Y paper?".
_ELIDED_PLACE = re.compile(rf"^(?:which|what|who|where|when|how\s+many|how\s+much)\s+(?P<pp>{_PREPOSITION}\s+.+?)\??$",
                           re.IGNORECASE)


def _borrowed(first: str, clause: str) -> str:
    """A later clause that gives only another place, time or condition borrows the first
    clause's relation: "Which toolkit gave the baseline in paper A, and which in paper B?"
    -> "Which toolkit gave the baseline in paper B?" (the first clause's own phrase with that
    preposition replaced, or the new one added). Any other clause is returned as it is."""
    m = _ELIDED_PLACE.match(clause)
    if not m or _has_verb(m.group("pp")):
        return clause
    pp = m.group("pp")
    prep = pp.split()[0]
    head = first.rstrip("?").rstrip()
    at = [x.start() for x in re.finditer(rf"\b{re.escape(prep)}\s+", head, re.IGNORECASE)]
    return f"{head[:at[-1]].rstrip()} {pp}?" if at else f"{head} {pp}?"


def _has_verb(text: str) -> bool:
    """Whether the text holds a finite verb or a participle: "in the paper that was published"
    does, "in the Y paper" not (knowledge.text.classify.has_verb on a phrase)."""
    return has_verb(text.split(), phrase=True)


def _fragment(presupposed: str) -> bool:
    """A presupposition that is a prepositional phrase with no verb ("in the Y paper", cut
    from "..., and which in the Y paper?") states nothing a sentence could assert or deny."""
    return bool(re.match(rf"{_PREPOSITION}\b", presupposed, re.IGNORECASE)) and not _has_verb(presupposed)


def presupposition(question: str) -> str:
    """What the question takes for granted, as a statement ("" for yes/no and "what is X")."""
    q = _clean(question).rstrip("?").strip()
    # A dash adds a second question ("How big is X — how many N?"): the first one presupposes.
    # A dash inside a name (a model and its variant: "Quill \u2013 Chat") or an aside adds no question: it stays.
    q = re.split(rf"\s+(?:[\u2014\u2013]|--)\s+(?={_WH}\b)", q, flags=re.IGNORECASE)[0]
    # A request ends with a full stop ("Explain why X does Y.").
    q = q.removesuffix(".") if _REQUEST.match(q) else q
    m = _SINCE_PREMISE.match(q) or _TEMPORAL_PREMISE.match(q)
    if m:
        return _clean(m.group("body"))
    m = _REQUEST.match(q)
    if m:
        if m.group("noun"):
            return _clean(f"{m.group('clause')} {m.group('noun')}")
        return "" if m.group("wh").lower() in ("whether", "if") else _clean(m.group("body"))
    m = _FOLLOWING.match(q)
    if m:
        return presupposition(m.group("body")) or _clean(m.group("body"))
    # A leading clause ("When a model is used as a reranker, how is ...") is context; a
    # place or subject ("In Quill, how are ...") stays with the claim it situates.
    if "," in q and not re.match(r"^(?:why|how|what|which|who|when|where)\b[^,]*\?", q, re.IGNORECASE):
        head, _, tail = q.partition(",")
        if re.match(r"^(?:when|if|in|for|on|after|once|during|according to)\b", head, re.IGNORECASE) and tail.strip():
            inner = presupposition(tail.strip())
            if inner and re.match(r"^(?:in|for|on)\s+\S", head, re.IGNORECASE):
                return _clean(f"{inner} {head[0].lower()}{head[1:]}")
            return inner
    found = _main_presupposition(q)
    return found or _relative_clause(q)


def asked_noun(question: str) -> str:
    """The noun a "how many N" / "which N" / "what N" question asks about ("" for other forms):
    in the presupposition it names the kind of thing asked for, not a value the question
    asserts ("How many GPUs were used" does not claim anything about GPUs being a name)."""
    q = _clean(question).rstrip("?").strip()
    if "," in q:
        head, _, tail = q.partition(",")
        if re.match(r"^(?:when|if|in|for|on|after|once|during|according to)\b", head, re.IGNORECASE) and tail.strip():
            q = tail.strip()
    m = _WH_AUX.match(q)
    if m and m.group("noun"):
        return _clean(m.group("noun"))
    m = _WHAT_NOUN_AUX.match(q) or _WHO_VERB.match(q)
    return _clean(m.group("noun") or "") if m else ""


def asked_nouns(question: str) -> str:
    """The nouns every question clause asks about ("What does it measure, and what value did
    X have?" -> "value"), joined: each presupposition names its own as a kind."""
    clauses = [_clean(c) for s in _SENTENCES.split(_clean(question)) for c in _CLAUSE_SPLIT.split(s)]
    return " ".join(dict.fromkeys(n for n in map(asked_noun, clauses) if n))


_LEAD_PHRASE = re.compile(r"^(?:in|for|on|within|across|among|according\s+to)\b[^,]*,$", re.IGNORECASE)
# "Which N is the one where/that X does Y": the N is what the clause describes, so the clause is presupposed.
_EQUATIVE = re.compile(r"^the\s+(?:[\w\-]+\s+){0,2}?(?:where|that|which|in\s+which|on\s+which|for\s+which|when)\s+"
                       r"(?P<clause>.+)$", re.IGNORECASE)


def _relative_clause(q: str) -> str:
    """What a relative clause of the question says of its noun ("" when there is none)."""
    m = _NONRESTRICTIVE.search(q)
    # "In the X survey, which steps make up Y": the comma ends a leading phrase, and "which"
    # asks the question; it qualifies no noun.
    if m and _LEAD_PHRASE.match(q[:m.end("np") + 1]):
        m = None
    if m:
        np = re.sub(rf"^{_WH}\s+", "", m.group("np"), flags=re.IGNORECASE)
        # The clause qualifies the nearest noun: the name just before the comma, if there is one
        # ("the accuracy of Quill, which uses ..." says that Quill uses ...).
        name = re.search(r"(?:\b[A-Z][\w\-\.]*\s+)*\b[A-Z][\w\-\.]*$", np)
        np = name.group(0) if name and name.start() > 0 else re.sub(r"^.*\b(?:of|with|for|in|on|by|from|to)\s+", "",
                                                                   np, flags=re.IGNORECASE)
        return _clean(f"{np} {m.group('rel')}")
    m = _RESTRICTIVE.search(q)
    if m:
        return _clean(f"{m.group('subj')} {m.group('verb')} the {m.group('n')}")
    return ""


def _main_presupposition(q: str) -> str:
    """The presupposition carried by the question's own form (see presupposition)."""
    m = _CAUSE.match(q)
    if m:
        body = m.group("body")
        if m.group("verb"):
            # "What allowed/motivated/led X to do Y?" -> "X do Y" ("What makes X do Y?" has no "to").
            body = re.sub(r"^(\S+(?:\s+\S+){0,4}?)\s+to\s+", r"\1 ", body, count=1)
        return _clean(body)
    m = _HOW_COME.match(q)
    if m:
        return _clean(m.group("body"))
    m = _PREP_WH.match(q)
    if m:
        noun = m.group("noun")
        if noun.lower() in _MANNER_NOUNS:
            return _clean(m.group("body"))
        return _clean(f"{m.group('body')} {m.group('prep').lower()} {noun}")
    m = _WH_AUX.match(q)
    if m:
        noun = m.group("noun") or ""
        body = m.group("body")
        # "How does A compare to B?" asks the comparison, as a yes/no question asks its
        # proposition: nothing is taken for granted beyond A and B.
        if m.group("wh").lower() == "how" and not noun and _COMPARE_VERB.search(body):
            return ""
        return _clean(f"{body} {noun}" if noun else body)
    m = _WHAT_NOUN_AUX.match(q)
    if m and m.group("noun").lower() not in _BE:
        if m.group("aux").lower() in _BE and len(m.group("body").split()) <= 2:
            return ""  # "What size is it?": nothing presupposed beyond the subject
        return _existential(m.group("noun"), m.group("aux"), m.group("body"))
    if _DEFINITION.match(q):
        return ""
    m = _WHAT_AUX.match(q)
    if m:
        return _clean(m.group("body"))
    m = _WHICH_OF.match(q)
    if m:
        return _which_of(m.group("rest"))
    m = _WHO_VERB.match(q)
    if m:
        return _clean(f"{m.group('noun') or ''} {m.group('body')}")
    # A statement with its question word in place ("Quill was trained on how many receipts?").
    if not re.match(rf"^{_WH}\b", q, re.IGNORECASE) and not _IMPERATIVE.match(q) and _IN_SITU.search(q):
        return _clean(_IN_SITU.sub("", q))
    return ""


def _which_of(rest: str) -> str:
    """ "the 10 languages of X has the most N" -> "one of the 10 languages of X has the most N":
    the verb is the first auxiliary or -s/-ed form not right after a determiner or a number
    (those make it the noun: "the two models performs")."""
    words = rest.split()
    for i in range(2, len(words)):
        before = words[i - 1].lower()
        if _VERB_FORM.match(words[i]) and before not in _DETERMINERS and not before[0].isdigit() \
                and not spell_digits(before)[0].isdigit():
            return _clean(f"one of {' '.join(words[:i])} {' '.join(words[i:])}")
    return ""


_HAVE = frozenset({"have", "has", "had"})
# "does X have" -> "X has": the tense and person that "do" carried pass to "have".
_HAVE_AFTER_DO = {"does": "has", "do": "have", "did": "had"}


def _existential(noun: str, aux: str, body: str) -> str:
    """What "What/Which N <aux> <body>?" presupposes, as a readable claim that some N exists:
    "What temperature is used to scale X?" -> "some temperature is used to scale X" (the N is
    the subject); "Which GPU were the experiments run on?" -> "the experiments were run on
    some GPU" (the passive keeps its "were"); otherwise the body and the noun ("What dropout
    rate do they use?" -> "they use dropout rate"), where the verb's place is not known.
    "have" is a verb wherever it stands, and its object is the noun asked: "What effect does X
    have on Y?" -> "X has some effect on Y", not "X have on Y effect"."""
    words = body.split()
    have = next((i for i in range(1, len(words)) if words[i].lower() in _HAVE), 0)
    # Only the subject stands before it: a comma or a question word there starts another
    # clause ("does X use for Y, and according to Z, how many N does it have").
    subject = " ".join(words[:have])
    if have and aux.lower() not in _BE and "," not in subject and not re.search(rf"\b{_WH}\b", subject, re.I):
        verb = _HAVE_AFTER_DO.get(aux.lower()) or f"{aux.lower()} {words[have].lower()}"
        return _clean(f"{subject} {verb} some {noun} {' '.join(words[have + 1:])}")
    if aux.lower() in _BE:
        m = _EQUATIVE.match(body)
        if m:
            return _clean(m.group("clause"))
        if _PARTICIPLE.match(words[0]):
            return _clean(f"some {noun} {aux.lower()} {body}")
        verb = next((i for i in range(len(words) - 1, 0, -1) if _PARTICIPLE.match(words[i])
                     and words[i - 1].lower() not in _DETERMINERS), 0)
        if verb:
            return _clean(f"{' '.join(words[:verb])} {aux.lower()} {' '.join(words[verb:])} some {noun}")
    return _clean(f"{body} {noun}")


# A number as a premise states it ("0.05", "25%", "16", "1,000"): not a size or a name ("1.5B", "GPT-4").
_PLAIN_NUMBER = re.compile(r"(?<![\w.\-])\d[\d,]*(?:\.\d+)?%?(?![\w\-])")


def _premise_query(premises: list[str]) -> list[str]:
    """The main premise as a query of its own, without its numbers, when it gives one: a false
    premise often gets a number wrong ("Why is the temperature set to 0.05 by default?"), and
    the wrong number pulls the search towards passages that hold it, away from the sentence
    that states the right one. Without the number the query finds the statement whatever it says."""
    if not premises or not _PLAIN_NUMBER.search(premises[0]):
        return []
    query = _clean(_PLAIN_NUMBER.sub(" ", premises[0]))
    return [query] if len(content_terms(query)) >= 3 else []


def clarification(question: str) -> str:
    """ "vague", "whole_document" or "" (see the module docstring)."""
    terms = [t for t in content_terms(question) if t not in _GENERIC]
    # Names with their parts: "Sentence-BERT" also names "sentenc" and "bert".
    names = {t for a in anchor_terms(question) for t in (a, *content_terms(a))}
    summary = bool(_WHOLE_DOCUMENT.search(question))
    whole = summary or bool(_WHOLE_COMPARISON.search(question))
    if not terms:
        # "Summarise the findings of all papers" names no paper but asks for a whole-paper task.
        return "whole_document" if whole and _DOCUMENT_NOUN.search(question) else "vague"
    if summary and len(terms) <= 6:
        return "whole_document"
    # A comparison where only the papers' names are specific has nothing narrower to compare.
    if whole and _DOCUMENT_NOUN.search(question) and not [t for t in terms if t not in names and t not in _COLLECTION]:
        return "whole_document"
    return ""


# Needs: every fact the planner hands the auditor is a question with an answer type.
# "What A and B does X do?" asks two things of the same clause.
_COORDINATED = re.compile(
    rf"^(?P<wh>what|which|how\s+many|how\s+much)\s+(?!{_AUX}\b)(?P<a>(?:[\w\-]+\s+){{0,3}}?[\w\-]+)\s+and\s+"
    rf"(?P<b>(?:[\w\-]+\s+){{0,3}}?[\w\-]+)\s+(?P<rest>{_AUX}\s+.+)$", re.IGNORECASE)
# "..., and roughly what share ...?", "..., and on which datasets ...?": a clause of its own.
_NEED_SPLIT = re.compile(rf",?\s+and\s+(?:\w+ly\s+)?(?=(?:(?:in|on|at|for|from|with|by|to|under|out\s+of)\s+)?{_WH}\b)"
                         r"|;\s+", re.IGNORECASE)
# "..., and how?": a question word alone asks it of the clause before.
_BARE_WH = re.compile(r"^(?P<wh>how|why|when|where)(?:\s+so)?\??$", re.IGNORECASE)
_ASKED_OF = re.compile(rf"^(?:what|which)\s+(?P<noun>.+?)\s+(?P<aux>{_AUX})\s+(?P<body>.+)$", re.IGNORECASE)
# The dimension a comparison is asked along: "differ in Z", "compare on Z", "differ with respect to Z".
_DIMENSION = re.compile(r"\b(?:differ|compare|contrast)s?\s+(?:in|on|by|with\s+respect\s+to|in\s+terms\s+of)\s+"
                        r"(?P<dim>[^?.;]+)", re.IGNORECASE)
# What a clause says before it asks: "In X, ...", "When building X, ...", "According to X, ...".
_LEAD_IN = re.compile(rf"^(?P<lead>[^,?]+),\s+(?={_WH}\b)", re.IGNORECASE)
_NAME_TOKEN = re.compile(r"[A-Za-z0-9][\w\-\.@/]*(?:'s)?")
_QUOTED = re.compile(r"(?<!\w)['\u2018\"\u201c](?P<term>[^'\u2019\"\u201d]{3,80})['\u2019\"\u201d](?!\w)")
# "it"/"its" as a reference, not the empty subject of "is it true that", "it is possible to".
_IT = re.compile(r"\b(?P<it>it|its)\b(?!\s+(?:(?:is|was|would\s+be)\s+)?(?:true|possible|likely|necessary|known|clear|"
                 r"important|the\s+case)\b)", re.IGNORECASE)


def _names(text: str) -> list[str]:
    """The names of a text, each a run of name words ("InstructRetro 43B", "XOR-TyDi QA"): a
    word with a capital after its first letter or a digit, or a capitalised word (at the start
    of a sentence, one that is no function word: a statement starts with its subject); and
    the terms it quotes ("the 'restrictive statement'")."""
    out: dict[str, None] = {}
    for sentence in _SENTENCES.split(text):
        run: list[str] = []
        for m in _NAME_TOKEN.finditer(sentence):
            token = m.group(0).rstrip(".")
            bare = token.removesuffix("'s")
            name = bare.lower() not in STOPWORDS and (any(c.isdigit() or c.isupper() for c in bare[1:])
                                                     or (bare[:1].isupper() and len(bare) > 2))
            if name:
                run.append(bare)
            if run and (not name or token != bare or (m.end() < len(sentence) and sentence[m.end()] in ",;:?")):
                out.setdefault(" ".join(run), None)
                run = []
        if run:
            out.setdefault(" ".join(run), None)
    for m in _QUOTED.finditer(text):
        out.setdefault(m.group("term").strip(), None)
    return list(out)


RESOLVE_NEEDS = True


_QUESTION_WORD = re.compile(r"\b(?:what|how|which|who|whom|whose|when|where|why|whether)\b", re.IGNORECASE)


def _stated(clause: str) -> bool:
    """A clause that states and asks nothing: no question word anywhere ("In X, how many
    ...", "X uses which model"), no request or yes/no question at its head, no question mark."""
    return not _is_question(clause) and not _QUESTION_WORD.search(clause) and not _REQUEST.match(clause.rstrip("."))


# A sentence about the asker ("I retrained X and ...", "My runs show ..."): what they did is
# neither a need nor a premise about a paper (a paper cannot confirm it).
_ASKER = re.compile(r"^(?:I|I'm|I've|I'd|My)\b")


def _about_asker(sentence: str) -> bool:
    return bool(_ASKER.match(sentence.strip())) and not _is_question(sentence)


def _needs(asks: list[str], statements: list[str]) -> list[str]:
    """Each asking clause of the question as a need of its own (at most three): a clause that
    comes after the first carries what the question said before it. Its lead-in ("In X, ...")
    comes along; "it"/"its" become the name it refers to when the question named exactly one
    thing before; a clause that names nothing said before is situated by that one name."""
    needs: list[str] = []
    said = " ".join(statements)
    for ask in asks:
        clauses = [_clean(c) for c in _NEED_SPLIT.split(ask) if _clean(c)]
        # "X saw the same thing; what was its explanation?": a clause that states, before the
        # clause that asks, is context for it (what the question said before), not a need;
        # it situates the question as a statement before it does.
        told = bool(statements)
        while len(clauses) > 1 and _stated(clauses[0]):
            said, told = _clean(f"{said} {clauses.pop(0)}"), True
        lead = _LEAD_IN.match(clauses[0]) if clauses else None
        for n, clause in enumerate(clauses):
            # "..., and which in the Y paper?" asks the first clause's question of another place,
            # which it names itself: nothing said before situates it.
            elided = bool(n) and _borrowed(clauses[0], clause) != clause
            clause = _borrowed(clauses[0], clause) if elided else clause
            bare = _BARE_WH.match(clause)
            if bare and n:
                clause = _elided(bare.group("wh"), clauses[n - 1])
            if n and RESOLVE_NEEDS:
                clause = _resolved(_with_subject(clause, clauses[0]), clauses[0], need=True)
            clause = _content_question(clause if n else _topic_resolved(clause))
            for part in _coordinated(clause):
                # The question a statement introduces is situated by it too ("X wants Y. Why not Z?").
                needs.append(part if not said or elided else _carry(part, said, lead.group("lead") if lead and n else "",
                                                          situate=bool(n) or told))
            said = _clean(f"{said} {clause}")
    return list(dict.fromkeys(needs))[:3]


# A lead-in that asks for the question after it ("Can you tell me what X caches", "I wonder
# whether X ...", "Do you know how many N ..."): the question it introduces is the need.
_ASK_LEAD = re.compile(
    r"^(?:please\s+)?(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?(?:tell|show)\s+me|do\s+you\s+know|"
    r"(?:does\s+)?any(?:one|body)\s+know|i\s+(?:am\s+)?wonder(?:ing)?|i'?m\s+(?:wondering|curious)|"
    r"i(?:'d|\s+would)\s+like\s+to\s+know|i\s+want\s+to\s+know|tell\s+me)\s+"
    r"(?P<content>(?P<wh>whether|if|what|which|who|whom|whose|when|where|why|how)\b.+)$", re.IGNORECASE)


def _content_question(clause: str) -> str:
    """The question a lead-in introduces: "Can you tell me which N X uses" -> "which N X uses?"
    (an embedded question, read by its question word, not as a yes/no one about the asker's
    listener); "I wonder whether X does Y" -> "Is it true that X does Y?"."""
    m = _ASK_LEAD.match(_clean(clause).rstrip(".?"))
    if not m:
        return clause
    if m.group("wh").lower() in ("whether", "if"):
        return _confirmation(m.group("content").split(None, 1)[1])
    return f"{m.group('content')}?"


# A topic the question announces before it asks ("For the X of Y: what ..., and which ... it?",
# "As for X, how ...?"); not a place ("In X, ...": "it" is rarely the place itself).
_TOPIC = re.compile(rf"^(?:for|as\s+for|regarding|concerning|about|as\s+to)\s+(?P<np>(?:the|a|an|this|each)\s+"
                    rf"[^,:?]+?)\s*[,:]\s+(?={_WH}\b)", re.IGNORECASE)
# "What do the X authors mean by Z": a subject a determiner opens and a plural noun ends, the
# verb after it and what that verb takes: the two things a later "they" and "it" can be.
_SUBJECT_VERB = re.compile(
    rf"^(?i:what|how|why|when|where|who)\b[^,?]*?\s(?i:{_AUX})\s+(?P<subj>(?i:the|these|those)\s+"
    r"(?:[\w\-\.']+\s+){0,3}?[a-z][\w\-]*[^s\W']s)\s+(?P<after>[a-z][^,?]*)\??$")
_VERB_OBJECT = re.compile(r"^(?!(?:of|in|on|for|with|from|at|by|to|and|or)\b)(?P<verb>[a-z][\w\-]*)\s*(?P<rest>.*)$")
_OBJECT = re.compile(r"^(?:(?:by|to|on|with|for|from|about|as|of|in)\s+)?(?P<obj>(?:the\s+|an?\s+)?[\w\-]+(?:\s+[\w\-]+)?)$")
_THEY = re.compile(r"\b(?:they|them|their)\b", re.IGNORECASE)


def _plural(phrase: str) -> bool:
    head = phrase.split()[-1].lower()
    return head.endswith("s") and not head.endswith(("ss", "us", "is"))


def _swapped(pronouns: re.Pattern, phrase: str, clause: str) -> str:
    """The clause with each pronoun `pronouns` finds replaced by `phrase` ("its"/"their" by its possessive)."""
    def swap(m: re.Match) -> str:
        if m.group(0).lower() not in ("its", "their"):
            return phrase
        return f"{phrase}'" if _plural(phrase) else f"{phrase}'s"
    return _clean(pronouns.sub(swap, clause))


def _topic_resolved(clause: str) -> str:
    """A clause that announces its topic, its pronouns replaced by that topic and the
    announcement dropped ("For the X of Y: what is it built on" -> "what is the X of Y built
    on"); as it was when no pronoun refers to the topic."""
    m = _TOPIC.match(clause)
    if not m:
        return clause
    np, body = _clean(m.group("np")), clause[m.end():]
    pronouns = _THEY if _plural(np) else _IT
    return _swapped(pronouns, np, body) if pronouns.search(body) else clause


def _with_subject(clause: str, first: str) -> str:
    """A later part's pronouns as the things the first part named, by number and role: the
    topic it announces (_TOPIC) for "it" (singular) or "they" (plural); else, when the first
    part asks no kind of thing ("which N ..."), "they" for its plural subject and "it" for what
    its verb takes ("What do the X authors mean by Z, and why did they adopt it?" -> "why did
    the X authors adopt Z?"). A part whose pronoun matches none is returned as it was."""
    m = _TOPIC.match(first)
    if m:
        np = _clean(m.group("np"))
        return _swapped(_THEY if _plural(np) else _IT, np, clause)
    m = _SUBJECT_VERB.match(_clean(first))
    if not m or asked_noun(first):
        return clause
    clause = _swapped(_THEY, m.group("subj"), clause)
    verb = _VERB_OBJECT.match(m.group("after"))
    obj = _OBJECT.match(verb.group("rest").strip()) if verb else None
    if obj and not _plural(obj.group("obj")) and not _has_verb(obj.group("obj")):
        clause = _swapped(_IT, obj.group("obj"), clause)
    return clause


def _confirmation(statement: str) -> str:
    """ "X does Y." -> "Is it true that X does Y?": a statement asked as a yes/no need."""
    first, _, rest = _clean(statement).rstrip(".").partition(" ")
    first = first.lower() if first.lower() in STOPWORDS else first
    return f"Is it true that {first} {rest}?"


def _coordinated(clause: str) -> list[str]:
    """ "What A and B does X do?" -> "What A does X do?", "What B does X do?"."""
    m = _COORDINATED.match(clause)
    if not m:
        return [clause]
    return [_clean(f"{m.group('wh')} {m.group(side)} {m.group('rest')}") for side in ("a", "b")]


def _elided(wh: str, before: str) -> str:
    """ "What N does X do, and how?" -> "how does X do the N?" (the clause before, asked with `wh`)."""
    m = _ASKED_OF.match(before.rstrip("?"))
    if m:
        return _clean(f"{wh.lower()} {m.group('aux').lower()} {m.group('body')} the {m.group('noun')}?")
    stated = presupposition(before)
    return f"{wh.lower()} is it that {stated}?" if stated else f"{wh.lower()}: {before}"


def _side_need(side: str, question: str, topic: str) -> str:
    """One side of a comparison as a need: "How do X and Y differ in who decides?" -> "In X, who
    decides?"; "... differ in index size?" -> "In X, what is the index size?"; the side and the
    shared topic when the question names no dimension."""
    m = _DIMENSION.search(question)
    if not m:
        return _clean(f"{side}: {topic}")
    dim = _clean(m.group("dim"))
    if not re.match(rf"^{_WH}\b", dim, re.IGNORECASE):
        dim = "what is the " + re.sub(r"^the\s+", "", dim, flags=re.IGNORECASE)
    return f"In {side}, {dim}?"


def _carry(clause: str, said: str, lead: str, *, situate: bool = True) -> str:
    """The clause with what the question said before it (see _needs)."""
    names = _names(said)
    if len(names) == 1 and _IT.search(clause):
        # A term the question quotes stays quoted ("how does 'cell hopping' differ ..."): the
        # auditor holds every need about it to sentences that name it (sufficiency.defined_term).
        name = names[0] if names[0] not in {m.group("term").strip() for m in _QUOTED.finditer(said)} \
            else f"'{names[0]}'"
        return _IT.sub(lambda m: name if m.group("it").lower() == "it" else f"{name}'s", clause)
    if lead:
        return f"{lead}, {clause[0].lower()}{clause[1:]}"
    own = {t for n in _names(clause) for t in content_terms(n)}
    if situate and len(names) == 1 and not own & set(content_terms(names[0])):
        return f"In {names[0]}, {clause[0].lower()}{clause[1:]}"
    return clause


# A reference back to something an earlier clause named: a pronoun, or a demonstrative
# with its noun ("that choice", "these models"); "that" before a clause ("that the model
# ...") or a function word is no demonstrative.
_ANAPHOR = re.compile(r"\b(?:(?P<dem>(?i:this|that|these|those))\s+(?P<noun>[a-z][\w\-]*)"
                      r"|(?P<pro>(?i:it|its|they|them|their)))\b")
# Words after which "that" starts a clause ("is it true that models ...", "they show that
# ..."), not a demonstrative.
_SAYS = frozenset({"true", "false", "show", "shows", "showed", "shown", "find", "finds", "found", "claim", "claims",
                   "claimed", "say", "says", "said", "report", "reports", "reported", "argue", "argues", "argued",
                   "note", "notes", "noted", "state", "states", "stated", "mean", "means", "so", "suggest",
                   "suggests", "prove", "proves", "observe", "observed", "assume", "given", "fact", "such"})


def _referent(clause: str) -> str:
    """What a later clause's "it" / "that choice" refers to, for its search: the kind of
    thing the first clause asks for ("Which retriever does X plug in" -> "the retriever")
    of the names it says ("of X"), or those names alone ("" when it names nothing)."""
    names = [n for n in _names(clause) if n.lower() not in STOPWORDS]
    noun = asked_noun(clause)
    # "Which of the N ..." names its noun after "of": no kind is named before it.
    noun = "" if noun.split()[:1] and noun.split()[0].lower() in STOPWORDS else noun
    named = " ".join(n for n in names if not set(content_terms(n)) <= set(content_terms(noun)))
    if noun and named:
        return f"the {noun} of {named}"
    return f"the {noun}" if noun else named


def _resolved(clause: str, first: str, *, need: bool = False) -> str:
    """A later clause of a multi-part question as a search: a reference back to the first
    clause ("what advantages do the authors give for that choice?", "why is it added?")
    becomes what it refers to (_referent), so the search has a subject. Only the sub-query
    changes: the premises keep the asker's words. With `need` (the clause is a need the
    auditor scores sentences against), only a referent that is one thing: a kind the first
    clause asks for, or its one name ("RAG Gao" from "Which of the abilities of the Gao et
    al. RAG survey" is two names, no referent)."""
    first = first.rstrip("?")
    referent = _referent(first)
    if not referent or (need and not referent.startswith("the ") and len(_names(first)) != 1):
        return clause
    # "they"/"their" are the plural the first clause asks for; its names alone are one thing
    # each ("When building X, how were crowdworkers ..., and did they ...": not X).
    plural = referent.startswith("the ")

    def swap(m: re.Match) -> str:
        pro = (m.group("pro") or "").lower()
        # In a need, "it"/"its" are _carry's (the one name); "they" the plural asked for.
        if (pro in ("they", "them", "their") and not plural) or (need and pro in ("it", "its")):
            return m.group(0)
        if pro:
            return f"{referent}'s" if pro in ("its", "their") else referent
        noun = m.group("noun")
        before = re.findall(r"[\w']+", clause[:m.start()])[-1:]
        if noun.lower() in STOPWORDS or (before and before[0].lower() in _SAYS):
            return m.group(0)
        return referent if set(content_terms(noun)) <= set(content_terms(referent)) else f"the {noun} of {referent}"

    return _clean(_ANAPHOR.sub(swap, clause))


CARRY_QUERIES = False


def _part_queries(ask: str, said: str, *, first_too: bool = False) -> list[str]:
    """The searches of an asking sentence's clauses after the first (with `first_too`, the
    first as well): each clause's reference back replaced by what the first clause asked
    about (_resolved), an elided clause ("and which in the Y paper?") given the first one's
    relation (_borrowed), and what the first clause said before it asked: its lead-in ("For
    X's pretraining, how large ..., and how many N ...?") or its one name (_carry) only with
    CARRY_QUERIES: on the calibration halves (bench/multipart.py) a part's own search
    without them found its passage more often, the first search (the whole question)
    already holding the subject's."""
    clauses = [_clean(c) for c in _CLAUSE_SPLIT.split(ask) if _clean(c)]
    if not clauses:
        return []
    first = clauses[0]
    lead = _LEAD_IN.match(first)
    out = [_carry(first, said, "", situate=False)] if first_too else []
    for clause in clauses[1:]:
        query = _resolved(_with_subject(_borrowed(first, clause), first), first)
        # "it" is the one name said before; a lead-in or that name as a place only with
        # CARRY_QUERIES (they pull a part's search back to the first part's passages).
        out.append(_carry(query, f"{said} {first}", lead.group("lead") if lead and CARRY_QUERIES else "",
                          situate=CARRY_QUERIES))
    return list(dict.fromkeys(out))


# "this/that/these/those N" and the noun phrase of a statement ending in N: "the [CLS] vector".
_DEMONSTRATIVE = re.compile(r"\b(?:that|this|these|those)\s+(?P<noun>[a-z][\w\-]*)\b")


def _bridged(ask: str, statement: str) -> str:
    """A question whose demonstrative refers to a noun phrase of the statement before it
    ("BERT's authors say the [CLS] vector is ... What did Y measure when that vector is
    used?") with that phrase in its place ("... when the [CLS] vector is used?"): the second
    hop of a multi-hop question searches for what the first names. A demonstrative whose
    noun the statement does not end a phrase with stays."""
    def swap(m: re.Match) -> str:
        noun = re.escape(m.group("noun"))
        found = re.findall(rf"\b((?:the|a|an|its|their)\s+(?:[\w\-\[\]\.']+\s+){{0,3}}?{noun})\b", statement,
                           re.IGNORECASE)
        if not found:
            return m.group(0)
        phrase = found[-1]
        return f"the {phrase.split(None, 1)[1]}" if phrase.split()[0].lower() in ("a", "an") else phrase

    return _DEMONSTRATIVE.sub(swap, ask)


class RulePlanner:
    def plan(self, question: str) -> Plan:
        # A British spelling gets its American one (text.american_spelling): in a search beside
        # it, in a need in its place. Terms are stems, and "neighbours" shares none with a
        # paper's "neighbors". The premises keep the asker's words: a premise confirmed by a
        # respelled word is one more false premise the coverage-based check lets through.
        plan = self._plan(question)
        return plan.model_copy(update={"sub_queries": [american_spelling(s, both=True) for s in plan.sub_queries],
                                       "facts": [american_spelling(f) for f in plan.facts]})

    def _plan(self, question: str) -> Plan:
        q = _clean(question)
        sentences = _whole_sentences([s for s in _SENTENCES.split(q) if s])
        # The asker's own story is left out; the rest of the question is what is asked of the papers.
        told = [s for s in sentences if not _about_asker(s)]
        if told and len(told) < len(sentences):
            sentences, q = told, " ".join(told)
        asks = [s for s in sentences if _is_question(s)] or [q]
        statements = [s for s in sentences if not _is_question(s)]
        premises = _premises(sentences)
        clarify = clarification(q)
        if clarify:
            return Plan(complexity=Complexity.SIMPLE, facts=[q], sub_queries=[q], premise="", clarify=clarify)

        m = _COMPARE_OF.search(q)
        if m:
            dim = re.sub(r"^the\s+", "", _clean(m.group("dim")), flags=re.IGNORECASE)
            a, b = _side(m.group("a")), _side(m.group("b"))
            return Plan(complexity=Complexity.COMPARISON, facts=[f"What is the {dim} of {side}?" for side in (a, b)],
                        sub_queries=[_clean(f"{dim} {side}") for side in (a, b)], premise="")

        for pattern in _COMPARISONS:
            m = pattern.search(q)
            if not m:
                continue
            a, b = _side(m.group("a")), _side(m.group("b"))
            if not a or not b or len(a.split()) > 8 or len(b.split()) > 8:
                continue
            topic = _topic(q, drop=f"{a} {b}")
            subs = [_clean(f"{a} {topic}"), _clean(f"{b} {topic}")]
            facts = [_side_need(side, q, topic) for side in (a, b)]
            # "... the paths between A and B?" names a relation, not a comparison of A with B: the
            # question still presupposes what its main clause says ("X uses the paths ...").
            kept = premises if "between" in pattern.pattern and not _WHOLE_COMPARISON.search(q) else []
            return Plan(complexity=Complexity.COMPARISON, facts=facts, sub_queries=subs, premises=kept)

        # Each asking clause is a need, with what the question said before it. A statement
        # before the question is asked too, as a yes/no need: it often names the document
        # the answer must also cite (the bridge of a multi-hop question).
        context = " ".join(statements)
        # "X cautions that the [CLS] vector ... What did Y measure when that vector ...?": the
        # second hop's "that vector" is the statement's, and its search needs the name.
        asks = [_bridged(a, context) for a in asks] if statements else asks
        facts = _needs(asks, statements) or [q]
        if statements:
            facts = [_confirmation(context), *facts][:3]
        if len(facts) == 1 and not statements:
            return Plan(complexity=Complexity.SIMPLE, facts=facts, sub_queries=[q, *_premise_query(premises)],
                        premises=premises)
        subs: list[str] = []
        if statements:
            # A multi-hop question: the statement names one document, the question another;
            # each of the question's clauses is a search of its own (_part_queries).
            subs.append(_clean(context))
            # A clause with less than two content words of its own ("How many, and why?") is
            # no search: it finds any passage; the question's clauses are then searched together.
            parts = [p for a in asks for p in _part_queries(a, context, first_too=True)]
            searchable = len(parts) > 1 and all(len(content_terms(p)) >= 2 for p in parts)
            subs.extend(parts if searchable else [_clean(" ".join(asks))])
        else:
            # Each later clause as its own search, its reference back ("that choice", "it")
            # replaced by what the first clause asked about (_resolved), an elided one given
            # the first clause's relation (_part_queries).
            subs.append(q)
            for a in asks:
                subs.extend(_part_queries(a, ""))
        subs = list(dict.fromkeys([*subs[:2], *_premise_query(premises), *subs[2:]]))[:3]
        return Plan(complexity=Complexity.MULTI_PART, facts=facts, sub_queries=subs, premises=premises)
