"""Files -> documents -> chunks: the loaders and the file formats, what an ingest must read again,
chunking, uploads, the guards on what is read (allowed paths, corpus limits), the supersedings a
note writes, and how a failed write step says so. The pipeline that stores it all is the
workspace's write step (:mod:`workbench.workspace.ingest_pipeline`); safe YAML and text and the
sentences are on the ground floor (:mod:`workbench.text`).

Import from the modules.
"""
