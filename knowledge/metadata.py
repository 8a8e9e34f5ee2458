"""Document metadata: what ingestion can infer, and what editors may set.

Search filters by `title`, `year` and `tag` (knowledge.indexing); `Document.metadata` holds
`year`, `tags`, `arxiv_id`, `arxiv_category` where known. Ingestion infers only what it can
read reliably: an arXiv paper carries its identifier (`arXiv:2401.15884v2 [cs.CL] 29 Jan
2024`) in the margin of its first page, and often in its file name; the identifier's YYMM
gives the year of the first version, which is the paper's year (the stamp's date is that of
the latest version). Nothing is guessed from other years on the page: a paper cites years
that are not its own. Values an editor set are kept when the file is ingested again.

Pure: no Django, so it is tested without a database.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

# New-style arXiv identifiers (since April 2007): YYMM.NNNN or YYMM.NNNNN, optional version.
_ARXIV_STAMP = re.compile(r"arXiv:\s?(?P<id>\d{4}\.\d{4,5})(?:v\d+)?\s*\[(?P<category>[a-z\-]+(?:\.[A-Za-z\-]+)?)\]")
_ARXIV_NAME = re.compile(r"(?<![\d.])(?P<id>\d{4}\.\d{4,5})(?:v\d+)?(?![\d])")

YEAR_MIN, YEAR_MAX = 1000, 2999
MAX_TAGS, MAX_TAG_CHARS = 20, 50
# The fields an editor sets; ingestion never overwrites them once set.
EDITABLE = ("year", "tags", "title")


def _arxiv_year(identifier: str) -> int | None:
    yy, mm = int(identifier[:2]), int(identifier[2:4])
    # The scheme began in 0704 (April 2007); anything else is not an arXiv identifier.
    if not 1 <= mm <= 12 or (yy, mm) < (7, 4):
        return None
    return 2000 + yy


def infer_metadata(first_page: str, original_name: str) -> dict[str, Any]:
    """What the first page's text and the file name say: arxiv_id, arxiv_category, year."""
    found: dict[str, Any] = {}
    stamp = _ARXIV_STAMP.search(first_page[:20_000])
    if stamp and _arxiv_year(stamp["id"]):
        found["arxiv_id"], found["arxiv_category"] = stamp["id"], stamp["category"]
    else:
        name = _ARXIV_NAME.search(original_name)
        if name and _arxiv_year(name["id"]):
            found["arxiv_id"] = name["id"]
    if "arxiv_id" in found:
        found["year"] = _arxiv_year(found["arxiv_id"])
    return found


def merge_inferred(current: Mapping[str, Any], inferred: Mapping[str, Any]) -> dict[str, Any]:
    """`current` with the inferred values added; what an editor set (`edited`) stays."""
    edited = set(current.get("edited", []))
    merged = dict(current)
    for key, value in inferred.items():
        if key not in edited:
            merged[key] = value
    return merged


class MetadataError(ValueError):
    """A value an editor gave that cannot be stored; the message says why, for a person."""


def clean_year(value: Any) -> int | None:
    """An editor's year: a whole number in a plausible range, or None/"" to clear it."""
    if value in (None, ""):
        return None
    try:
        year = int(str(value).strip())
    except ValueError:
        raise MetadataError(f"The year must be a whole number such as 2021, not {str(value)[:20]!r}.") from None
    if not YEAR_MIN <= year <= YEAR_MAX:
        raise MetadataError(f"The year {year} is out of range ({YEAR_MIN}-{YEAR_MAX}).")
    return year


def clean_tags(value: Any) -> list[str]:
    """An editor's tags: a list, or one comma-separated string; trimmed, de-duplicated."""
    if value in (None, ""):
        return []
    items = value.split(",") if isinstance(value, str) else list(value)
    tags: list[str] = []
    for item in items:
        if not isinstance(item, str):
            raise MetadataError("Each tag must be text.")
        tag = " ".join(item.split())
        if not tag:
            continue
        if len(tag) > MAX_TAG_CHARS:
            raise MetadataError(f"A tag can have at most {MAX_TAG_CHARS} characters: {tag[:20]!r}... is longer.")
        if tag.casefold() not in {t.casefold() for t in tags}:
            tags.append(tag)
    if len(tags) > MAX_TAGS:
        raise MetadataError(f"A document can have at most {MAX_TAGS} tags.")
    return tags


def parse_year_range(value: str) -> tuple[int, int]:
    """A year filter as a person types it: "2021" or "2019-2021" (inclusive)."""
    lo, sep, hi = value.strip().partition("-")
    try:
        first = clean_year(lo)
        last = clean_year(hi) if sep else first
    except MetadataError:
        raise MetadataError(f"Give a year as 2021 or a range as 2019-2021, not {value[:20]!r}.") from None
    if first is None or last is None:
        raise MetadataError(f"Give a year as 2021 or a range as 2019-2021, not {value[:20]!r}.")
    if first > last:
        raise MetadataError(f"The range {first}-{last} ends before it starts.")
    return first, last
