"""Text helpers for the local roles: sentences, key terms, negation words, opposites, numbers."""

from __future__ import annotations

import re
from functools import lru_cache

_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9\-\.@_/]*[A-Za-z0-9%]|[A-Za-z0-9%]")
NUMBER = re.compile(r"(?<![A-Za-z0-9_])(\d+(?:[.,]\d+)*)\s*(%|x\b|percent)?")
# Numbers that name a part of the paper or a reference, not a value: "§6", "Section 3.2",
# "Table 4", "Fig. 2", "Eq. (5)", "Appendix B.1", "[12, 14]".
LABEL_NUMBER = re.compile(
    r"(?:§\s*|\b(?:Sections?|Sec\.|Tables?|Figures?|Figs?\.|Eqs?\.|Equations?|Appendix|Algorithm|Chapter)\s+)"
    r"\(?(?:[A-Z](?:\.\d+)*|\d+(?:\.\d+)*)\)?|\[\d+(?:\s*[,\u2013-]\s*\d+)*\]"
)

STOPWORDS = frozenset(
    ["a", "about", "above", "after", "again", "against", "all", "also", "am", "an", "and", "any", "are", "as", "at", "be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could", "did", "do", "does", "doing", "done", "down", "during", "each", "either", "else", "few", "for", "from", "further", "had", "has", "have", "having", "he", "her", "here", "hers", "herself", "him", "himself", "his", "how", "however", "i", "if", "in", "into", "is", "it", "its", "itself", "just", "me", "more", "most", "my", "myself", "nor", "of", "off", "on", "once", "only", "or", "other", "our", "ours", "ourselves", "out", "over", "own", "same", "she", "should", "so", "some", "such", "than", "that", "the", "their", "theirs", "them", "themselves", "then", "there", "these", "they", "this", "those", "through", "thus", "to", "too", "under", "until", "up", "upon", "very", "was", "we", "were", "what", "when", "where", "which", "while", "who", "whom", "why", "will", "with", "would", "you", "your", "yours", "yourself", "yourselves", "paper", "papers", "authors", "author", "according", "use", "used", "using", "uses", "study", "report", "reported", "reports", "describe", "described", "show", "shown", "shows", "find", "found", "work", "get", "gets", "got", "make", "makes", "made", "give", "gives", "given", "much", "many", "one", "two", "way", "ways", "whether", "reach", "reaches", "e.g", "i.e", "et", "al", "vs", "via", "per"]
)

# Negation cues; "fail to" and "unlike" flip a statement as surely as "not" does.
NEGATIONS = frozenset(
    ["not", "no", "never", "without", "neither", "nor", "none", "cannot", "can't", "don't", "doesn't", "didn't", "isn't", "aren't", "wasn't", "weren't", "won't", "hasn't", "haven't", "hadn't", "lack", "lacks", "lacking", "absence", "absent", "fail", "fails", "failed", "unable", "nothing"]
)

# General English opposites of direction, size, degree and polarity. No domain pairs
# (pooling kinds, encodings, model parts): those differ by *substitution* in the same
# relation, which agent.local.contradiction detects without a word list.
_ANTONYM_PAIRS = [
    ("increase", "decrease"), ("increase", "reduce"), ("increased", "decreased"), ("increases", "decreases"),
    ("higher", "lower"), ("high", "low"), ("more", "less"), ("more", "fewer"), ("larger", "smaller"),
    ("large", "small"), ("better", "worse"), ("improve", "degrade"), ("improves", "hurts"),
    ("improved", "degraded"), ("positive", "negative"), ("min", "max"), ("minimum", "maximum"),
    ("before", "after"), ("early", "late"), ("enhance", "inhibit"),
    ("enhances", "inhibits"), ("activate", "inhibit"), ("activates", "inhibits"), ("promote", "suppress"),
    ("promotes", "suppresses"), ("upregulated", "downregulated"), ("gain", "loss"),
    ("faster", "slower"), ("outperform", "underperform"), ("outperforms", "underperforms"),
    ("always", "never"), ("same", "different"), ("similar", "different"),
    ("present", "absent"), ("harmful", "beneficial"), ("elevated", "reduced"), ("rise", "fall"),
    ("safe", "unsafe"), ("effective", "ineffective"), ("required", "unnecessary"),
    ("first", "last"), ("above", "below"), ("include", "exclude"), ("includes", "excludes"),
    ("success", "failure"), ("succeeds", "fails"), ("accept", "reject"), ("accepted", "rejected"),
]
ANTONYMS: dict[str, set[str]] = {}
for _a, _b in _ANTONYM_PAIRS:
    ANTONYMS.setdefault(_a, set()).add(_b)
    ANTONYMS.setdefault(_b, set()).add(_a)


@lru_cache(maxsize=1)
def _stemmer():
    import Stemmer

    return Stemmer.Stemmer("english")


def split_sentences(text: str) -> list[str]:
    """Sentences of a chunk, whitespace-collapsed: the one splitter, knowledge.text (a
    blank line ends a sentence, so a heading is never glued to the sentence after it)."""
    from knowledge.text import split_sentences as split

    return split(text)


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


def stem(word: str) -> str:
    return _stemmer().stemWord(word.lower())


# British spellings a question may use where a paper uses the American one ("neighbours",
# "initialised", "analyse", "centre"): the stems differ ("neighbour" / "neighbor"), so a
# sentence saying the same thing would share no term with the question (the planner spells
# its needs and searches the American way, agent.local.planner.RulePlanner.plan). General English
# only: -our words by their stem, -ise/-isation verbs (not "precise", "premise", "exercise",
# ...: a word whose -ise is no suffix), -yse verbs, -re nouns.
_OUR = ("behaviour", "colour", "favour", "flavour", "honour", "humour", "labour", "neighbour", "rumour", "vapour",
        "harbour", "endeavour", "tumour", "armour", "odour", "vigour", "rigour", "parlour", "savour")
_ISE = re.compile(r"^(?P<stem>[a-z]{4,})is(?P<end>e|ed|es|ing|er|ers|ation|ations|able)$")
_NOT_ISE = frozenset(["advert", "apprai", "chast", "compr", "comprom", "conc", "demi", "desp", "dev", "disgu",
                      "enterpr", "exerc", "expert", "franch", "improv", "merchand", "parad", "prec", "prem", "prom",
                      "surpr", "surm", "superv", "telev", "treat", "mort", "torto", "porpo", "turquo", "chem"])
_YSE = re.compile(r"^(?P<stem>anal|paral|catal|hydrol|electrol|dial)ys(?P<end>e|ed|ing|er|ers)$")
_RE_NOUNS = {"centre": "center", "centres": "centers", "centred": "centered", "fibre": "fiber", "fibres": "fibers",
             "litre": "liter", "litres": "liters", "metre": "meter", "metres": "meters", "theatre": "theater",
             "calibre": "caliber", "defence": "defense", "licence": "license", "offence": "offense",
             "programme": "program", "programmes": "programs", "catalogue": "catalog", "catalogues": "catalogs"}


@lru_cache(maxsize=65_536)
def american(word: str) -> str:
    """The American spelling of a lower-case British word, else the word."""
    if word in _RE_NOUNS:
        return _RE_NOUNS[word]
    for british in _OUR:
        if word.startswith(british):
            return british[:-2] + "r" + word[len(british):]
    m = _ISE.match(word)
    # "...wise" ("pairwise", "otherwise"), "...prise" and "...rcise" are no -ise verbs, nor
    # a listed word with a prefix ("unsupervised").
    if m and not m.group("stem").endswith((*_NOT_ISE, "w", "pr", "rc")):
        return f"{m.group('stem')}iz{m.group('end')}"
    m = _YSE.match(word)
    if m:
        return f"{m.group('stem')}yz{m.group('end')}"
    return word


def american_spelling(text: str, *, both: bool = False) -> str:
    """The text with each British spelling (american) in its American one; with `both`,
    followed by it in brackets ("how many neighbours (neighbors) ..."), so that a search
    finds either."""
    def swap(m: re.Match) -> str:
        word = m.group(0)
        us = american(word.lower())
        if us == word.lower():
            return word
        us = us.capitalize() if word[0].isupper() else us
        return f"{word} ({us})" if both else us

    return re.sub(r"[A-Za-z]+", swap, text)


def content_terms(text: str) -> list[str]:
    """Stemmed content words in order, without stopwords, duplicates removed."""
    seen: dict[str, None] = {}
    for w in words(text):
        if w in STOPWORDS or w in NEGATIONS or (len(w) < 2 and not w.isdigit()):
            continue
        seen.setdefault(stem(w), None)
        # Identifiers keep their parts too ("gpt-3.5-turbo" also matches "turbo",
        # "warmup_steps" matches "warmup" and "steps").
        if "-" in w or "_" in w:
            for part in re.split(r"[-_]", w):
                if len(part) > 2 and part not in STOPWORDS:
                    seen.setdefault(stem(part), None)
    return list(seen)


def anchor_terms(text: str) -> list[str]:
    """Specific terms a passage must mention to be about the same thing: names, acronyms,
    identifiers, numbers (a capital letter after the first character, a digit or a hyphen)."""
    seen: dict[str, None] = {}
    for i, raw in enumerate(_WORD.findall(text)):
        token = raw.strip(".")
        if not token or token.lower() in STOPWORDS:
            continue
        specific = any(c.isdigit() for c in token) or any(c.isupper() for c in token[1:])
        # A capitalised word that does not start the text is a name ("Mixtral", "Robust").
        specific = specific or (i > 0 and token[0].isupper() and len(token) > 2)
        if specific:
            seen.setdefault(stem(token), None)
    return list(seen)


def term_set(text: str) -> set[str]:
    """All stems of a passage, for coverage checks (identifier parts included)."""
    out: set[str] = set()
    for w in words(text):
        out.add(stem(w))
        if "-" in w or "_" in w:
            out.update(stem(p) for p in re.split(r"[-_]", w) if p)
    return out


def coverage(terms: list[str], bag: set[str]) -> float:
    if not terms:
        return 0.0
    return sum(1 for t in terms if t in bag) / len(terms)


def anchor_coverage(anchors: list[str], bag: set[str]) -> float:
    """Like coverage, but an identifier also counts as present when its head is
    ("bm25-based" is mentioned by a passage that says "BM25")."""
    if not anchors:
        return 0.0
    found = 0
    for a in anchors:
        parts = [p for p in a.split("-") if len(p) > 2 and p not in STOPWORDS]
        if a in bag or (parts and (parts[0] in bag or stem(parts[0]) in bag)):
            found += 1
    return found / len(anchors)


def numbers(text: str) -> set[str]:
    """Numbers with their unit where one is given ("2.58%", "25%", "4000"); labels such as
    "Table 4" or "§6" and citation brackets are not values."""
    out = set()
    for value, unit in NUMBER.findall(LABEL_NUMBER.sub(" ", text)):
        value = value.replace(",", "")
        unit = "%" if unit in ("%", "percent") else (unit or "")
        out.add(value + unit)
    return out


def _with_parts(ws: list[str]) -> set[str]:
    out = set(ws)
    for w in ws:
        if "-" in w:
            out.update(w.split("-"))
    return out


def antonym_clash(claim: str, evidence: str) -> bool:
    """The evidence uses the opposite of a word the claim uses (and not the word itself)."""
    cw = _with_parts(words(claim))
    ew = _with_parts(words(evidence))
    for w in cw:
        opposite = ANTONYMS.get(w)
        if opposite and w not in ew and opposite & ew and not (opposite & cw):
            return True
    return False
