"""URL slugs for named rows: teams here, collections in knowledge (which imports this)."""

from __future__ import annotations

from django.utils.text import slugify

# Words that are routes next to <slug> (`collections/new/` is the create form): a collection
# or team named "New" gets `new-2`, so its page can be opened.
RESERVED_SLUGS = frozenset({"new", "edit", "delete", "create", "search", "import", "settings", "api", "admin"})


def unique_slug(model: type, name: str) -> str:
    base = slugify(name)[:180] or "collection"
    slug, n = base, 2
    if slug in RESERVED_SLUGS:
        slug = f"{base}-{n}"
        n += 1
    while model.objects.filter(slug=slug).exists():
        slug, n = f"{base}-{n}", n + 1
    return slug
