"""A document's words as it writes them whole (knowledge.text.Vocabulary), read once per process
and document version: the evidence that decides a line-break hyphen ("Chat- GPT", "regres- sion")
wherever a reader sees the document's text (the verifier's answer and quotes, the citation panel,
a refusal's closest passages), so the whole paper decides, not only the chunks a question found."""

from __future__ import annotations

import threading
from collections import OrderedDict

from knowledge.models import Chunk, Document
from knowledge.text import Vocabulary

# Documents whose vocabulary is kept per process (a 30-page paper's is some 5,000 forms).
CACHED_DOCUMENTS = 64
_cache: OrderedDict[tuple[int, str], Vocabulary] = OrderedDict()
_lock = threading.Lock()


def document_vocabulary(document_id: int) -> Vocabulary | None:
    """Every word form the document's non-reference chunks write, counted; None when the
    document is gone. Keyed by the file's sha256, so a replaced file is read again."""
    sha256 = Document.objects.filter(pk=document_id).values_list("sha256", flat=True).first()
    if sha256 is None:
        return None
    key = (document_id, sha256)
    with _lock:
        if key in _cache:
            _cache.move_to_end(key)
            return _cache[key]
    texts = Chunk.objects.filter(document_id=document_id, is_reference=False).values_list("text", flat=True)
    vocabulary = Vocabulary.of(texts.iterator())
    with _lock:
        _cache[key] = vocabulary
        while len(_cache) > CACHED_DOCUMENTS:
            _cache.popitem(last=False)
    return vocabulary
