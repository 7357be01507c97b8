"""The record: the SQLite file every other structure is derived from (documents, chunks,
mentions, triples, aliases, the merge log), its note-similarity rows (:mod:`.note_rows`), the
reads of the incremental derivation (:mod:`.derivation_reads`) and a chunk's packed mention and
co-mention rows (:mod:`.packed_rows`). :class:`~.store.Store` is its one entry point.
"""
