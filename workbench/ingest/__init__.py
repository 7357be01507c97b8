"""Files -> documents -> chunks: the loaders and the file formats, chunking, sentences, the
guards on what is read (safe YAML and text, allowed paths, corpus limits) and the ingest
pipeline that stores it all (:mod:`workbench.workspace.ingest_pipeline`).

Import from the modules: this package imports nothing, so the settings can read
:mod:`workbench.text.safe_yaml` without loading the pipeline.
"""
