"""The one context graph: aliases, splits and the merge record (:mod:`~.canon`, over the name keys
of :mod:`workbench.text.name_keys`), merge suggestions, the passage layer, its assembly from the
record and what a write follows of it, the graph itself with its walks and questions,
Personalized PageRank and the snapshot kept on disk (the entity-name index is
:mod:`workbench.vectors.entity_vectors`).

Import from the modules: ``from workbench.context_graph.graph import ContextGraph``.
"""
