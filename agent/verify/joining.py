"""Words a line break cut in the stored text ("Chat- GPT", "Lamp- Net"), written whole as the
retrieved evidence writes them: the one joiner of the verifier (an answer's sentences and
quotes, as a reader sees them) and of the local roles (the words they score,
agent.local.candidates.read_sources)."""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agent.types import Source
from knowledge.text.hyphens import Vocabulary, join_line_breaks, line_broken

# A document's whole vocabulary by its id (knowledge.vocabulary.document_vocabulary); None when
# it cannot be read.
DocumentVocabulary = Callable[[int], Vocabulary | None]
# join(text, documents): the text with its cut words joined as those documents write them.
Joiner = Callable[[str, Iterable[object]], str]


def document_of(source: Source) -> object:
    """The key a source's document goes by: its id, else its title."""
    return source.document_id if source.document_id is not None else source.document_title


def line_break_joiner(sources: list[Source], document_vocabulary: DocumentVocabulary | None = None) -> Joiner:
    """join(text, documents): `text` with each word a line break cut written whole as the given
    documents write it (knowledge.text.join_line_breaks), then as all the retrieved chunks do.
    A document's evidence is its whole text when `document_vocabulary` reads it, else its
    retrieved chunks: a name one chunk only writes cut ("Chat- GPT") is usually written whole
    elsewhere in the paper. Each vocabulary is read once, when a text first needs it."""
    by_document: dict[object, list[str]] = {}
    for source in sources:
        by_document.setdefault(document_of(source), []).append(source.text)
    vocabularies: dict[object, Vocabulary] = {}

    def vocabulary(key: object) -> Vocabulary:
        if key not in vocabularies:
            whole = document_vocabulary(key) if document_vocabulary is not None and isinstance(key, int) else None
            vocabularies[key] = whole if whole is not None else Vocabulary.of(
                by_document.get(key, []) if key is not None else [s.text for s in sources])
        return vocabularies[key]

    def join(text: str, documents: Iterable[object]) -> str:
        if not line_broken(text):
            return text
        return join_line_breaks(text, [*(vocabulary(d) for d in dict.fromkeys(documents)), vocabulary(None)])

    return join
