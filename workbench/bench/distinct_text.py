"""A generated handbook of short, all-different sections: a first ingest of distinct text.

:func:`write_distinct_markdown` writes one Markdown file of about ``megabytes`` MB in the manner
of an organisation's handbook: numbered chapters of short sections (a heading, one or two
paragraphs, now and then a list), each written from its own random draw of procedures, systems,
teams, people, places, forms and figures. Names come from open sets (a person is a first name
and a surname made of syllables, a system an adjective and a noun), drawn with a long tail: a
few recur across the book, most appear a handful of times, as in a real handbook. Every section
carries its number, so no two sections, and no two packed chunks, have the same text: each chunk
is embedded by the model, none is served by the embedding cache. The same ``seed`` writes the
same file; nothing is downloaded.

``bench scale --distinct-mb 30`` writes it and ingests it in a fresh process
(:func:`bench_distinct_text`): the chunks, the distinct chunk texts among them and those the
model embedded, the seconds and CPU seconds the model took for them, peak RSS, the workspace's
size. With the settings' model, a second fresh process first embeds the first chunks of the
handbook and of :func:`~workbench.bench.sizes.write_big_markdown`'s notebook alone, alternately,
so the ingest's rate is set against the model's own on the same text, and the handbook's text
against the notebook's, both measured in the same run; those ratios are of chunks per CPU second,
which other jobs on the machine change far less than chunks per second.

>>> import tempfile
>>> path = write_distinct_markdown(Path(tempfile.mkdtemp()) / "handbook.md", 0.01, seed=3)
>>> 10_000 <= path.stat().st_size < 12_000, path.read_text().startswith("# Handbook")
(True, True)
>>> path.read_text() == write_distinct_markdown(path.with_name("again.md"), 0.01, seed=3).read_text()
True
"""

from __future__ import annotations

import random
import time
from pathlib import Path
from typing import Any

from ..embedding import text_hash
from ..ingest.chunking import chunk_document, packs
from ..ingest.loaders import load_file
from ..vectors.chroma_folders import folder_mib
from .common import PerfError, cpu_seconds, fresh_ingest

__all__ = ["bench_distinct_text", "chunk_texts", "section", "write_distinct_markdown"]

#: Chunks of each text the model embeds alone for the run's baseline, and how many times, alternately.
BASELINE_CHUNKS, BASELINE_ROUNDS = 256, 2

FIRST_NAMES = (
    "Ada", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Gustav", "Hana", "Ines", "Jonas", "Kavya", "Leon",
    "Mirela", "Nikolai", "Olga", "Pedro", "Qiu", "Rania", "Sofia", "Tomas", "Ulla", "Viktor", "Wen", "Yara",
    "Zainab", "Amir", "Beatriz", "Colm", "Dmitri", "Elif", "Femi", "Greta", "Hugo", "Ilse", "Jamal", "Keiko",
    "Lucia", "Mateo", "Nadia", "Oskar", "Priya", "Rafael", "Selin", "Tariq", "Uma", "Valeria", "Wiktor", "Ximena",
)
_SURNAME_HEADS = ("Bar", "Kes", "Lind", "Mor", "Oster", "Pal", "Ros", "Sand", "Tor", "Vel", "Wren", "Ash", "Brook",
                  "Dal", "Fen", "Hal", "Ivers", "Karl", "Mar", "Nord", "Quill", "Stav", "Thorn", "Wald")
_SURNAME_TAILS = ("berg", "ton", "qvist", "ley", "ova", "ssen", "ard", "ini", "ez", "mann", "wick", "ford", "hall",
                  "stad", "ius", "ovic", "croft", "lund", "ero", "ski", "holm", "dale", "enko", "ani")
SYSTEM_HEADS = ("Amber", "Basalt", "Cobalt", "Delta", "Ember", "Fjord", "Granite", "Harbor", "Indigo", "Juniper",
                "Kestrel", "Lumen", "Meridian", "Nimbus", "Onyx", "Pioneer", "Quartz", "Raven", "Sable", "Tundra",
                "Umber", "Vortex", "Willow", "Zephyr", "Atlas", "Beacon", "Cedar", "Drift", "Echo", "Flint",
                "Garnet", "Helix", "Iris", "Jasper", "Kite", "Lotus")
SYSTEM_TAILS = ("Ledger", "Gateway", "Console", "Registry", "Scheduler", "Portal", "Archive", "Router", "Vault",
                "Tracker", "Planner", "Monitor", "Exchange", "Catalog", "Desk", "Relay", "Index", "Broker", "Hub",
                "Forge", "Lens", "Atlas", "Compass", "Signal")
TEAMS = ("Payroll", "Facilities", "Procurement", "Security", "Legal", "Onboarding", "Customer Care", "Logistics",
         "Quality", "Finance", "Platform", "Data", "Research", "Field Service", "Compliance", "Travel",
         "Training", "Warehouse", "Support", "Infrastructure", "Marketing", "Sales Operations", "Audit", "Safety")
CITIES = ("Lisbon", "Rotterdam", "Nairobi", "Osaka", "Valparaiso", "Tallinn", "Montreal", "Pune", "Gdansk",
          "Adelaide", "Bilbao", "Accra", "Hanoi", "Lyon", "Tampere", "Cordoba", "Leipzig", "Izmir", "Quito",
          "Aarhus", "Kraków", "Porto", "Dundee", "Cebu")
FORM_PREFIXES = ("HR", "FIN", "SEC", "OPS", "LEG", "PRC", "QA", "IT", "FAC", "TRV")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")
OBJECTS = (
    "expense claim", "access badge", "purchase order", "laptop", "vendor contract", "shift roster",
    "incident report", "travel booking", "customer refund", "safety inspection", "budget forecast",
    "signing key", "backup tape", "parking permit", "training record", "supplier invoice", "leave request",
    "audit trail", "delivery note", "service ticket", "firmware image", "meeting room", "pallet label",
    "risk register", "price list", "quarterly report", "visitor log", "maintenance window", "stock count",
    "data export", "warranty claim", "customer complaint", "change request", "password reset",
    "equipment loan", "cash float", "shipping manifest", "calibration sheet", "job description",
    "performance review", "fire drill", "retention schedule", "firewall rule", "spare part", "test plan",
)
ADJECTIVES = (
    "overdue", "incomplete", "urgent", "disputed", "duplicated", "unsigned", "damaged", "expired",
    "confidential", "missing", "approved", "rejected", "late", "partial", "corrupted", "flagged",
)
VERBS = (
    ("submit", "submitted", "submitting"), ("approve", "approved", "approving"), ("archive", "archived", "archiving"),
    ("renew", "renewed", "renewing"), ("cancel", "cancelled", "cancelling"), ("review", "reviewed", "reviewing"),
    ("escalate", "escalated", "escalating"), ("transfer", "transferred", "transferring"),
    ("replace", "replaced", "replacing"), ("reconcile", "reconciled", "reconciling"),
    ("inspect", "inspected", "inspecting"), ("request", "requested", "requesting"),
    ("register", "registered", "registering"), ("correct", "corrected", "correcting"),
    ("release", "released", "releasing"), ("schedule", "scheduled", "scheduling"),
    ("return", "returned", "returning"), ("verify", "verified", "verifying"), ("export", "exported", "exporting"),
    ("rotate", "rotated", "rotating"), ("reopen", "reopened", "reopening"), ("close", "closed", "closing"),
)
CHAPTER_TOPICS = (
    "Working here", "Money and expenses", "Buying things", "Keeping things safe", "Customers", "Travel",
    "Buildings and rooms", "Systems and accounts", "Suppliers", "Records and retention", "Incidents",
    "Warehouses and stock", "Quality and audits", "Leaving and joining", "Reporting", "Field work",
)

#: Sentence templates of a handbook's procedures; fields: {person}, {person2}, {system}, {system2},
#: {team}, {team2}, {city}, {form}, {object}, {object2}, {adj}, {verb}, {verbed}, {number}, {days},
#: {date}, {amount}.
SENTENCES = (
    "Before you {verb} the {object}, ask {person} in {team} to check the {object2}.",
    "Every {adj} {object} goes to {team} within {days} working days.",
    "{system} keeps the {object} for {number} months, then moves it to {system2}.",
    "If the {object} is {adj}, open a ticket in {system} and attach form {form}.",
    "{person} has owned this procedure since {date}; {person2} covers in their absence.",
    "The {city} office {verb}s its {object} on the first Monday of each month.",
    "Amounts above {amount} need a second approval from {team2}.",
    "Use form {form} to {verb} the {object}; the old paper form is no longer accepted.",
    "{team} answers questions about the {object} in the #{channel} channel.",
    "Any {object} {verbed} by mistake can be restored from {system2} for {days} days.",
    "When {system} is down, write the {object} on form {form} and enter it later.",
    "{person2} from {team2} trains new staff in {city} on how to {verb} the {object}.",
    "Do not {verb} the {object} if another team has already {verbed} it.",
    "The {object} is {verbed} automatically by {system} every {days} days.",
    "Since {date}, the {city} site sends its {object} to {team} instead of {team2}.",
    "Any {adj} {object2} blocks the {object} until {person} signs it off.",
    "Keep a copy of the {object} for {number} years, as the {team} policy requires.",
    "Ask {team2} before you {verb} anything in {system}; they hold the {object2}.",
    "{system} sends a reminder {days} days before the {object} expires.",
    "Report any {adj} {object} to {person} ({team}), who decides within {days} days.",
    "Questions about {system} go to {person2}; access is granted by {team}.",
    "In {city}, the {object} is handled by {person} on behalf of {team2}.",
    "Most {object}s are {verbed} in under {number} minutes once {system} has them.",
    "The {object2} must match the {object} line by line before anyone can {verb} it.",
)
CHANNELS = ("help", "ask", "desk", "ops", "questions", "support", "requests", "triage")
LIST_ITEMS = (
    "the {object} number from {system}", "a scan of the {object2}", "the approval of {person}",
    "form {form}, filled in and signed", "the cost centre of {team}", "the date the {object} was {verbed}",
    "a note from {team2} if the {object} is {adj}", "the {city} site code",
)


def _long_tail(rng: random.Random, size: int) -> int:
    """An index in ``range(size)`` drawn log-uniformly: low indices recur often, the tail rarely."""
    return min(size - 1, int(size ** rng.random()) - 1)


def _person(rng: random.Random) -> str:
    k = _long_tail(rng, len(FIRST_NAMES) * len(_SURNAME_HEADS) * len(_SURNAME_TAILS))
    first, rest = FIRST_NAMES[k % len(FIRST_NAMES)], k // len(FIRST_NAMES)
    return f"{first} {_SURNAME_HEADS[rest % len(_SURNAME_HEADS)]}{_SURNAME_TAILS[rest // len(_SURNAME_HEADS)]}"


def _system(rng: random.Random) -> str:
    k = _long_tail(rng, len(SYSTEM_HEADS) * len(SYSTEM_TAILS))
    return f"{SYSTEM_HEADS[k % len(SYSTEM_HEADS)]} {SYSTEM_TAILS[k // len(SYSTEM_HEADS)]}"


def _fill(rng: random.Random) -> dict[str, str]:
    verb, verbed, _ = rng.choice(VERBS)
    object_, object2 = rng.sample(OBJECTS, 2)
    team, team2 = rng.sample(TEAMS, 2)
    return {"person": _person(rng), "person2": _person(rng), "system": _system(rng), "system2": _system(rng),
            "team": team, "team2": team2, "city": rng.choice(CITIES), "object": object_, "object2": object2,
            "adj": rng.choice(ADJECTIVES), "verb": verb, "verbed": verbed, "channel": rng.choice(CHANNELS),
            "form": f"{rng.choice(FORM_PREFIXES)}-{rng.randrange(100, 10_000)}",
            "number": str(rng.choice((2, 3, 5, 6, 7, 10, 12, 18, 24, 30, 36, 45, 60, 90))),
            "days": str(rng.randint(2, 30)), "amount": f"{rng.choice((250, 500, 1_000, 2_500, 5_000, 10_000)):,} euros",
            "date": f"{rng.randint(1, 28)} {rng.choice(MONTHS)} {rng.randint(2015, 2026)}"}


def _sentence(rng: random.Random, template: str) -> str:
    text = template.format(**_fill(rng))
    return text[0].upper() + text[1:]


def section(seed: int, chapter: int, number: int) -> str:
    """The Markdown of section ``chapter.number`` of the handbook of ``seed``: a heading, one or
    two paragraphs, sometimes a list, ending with a blank line.

    >>> text = section(0, 1, 1)
    >>> text.startswith("## 1.1 "), text.endswith("\\n\\n"), text == section(0, 1, 1), text == section(1, 1, 1)
    (True, True, True, False)
    """
    rng = random.Random(f"handbook:{seed}:{chapter}:{number}")
    _, _, verbing = rng.choice(VERBS)
    adjective = rng.choice(ADJECTIVES)
    article = rng.choice(("the", "an" if adjective[0] in "aeiou" else "a"))
    title = f"{verbing.capitalize()} {article} {adjective} {rng.choice(OBJECTS)}"
    if rng.random() < 0.5:
        title += f" in {_system(rng)}"
    parts = [f"## {chapter}.{number} {title}"]
    for _ in range(rng.choice((1, 1, 2))):
        parts.append(" ".join(_sentence(rng, t) for t in rng.sample(SENTENCES, rng.randint(2, 4))))
    if rng.random() < 0.25:
        fill = _fill(rng)
        items = [item.format(**fill) for item in rng.sample(LIST_ITEMS, rng.randint(2, 4))]
        parts.append("You will need:\n" + "\n".join(f"- {item}" for item in items))
    return "\n\n".join(parts) + "\n\n"


def write_distinct_markdown(path: str | Path, megabytes: float, seed: int = 0) -> Path:
    """Write one Markdown handbook of about ``megabytes`` MB (``2**20`` bytes each, never more than
    a section over) to ``path`` and return it: chapters of short, all-different sections
    (:func:`section`), the same text for the same ``seed``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    target = int(megabytes * 2**20)
    with open(path, "w", encoding="utf-8") as out:
        written = out.write("# Handbook\n\n")
        chapter = 0
        while written < target:
            chapter += 1
            rng = random.Random(f"handbook:{seed}:{chapter}")
            head = f"# {chapter}. {rng.choice(CHAPTER_TOPICS)}\n\n"
            out.write(head)
            written += len(head.encode("utf-8"))
            for number in range(1, rng.randint(12, 40) + 1):
                if written >= target:
                    break
                text = section(seed, chapter, number)
                out.write(text)
                written += len(text.encode("utf-8"))
    return path


def chunk_texts(path: Path, settings) -> list[str]:
    """The chunk texts of the Markdown file at ``path`` as an ingest with ``settings`` makes them."""
    documents, problems = load_file(Path(path), Path(path))
    if not documents:
        raise PerfError(f"{path}: cannot be loaded ({'; '.join(p.message for p in problems) or 'no text'})")
    texts = []
    for doc in documents:
        pack = packs(doc, settings.chunking.pack_paragraphs, settings.chunking.pack_from_chars)
        texts += [c.text for c in chunk_document(doc, settings.chunking.max_chars, pack=pack)]
    return texts


def bench_distinct_text(cache_dir: Path, settings, megabytes: float = 30, embedder: str = "model") -> dict:
    """The handbook of ``megabytes`` MB (:func:`write_distinct_markdown`, seed 0) ingested in a
    fresh process by ``embedder`` (``"model"``: the settings' embedder; ``"static"``: the static
    embedder with the settings' model loaded beside it, so its memory is counted)."""
    if embedder not in ("model", "static"):
        raise PerfError(f"--embedder must be model or static, got {embedder!r}")
    root = Path(cache_dir) / f"distinct-{megabytes:g}mb"
    path = root / "corpus" / "handbook.md"
    if not path.exists():
        write_distinct_markdown(path, megabytes)
    texts = chunk_texts(path, settings)
    out: dict[str, Any] = {"file_mb": round(path.stat().st_size / 2**20, 1), "embedder": embedder,
                           "chunks": len(texts), "distinct_texts": len({text_hash(t) for t in texts}),
                           "chars_per_chunk": round(sum(map(len, texts)) / max(1, len(texts)))}
    del texts
    if embedder == "model":
        notebook = root / "baseline" / "notebook.md"
        if not notebook.exists():
            from .sizes import write_big_markdown

            write_big_markdown(notebook, min(megabytes, 2))
        out["model_alone"] = _model_alone(path, notebook, settings)
    run = fresh_ingest(path.parent, root / "ws", settings, None, f"{megabytes:g} MB of distinct text",
                       embedder=embedder, keep=True, resident_model=embedder == "static")
    chunk_phase = run["chunks_model"]
    embed_s = run["stages"]["embed"]
    out["ingest"] = {
        "seconds": round(run["seconds"], 1), "peak_rss_mb": round(run["peak_rss_mb"]),
        "peak_rss_by_stage_mb": run["peak_rss_by_stage_mb"], "rss_before_mb": round(run["rss_before_mb"]),
        "workspace_mb": folder_mib(root / "ws"), "chunks": run["chunks"], "embedded": run["embedded"],
        "embed_s": round(embed_s, 1),
        "chunks_per_s": round(run["embedded"] / embed_s, 1) if embed_s > 0 else None,
        "chunks_per_cpu_s": (round(chunk_phase["texts"] / chunk_phase["cpu_s"], 1)
                             if chunk_phase.get("cpu_s") else None),
        "seconds_per_mb": round(run["seconds"] / max(out["file_mb"], 1e-9), 1),
        "load": run["load"], "per_stage_s": run["stages"]}
    alone = out.get("model_alone")
    if alone and out["ingest"]["chunks_per_cpu_s"]:  # per CPU second: the load may change between the two
        out["ingest"]["times_model_alone"] = round(out["ingest"]["chunks_per_cpu_s"] / alone["handbook_chunks_per_cpu_s"], 2)
    return out


def _model_alone(handbook: Path, notebook: Path, settings) -> dict:
    """The settings' model alone on the first chunks of both files, in a fresh process."""
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(_model_alone_child, (handbook, notebook, settings))


def _model_alone_child(handbook: Path, notebook: Path, settings) -> dict:
    from ..embedding import embedder_from_settings

    samples = {"handbook": chunk_texts(handbook, settings)[:BASELINE_CHUNKS],
               "notebook": chunk_texts(notebook, settings)[:BASELINE_CHUNKS]}
    model = embedder_from_settings(settings)
    model.embed(["warm the model as a user's ingest would"])
    best = {name: 0.0 for name in samples}
    best_cpu = {name: 0.0 for name in samples}
    for _ in range(BASELINE_ROUNDS):
        for name, texts in samples.items():
            started, cpu = time.perf_counter(), cpu_seconds()
            model.embed(texts)
            best[name] = max(best[name], len(texts) / (time.perf_counter() - started))
            best_cpu[name] = max(best_cpu[name], len(texts) / max(cpu_seconds() - cpu, 1e-9))
    return {"chunks": BASELINE_CHUNKS, "rounds": BASELINE_ROUNDS,
            "handbook_chunks_per_s": round(best["handbook"], 1), "notebook_chunks_per_s": round(best["notebook"], 1),
            "handbook_chunks_per_cpu_s": round(best_cpu["handbook"], 1),
            "notebook_chunks_per_cpu_s": round(best_cpu["notebook"], 1),
            # per CPU second: what other jobs on the machine change least
            "handbook_over_notebook": round(best_cpu["handbook"] / best_cpu["notebook"], 2),
            "chars_per_chunk": {name: round(sum(map(len, texts)) / max(1, len(texts))) for name, texts in samples.items()}}
