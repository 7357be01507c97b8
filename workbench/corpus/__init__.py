"""Corpus-wide views of the graph and the record: communities and their key phrases, episodes of
conversations, an entity's timeline, the stored summaries, notes' nearest neighbours and which
notes a later one outdates.

Import from the modules.
"""
