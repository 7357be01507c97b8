"""Corpus-wide views of the graph and the record: the keyword index, communities, their reports
and key phrases, episodes of conversations, an entity's timeline, the stored summaries, notes'
nearest neighbours and which notes a later one outdates; and :class:`~.workspace_view.WorkspaceView`,
the protocol of what every reader above asks of a workspace.

Import from the modules.
"""
