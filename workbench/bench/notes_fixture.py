"""A generated corpus of short notes, for measuring an ingest of many small Markdown files.

:func:`write_notes` writes ``n`` one-paragraph notes in the manner of an engineering team's
notebook: incidents, decisions, hand-overs and runbook entries that name services, technologies,
people by @handle and dates, in varied sentences. The same ``seed`` writes the same files, and
20,000 notes take a few seconds. Many notes share a service and a template, so note-similarity
candidates are plentiful, as in a real notebook; none are copies.

Run it as a script to make a folder: ``python -m workbench.bench.notes_fixture FOLDER 20000``.

>>> import tempfile
>>> folder = write_notes(Path(tempfile.mkdtemp()) / "notes", 3, seed=7)
>>> sorted(p.name for p in folder.iterdir())
['note-00000.md', 'note-00001.md', 'note-00002.md']
>>> write_notes(folder, 3, seed=7) == folder and (folder / "note-00000.md").read_text() == _note(7, 0)[1]
True
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

__all__ = ["write_notes"]

SERVICES = (
    "Billing Service", "Auth Service", "Payment Gateway", "Search API", "Checkout Service", "Ledger Service",
    "Notification Worker", "Inventory API", "Session Cache", "Order Queue", "Export Pipeline", "Pricing Service",
    "Profile API", "Shipping Service", "Fraud Worker", "Reporting Database", "Identity Gateway", "Catalog Service",
    "Upload Worker", "Audit Pipeline", "Recommendation API", "Tax Service", "Email Worker", "Metrics Pipeline",
)
TECHNOLOGIES = (
    "Redis", "PostgreSQL", "Kafka", "RabbitMQ", "Elasticsearch", "Kubernetes", "Nginx", "Envoy", "S3",
    "DynamoDB", "Terraform", "Prometheus", "Grafana", "Vault", "gRPC", "GraphQL", "Python", "Go", "Java",
    "TypeScript", "Node.js", "SQLite", "AWS", "GCP", "OAuth", "JWT", "TLS", "DNS", "Celery", "ClickHouse",
    "Sentry", "Datadog", "PagerDuty", "Memcached", "Cassandra", "HAProxy",
)
PEOPLE = (
    "@ana", "@bruno", "@chen", "@dana", "@eli", "@fatima", "@goran", "@hana", "@ivan", "@jules", "@kofi",
    "@lena", "@marek", "@nora", "@omar", "@priya", "@quinn", "@rosa", "@sven", "@tara", "@uma", "@viktor",
)
TOPICS = (
    "latency", "timeouts", "retries", "the connection pool", "disk usage", "memory pressure", "the cache hit rate",
    "error budgets", "the deploy pipeline", "certificate rotation", "schema migrations", "rate limits",
    "the on-call rota", "log volume", "cold starts", "backfills", "queue depth", "alert noise",
)
KINDS = ("Incident", "Decision", "Hand-over", "Runbook", "Review", "Design note", "Postmortem", "Meeting")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")

#: Sentence templates; each names some of: {service}, {other}, {tech}, {tech2}, {person}, {person2},
#: {date}, {topic}, {number}.
SENTENCES = (
    "On {date} {person} saw {topic} climb on the {service}.",
    "The {service} depends on {tech} and the {other}.",
    "{person} moved the {service} from {tech} to {tech2} after a long review.",
    "We decided to keep {tech} behind the {service} until the {other} is ready.",
    "The {service} runs on {tech}; {person2} owns the alerts for it.",
    "Since {date}, {topic} has stayed under {number} ms for the {service}.",
    "{person} and {person2} paired on {topic} for the {other}.",
    "A bad config in {tech} caused the {service} outage, fixed by {person2}.",
    "The {other} calls the {service} over {tech} with a {number} ms budget.",
    "Next step: {person} checks {topic} on the {other} before {date}.",
    "Nothing changed in {tech2}, but {topic} doubled on the {service}.",
    "The {service} reads from {tech} and writes to the {other}.",
    "{person2} wrote the runbook for {topic} in {tech}.",
    "Rollback of the {service} took {number} minutes; {person} led it.",
)


def _date(rng: random.Random) -> str:
    year, month, day = rng.choice((2023, 2024, 2025)), rng.randrange(12), rng.randint(1, 28)
    if rng.random() < 0.5:
        return f"{year}-{month + 1:02d}-{day:02d}"
    return f"{day} {MONTHS[month]} {year}"


def _note(seed: int, index: int) -> tuple[str, str]:
    """The file name and text of note ``index`` of the corpus of ``seed``."""
    rng = random.Random(f"{seed}:{index}")
    service, other = rng.sample(SERVICES, 2)
    tech, tech2 = rng.sample(TECHNOLOGIES, 2)
    person, person2 = rng.sample(PEOPLE, 2)
    fill = {"service": service, "other": other, "tech": tech, "tech2": tech2, "person": person,
            "person2": person2, "topic": rng.choice(TOPICS), "number": rng.choice((40, 80, 120, 250, 400, 900)),
            "date": _date(rng)}
    sentences = [template.format(**fill) for template in rng.sample(SENTENCES, rng.randint(2, 5))]
    title = f"{rng.choice(KINDS)} {index}: {fill['topic']} on the {service}"
    return f"note-{index:05d}.md", f"# {title}\n\n{' '.join(sentences)}\n"


def write_notes(folder: str | Path, n: int, seed: int = 0) -> Path:
    """Write ``n`` one-paragraph Markdown notes ``note-NNNNN.md`` into ``folder`` (made if needed);
    the same ``seed`` writes the same text. Returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(n):
        name, text = _note(seed, index)
        (folder / name).write_text(text, encoding="utf-8")
    return folder


if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: python -m workbench.bench.notes_fixture FOLDER N [SEED]")
    made = write_notes(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) == 4 else 0)
    print(f"wrote {sys.argv[2]} notes into {made}")
