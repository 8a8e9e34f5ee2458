"""What kind of answer a need asks for, and how well a sentence offers it.

The auditor ranks sentences by support (they speak to the need) *and* by answer fit
(they hold the kind of thing asked for): "How many warmup steps ..." wants a number next
to "warmup steps", not the sentence that best paraphrases the question.

Kinds: number, time, name, reason, method, yesno, definition, other. The focus is the
noun phrase the wh-word asks about ("how many *warmup steps*", "which *retriever*").
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from agent.local.text import content_terms, numbers, term_set, words

_AUX = r"(?:do|does|did|is|are|was|were|has|have|had|can|could|would|will|should|may|might|must)"
_YEAR_OR_MONTH = re.compile(
    r"\b(?:1[5-9]\d\d|20\d\d|January|February|March|April|May|June|July|August|September|October|"
    r"November|December|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday|Mondays|Tuesdays|Wednesdays|"
    r"Thursdays|Fridays|Saturdays|Sundays|daily|weekly|monthly|yearly|annually|(?:every|each|per|a|once a|twice a) (?:day|week|month|year)|"
    r"(?:before|after|during|until|since) [A-Za-z]+)\b"
)
_NUMBER_NOUNS = {"number", "percentage", "fraction", "share", "proportion", "ratio", "size", "value", "temperature",
                 "score", "rate", "dimension", "dimensionality", "length", "count", "amount", "accuracy", "cost",
                 "stride", "budget", "learning", "batch", "frequency", "threshold", "depth", "width", "latency",
                 "epochs", "percent", "fraction"}
_REASON = re.compile(r"\b(?:because|since|due to|owing to|as a result|so that|in order to|to avoid|to ensure|"
                     r"to prevent|to make|to allow|therefore|thus|hence|this is why|leads? to|allows?|enables?|"
                     r"motivat\w*|reason|caus\w*|which helps?)\b", re.IGNORECASE)
_METHOD = re.compile(r"\b(?:by|using|via|through|with|we use|is computed|are computed|is obtained|consists? of|"
                     r"first|then|appl(?:y|ies|ied)|train\w*|fine-tun\w*|feed\w*|takes?|uses?|maps?|"
                     r"comput\w*|combin\w*|filter\w*|select\w*)\b", re.IGNORECASE)
_DEFINES = re.compile(r"\b(?:is|are|refers? to|denotes?|measures?|means?|defined as|stands? for|is the)\b",
                      re.IGNORECASE)


_SPELLED = frozenset(words("two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
                           "sixteen twenty thirty forty fifty hundred hundreds thousand thousands million millions "
                           "billion billions dozen half twice"))
_ONE = frozenset({"one", "single", "once"})
# Numbers that count nothing: a citation's year ("(Gebru et al., 2018)", "[Lewis, 2020]"), a
# link, a footnote mark glued to a word or a full stop ("implications.10").
_NOT_VALUES = re.compile(r"[(\[][^()\[\]]*\b(?:1[5-9]|20)\d\d[a-z]?[)\]]|\S*https?://\S*|\S*www\.\S*|"
                         r"(?<=[a-z][.,;])\d{1,2}\b")
# Three or more items of one to three words each: "indexing, retrieval, and generation".
_LIST = re.compile(r"\b[\w\-]+(?:\s+[\w\-]+){0,2},\s+[\w\-]+(?:\s+[\w\-]+){0,2},?\s+(?:and|or)\s+[\w\-]+")


@dataclass(frozen=True)
class Need:
    kind: str = "other"
    focus: list[str] = field(default_factory=list)  # stemmed focus terms


# Where a question's asking clause may start: its beginning, or after a comma, a semicolon,
# a colon or a sentence end ("According to the survey, how does R-Tuning ...", "BERT's
# authors caution that .... What did Sentence-BERT measure ...?").
_CLAUSE = re.compile(r"[,;:]\s+|[.?!]\s+")
_QUANTITY = r"(?:number|percentage|percent|fraction|share|proportion|ratio|amount|count)"
_NOUN = r"(?:[\w\-\./'@]+\s+){0,5}?[\w\-\./'@]+"
# A count of things, not a share of them: "how many of the queries" may be answered by "31%".
_COUNTS = re.compile(r"^how many\s+(?!of\b)(?!.*\b(?:percent|percentage|share|fraction|proportion)\b)")


def need_of(question: str) -> Need:
    """The kind of answer the question asks for and its focus, from its first asking clause:
    the question itself, or the first clause after a lead-in that asks something."""
    return _asking(question)[1]


def asking_clause(question: str) -> str:
    """The part of the question from its first asking clause on ("does X use Y?" of
    "According to the survey, does X use Y?"); the whole question when none asks."""
    return _asking(question)[0]


# Nouns that only name the form of a number ("what *share* are new"): the answering sentence
# gives the number ("31% are new") without the word, so they are no focus it must name.
_FORM_NOUNS = frozenset(content_terms("number percentage percent fraction share proportion ratio amount count"))


def _asking(question: str) -> tuple[str, Need]:
    text = question.strip()
    low = text.lower()
    for start in [0, *(m.end() for m in _CLAUSE.finditer(low))]:
        need = _clause_need(low[start:])
        if need is not None:
            if need.kind == "number":
                need = Need("number", [t for t in need.focus if t not in _FORM_NOUNS])
            return text[start:], need
    return text, Need("other", [])


def _clause_need(low: str) -> Need | None:
    """The need of a clause that starts with a question word or an auxiliary; None otherwise."""
    # "How much were the annotators paid ...": an amount with no noun asked for (the word after
    # the auxiliary is the subject, not what is counted).
    if re.match(rf"^how (?:many|much)\s+{_AUX}\b", low):
        return Need("number", [])
    m = re.match(rf"^how (?:many|much)\s+(?P<noun>[\w\-\s]+?)\s+{_AUX}\b", low) or \
        re.match(r"^how (?:many|much)\s+(?P<noun>[\w\-]+(?:\s+[\w\-]+)?)", low)
    if m:
        return Need("number", content_terms(m.group("noun")))
    if re.match(r"^how often\b", low):
        return Need("time", [])
    if re.match(r"^how (?:large|big|long|small|fast|high|low)\b", low):
        return Need("number", [])
    if re.match(rf"^(?:when\s+{_AUX}\b|in (?:what|which) year|what year)", low):
        return Need("time", [])
    if re.match(r"^why\b", low):
        return Need("reason", [])
    if re.match(r"^who\b", low):
        return Need("name", [])
    # "what fraction of the tokens is masked": a quantity of something; the something is the focus.
    m = re.match(rf"^(?:what|which)\s+(?:(?:is|are|was|were)\s+the\s+)?(?:{_QUANTITY})\s+of\s+(?:the\s+)?"
                 rf"(?P<noun>{_NOUN})(?:\s+(?:{_AUX}|in|for|on|used)\b|\s*\?*$)", low)
    if m:
        return Need("number", content_terms(m.group("noun")))
    # "what is the dimensionality of each head": the noun before "of" is what is asked.
    m = re.match(rf"^what\s+(?:is|are|was|were)\s+the\s+(?P<noun>{_NOUN})(?:\s+(?:of|for|in|on|used)\b|\s*\?*$)", low)
    if m and set(m.group("noun").split()) & _NUMBER_NOUNS:
        return Need("number", content_terms(m.group("noun")))
    m = re.match(rf"^(?:what|which)\s+(?!(?:is|are|was|were)\b)(?P<noun>{_NOUN})\s+(?:{_AUX}|of)\b", low)
    if m:
        noun = m.group("noun")
        focus = content_terms(noun)
        if set(noun.split()) & _NUMBER_NOUNS:
            return Need("number", focus)
        return Need("name", focus)
    if re.match(r"^what\s+(?:is|are|was|were)\b|^what does\s+.+\s+(?:measure|mean|stand for|refer to)\b", low):
        return Need("definition", [])
    # "which single corpus helped ...": which + a noun phrase, then its verb.
    # The longest noun phrase (up to three words) that a verb in -ed or -s follows; else the
    # word after "which" ("which tokenizer gave ...").
    for n in (3, 2, 1, 0) if low.startswith("which ") else ():
        if not n:
            m = re.match(r"^which\s+(?P<noun>[\w\-\./'@]+)", low)
            return Need("number" if m and m.group("noun") in _NUMBER_NOUNS else "name",
                        content_terms(m.group("noun")) if m else [])
        m = re.match(rf"^which\s+(?P<noun>(?:[\w\-\./'@]+\s+){{{n - 1}}}[\w\-\./'@]+)\s+\w+(?:ed|[^s]s)\b", low)
        if m:
            kind = "number" if set(m.group("noun").split()) & _NUMBER_NOUNS else "name"
            return Need(kind, content_terms(m.group("noun")))
    if re.match(r"^how\b", low):
        return Need("method", [])
    if re.match(rf"^{_AUX}\b", low):
        return Need("yesno", [])
    return None


def offers(need: Need, question: str, sentence: str, *, context: str = "") -> float:
    """How well the sentence holds the kind of answer needed, in [0, 1]; 0 rules it out.
    `context` (the sentence before) may carry the focus: "We try three pooling strategies.
    The default is MEAN." names the default pooling strategy."""
    # "How many warmup steps": a sentence about neither warmup nor steps gives no such number.
    focus_ok = not need.focus or bool(set(need.focus) & (term_set(sentence) | term_set(context)))
    if need.kind == "number":
        fresh = numbers(_NOT_VALUES.sub(" ", sentence)) - numbers(question)
        if _COUNTS.match(asking_clause(question).lower()):
            # "How many annotators ...": a share ("30% of the queries") counts nothing asked.
            fresh = {n for n in fresh if not n.endswith("%")}
        # Spelled numbers count too ("eight heads"), unless the question has them ("the two benchmarks").
        said = set(words(sentence.lower())) - set(words(question.lower()))
        if not fresh and not _SPELLED & said:
            # "for one epoch", "a single GPU": a count of one in words is an answer too, but
            # "one" is as often a pronoun ("one of the ..."), so it only counts weakly.
            return 0.3 if _ONE & said else 0.0
        return 1.0 if focus_ok else 0.3
    if need.kind == "time":
        asked = {w.lower() for w in words(question)}
        return 1.0 if {m.lower() for m in _YEAR_OR_MONTH.findall(sentence)} - asked else 0.0
    if need.kind == "name":
        asked = term_set(question)
        tokens = re.findall(r"[A-Za-z][\w\-\.]*", sentence)
        names = {t for i, t in enumerate(tokens) if (t[:1].isupper() and i > 0) or any(c.isupper() for c in t[1:])}
        fresh = {n for n in names if not term_set(n) <= asked}
        # "Which steps make up X?" / "X includes indexing, retrieval, and generation": a list of
        # three or more things names them, capitalised or not.
        listed = bool(_LIST.search(sentence))
        return (1.0 if fresh or listed else 0.5) * (1.0 if focus_ok else 0.5)
    if need.kind == "reason":
        return 1.0 if _REASON.search(sentence) else 0.4
    if need.kind == "method":
        return 1.0 if _METHOD.search(sentence) else 0.5
    if need.kind == "definition":
        return 1.0 if _DEFINES.search(sentence) else 0.5
    return 1.0


# A sentence about where the paper says something ("In Section 5, we compare ...", "Details
# are given in Appendix B.", "The next section describes ...") rather than what it says.
_PLACE = r"(?:sections?|sec\.|§|appendix|appendices|chapters?)"
_POINTER = re.compile(
    rf"\b(?:(?:in|see|cf\.?|to|of)\s+(?:the\s+)?(?:{_PLACE}\s*[A-Z]?\d[\d.]*|{_PLACE}\s+[A-Z]\b)|(?:next|following|"
    rf"previous|preceding|remaining|later|subsequent)\s+{_PLACE})|^{_PLACE}\s*[A-Z]?\d[\d.]*\s+\w+",
    re.IGNORECASE)
_ORGANISING = re.compile(
    r"\b(?:describ|present|discuss|introduc|detail|outlin|summari[sz]|explain|review|conclud|turn|focus|"
    r"defer|provid|giv|report|list|includ|organi[sz]|structur|address|elaborat|leav)\w*", re.IGNORECASE)


def points_elsewhere(sentence: str) -> bool:
    """Whether the sentence tells where the paper treats something instead of stating it: it
    ends with a colon (what it introduces follows it: "The Transformer uses multi-head
    attention in three different ways:"), or it refers to a section, appendix or chapter,
    with an organising verb (describe, present, discuss, ...) and no number of its own
    beyond the reference's."""
    if sentence.rstrip().endswith(":"):
        return True
    ref = _POINTER.search(sentence)
    if not ref or not _ORGANISING.search(sentence):
        return False
    rest = sentence[: ref.start()] + sentence[ref.end():]
    return not numbers(rest)


_AFFIRM_MIN = 0.75  # share of the proposition's content terms a sentence must state to affirm it


def polarity(question: str, sentence: str, *, context: str = "") -> str:
    """"yes" when the sentence states the yes/no question's proposition (its names and at
    least three quarters of its content terms, no contradiction cue), "no" when it states
    the same thing and disagrees (agent.local.contradiction's cues: negation, an alternative
    instead, another number, an opposite), "" when it does neither clearly: then an answer
    must not start with Yes or No."""
    from agent.local.contradiction import alternatives, contradiction_cue, negated_stems
    from agent.local.text import anchor_coverage, anchor_terms, content_terms, coverage

    # The asking clause: a lead-in ("According to the survey, ...") is not part of what is asserted.
    proposition = re.sub(rf"^\s*{_AUX}\s+", "", asking_clause(question).rstrip("?"), flags=re.IGNORECASE)
    terms = content_terms(proposition)
    if not terms:
        return ""
    bag = term_set(sentence) | term_set(context)
    names = [a for a in anchor_terms(proposition) if not any(c.isdigit() for c in a)]
    if names and anchor_coverage(names, bag) < 1.0:
        return ""
    # The sentence negates a term the question asserts ("BERT does not use a decoder"), or
    # disagrees by one of the contradiction cues.
    asserted = set(terms) - negated_stems(proposition)
    # An alternative chosen instead of what the question asserts ("a convolutional encoder
    # instead of a recurrent one"): the part set aside that the two do not share.
    set_aside = any((rejected - chosen) & asserted for chosen, rejected in alternatives(sentence))
    cue = set_aside or bool(negated_stems(sentence) & asserted - set(names)) or bool(
        contradiction_cue(proposition, sentence, context=context))
    if cue:
        # A denial need only share the proposition's subject and part of its relation.
        return "no" if coverage(terms, bag) >= 0.5 else ""
    return "yes" if coverage(terms, bag) >= _AFFIRM_MIN else ""
