"""Issue 57, item 3: one request line killed the MCP server. Arguments nested 900 deep raised
RecursionError in the surrogate repair, 100,000 deep in ``json.loads``: the server exited and the
client saw EOF. Every line now gets a result or a JSON-RPC error, and the server keeps serving."""

from __future__ import annotations

import json


from workbench.mcp_server.server import MAX_LINE_BYTES, TOO_DEEP_METHOD, TOO_LARGE_METHOD

from tests.reliability.test_mcp_read_only import _exchange



def _call(request_id: int, arguments: str) -> str:
    return ('{"jsonrpc": "2.0", "id": %d, "method": "tools/call", "params": {"name": "search_chunks", '
            '"arguments": %s}}' % (request_id, arguments))


def test_deep_and_huge_request_lines_get_errors_and_the_server_keeps_serving(small):
    deep = _call(1, '{"query": "queue", "documents": ' + "[" * 900 + "]" * 900 + "}")
    deeper = _call(2, '{"query": "queue", "documents": ' + "[" * 100_000 + "]" * 100_000 + "}")
    huge = _call(3, json.dumps({"query": "queue " * (MAX_LINE_BYTES // 3)}))
    unclosed = '{"jsonrpc": "2.0", "method": "notifications/x", "params": ' + "[" * 100_000  # no id: no reply
    after = _call(4, '{"query": "queue number", "mode": "keyword", "limit": 2}')
    replies = {reply["id"]: reply for reply in _exchange(small.path, [deep, deeper, huge, unclosed, after], replies=4)}
    assert set(replies) == {1, 2, 3, 4}
    assert replies[1]["error"]["data"] == TOO_DEEP_METHOD and replies[2]["error"]["data"] == TOO_DEEP_METHOD
    assert replies[3]["error"]["data"] == TOO_LARGE_METHOD
    assert not replies[4]["result"]["isError"] and replies[4]["result"]["structuredContent"]["hits"]
