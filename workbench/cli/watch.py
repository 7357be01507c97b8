"""``watch PATH...``: keep the workspace in step with folders as they change (see
:mod:`workbench.workspace.watch`), a line per batch written (``--json``: a JSON object a line)."""

from __future__ import annotations

import json
import signal
import sys
import threading

from ..text.safe_text import printable
from ..views.wording import counted
from .core import open_workspace

__all__ = ["register"]


def _say(args, payload: dict, text: str | None) -> None:
    """One event of the watch: ``payload`` (an event's ``to_json()``) as a JSON line with ``--json``, else ``text``."""
    if args.json:
        print(json.dumps(payload, ensure_ascii=False, default=str), flush=True)
    elif text is not None:
        print(printable(text, keep_newlines=True), flush=True)


def _batch_text(p: dict) -> str | None:
    """One line (and a line per problem) for a batch written or failed; None while it is written."""
    what = "caught up" if p["batch"] == 0 else f"batch {p['batch']} ({counted(p['changes'], 'change')})"
    if p["state"] == "failed":
        return f"{what}: not written, tried again with the next change: {p['message']}"
    if p["state"] != "written":
        return None
    lines = [f"{what}: {p['documents_added']} added, {p['documents_updated']} updated, {p['documents_removed']} removed, "
             f"{counted(p['chunks_embedded'], 'chunk')} embedded; {counted(p['documents'], 'document')}, "
             f"version {p['version']}, {p['seconds']:.2f} s"]
    lines += [f"  {problem}" for problem in p["problems"] + p["extraction_problems"]]
    return "\n".join(lines)


def cmd_watch(args):
    from ..ingest.loaders import check_paths
    from ..runtime.progress import tqdm_progress
    from ..workspace.watch import WatchStarted, WatchStopped, watch_workspace

    check_paths(args.paths)
    ws = open_workspace(args, create=True)
    stop = threading.Event()

    def stop_after_batch(signum, frame) -> None:
        if stop.is_set() and signum == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: at once (the next ingest or watch completes the write)
        stop.set()
        print("stopping after the batch under way (Ctrl-C again stops at once)", file=sys.stderr, flush=True)

    def ready() -> None:
        where = ", ".join(map(str, args.paths))
        _say(args, WatchStarted(tuple(str(p) for p in args.paths), str(ws.path)).to_json(),
             f"watching {where} for changes (Ctrl-C to stop)")

    previous = {sig: signal.signal(sig, stop_after_batch) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        written = watch_workspace(ws, args.paths, lambda batch: _say(args, batch.to_json(), _batch_text(batch.to_json())),
                                  stop=stop, ready=ready, progress=None if args.json else tqdm_progress(),
                                  quiet_ms=args.quiet_ms, max_wait_ms=max(args.quiet_ms, args.max_wait_ms),
                                  force_polling=True if args.poll else None)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    _say(args, WatchStopped(written).to_json(), f"stopped: {counted(written, 'batch', 'batches')} written")


def _milliseconds(raw: str) -> int:
    import argparse

    try:
        value = int(raw)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{raw!r} is not a whole number of milliseconds") from None
    if not 1 <= value <= 3_600_000:
        raise argparse.ArgumentTypeError(f"{value} is outside 1 to 3,600,000 milliseconds")
    return value


def register(subparsers, common) -> None:
    p = subparsers.add_parser("watch", parents=[common],
                              help="keep the workspace in step with files and folders as they change")
    p.add_argument("paths", nargs="+")
    p.add_argument("--quiet-ms", type=_milliseconds, default=50,
                   help="write a batch once no change came for this long (default 50)")
    p.add_argument("--max-wait-ms", type=_milliseconds, default=5000,
                   help="write a batch at the latest this long after its first change (default 5000)")
    p.add_argument("--poll", action="store_true",
                   help="poll the files instead of the system's file events (network and some mounted folders)")
    p.set_defaults(handler=cmd_watch)
