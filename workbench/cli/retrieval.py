"""Retrieval commands: query, compare, context, answer."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import Comparison, RetrievalResult
from ..vectors.index import VectorStoreUnavailable
from .render import CommandError, emit, table
from .bounds import like_setting
from .core import open_workspace

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["register"]


def _run(ws: WorkspaceView, text: str, mode: str, k: int | None, args=None) -> RetrievalResult:
    from ..retrieve import KEYWORD_ONLY, get_retriever, retrieve

    window = {name: getattr(args, name, None) for name in ("since", "until", "as_of")}
    try:
        return retrieve(ws, text, mode=mode, k=k, **window, allow_fallback=getattr(args, "allow_fallback", False))
    except ValueError as exc:
        raise CommandError(str(exc), code=2) from None
    except VectorStoreUnavailable as exc:
        fallback = "the keyword ranking alone" if get_retriever(mode).capabilities.fallback == KEYWORD_ONLY else "no hits"
        raise CommandError(f"{mode}: the vector store failed ({exc}); --allow-fallback answers with {fallback}, "
                           "saying so", code=1) from None


#: The counts of :class:`~workbench.model.RetrievalStats` shown under a result's head line, in
#: this order: where the hits came from first (the provenance / vector split), then the walk.
_COUNTS = ("direct_hits", "expanded_hits", "comention_hits", "provenance_hits", "vector_hits", "hybrid_hits",
           "walk_hits",
           "keyword_hits", "global_hits", "edges_followed", "top_entities", "walk_nodes", "ppr_iterations")


def counts_line(stats: dict) -> str:
    """The hit counts a mode keeps, named for what they count.

    >>> counts_line({"provenance_hits": 6, "vector_hits": 8, "top_entities": 20, "seconds": {}})
    'hits from: provenance 6, vector 8; top entities 20'
    """
    named = [(name, stats[name]) for name in _COUNTS if isinstance(stats.get(name), int)]
    sources = [f"{name[:-5]} {n}" for name, n in named if name.endswith("_hits")]
    others = [f"{name.replace('_', ' ')} {n}" for name, n in named if not name.endswith("_hits")]
    return "; ".join(part for part in ("hits from: " + ", ".join(sources) if sources else "", ", ".join(others))
                     if part)


def themes_text(communities: list[dict]) -> str:
    """A themes answer (``graph_context.themes``): each theme, largest first, with its cited points.

    >>> print(themes_text([{"title": "Partner export", "size": 5, "passages": 9, "first_seen": "2024-01-02",
    ...                     "last_seen": "2024-03-01", "points": ["It moved to 02:00."], "citations": ["c1"]}]))
    1. Partner export (5 entities, 9 passages, 2024-01-02..2024-03-01)
       - It moved to 02:00. [c1]
    """
    lines = []
    for number, theme in enumerate(communities, 1):
        span = f", {theme['first_seen'][:10]}..{theme['last_seen'][:10]}" if theme.get("first_seen") and \
            theme.get("last_seen") else ""
        lines.append(f"{number}. {theme['title']} ({theme['size']} entities, {theme['passages']} passages{span})")
        lines += [f"   - {' '.join(point.split())} [{chunk}]" for point, chunk in zip(theme["points"], theme["citations"])]
    return "\n".join(lines)


def _renderer(result: RetrievalResult):
    """The text table of a result: the payload's fields, and each hit's why as a sentence; a themes
    answer as its themes, each with its cited points."""
    why = [h.why.describe() for h in result.hits]

    def render(p: dict) -> str:
        head = f"mode {p['mode_requested']} (used: {p['mode_used']})" + (f" - {p['reason']}" if p["reason"] else "")
        counts = counts_line(p["stats"])
        head += f"\n{counts}" if counts else ""
        if p["graph_context"].get("themes"):
            return head + "\n" + themes_text(p["graph_context"]["communities"])
        rows = [{"rank": h["rank"], "score": round(h["score"], 4), "document": h["document"], "chunk": h["chunk_id"],
                 "time": h.get("time") or "", "text": " ".join(h["text"].split()), "why": reason}
                for h, reason in zip(p["hits"], why)]
        return head + "\n" + table(rows, ["rank", "score", "document", "chunk", "time", "text", "why"], max_width=50)

    return render


def cmd_query(args):
    ws = _scoped_workspace(args)
    result = _run(ws, args.text, args.mode, args.k, args)
    emit(args, result.to_json(), _renderer(result))


def cmd_compare(args):
    from ..retrieve import MODES

    modes = [m.strip() for m in args.modes.split(",") if m.strip()] if args.modes else list(MODES)
    ws = _scoped_workspace(args)
    comparison = Comparison.of(args.text, {mode: _run(ws, args.text, mode, args.k, args) for mode in modes})

    def render(p):
        shared_ids = set(p["shared"])
        depth = max((len(r["hits"]) for r in p["results"].values()), default=0)
        rows = []
        for i in range(depth):
            row = {"rank": i + 1}
            for mode, r in p["results"].items():
                if i < len(r["hits"]):
                    h = r["hits"][i]
                    row[mode] = ("* " if h["chunk_id"] in shared_ids else "") + f"{h['document']} [{h['chunk_id']}]"
            rows.append(row)
        used = ", ".join(f"{m}: {r['mode_used']}" for m, r in p["results"].items())
        return (f"{p['query']}\nmodes used - {used}\n"
                + table(rows, ["rank", *p["results"]], max_width=45)
                + "\n* = returned by two or more modes")

    emit(args, comparison.to_json(), render)


def cmd_context(args):
    from ..answer.material import build_context, render_markdown

    ws = _scoped_workspace(args)
    context = build_context(ws, _run(ws, args.text, args.mode, args.k, args), max_chunks=args.max_chunks)
    emit(args, context.to_json(), render_markdown)  # rendered again from the data made safe for a terminal


def cmd_answer(args):
    from ..answer.material import answer_question
    from ..extract.llm import LLMError

    ws = _scoped_workspace(args)
    result = _run(ws, args.text, args.mode, args.k, args)
    try:
        answered = answer_question(ws, args.text, result, max_chunks=args.max_chunks)
    except LLMError as exc:
        raise CommandError(str(exc)) from None

    def render(p):
        checks = p["checks"]
        if not checks:
            return p["answer"]
        verdict = "checks passed" if checks["passed"] else "checks found problems:"
        lines = [p["answer"], "", f"[{p['model']}] cites {len(p['citations'])} chunk(s); coverage "
                 f"{checks['coverage']:.2f}, supported {checks['supported_share']:.2f}; {verdict}"]
        return "\n".join(lines + [f"  - {line}" for line in checks["problems"]])

    emit(args, answered.to_json(), render)


def _scoped_workspace(args):
    """The workspace, scoped to ``--documents`` when given (the whole retrieval runs inside it)."""
    from ..workspace.scoped_view import Scopes, ScopeUnmatched

    ws = open_workspace(args)
    filters = [f.strip() for f in (getattr(args, "documents", None) or "").split(",") if f.strip()]
    try:
        return Scopes(ws)(filters)
    except ScopeUnmatched as exc:
        raise CommandError(str(exc), code=2) from None


def _fallback_option(p) -> None:
    from ..retrieve import KEYWORD_ONLY, modes_falling_back_to

    keyword = modes_falling_back_to(KEYWORD_ONLY)
    p.add_argument("--allow-fallback", action="store_true",
                   help=f"when the vector store fails, answer as the mode falls back ({', '.join(keyword)}: the "
                        "keyword ranking; the others: no hits), saying so, instead of stopping with exit 1")


def _time_options(p) -> None:
    p.add_argument("--documents", default=None,
                   help="comma-separated document ids or folder prefixes: retrieve from these documents only")
    p.add_argument("--since", default=None, help="keep hits dated on or after this day (YYYY-MM-DD)")
    p.add_argument("--until", default=None, help="keep hits dated on or before this day (YYYY-MM-DD)")
    p.add_argument("--as-of", dest="as_of", default=None,
                   help="reference day for phrases such as 'last month' in the question (default: today)")


def register(subparsers, common) -> None:
    from ..retrieve import MODES

    p = subparsers.add_parser("query", parents=[common], help="retrieve chunks for a question with one mode")
    p.add_argument("text")
    p.add_argument("--mode", default="hybrid", help=f"one of: {', '.join(MODES)} (default hybrid)")
    p.add_argument("--k", "-k", type=like_setting("retrieval.k"), default=None, help="hits wanted (default: settings retrieval.k)")
    _time_options(p)
    _fallback_option(p)
    p.set_defaults(handler=cmd_query)

    p = subparsers.add_parser("compare", parents=[common], help="several modes side by side, shared hits marked")
    p.add_argument("text")
    p.add_argument("--modes", default=None, help="comma-separated modes (default: all)")
    p.add_argument("--k", "-k", type=like_setting("retrieval.k"), default=None)
    _time_options(p)
    _fallback_option(p)
    p.set_defaults(handler=cmd_compare)

    for name, handler, help_text in (("context", cmd_context, "the cited material for an answer (Markdown; --json the data)"),
                                     ("answer", cmd_answer, "answer with the configured language model, if any")):
        p = subparsers.add_parser(name, parents=[common], help=help_text)
        p.add_argument("text")
        p.add_argument("--mode", default="graphrag", help=f"one of: {', '.join(MODES)} (default graphrag)")
        p.add_argument("--k", "-k", type=like_setting("retrieval.k"), default=None)
        p.add_argument("--max-chunks", type=like_setting("answers.max_chunks"), default=None,
                       help="chunks in the material (default: answers.max_chunks)")
        _time_options(p)
        _fallback_option(p)
        p.set_defaults(handler=handler)
