"""Core commands: ingest, remove, stats, entities, merges, suggestions, alias, neighbors, impact, path."""

from __future__ import annotations

from dataclasses import asdict
from typing import TYPE_CHECKING

from ..context_graph.graph_questions import IMPACT_READINGS, comentions, impact, neighborhood, paths_between
from ..runtime.progress import tqdm_progress
from .bounds import between, like_setting
from .render import CommandError, emit, table

#: Most edges ``neighbors --hops`` walks (the MCP tool's bound is lower).
MAX_NEIGHBOR_HOPS = 10

if TYPE_CHECKING:
    from ..workspace.workspace import Workspace

__all__ = ["register", "open_workspace", "LOCK_TIMEOUT_ENV"]


#: Environment variable: seconds a writer waits for another writer before "workspace busy".
LOCK_TIMEOUT_ENV = "WORKBENCH_LOCK_TIMEOUT"


def open_workspace(args, create: bool = False):
    """The workspace named by ``--workspace`` with the settings named by ``--settings``.

    Only ``ingest`` passes ``create=True``: every other command needs an existing workspace,
    so a mistyped ``--workspace`` stops with one line instead of creating an empty one. A
    writer waits for another writer up to ``$WORKBENCH_LOCK_TIMEOUT`` seconds (default 10).
    """
    import os

    from ..settings import load_settings
    from ..workspace.workspace import Workspace

    raw = os.environ.get(LOCK_TIMEOUT_ENV, "").strip()
    try:
        lock_timeout = float(raw) if raw else 10.0
    except ValueError:
        raise CommandError(f"{LOCK_TIMEOUT_ENV}={raw!r} is not a number of seconds", code=2) from None
    ws = Workspace(args.workspace, settings=load_settings(args.settings), lock_timeout=lock_timeout, create=create)
    getattr(args, "opened_workspaces", []).append(ws)  # closed by main on the way out
    return ws


def cmd_ingest(args):
    from ..ingest.loaders import SUPPORTED_EXTENSIONS, check_paths
    from ..views.wording import counted, redone_for_settings

    check_paths(args.paths)  # a bad path stops before a workspace is created for it
    ws = open_workspace(args, create=True)
    report = ws.ingest(args.paths, progress=tqdm_progress())
    from ..vectors.index import CHUNKS

    wrote = report.chunks_written or report.documents_removed or report.vectors_repaired
    # read only after a write: an ingest that changed nothing never opens Chroma
    payload = {**report.to_json(), "stats": ws.stats(), "deleted_vectors": ws.vectors.deleted(CHUNKS) if wrote else None}

    def render(p):
        lines = [
            f"ingested {counted(p['documents_seen'], 'document')} in {p['seconds']:.2f} s: {p['documents_added']} added, "
            f"{p['documents_updated']} updated, {p['documents_unchanged']} unchanged, {p['documents_removed']} removed",
            f"{counted(p['chunks_written'], 'chunk')} written, {p['chunks_embedded']} embedded"
            + (f", {p['vectors_repaired']} vectors repaired" if p["vectors_repaired"] else ""),
        ]
        if p["files_redone_for_settings"]:
            lines.append(f"  {redone_for_settings(p['files_redone_for_settings'])}")
        lines += [f"  {problem}" for problem in p["problems"] + p["extraction_problems"]]
        if not p["documents_seen"] and not p["documents_removed"] and not p["problems"]:
            lines.append(f"  nothing to ingest under {', '.join(map(str, args.paths))}: no file of a kind it reads "
                         f"({' '.join(SUPPORTED_EXTENSIONS)})")
        s = p["stats"]
        lines.append(f"workspace: {counted(s['documents'], 'document')}, {counted(s['chunks'], 'chunk')}, "
                     f"{counted(s['entities'], 'entity', 'entities')}, {counted(s['edges'], 'edge')}")
        if p["vector_slots_freed"]:
            lines.append(f"  chroma/ rebuilt: the slots of {p['vector_slots_freed']:,} deleted vectors, more than its "
                         f"{s['chunks']:,} chunks, freed (Chroma frees none itself)")
        return "\n".join(lines)

    emit(args, payload, render)


def _confirm_removing_everything(ws: Workspace, args, count: int) -> None:
    """Ask before a removal that empties the workspace (``remove /``); ``--yes`` answers for scripts."""
    import sys

    if args.yes:
        return
    question = f"remove all {count} documents of workspace {ws.path} (everything under {args.path})?"
    if not sys.stdin.isatty():
        raise CommandError(f"refusing to {question[:-1]} without asking: pass --yes to do it", code=2)
    if input(f"{question} [y/N] ").strip().lower() not in ("y", "yes"):
        raise CommandError("nothing removed", code=1)


def cmd_remove(args):
    ws = open_workspace(args)
    interrupted = ws.unfinished() is not None  # a step killed midway, this command's rerun say: it completes it
    ids = ws.documents_under(args.path)
    if not ids and not interrupted:
        raise CommandError(f"nothing stored under {args.path}", code=2)
    total = ws.store.count("documents")
    if ids and len(ids) == total and (total > 1 or str(args.path).rstrip("/") == ""):
        _confirm_removing_everything(ws, args, total)
    removed = ws.remove(args.path)
    completed = interrupted and not removed

    def render(p):
        if p["completed_interrupted_write"]:
            return f"nothing left under {args.path}: the interrupted write before this one is now complete"
        return f"removed {len(p['removed'])} documents:\n" + "\n".join(f"  {d}" for d in p["removed"])

    emit(args, {"removed": removed, "completed_interrupted_write": completed, "stats": ws.stats()}, render)


def cmd_stats(args):
    emit(args, open_workspace(args).stats(),
         lambda p: "\n".join(f"{k:>16}: {v}" for k, v in p.items()))


def cmd_entities(args):
    ents = open_workspace(args).entities()
    if args.type:
        ents = [e for e in ents if e.type == args.type]
    ents = ents[: args.limit]
    emit(args, [asdict(e) for e in ents],
         lambda p: table(p, ["name", "type", "mentions", "first_seen", "last_seen"]))


def cmd_merges(args):
    merges = open_workspace(args).merges()
    payload = [
        {"canonical": m.canonical, "key": m.key, "reasons": m.reasons,
         "surface_forms": [{"form": f.form, "count": f.count, "chunks": list(f.chunk_ids)} for f in m.surface_forms]}
        for m in merges
    ]

    def render(p):
        if not p:
            return "no merges: every entity is written one way"
        return "\n".join(
            f"{m['canonical']}  <=  " + ", ".join(f"{f['form']} ({f['count']})" for f in m["surface_forms"])
            for m in p
        )

    emit(args, payload, render)


def cmd_suggestions(args):
    try:
        page = open_workspace(args).corrections.suggestion_page(args.page, args.per_page)
    except ValueError as exc:
        raise CommandError(str(exc), code=2) from None

    def render(p):
        if not p["total"]:
            return "no merge suggestions: no two names left look like one"
        lines = [f"{p['total']} merge suggestions, page {p['page']} of {p['pages']} (best evidence first)"]
        lines += [f"{s['rank']:>4}. {s['a']}  <->  {s['b']}  ({s['score']:.2f}, {s['evidence']}): {s['reason']}"
                  for s in p["suggestions"]]
        return "\n".join(lines)

    emit(args, page.to_json(), render)


def cmd_candidates(args):
    ws = open_workspace(args)
    if args.accept:
        try:
            changed = ws.corrections.accept_candidate(*args.accept)
        except ValueError as exc:
            raise CommandError(str(exc), code=2) from None
        subject, relation, obj = args.accept
        emit(args, {"accepted": list(args.accept), "statements": changed},
             lambda p: f"accepted {subject} -{relation}-> {obj} ({changed} statement(s)): now a graph fact")
        return
    found = ws.candidates()
    payload = [{"subject": t.subject, "relation": t.relation, "object": t.object,
                "confidence": round(t.confidence, 4), "chunk": t.chunk_id} for t in found]
    emit(args, payload, lambda p: table(p, ["confidence", "subject", "relation", "object"]) if p
         else "no candidate relations (no two notes are similar enough, no LLM triples waiting)")


def cmd_alias(args):
    ws = open_workspace(args)
    try:
        if args.action == "add":
            if not args.canonical:
                raise CommandError("usage: alias add ALIAS CANONICAL", code=2)
            ws.corrections.add_alias(args.name, args.canonical)  # a rerun completes the first, logged once
            msg = f"{args.name!r} is now an alias of {args.canonical!r}"
        elif args.action == "remove":
            ws.corrections.remove_alias(args.name)
            msg = f"alias {args.name!r} removed"
        elif args.action == "split":
            ws.corrections.split(args.name)
            msg = f"{args.name!r} split out into an entity of its own"
        else:
            ws.corrections.unsplit(args.name)
            msg = f"{args.name!r} merged back"
    except (KeyError, ValueError) as exc:
        raise CommandError(str(exc).strip('"'), code=2) from None
    emit(args, {"ok": True, "message": msg, "stats": ws.stats()}, lambda p: p["message"])


def cmd_neighbors(args):
    ws = open_workspace(args)
    if args.comention:
        emit(args, comentions(ws, args.entity).to_json(), lambda p: f"co-mentioned with {p['center']}:\n" + table(
            p["comentions"], ["entity", "weight", "first_seen", "last_seen", "chunks"]))
        return
    hood = neighborhood(ws, args.entity, hops=args.hops, direction=args.direction)
    emit(args, hood.to_json(), lambda p: table(p["entities"], ["entity", "distance"]) + "\n\n" + table(
        p["edges"], ["source", "relation", "target", "weight", "chunks"]))


def cmd_impact(args):
    payload = impact(open_workspace(args), args.entity, relations=args.relations).to_json()

    def render(p):
        along = "every relation" if p["relations"] == "all" else "the dependency relations (graph.impact_relations)"
        lines = [f"if {p['failed']} fails, {len(p['impacted'])} entities break (failure spread along {along}):"]
        for item in p["impacted"]:
            lines.append(f"  {item['entity']}  ({len(item['hops'])} hop{'' if len(item['hops']) == 1 else 's'})")
            for h in item["hops"]:
                lines.append(f"      {h['source']} -{h['relation']}-> {h['target']}  "
                             f"[weight {h['weight']}; chunks {', '.join(h['chunks'])}; {', '.join(h['documents'])}]")
        lines.append(f"survivors ({len(p['survivors'])}): {', '.join(p['survivors']) or 'none'}")
        return "\n".join(lines)

    emit(args, payload, render)


def cmd_path(args):
    found = paths_between(open_workspace(args), args.source, args.target, max_hops=args.max_hops, k=args.k)

    def render(p):
        if not p["paths"]:
            return f"no path from {p['from']} to {p['to']} within {found.max_hops} hops"
        lines = []
        for i, path in enumerate(p["paths"], 1):
            lines.append(f"{i}. {' -> '.join(path['nodes'])}  (corroboration {path['corroboration']})")
            for h in path["hops"]:
                lines.append(f"      {h['source']} -{h['relation']}-> {h['target']}  "
                             f"[weight {h['weight']}; chunks {', '.join(h['chunks'])}]")
        return "\n".join(lines)

    emit(args, found.to_json(), render)


def cmd_chunk(args):
    ws = open_workspace(args)
    c = ws.chunk(args.chunk_id)
    emit(args, asdict(c), lambda p: f"[{p['id']}] {p['document_id']} #{p['ordinal']}\n{p['text']}")


def cmd_repair(args):
    from ..bench.sizes import folder_mb
    from ..vectors.index import CHUNKS

    ws = open_workspace(args)
    identity = ws.new_identity() if args.new_identity else None
    damaged = ws.entity_index_damage()
    record_mb, chroma_mb, deleted = ws.store.size_bytes() / 2**20, folder_mb(ws.path / "chroma"), ws.vectors.deleted(CHUNKS)
    changed = ws.repair()
    emit(args, {"new_identity": None if identity is None else {"was": identity[0], "id": identity[1],
                                                                "vectors_copied": identity[2]},
                "vectors_changed": changed, "entity_index_rebuilt": damaged is not None,
                "integrity_ok": ws.store.integrity_ok(), "record_mib_before": round(record_mb, 1),
                "record_mib": round(ws.store.size_bytes() / 2**20, 1), "deleted_vectors_freed": deleted,
                "chroma_mib_before": chroma_mb, "chroma_mib": folder_mb(ws.path / "chroma"), **ws.vector_counts()},
         lambda p: (f"new identity {identity[1]} (was {identity[0]}), {identity[2]} vectors copied into its own "
                    "collections; " if identity else "")
                   + f"{p['vectors_changed']} vectors repaired"
                   + (f"; the record went from {p['record_mib_before']} to {p['record_mib']} MiB (chunk vectors "
                      "an earlier version kept beside Chroma's copy were dropped)"
                      if p["record_mib"] < p["record_mib_before"] - 1 else "")
                   + (f"; the chunk collection was rebuilt without the slots Chroma keeps for deleted vectors "
                      f"({p['deleted_vectors_freed']:,} counted): chroma/ went from {p['chroma_mib_before']} to "
                      f"{p['chroma_mib']} MiB" if p["chroma_mib"] < p["chroma_mib_before"] - 1 else "")
                   + (f"; the entity-name index was damaged ({damaged}) and is built again" if damaged else "")
                   + f"; SQLite integrity {'ok' if p['integrity_ok'] else 'FAILED'}")


def cmd_settings(args):
    from ..settings import load_settings, render_defaults_yaml

    if args.defaults:
        print(render_defaults_yaml(), end="")
        return
    settings = load_settings(args.settings)
    emit(args, settings.model_dump(mode="json"), lambda p: f"settings OK ({args.settings or 'settings.yaml'})")


def register(subparsers, common) -> None:
    p = subparsers.add_parser("settings", parents=[common], help="check the settings file, or print the defaults")
    p.add_argument("--defaults", action="store_true", help="print the default settings as commented YAML")
    p.set_defaults(handler=cmd_settings)

    p = subparsers.add_parser("ingest", parents=[common], help="ingest files or folders")
    p.add_argument("paths", nargs="+")
    p.set_defaults(handler=cmd_ingest)

    p = subparsers.add_parser("remove", parents=[common], help="remove a file's or folder's documents")
    p.add_argument("path")
    p.add_argument("--yes", action="store_true", help="remove even when that empties the workspace, without asking")
    p.set_defaults(handler=cmd_remove)

    p = subparsers.add_parser("stats", parents=[common], help="counts of documents, chunks, entities, edges")
    p.set_defaults(handler=cmd_stats)

    p = subparsers.add_parser("entities", parents=[common], help="entities, most mentioned first")
    p.add_argument("--type", help="only this entity type")
    p.add_argument("--limit", type=between(1, 1_000_000_000), default=50)
    p.set_defaults(handler=cmd_entities)

    p = subparsers.add_parser("merges", parents=[common], help="names merged into one entity, with counts")
    p.set_defaults(handler=cmd_merges)

    p = subparsers.add_parser("suggestions", parents=[common],
                              help="merge suggestions ranked by evidence (declared, translation, meaning, spelling), paged")
    p.add_argument("--page", type=between(1, 1_000_000), default=1, help="page number, from 1")
    p.add_argument("--per-page", type=between(1, 1000), default=12, help="suggestions per page, 1 to 1000")
    p.set_defaults(handler=cmd_suggestions)

    p = subparsers.add_parser("candidates", parents=[common],
                              help="relations discovered automatically (similar notes, LLM triples): to check, not facts")
    p.add_argument("--accept", nargs=3, metavar=("SUBJECT", "RELATION", "OBJECT"),
                   help="accept one candidate as a graph fact")
    p.set_defaults(handler=cmd_candidates)

    p = subparsers.add_parser("alias", parents=[common], help="add or remove an alias; split a form out or back")
    p.add_argument("action", type=str.lower, choices=["add", "remove", "split", "unsplit"])
    p.add_argument("name")
    p.add_argument("canonical", nargs="?")
    p.set_defaults(handler=cmd_alias)

    p = subparsers.add_parser("neighbors", parents=[common], help="the k-hop neighbourhood of an entity")
    p.add_argument("entity")
    p.add_argument("--hops", type=between(0, MAX_NEIGHBOR_HOPS), default=1,
                   help=f"edges to walk, 0 to {MAX_NEIGHBOR_HOPS} (default 1)")
    p.add_argument("--direction", choices=["out", "in", "both"], default="out",
                   help="'out' follows edges from the entity (the default), 'in' towards it, 'both' either way")
    p.add_argument("--comention", action="store_true",
                   help="the entities co-mentioned with it instead, with weight and first/last seen")
    p.set_defaults(handler=cmd_neighbors)

    p = subparsers.add_parser("impact", parents=[common], help="what breaks if ENTITY fails, and what survives")
    p.add_argument("entity")
    p.add_argument("--relations", choices=list(IMPACT_READINGS), default="all",
                   help="'all' spreads the failure along every relation (the default), 'dependencies' along "
                        "settings graph.impact_relations only")
    p.set_defaults(handler=cmd_impact)

    p = subparsers.add_parser("path", parents=[common], help="cited paths from A to B, best corroborated first")
    p.add_argument("source")
    p.add_argument("target")
    p.add_argument("--max-hops", type=like_setting("graph.max_path_hops"), default=None,
                   help="longest path searched (default: settings graph.max_path_hops)")
    p.add_argument("-k", type=like_setting("graph.max_paths"), default=None, help="paths returned (default: settings graph.max_paths)")
    p.set_defaults(handler=cmd_path)

    p = subparsers.add_parser("chunk", parents=[common], help="show one chunk by id")
    p.add_argument("chunk_id")
    p.set_defaults(handler=cmd_chunk)

    p = subparsers.add_parser("repair", parents=[common], help="make the vector store agree with the SQLite record")
    p.add_argument("--new-identity", action="store_true",
                   help="first give this workspace an id of its own (a copied folder: cp -r keeps the original's id, "
                        "and so its collections on a Chroma server), its vectors copied into its own collections")
    p.set_defaults(handler=cmd_repair)
