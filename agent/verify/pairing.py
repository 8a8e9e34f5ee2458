"""Which name a number belongs to: a sentence may state only numbers its quotes give for the same
name (agent.verify).

A quote with several figures ("dense retrieval systems like ANCE and TAS-B have a much higher
Hole@10 of 14.4% and 31.8%", a table row "ANCE 14.4 TAS-B 31.8") holds every number an answer
sentence needs, so the presence check passes "TAS-B had a Hole@10 of 14.4%". This module reads
which number goes with which name, and flags a sentence that moves a number to another name.

In a quote, a number is paired with a name only where the text says so unambiguously, clause by
clause (clauses end at ";", ":", a full stop, a comma between unlike items, and words such as
"while", "whereas", "but", "than", "unlike"):
1. a coordinated list of k names and coordinated list(s) of k numbers in one clause pair by
   position ("A and B reach 1 and 2", "A, B and C: 1 / 2 / 3", a table's header and value runs);
2. a number written right after a name ("ANCE 14.4", "ANCE (14.4%)", "d_model = 512") goes with it;
3. otherwise, a clause with exactly one name gives it all the clause's numbers.
Anything else (two names and one number in a clause, "A beats B by 3 points") pairs nothing.

In the answer sentence, a number goes with the name rule 1 gives it, else with a name right after
"for", "by (using)", "of", "with", "on" or "from" that follows it ("29.45 for GPT-43B"), else with
the nearest name before it in its clause that the quotes pair with numbers (else the nearest after).

A sentence is flagged when it attaches a number q to a name e, the quotes pair e with other
numbers but not with q, and pair q with another name. Evidence the quotes do not structure
flags nothing: the check only turns a pairing the quotes state into a drop.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from agent.verify.claims import _NOT_NAMES, Quantity, _name_forms, quantities, same_quantity

# A number token first (so "1,000" and "14.4%" stay whole), then words and identifiers
# ("Hole@10", "TAS-B", "d_model", "BM25+CE"), then the punctuation that structures a clause.
_TOKEN = re.compile(
    r"\d{1,3}(?:,\d{3})+(?:\.\d+)?%?(?![\w@])|\d+(?:\.\d+)?(?:%|[kKMB](?![\w@]))?(?![\w@])"
    r"|[A-Za-z0-9][A-Za-z0-9\-_/.@+]*[A-Za-z0-9+]|[A-Za-z]|[;:,()=%]|\.(?!\d)"
)
_NUMBER = re.compile(r"\d[\d,]*(?:\.\d+)?(?:%|[kKMB])?")
_LIST_WORDS = frozenset(["and", "or", "vs", "vs.", "versus", "&", "/", ","])
_BOUNDARY_WORDS = frozenset([
    "while", "whereas", "whilst", "but", "however", "although", "though", "unlike", "than", "compared",
    "contrast", "respectively", "except", "instead",
])
_BOUNDARY_PUNCT = frozenset([";", ":", "."])
# Between a name and the number written right after it.
_GLUE = frozenset(["(", "="])


@dataclass(frozen=True)
class _Tok:
    kind: str  # "name", "num", "list", "punct", "word"
    text: str
    quantity: Quantity | None = None


def _is_year(text: str) -> bool:
    return bool(re.fullmatch(r"(?:19|20)\d\d", text))


def _is_name(token: str) -> bool:
    # A capitalised first word counts too ("Heron reaches 27.1%"): a sentence opener taken for
    # a name pairs with nothing the other side names, so it cannot cause a drop.
    if token.lower() in _NOT_NAMES or not any(c.isalpha() for c in token):
        return False
    identifier = (any(c.isdigit() for c in token) or "_" in token or "@" in token
                  or any(c.isupper() for c in token[1:]))
    return identifier or (token[0].isupper() and len(token) > 2)


# Numbers that label rather than measure: reference markers, "Table 2", a section number.
_LABELS = re.compile(
    r"\[[\d,;\s\u2013-]+\]|\b(?:tables?|tab|figures?|fig|sections?|sec|eqs?|equations?|appendix|step)\.?\s*\d+[a-z]?\b"
    r"|^\s*\d+(?:\.\d+)*\s+(?=[A-Z])",
    re.IGNORECASE)


def _tokens(text: str) -> list[_Tok]:
    out: list[_Tok] = []
    for raw in _TOKEN.findall(_LABELS.sub(" ", text)):
        if raw == "%" and out and out[-1].kind == "num" and out[-1].quantity and not out[-1].quantity.percent:
            # "14.4 %": the sign belongs to the number before it.
            out[-1] = _Tok("num", out[-1].text + "%", quantities(out[-1].text + "%", spelled=False)[0])
            continue
        if _NUMBER.fullmatch(raw) and not _is_year(raw):
            found = quantities(raw, spelled=False)
            if found:
                out.append(_Tok("num", raw, found[0]))
                continue
        low = raw.lower()
        if low in _LIST_WORDS:
            out.append(_Tok("list", low))
        elif raw in _BOUNDARY_PUNCT or low in _BOUNDARY_WORDS or raw in _GLUE or raw == "%":
            out.append(_Tok("punct", raw))
        elif _is_name(raw.strip(".-/")):
            out.append(_Tok("name", raw.strip(".-/")))
        else:
            out.append(_Tok("word", low))
    return out


def _clauses(tokens: list[_Tok]) -> list[list[_Tok]]:
    """Split at boundary words and punctuation; a comma splits unless it sits inside a list of
    like items ("A, B and C", "1, 2 and 3")."""
    clauses: list[list[_Tok]] = [[]]
    for i, tok in enumerate(tokens):
        if tok.kind == "punct" and tok.text not in _GLUE and tok.text != "%":
            clauses.append([])
            continue
        if tok.text == ",":
            before = clauses[-1][-1].kind if clauses[-1] else ""
            after = next((t.kind for t in tokens[i + 1:] if t.kind != "list"), "")
            if before not in ("name", "num") or before != after:
                clauses.append([])
                continue
        clauses[-1].append(tok)
    return [c for c in clauses if c]


def _runs(clause: list[_Tok], kind: str) -> list[list[_Tok]]:
    """Coordinated runs of one kind: items joined by list words or commas, or adjacent."""
    runs: list[list[_Tok]] = []
    current: list[_Tok] = []
    joined = True
    for tok in clause:
        if tok.kind == kind:
            if current and not joined:
                runs.append(current)
                current = []
            current.append(tok)
            # Numbers side by side are a table's row; names side by side are one compound name.
            joined = kind == "num"
        elif tok.kind == "list" and current:
            joined = True
        elif tok.kind == "punct" and tok.text in ("(", "%"):
            continue
        elif current:
            runs.append(current)
            current = []
            joined = True
    if current:
        runs.append(current)
    return runs


def _parallel(clause: list[_Tok]) -> list[tuple[str, Quantity]]:
    """Rule 1: a list of k names and list(s) of k numbers pair by position."""
    name_runs = [r for r in _runs(clause, "name") if len(r) >= 2]
    pairs: list[tuple[str, Quantity]] = []
    for num_run in (r for r in _runs(clause, "num") if len(r) >= 2):
        same = [r for r in name_runs if len(r) == len(num_run)]
        if len(same) == 1:
            pairs.extend((n.text, q.quantity) for n, q in zip(same[0], num_run) if q.quantity is not None)
    return pairs


def _glued(clause: list[_Tok]) -> list[tuple[str, Quantity]]:
    """Rule 2: a number written right after a name."""
    pairs = []
    last_name: str | None = None
    for tok in clause:
        if tok.kind == "name":
            last_name = tok.text
        elif tok.kind == "num" and last_name is not None and tok.quantity is not None:
            pairs.append((last_name, tok.quantity))
            last_name = None
        elif not (tok.kind == "punct" and tok.text in _GLUE):
            last_name = None
    return pairs


def pairings(text: str) -> list[tuple[str, Quantity]]:
    """The (name, number) pairs the text states unambiguously (the rules of the module doc)."""
    pairs: list[tuple[str, Quantity]] = []
    for clause in _clauses(_tokens(text)):
        found = _parallel(clause)
        paired = {id(q) for _, q in found}
        glued = [(n, q) for n, q in _glued(clause) if id(q) not in paired]
        found += glued
        if not found:
            clause_names = {t.text.lower() for t in clause if t.kind == "name"}
            if len(clause_names) == 1:
                name = next(t.text for t in clause if t.kind == "name")
                found = [(name, t.quantity) for t in clause if t.kind == "num" and t.quantity is not None]
        pairs.extend(found)
    return pairs


def _same_name(a: str, b: str) -> bool:
    return bool(_name_forms(a) & _name_forms(b))


# "29.45 for GPT-43B", "36.78 by using Llama2-70B": the name after these words owns the numbers
# before them.
_OWNER_WORDS = frozenset(["for", "by", "of", "with", "using", "on", "from"])


def _owner_after(clause: list[_Tok], i: int, known: set[int]) -> int | None:
    """The index of the name that a "for NAME" after number i names, if any."""
    j = i + 1
    while j < len(clause) and (clause[j].kind in ("num", "list") or clause[j].text == "%"):
        j += 1
    if j >= len(clause) or clause[j].text not in _OWNER_WORDS:
        return None
    for k in range(j + 1, min(j + 4, len(clause))):
        if k in known:
            return k
        if clause[k].kind in ("num", "name"):
            return None
    return None


def _attachments(sentence: str, paired_names: Sequence[str]) -> list[tuple[str, Quantity]]:
    """Which name the sentence attaches each of its numbers to (module doc)."""
    out: list[tuple[str, Quantity]] = []
    for clause in _clauses(_tokens(sentence)):
        by_number = {id(q): n for n, q in _parallel(clause)}
        known = {j for j, t in enumerate(clause)
                 if t.kind == "name" and any(_same_name(t.text, p) for p in paired_names)}
        for i, tok in enumerate(clause):
            if tok.kind != "num" or tok.quantity is None:
                continue
            if id(tok.quantity) in by_number:
                out.append((by_number[id(tok.quantity)], tok.quantity))
                continue
            owner = _owner_after(clause, i, known)
            before = [j for j in sorted(known) if j < i]
            after = [j for j in sorted(known) if j > i]
            j = owner if owner is not None else before[-1] if before else after[0] if after else None
            if j is not None:
                out.append((clause[j].text, tok.quantity))
    return out


def mispaired_numbers(sentence: str, quotes: Sequence[str]) -> list[str]:
    """Why the sentence pairs a number with the wrong name, one reason per number; [] if not."""
    quoted = [p for q in quotes for p in pairings(q)]
    if not quoted:
        return []
    problems: list[str] = []
    for name, q in _attachments(sentence, [n for n, _ in quoted]):
        own = [v for n, v in quoted if _same_name(n, name)]
        if not own or any(same_quantity(q, v) for v in own):
            continue
        others = sorted({n for n, v in quoted if not _same_name(n, name) and same_quantity(q, v)})
        if others:
            problems.append(f"{q.text} for {name}, which its quote gives for {', '.join(others)} "
                            f"({name}: {', '.join(v.text for v in own)})")
    return problems
