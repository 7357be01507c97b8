"""The MCP server for agents (:mod:`.server`): one tool per library question, each emitting the
typed result's ``to_json()``.
"""
