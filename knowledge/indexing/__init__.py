"""The per-collection search index: the Django edge of knowledge.retrieval.

The index is derived data. `index_rebuild` (build) writes what changed among the READY
documents' chunks as a new immutable segment plus a delete mask, lists them as version
`INDEX_ROOT/<collection id>/<version>/` (knowledge.retrieval.segments) and bumps
`Collection.index_version`; `index_merge` (merge, in the background) folds the segments into
one; `index_search` and `index_sentence_search` (search) load the version the database names
(once per process, cached by (collection, version)) and search it. A process that holds an
older version notices on its next search, because it reads `index_version` from the database
every time, and reloads. See docs/retrieval.md.

Modules:
- rows: a chunk's index rows (BM25 text, chunk and sentence vectors) and the document
  signatures that tell which documents changed;
- incremental: what the next version is made of (the previous version's segments, a delete
  mask, and the rows of the added or changed documents);
- versions: the folders on disk (writing a version, deleting the unlisted segments);
- build: `index_rebuild`, under the collection's lock;
- merge: `index_merge`, folding the segments into one;
- search: `index_search`, `index_sentence_search`, the loaded searchers and filters.
"""
