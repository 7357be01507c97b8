"""Core commands: ingest, remove, stats, entities, merges, suggestions, alias, neighbors, impact, path."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from ..context_graph.graph_questions import IMPACT_READINGS, comentions, impact, neighborhood, paths_between
from ..runtime.progress import tqdm_progress
from .bounds import between, like_setting
from .render import CommandError, emit, table

#: Most edges ``neighbors --hops`` walks (the MCP tool's bound is lower).
MAX_NEIGHBOR_HOPS = 10

if TYPE_CHECKING:
    from ..vectors.chroma_subprocess import ChromaSubprocess
    from ..workspace.workspace import Workspace

__all__ = ["register", "open_workspace", "LOCK_TIMEOUT_ENV"]


#: Environment variable: seconds a writer waits for another writer before "workspace busy".
LOCK_TIMEOUT_ENV = "WORKBENCH_LOCK_TIMEOUT"


def open_workspace(args, create: bool = False, settings=None, chroma=None):
    """The workspace named by ``--workspace`` with the settings named by ``--settings`` (or
    ``settings``, loaded from them already), its Chroma client ``chroma`` when given.

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
    ws = Workspace(args.workspace, settings=settings if settings is not None else load_settings(args.settings), chroma=chroma,
                   lock_timeout=lock_timeout, create=create)
    getattr(args, "opened_workspaces", []).append(ws)  # closed by main on the way out
    return ws


@contextmanager
def chroma_beside(args) -> Iterator[tuple[Any, ChromaSubprocess | None]]:
    """The command's settings, and a helper process holding its embedded Chroma store
    (:mod:`workbench.vectors.chroma_subprocess`), which imports chromadb on another core while
    the command reads and embeds; None (opened in this process) where none can be used
    (:meth:`~workbench.vectors.chroma_subprocess.ChromaSubprocess.usable_for`: a server, or a
    process that imported chromadb already, as a test does). Stopped on the way out."""
    from ..settings import load_settings
    from ..vectors.chroma_subprocess import ChromaSubprocess

    settings = load_settings(args.settings)
    if not ChromaSubprocess.usable_for(settings.vector_store.backend):
        yield settings, None
        return
    helper = ChromaSubprocess(Path(args.workspace) / "chroma")
    try:
        yield settings, helper
    finally:
        helper.stop()


def cmd_ingest(args):
    with chroma_beside(args) as (settings, helper):  # first: the helper imports chromadb while this imports the rest
        from ..ingest.loaders import SUPPORTED_EXTENSIONS, check_paths
        from ..vectors.index import CHUNKS
        from ..workspace.results import ingest

        check_paths(args.paths)  # a bad path stops before a workspace is created for it
        ws = open_workspace(args, create=True, settings=settings, chroma=helper and helper.client)
        if helper is not None:
            helper.warm(ws.vectors.collection_name(CHUNKS))
        # The derived files other processes load are saved by a child once this command has its answer.
        outcome = ingest(ws, args.paths, progress=tqdm_progress(), detach_saves=True)
    from ..views.wording import counted, redone_for_settings

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

    emit(args, outcome.to_json(), render)


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
    from ..workspace.results import remove

    ws = open_workspace(args)
    removal = remove(ws, args.path, confirm_emptying=lambda count: _confirm_removing_everything(ws, args, count))

    def render(p):
        if p["completed_interrupted_write"]:
            return f"nothing left under {args.path}: the interrupted write before this one is now complete"
        return f"removed {len(p['removed'])} documents:\n" + "\n".join(f"  {d}" for d in p["removed"])

    emit(args, removal.to_json(), render)


def cmd_stats(args):
    from ..workspace.results import workspace_stats

    emit(args, workspace_stats(open_workspace(args)).to_json(),
         lambda p: "\n".join(f"{k:>16}: {v}" for k, v in p.items()))


def cmd_entities(args):
    from ..workspace.results import entity_list

    emit(args, entity_list(open_workspace(args), args.type, args.limit).to_json(),
         lambda p: table(p, ["name", "type", "mentions", "first_seen", "last_seen"]))


def cmd_merges(args):
    from ..workspace.results import merge_list

    def render(p):
        if not p:
            return "no merges: every entity is written one way"
        return "\n".join(
            f"{m['canonical']}  <=  " + ", ".join(f"{f['form']} ({f['count']})" for f in m["surface_forms"])
            for m in p
        )

    emit(args, merge_list(open_workspace(args)).to_json(), render)


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
    from ..workspace.results import accept_candidate, candidate_list

    ws = open_workspace(args)
    if args.accept:
        try:
            accepted = accept_candidate(ws, *args.accept)
        except ValueError as exc:
            raise CommandError(str(exc), code=2) from None
        emit(args, accepted.to_json(), lambda p: f"accepted {accepted.subject} -{accepted.relation}-> {accepted.object} "
             f"({accepted.statements} statement(s)): now a graph fact")
        return
    emit(args, candidate_list(ws).to_json(), lambda p: table(p, ["confidence", "subject", "relation", "object"]) if p
         else "no candidate relations (no two notes are similar enough, no LLM triples waiting)")


def cmd_alias(args):
    from ..workspace.results import change_alias

    if args.action == "add" and not args.canonical:
        raise CommandError("usage: alias add ALIAS CANONICAL", code=2)
    try:
        change = change_alias(open_workspace(args), args.action, args.name, args.canonical)
    except (KeyError, ValueError) as exc:
        raise CommandError(str(exc).strip('"'), code=2) from None
    emit(args, change.to_json(), lambda p: p["message"])


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
    emit(args, open_workspace(args).chunk(args.chunk_id).to_json(),
         lambda p: f"[{p['id']}] {p['document_id']} #{p['ordinal']}\n{p['text']}")


def cmd_repair(args):
    from ..workspace.results import repair

    done = repair(open_workspace(args), new_identity=args.new_identity)
    identity, damaged = done.new_identity, done.entity_index_damage
    emit(args, done.to_json(),
         lambda p: (f"new identity {identity.id} (was {identity.was}), {identity.vectors_copied} vectors copied into its "
                    "own collections; " if identity else "")
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
