"""The vector stores: the Chroma collection of chunk vectors (:mod:`.index`), kept in step with
the record (:mod:`.in_step`) and compacted when deleted slots outnumber chunks
(:mod:`.compaction`, :mod:`.chroma_folders`); the entity-name vectors in one exact cosine file
(:mod:`.entity_vectors`); and where a write step gets a text's vector without embedding it again
(:mod:`.embedding_cache`).
"""
