"""Which name fills which role: a claim that gives a name a role ("X chose Osprey as their
table-domain parser") against a sentence that lists names with their roles ("a text-domain
parser (Osprey, Lin et al., 2021) and a table-domain parser (Heron, ...)") and gives that
name another role and that role another name. A list of "role (Name" pairs says which is
which, so the claim has swapped them."""

from __future__ import annotations

import re

from agent.local.contradiction.terms import content

# The claim: a name, "as", and its role ("Osprey as their table-domain parser").
_AS_ROLE = re.compile(r"\b(?P<name>[A-Z][\w\-\.]*)\s+as\s+(?:(?:the|a|an|its|their|his|her|our)\s+)?"
                      r"(?P<role>(?:[\w\-]+\s+){0,2}[\w\-]+)")
# The sentence: a role of one to three words, then the name opening a parenthesis.
_ROLE_NAME = re.compile(r"(?P<role>(?:[\w\-]+\s+){0,2}[\w\-]+)\s*\(\s*(?P<name>[A-Z][\w\-\.]*)")


def swapped_role(claim: str, sentence: str) -> bool:
    """The claim gives a name a role that the sentence gives another name, while the
    sentence gives the claim's name a role without the claim's role words."""
    m = _AS_ROLE.search(claim)
    if not m:
        return False
    name, role = m.group("name").lower(), set(content(m.group("role")))
    if not role:
        return False
    pairs = [(set(content(p.group("role"))), p.group("name").lower()) for p in _ROLE_NAME.finditer(sentence)]
    own = [r for r, n in pairs if n == name]
    taken = [n for r, n in pairs if role <= r and n != name]
    return bool(own and taken) and not any(role <= r for r in own)
