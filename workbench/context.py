"""Answer material with citations, and the optional call to a language model.

:func:`build_context` turns a :class:`~workbench.model.RetrievalResult` into the material for
an answer: the subgraph on the answer paths (nodes, and edges with the chunk ids that state
them) and the cited chunks, as Markdown and as JSON. :func:`answer` sends that material to an
OpenAI-compatible chat endpoint only when one is configured in the environment; by default
nothing is sent anywhere.

Examples
--------
>>> print(render_markdown({"question": "q", "mode": "keyword", "subgraph": {"nodes": [], "edges": []},
...                        "chunks": [{"id": "c1", "document": "doc.md", "text": "Redis."}]}))
# Question
<BLANKLINE>
q
<BLANKLINE>
## Sources (keyword)
<BLANKLINE>
[c1] doc.md
> Redis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .model import RetrievalResult

__all__ = ["AnswerContext", "Answer", "build_context", "answer", "render_markdown", "SYSTEM_PROMPT"]

SYSTEM_PROMPT = (
    "Answer the question using only the graph edges and source chunks given. Cite the chunk ids "
    "in square brackets after each claim, e.g. [c1]. If the material does not answer the question, say so."
)


@dataclass
class AnswerContext:
    """The material for an answer, for people (Markdown) and for programs (JSON-ready dict)."""

    markdown: str
    data: dict[str, Any]
    """``{"question", "mode", "subgraph": {"nodes", "edges"}, "chunks": [{"id", "document", "text"}]}``."""


@dataclass
class Answer:
    """What the language model said, or why nothing was asked."""

    text: str
    model: str
    configured: bool
    """False when no model is configured: then :attr:`text` says how to configure one."""


def _edge(source: str, relation: str, target: str, chunks, weight: int | None = None) -> dict:
    edge: dict = {"source": source, "relation": relation, "target": target, "chunks": list(chunks)}
    if weight is not None:
        edge["weight"] = weight  # corroboration: the distinct chunks that state it
    return edge


def _subgraph(ws, result: RetrievalResult) -> dict:
    """The result's graph context, or for chunk-only modes the relation edges stated by its hits."""
    context = result.graph_context or {}
    if context.get("triples"):
        edges = [_edge(t["source"], t["relation"], t["target"], t.get("chunks", []), t.get("weight"))
                 for t in context["triples"]]
        nodes = [n.get("name", n) if isinstance(n, dict) else n for n in context.get("nodes", [])]
    else:
        hit_ids = {hit.chunk_id for hit in result.hits}
        graph = ws.graph
        edges = [
            _edge(graph.name(e.source), e.relation, graph.name(e.target), [c for c in e.chunk_ids if c in hit_ids],
                  e.weight)
            for e in sorted(graph.edges(), key=lambda e: (e.source, e.relation, e.target))
            if hit_ids.intersection(e.chunk_ids)
        ]
        nodes = []
    for edge in edges:
        for end in (edge["source"], edge["target"]):
            if end not in nodes:
                nodes.append(end)
    return {"nodes": nodes, "edges": edges}


def build_context(ws, result: RetrievalResult, max_chunks: int = 10) -> AnswerContext:
    """The subgraph and the cited chunks of ``result``, as Markdown and JSON.

    The chunks are the hits (best first), then chunks cited by the subgraph's edges, up to
    ``max_chunks`` in all.
    """
    subgraph = _subgraph(ws, result)
    chunks = [{"id": h.chunk_id, "document": h.document, "text": h.text} for h in result.hits[:max_chunks]]
    have = {c["id"] for c in chunks}
    cited = [c for edge in subgraph["edges"] for c in edge["chunks"] if c not in have]
    cited = list(dict.fromkeys(cited))[: max(0, max_chunks - len(chunks))]
    chunks += [{"id": c.id, "document": c.document_id, "text": c.text} for c in ws.store.chunks(cited)]
    data = {"question": result.query, "mode": result.mode_used, "subgraph": subgraph, "chunks": chunks}
    return AnswerContext(markdown=render_markdown(data), data=data)


def render_markdown(data: dict) -> str:
    """The answer material as Markdown: question, graph edges with citations, sources."""
    lines = ["# Question", "", data["question"], ""]
    edges = data["subgraph"]["edges"]
    if edges:
        lines += ["## Graph", ""]
        lines += [f"- {e['source']} -{e['relation']}-> {e['target']} [{', '.join(e['chunks'])}]"
                  + (f" x{e['weight']}" if e.get("weight") is not None else "") for e in edges]
        lines.append("")
    lines += [f"## Sources ({data['mode']})", ""]
    for chunk in data["chunks"]:
        lines.append(f"[{chunk['id']}] {chunk['document']}")
        lines += ["> " + line if line else ">" for line in chunk["text"].splitlines()]
        lines.append("")
    return "\n".join(lines).rstrip()


def _not_configured(llm_settings) -> Answer:
    return Answer(
        text=(f"No language model is configured: set {llm_settings.base_url_env} and {llm_settings.model_env} "
              f"(and {llm_settings.api_key_env} if the endpoint needs a key) to an OpenAI-compatible chat endpoint. "
              "Nothing was sent anywhere."),
        model="", configured=False,
    )


def answer(ws, context: AnswerContext, client=None) -> Answer:
    """Ask the configured chat model to answer from ``context``; says plainly when none is configured.

    ``client`` (anything with ``chat(messages) -> str``) overrides the one made from
    ``settings.llm`` and the environment.
    """
    if client is None:
        try:
            from .extract.llm import client_from_settings
        except ImportError:  # the LLM client module is optional
            return _not_configured(ws.settings.llm)
        client = client_from_settings(ws.settings.llm)
        if client is None:
            return _not_configured(ws.settings.llm)
    messages = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": context.markdown}]
    text = client.chat(messages)
    return Answer(text=text, model=str(getattr(client, "model", "")), configured=True)
