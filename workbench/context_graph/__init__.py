"""The one context graph: name keys, aliases and the merge record (:mod:`~.canon`), merge
suggestions, the passage layer, its assembly from the record, the graph itself with its
walks and questions, Personalized PageRank, the entity-name index and the snapshot kept on disk.

Import from the modules: ``from workbench.context_graph.graph import ContextGraph``.
"""
