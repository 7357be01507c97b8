"""Corpus-wide and time commands: communities, timeline, episodes."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .core import open_workspace
from .render import CommandError, emit, table

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = ["register"]


def cmd_communities(args):
    from ..corpus.community_listing import community_listing

    ws = open_workspace(args)
    try:
        listing = community_listing(ws, args.id)
    except KeyError as exc:
        raise CommandError(str(exc.args[0]), code=2) from None
    if args.labels:
        _emit_theme_match(args, ws, listing.every_report)
        return

    def render(p):
        if not p["communities"]:
            return "no communities: the graph has no group of entities linked closely enough"
        return listing.themes_from.statement() + "\n" + listing_text(p) if listing.themes_from else listing_text(p)

    def listing_text(p):
        if args.id is None:
            rows = [{"id": c["id"], "level": "theme" if not c["level"] else f"sub-theme{'' if c['level'] == 1 else c['level']}",
                     "size": c["size"], "title": ("  " * c["level"] + ("- " if c["level"] else "")) + c["title"],
                     "passages": len(c["chunks"]),
                     "span": f"{(c['first_seen'] or '')[:10]}..{(c['last_seen'] or '')[:10]}",
                     "points": len(c["points"])} for c in p["communities"]]
            return table(rows, ["id", "level", "size", "title", "passages", "span", "points"], max_width=60)
        lines = []
        for c in p["communities"]:
            kind = "theme" if not c["level"] else f"sub-theme of {c['parent']}"
            lines.append(f"{c['id']}: {c['title']} ({kind}; {c['size']} entities, {len(c['chunks'])} passages, "
                         f"{(c['first_seen'] or '?')[:10]}..{(c['last_seen'] or '?')[:10]})")
            lines.append("key phrases: " + ", ".join(phrase for phrase, _ in c["key_phrases"][:10]))
            lines.append("key entities: " + ", ".join(f"{e['name']} ({e['type']})" for e in c["key_entities"]))
            parts = listing.sub_themes(c["id"])
            if parts:
                lines.append("sub-themes: " + "; ".join(f"{x.id} {x.title}" for x in parts))
            for r in c["relations"]:
                lines.append(f"  {r['source']} -{r['relation']}-> {r['target']}  [weight {r['weight']}; chunks "
                             f"{', '.join(r['chunks'])}]")
            for point in c["points"]:
                lines.append(f"  - {point['text']}  [{point['chunk_id']}; {point['document']}]")
        return "\n".join(lines)

    emit(args, listing.to_json(), render)


def _emit_theme_match(args, ws: WorkspaceView, reports) -> None:
    """The themes' match to the labels file of ``--labels``."""
    from ..evaluate.themes import LabelsError, themes_against_labels

    try:
        labelled = themes_against_labels(ws, reports, args.labels)
    except LabelsError as exc:
        raise CommandError(str(exc), code=2) from None

    def render(p):
        m, titles = p["match"], labelled.titles
        rows = [{"community": titles.get(row["community"], row["community"]), "majority": row["majority"],
                 "documents by theme": ", ".join(f"{t} {n}" for t, n in row["themes"].items())} for row in m["table"]]
        return (f"themes against {args.labels}: purity {m['purity']:.3f}, NMI {m['nmi']:.3f}, coverage "
                f"{m['coverage']:.3f} of {m['documents']} labelled documents\n"
                + table(rows, ["community", "majority", "documents by theme"], max_width=60))

    emit(args, labelled.to_json(), render)


def cmd_timeline(args):
    from ..corpus.timeline import timeline

    def render(p):
        rows = [{"time": e["time"] or "(undated)", "kind": e["kind"], "text": e["text"], "chunk": e["chunk_id"],
                 "document": e["document"]} for e in p["entries"]]
        return f"{p['entity']}: {len(rows)} dated facts\n" + table(rows, ["time", "kind", "text", "chunk", "document"],
                                                                   max_width=60)

    emit(args, timeline(open_workspace(args), args.entity).to_json(), render)


def cmd_episodes(args):
    from ..corpus.episode_search import search_episodes

    found = search_episodes(open_workspace(args), args.find)

    def render(p):
        if not found.searched:
            return "no episodes: the workspace holds no conversation log (.jsonl chat)"
        if not p["episodes"]:
            return f"no episode of {found.searched:,} holds {args.find!r}"
        lines = []
        for e in p["episodes"]:
            lines.append(f"{e['id']}  {e['document']}  {e['start']} .. {e['end']}")
            lines.append("  participants: " + ", ".join(f"{x['speaker']} ({x['messages']})" for x in e["participants"]))
            lines.append("  discussed: " + ", ".join(e["entities"]))
            for d in e["decisions"]:
                lines.append(f"  decision [{d['time']}] {d['text']}  [{d['chunk_id']}]")
        return "\n".join(lines)

    emit(args, found.to_json(), render)


def register(subparsers, common) -> None:
    p = subparsers.add_parser("communities", parents=[common],
                              help="communities of the graph with their extractive reports")
    p.add_argument("id", nargs="?", default=None, help="one community's id: its full report")
    p.add_argument("--labels", default=None, metavar="FILE",
                   help="JSON of document id (or file name) -> theme: print how the themes match it "
                        "(purity, NMI, coverage, documents of each theme per community)")
    p.set_defaults(handler=cmd_communities)

    p = subparsers.add_parser("timeline", parents=[common],
                              help="an entity's dated mentions, relations and decisions, in order")
    p.add_argument("entity")
    p.set_defaults(handler=cmd_timeline)

    p = subparsers.add_parser("episodes", parents=[common],
                              help="sessions of the conversation logs: participants, topics, decisions")
    p.add_argument("--find", default=None, metavar="TEXT",
                   help="only the sessions whose participants, entities, decisions or document hold TEXT (any case)")
    p.set_defaults(handler=cmd_episodes)
