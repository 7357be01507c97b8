"""The answer step: the material for an answer with citations and the optional call to a
language model (:mod:`.material`), and the deterministic checks of its reply (:mod:`.checks`),
which the evaluation's answer stage reuses.
"""
