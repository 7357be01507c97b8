"""The one settings model, loaded from ``settings.yaml``.

Every field has its default stated once, here, with a description; ``settings.yaml`` at the
project root repeats the defaults for reading. Unknown keys and wrong types stop with a
:class:`SettingsError` that names the key.

Examples
--------
>>> s = Settings()
>>> s.chunking.max_chars
1000
>>> s.graphrag.ppr_damping
0.85
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Sequence, get_args

import regex
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator

from ..text import safe_yaml
from ..text.name_keys import DEFAULT_ARTICLES

__all__ = ["Settings", "SettingsError", "load_settings", "setting_default", "DEFAULT_SETTINGS_PATH"]

#: A settings file larger than this is refused (settings.yaml with every default is ~10 KB).
MAX_SETTINGS_BYTES = 1024 * 1024
#: Keys an earlier version read, by their names now: a settings file that writes one is told the new name.
RENAMED = {"time.overfetch": "time.window_depth",
           "graphrag.vector_overfetch_multiplier": "graphrag.seed_candidates_per_seed"}
#: The project's settings file, beside the workbench package (this module is workbench/settings/__init__.py).
DEFAULT_SETTINGS_PATH = Path(__file__).resolve().parents[2] / "settings.yaml"


class SettingsError(ValueError):
    """A settings file that cannot be used; the message names the file and the key."""


def _regex_problems(settings: Settings) -> list[str]:
    """User regexes that the extractors could not use, by key, so they are named at load time."""
    problems = []
    sources: tuple[tuple[str, Sequence[RelationPattern | EntityPattern]], ...] = (
        ("relations", settings.extraction.relations), ("entity_patterns", settings.extraction.entity_patterns))
    for section, patterns in sources:
        for index, pattern in enumerate(patterns):
            if pattern.regex is None:
                continue
            key = f"extraction.{section}.{index}.regex"
            try:  # compiled as the extractors compile it
                compiled = regex.compile(pattern.regex, regex.VERSION0)
            except regex.error as exc:
                problems.append(f"{key}: invalid regular expression '{pattern.regex}' ({exc})")
                continue
            if section == "relations" and not {"subject", "object"} <= set(compiled.groupindex):
                problems.append(f"{key}: regular expression '{pattern.regex}' needs the named groups 'subject' and 'object'")
    return problems


class _Section(BaseModel):
    # A number is finite (YAML's .inf and .nan refused) and never true/false (``k: true`` is not 1).
    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    @field_validator("*", mode="before")
    @classmethod
    def _no_true_false_as_number(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, bool) and info.field_name is not None:
            annotation = cls.model_fields[info.field_name].annotation
            accepted = {annotation, *get_args(annotation)}
            if bool not in accepted and accepted & {int, float}:
                raise ValueError(f"{str(value).lower()} is not a number")
        return value


class ChunkingSettings(_Section):
    max_chars: int = Field(1000, gt=50, le=100_000, description="Largest chunk, in characters; chunks end on paragraph or sentence boundaries, a heading joined to the paragraph after it.")
    pack_paragraphs: bool = Field(False, description="Pack consecutive paragraphs into one chunk up to max_chars (never across a conversation's messages), in every document. Off: every paragraph is its own chunk, the finest citation, except in documents of pack_from_chars or more. On: a file of short paragraphs makes about a third of the chunks and vectors, each citing several paragraphs.")
    pack_from_chars: int | None = Field(1_000_000, gt=0, description="A document of at least this many characters has its paragraphs packed as pack_paragraphs packs them: an export or a dump, where a vector a paragraph costs more than finer citations give (the figures are in docs/scaling.md, Bounds at scale). Empty: only pack_paragraphs packs.")


class IngestSettings(_Section):
    max_corpus_mb: float | None = Field(None, gt=0, le=1_000_000, description="Most text, in MB, a workspace may hold after an ingest; a larger one is refused before any work starts. Empty: what 80% of this machine's memory holds at the measured cost of an ingest (workbench/ingest/corpus_limits.py).")


_ANY_OF = ("With a regex: run it only on chunks containing one of these strings (case-insensitive), a cheap "
           "guard that keeps a slow pattern off text it cannot match.")


class RelationPattern(_Section):
    relation: str = Field(description="Label of the edges this pattern gives, e.g. depends_on.")
    phrases: list[str] = Field(default_factory=list, description="Verb phrases that state it: 'X <phrase> Y, Z and W'.")
    regex: str | None = Field(None, description="Or a raw regular expression with named groups 'subject' and 'object'.")
    reverse: bool = Field(False, description="True when the phrase states the relation from object to subject.")
    any_of: list[str] = Field(default_factory=list, description=_ANY_OF)


class EntityPattern(_Section):
    type: str = Field(description="Entity type this pattern finds: technology, person, service, concept...")
    terms: list[str] = Field(default_factory=list, description="Literal names of this type, matched case-insensitively on word boundaries.")
    regex: str | None = Field(None, description="Or a regular expression whose whole match is the name.")
    any_of: list[str] = Field(default_factory=list, description=_ANY_OF)


DEFAULT_RELATIONS: list[dict] = [
    {"relation": "depends_on", "phrases": ["depends on", "depend on", "depends upon", "relies on", "rely on", "requires", "require", "needs"]},
    {"relation": "backed_by", "phrases": ["is backed by", "are backed by", "is stored in", "are stored in", "stores its data in", "store their data in", "persists to", "persist to", "caches in", "cache in"]},
    {"relation": "runs_on", "phrases": ["runs on", "run on", "is hosted on", "are hosted on", "is deployed on", "are deployed on", "is deployed to", "are deployed to"]},
    {"relation": "owned_by", "phrases": ["is owned by", "are owned by", "is maintained by", "are maintained by"]},
    {"relation": "owned_by", "phrases": ["owns", "own", "maintains", "maintain"], "reverse": True},
    {"relation": "uses", "phrases": ["uses", "use", "is using", "are using"]},
    {"relation": "calls", "phrases": ["calls", "call", "invokes", "invoke", "talks to", "talk to", "sends requests to", "send requests to"]},
    {"relation": "reads_from", "phrases": ["reads from", "read from", "consumes from", "consume from", "subscribes to", "subscribe to"]},
    {"relation": "writes_to", "phrases": ["writes to", "write to", "publishes to", "publish to", "produces to", "produce to"]},
    {"relation": "part_of", "phrases": ["is part of", "are part of", "belongs to", "belong to", "is a component of"]},
    {"relation": "replaces", "phrases": ["replaces", "replace", "supersedes", "supersede", "replaced"]},
    {"relation": "connects_to", "phrases": ["connects to", "connect to", "is connected to"]},
    {"relation": "authenticates_with", "phrases": ["authenticates with", "authenticate with", "authenticates against"]},
    {"relation": "routes_to", "phrases": ["routes to", "route to", "forwards to", "forward to", "proxies to"]},
    {"relation": "caused_by", "phrases": ["was caused by", "is caused by", "were caused by"]},
    {"relation": "caused_by", "phrases": ["caused", "causes"], "reverse": True},
    {"relation": "resolved_by", "phrases": ["was resolved by", "is resolved by", "was fixed by", "is fixed by"]},
    {"relation": "leads", "phrases": ["leads", "heads", "is the lead of", "is the head of", "manages"]},
    {"relation": "leads", "phrases": ["is led by", "are led by", "is headed by", "is managed by"], "reverse": True},
    {"relation": "leads", "regex": r"(?P<object>\b[A-Z][\w-]*(?: [\w-]+)*? [Tt]eam): (?P<subject>@[A-Za-z][\w.-]*[A-Za-z0-9]) (?:leads|heads|runs|manages) the team",
     "any_of": ["team:"]},
]

DEFAULT_ENTITY_PATTERNS: list[dict] = [
    {"type": "technology", "terms": [
        "Redis", "PostgreSQL", "Postgres", "MySQL", "MongoDB", "Kafka", "RabbitMQ", "Elasticsearch",
        "Kubernetes", "Docker", "Nginx", "Envoy", "Memcached", "S3", "DynamoDB", "Cassandra",
        "Terraform", "Prometheus", "Grafana", "Vault", "Consul", "etcd", "gRPC", "GraphQL",
        "Python", "Go", "Java", "Rust", "TypeScript", "Node.js", "React", "Chroma", "SQLite",
        "Linux", "AWS", "GCP", "Azure", "OAuth", "JWT", "TLS", "DNS", "CDN", "HAProxy", "Celery",
        "Airflow", "Spark", "Snowflake", "BigQuery", "ClickHouse", "Sentry", "Datadog", "PagerDuty",
    ]},
    {"type": "service", "regex": r"\b(?:[A-Z][A-Za-z0-9]*[ -])*[A-Z]?[A-Za-z0-9]+[ -](?:[Ss]ervice|API|[Gg]ateway|[Cc]ache|[Qq]ueue|[Ww]orker|[Cc]luster|[Dd]atabase|[Pp]ipeline|[Ff]low)\b",
     "any_of": ["service", "api", "gateway", "cache", "queue", "worker", "cluster", "database", "pipeline", "flow"]},
    {"type": "service", "regex": r"\b[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)*(?:Service|Api|API|Gateway|Cache|Queue|Worker)\b",
     "any_of": ["service", "api", "gateway", "cache", "queue", "worker"]},
    {"type": "person", "regex": r"@[A-Za-z][\w.-]*", "any_of": ["@"]},
]


class ExtractionSettings(_Section):
    relations: list[RelationPattern] = Field(
        default_factory=lambda: [RelationPattern(**r) for r in DEFAULT_RELATIONS],
        description="Relation patterns, held as data: 'X depends on Y and Z' gives two edges.",
    )
    entity_patterns: list[EntityPattern] = Field(
        default_factory=lambda: [EntityPattern(**p) for p in DEFAULT_ENTITY_PATTERNS],
        description="Typed entity patterns and term lists for mentions and co-mention edges.",
    )
    pattern_timeout_seconds: float = Field(1.0, gt=0, le=60, description="A pattern that runs longer than this on one chunk is stopped and reported.")
    comention: bool = Field(True, description="Add co-mention edges between entities found in the same chunk.")
    comention_window: int = Field(1, ge=0, le=100, description="Co-mention pairs only entities named at most this many sentences apart in their chunk: 0 the same sentence, 1 the same or the next one (a sentence ends at . ! ? or a line break). A conversation log's message pairs every two of its entities, whatever this says.")
    max_comention_pairs: int = Field(40, gt=0, le=100_000, description="Most co-mention edges one chunk (a conversation's message) gives, the nearest pairs first; the pairs past it are counted in the ingest's problems, not stored.")
    names: bool = Field(True, description="Find general names in every chunk: its document's title, proper-noun phrases, quoted names and dates (types title, name, date).")
    similar_notes_threshold: float = Field(0.75, ge=0, le=1, description="Cosine similarity above which two notes get a SIMILAR_TO candidate (never shown as a fact).")
    typed_relations: bool = Field(False, description="Ask the chat model of the llm section, once per new note (markdown or text), how it relates to its most similar notes (the most recent ones when none reaches retrieval.min_vector_score), in the eight declared relation types only; answers with a target that was not offered, another type or a confidence under typed_relation_min_confidence are dropped. What passes is stored as a candidate with the model's confidence (never a fact until candidates --accept). An ingest with it on and no model configured stops before writing anything.")
    typed_relation_candidates: int = Field(5, gt=0, le=50, description="Notes offered to the model per new note by typed_relations.")
    typed_relation_min_confidence: float = Field(0.6, ge=0, le=1, description="typed_relations: a relation the model gives below this confidence is dropped (one it gives no confidence for counts 0.5).")
    nlp: bool = Field(False, description="Also read every chunk with spaCy's English small pipeline (en_core_web_sm 3.8.0, no LLM): named entities, proper-noun phrases and subject-verb-object relations from its dependency parse (relations at confidence 0.6, origin 'nlp'). Off by default: it costs more than the rest of extraction together (docs/benchmarks.md gives the cost per passage and what it changes in recall).")
    llm: bool = Field(False, description="Also ask the chat model of the llm section for each chunk's triples; one request per chunk. They are stored as candidates (origin 'candidate', with the model's confidence), never graph facts until accepted (candidates accept).")


class CanonicalizationSettings(_Section):
    articles: list[str] = Field(default_factory=lambda: list(DEFAULT_ARTICLES), description="Leading words dropped from names.")
    aliases: dict[str, str] = Field(
        default_factory=lambda: {"postgres": "PostgreSQL", "user db": "user database", "k8s": "Kubernetes"},
        description="Alias -> canonical name, merged before the graph is built (the user's aliases override these).")
    suggest_threshold: float = Field(0.85, ge=0, le=1, description="Similarity above which two names are suggested for merging.")


class GraphSettings(_Section):
    impact_relations: list[str] = Field(
        default_factory=lambda: ["depends_on", "backed_by", "runs_on", "uses", "calls", "reads_from", "writes_to",
                                 "connects_to", "authenticates_with", "routes_to", "part_of", "DEPENDS_ON"],
        description="Relations along which a failure spreads: if A depends_on B and B fails, A breaks.",
    )
    max_path_hops: int = Field(5, gt=0, le=10, description="Longest path searched between two entities.")
    max_paths: int = Field(5, gt=0, le=1000, description="Paths returned between two entities, best corroborated first.")
    max_entity_passages: int = Field(200, gt=0, le=10_000_000, description="Names mentioned in more passages than this are too common to link passages in the walk (a year, 'United States').")
    title_link_weight: float = Field(4.0, ge=0, description="Weight of the edge from a passage to each passage whose title it names, or a short form of it ('Tim McCann' for 'Tim McCann (director)'), against 1 for a mention (0: none).")
    relation_weight: float = Field(1.0, ge=0, description="Weight in the graphrag walk of a cited relation edge per corroborating chunk, against 1 for a passage's mention of an entity.")
    synonym_threshold: float = Field(0.8, gt=0, description="Character-trigram similarity at which two names get a synonym edge, also offered as a merge suggestion (1 or more: none).")


class EmbeddingSettings(_Section):
    model: str = Field("bundled:all-MiniLM-L6-v2", description="'bundled:all-MiniLM-L6-v2' (the packaged model), 'all-mpnet-base-v2' (installed by `python -m workbench models install all-mpnet-base-v2`, checked by SHA-256 at every load, always run by torch whatever the backend: see the embedder table of docs/models.md), a local model directory, or 'static:<dimension>' for the static embedder distilled from MiniLM (fast, lower recall).")
    backend: Literal["torch", "onnx-int8", "openvino", "openvino-int8"] = Field("openvino-int8", description="How the model runs: 'torch' (sentence-transformers), 'onnx-int8' (ONNX Runtime, int8 matrix products), 'openvino' (OpenVINO; bf16 where the CPU has it), 'openvino-int8' (OpenVINO, int8 weights and activations calibrated by NNCF: the fastest, with recall close to torch's; docs/benchmarks.md and bench perf). The last three are exported once from the model files into ~/.cache/workbench/models; each backend's vectors are kept apart (after a change, ingest or repair embeds the chunks for the new one). Ignored by the static embedder.")
    batch_size: int = Field(64, gt=0, le=4096, description="Texts embedded per model call by the torch backend.")
    batch_tokens: int = Field(2048, gt=0, le=1_000_000, description="Padded tokens per model call of the exported backends: texts of about one token length are batched together, as many as fit (the default is the size that gave the most chunks a second: docs/models.md).")
    distributed: Literal["none", "ray"] = Field("none", description="'none': the model runs in this process. 'ray': every embedding call of more than one forward pass (an ingest's chunks and names) is shared among embedding.ray_actors Ray actors, each running the backend above on the very batches this process would form, so the vectors are identical bit for bit and keep the backend's cache entries and collections; a call of one forward pass (a query) still runs here. Needs the ray extra: pip install 'context-graph-workbench[ray]'. Ray's usage stats are switched off.")
    ray_address: str | None = Field(None, description="With distributed 'ray': null starts a local Ray cluster of ray_actors x ray_cpus_per_actor CPUs for this process (stopped with it); 'auto' joins the cluster started on this machine by `ray start --head --disable-usage-stats`, 'host:port' or 'ray://host:10001' a remote one, whose every node has the workbench installed (and, for vectors identical to this machine's, the same kind of CPU: the actors' backend names are checked against this one's).")
    ray_actors: int = Field(2, gt=0, le=1024, description="With distributed 'ray': actors embedding at once, each with one copy of the model.")
    ray_cpus_per_actor: int = Field(1, gt=0, le=1024, description="With distributed 'ray': CPUs Ray reserves for each actor. On a cluster, a node's cores and one actor per node (its backend uses every core of its node); a local cluster has ray_actors x this many CPUs.")


class VectorStoreSettings(_Section):
    backend: Literal["embedded", "server"] = Field("embedded", description="'embedded': Chroma in the workspace folder; 'server': a `chroma run` server.")
    host: str = Field("127.0.0.1", description="Chroma server host, for backend 'server'.")
    port: int = Field(8000, gt=0, lt=65536, description="Chroma server port, for backend 'server'.")
    collection_prefix: str = Field("wb", min_length=1, description="Prefix of the collection names, so several workspaces can share a server.")
    timeout_seconds: float = Field(10.0, gt=0, le=600, description="Longest wait, in seconds, for one answer of the Chroma server (backend 'server'): a server that does not answer in time (stopped, hung) makes the command stop with one line instead of waiting for ever.")


class RetrievalSettings(_Section):
    k: int = Field(10, gt=0, le=1000, description="Hits returned by default.")
    min_vector_score: float = Field(0.2, ge=-1, le=1, description="Vector hits below this cosine similarity are dropped (graphrag's walk scores passages without it). Chosen with the bundled MiniLM as the highest value that drops no gold hit of the sample tasks and the benchmark slices in tests/data/bench, with a margin, while dropping most hits of questions no corpus answers (docs/retrieval.md, the vector score floor).")
    dedupe_by_document: bool = Field(False, description="Vector search keeps only the best chunk per document.")
    rrf_k: int = Field(60, gt=0, le=1_000_000, description="Reciprocal Rank Fusion constant.")
    expand_discount: float = Field(0.7, gt=0, le=1, description="Score of a one-hop expansion: parent x discount x confidence.")
    comention_hops: int = Field(1, ge=1, le=2, description="comention mode: hops walked from the direct hits' entities over co-mention and relation edges (1 or 2).")
    comention_fanout: int = Field(5, gt=0, le=1000, description="comention mode: strongest edges followed from each entity per hop.")
    literal_boost: float = Field(0.05, ge=0, le=1, description="vector and hybrid: score added per identifier of the query (ECONNREFUSED, snake_case, a path) a chunk contains literally.")
    expand_min_confidence: float = Field(0.5, ge=0, le=1, description="Edges below this confidence are not followed by expansion.")
    expand_comention: bool = Field(False, description="expand also follows the co-mention edges of its hits' notes (names in the same chunk), as it does their relations. Off, it follows the recorded relations only (stated, declared, accepted candidates): a co-mention is proximity, not a relation, and its confidence of 1 passes expand_min_confidence. The evaluation reports expansion with them on as its own strategy, expand-comention.")
    expand_order: Literal["score", "direct_first"] = Field("score", description="expand: 'score' merges the direct and the expanded hits and sorts them by score (an expanded hit scores parent x expand_discount x confidence); 'direct_first' puts the expanded hits after all the direct ones.")


class GraphRAGSettings(_Section):
    seed_similarity_threshold: float = Field(0.3, ge=-1, le=1, description="Entities whose name embedding is at least this similar to the query become seeds, beside the entities the query names.")
    seed_candidates_per_seed: int = Field(3, gt=0, le=100, description="Entity candidates fetched from the entity-name index per seed wanted (max_seeds), before seed_similarity_threshold keeps the seeds.")
    ppr_damping: float = Field(0.85, gt=0, lt=1, description="Personalized PageRank damping factor.")
    max_triples: int = Field(200, gt=0, le=100_000, description="Most triples given as graph context.")
    max_seeds: int = Field(3, gt=0, le=1000, description="Seed entities wanted.")
    ppr_top_k: int = Field(20, gt=0, le=100_000, description="Entities with the most PageRank mass that give the context and the provenance chunks.")
    max_graph_nodes: int = Field(1_000_000, gt=0, le=1_000_000_000, description="graphrag's guard on the walk's size: when the graph it walks (entities and passages) has more nodes than this, it falls back to hybrid retrieval (vector_only) and says the count. Above seed 003's 50,000 (graphrag-seed's own guard, seed_max_graph_nodes) because this walk counts passages as well as entities (docs/scaling.md gives the walk's cost at scale).")
    seed_max_graph_nodes: int = Field(50_000, gt=0, le=1_000_000_000, description="graphrag-seed's guard, seed 003's: when the entity graph it walks has more entities than this, it skips PageRank and answers with hybrid retrieval (vector_only), saying the count.")
    dense_seeds: int = Field(5, ge=0, le=1000, description="Passages most similar to the query that seed the walk beside the entities (0: none).")
    dense_candidates: int = Field(100, gt=0, le=100_000, description="Passages scored by dense similarity for the walk ranking.")
    similar_seed_weight: float = Field(0.1, ge=0, description="Restart weight of an entity the query only evokes (name-embedding seed) against one it names: specificity x similarity x this.")
    entity_seed_share: float = Field(0.8, ge=0, le=1, description="Share of the restart mass on the seed entities; the rest goes to the dense passage seeds.")
    graph_weight: float = Field(3.0, ge=0, description="Walk ranking of a passage: dense similarity + graph_weight x its PageRank mass / the best passage's.")
    partial_names: bool = Field(True, description="A phrase of the question from a capitalised word to the next stopword that names no entity whole ('the Stanford gene therapy trial') names the entity whose name is most similar to it and holds its words in order ('Stanford Retinal Gene Therapy Trial Phase II'), a named seed like the names written whole.")
    chain_starts: int = Field(3, gt=0, le=100, description="A chain starts at the passages among the fused ranking's first chain_starts that are titled by a name the question writes (else at its first passage); each start's bridges follow the starts (see bridges_per_start).")
    bridges_per_start: int = Field(2, ge=0, le=100, description="Passages placed after the chain's starts for each start: those whose titles it names, most similar to what the question asks beside its names first (0: none, the fused ranking as it is).")


class CommunitySettings(_Section):
    resolution: float = Field(1.0, gt=0, description="Louvain resolution (the communities are found on the graph the graphrag walk sees: entities, passages and their links): above 1 gives more, smaller communities; below 1 fewer, larger ones.")
    seed: int = Field(42, description="Seed of the Louvain community detection, so the same graph always gives the same communities.")
    min_size: int = Field(3, gt=0, description="Communities with fewer entities than this get no report.")
    levels: int = Field(2, ge=1, le=4, description="Levels of communities: 1 themes only, 2 themes and their sub-themes (each theme split again the same way), and so on.")
    relation_weight: float = Field(2.0, ge=0, description="Weight of a cited relation edge per stating chunk when detecting communities, against 1 for a co-mention or a passage's link to an entity it names.")
    words_per_passage: int = Field(10, ge=0, le=1000, description="Each passage is also linked to this many of its most distinctive words (count x log(passages / passages with the word); words of 2 passages up to a quarter of them) when detecting communities: names alone split prose themes. 0: names and the graph's links only.")
    generic_title_weight: float = Field(0.25, ge=0, le=1, description="Centrality factor of general names (types name and title) when choosing a community's key entities; dates are left out of communities altogether.")
    key_entities: int = Field(8, gt=0, le=1000, description="Most central entities listed in a community report.")
    title_entities: int = Field(3, gt=0, le=100, description="Key phrases (c-TF-IDF: frequent in the community's passages, rare in the other communities of its level) that make a community's title.")
    max_relations: int = Field(5, ge=0, le=1000, description="Strongest cited relations listed in a community report.")
    sentences: int = Field(4, gt=0, le=1000, description="Representative sentences in a community report, chosen greedily for the distinctive words (c-TF-IDF) they add, from other documents first; sentences of fewer than three topic words (acknowledgements) are never chosen.")
    candidate_chunks: int = Field(40, gt=0, le=100_000, description="Passages of a community, those linked to most of its entities first, that its key phrases are weighed from and its representative sentences chosen from.")
    sync_max_passages: int = Field(5000, ge=0, le=1_000_000_000, description="Write steps (ingest, remove, repair, merges) store the community reports only while the record has at most this many passages; past it they are built when first asked for (the Communities page, `communities`, global mode) and stored by that reader when the write lock is free, for the next process. Detecting communities and reporting on them grows with the corpus, which every write would otherwise pay.")


class EpisodeSettings(_Section):
    session_gap_minutes: float = Field(60, gt=0, description="A pause longer than this between two messages of a conversation log starts a new session (episode).")
    max_entities: int = Field(10, gt=0, le=1000, description="Entities listed in an episode summary, most mentioned first.")


class GlobalSearchSettings(_Section):
    max_communities: int = Field(6, gt=0, le=10_000, description="Themes the global mode takes points from first (at least k of them, so k points come from k distinct themes when there are that many), one point per theme per round, most similar to the question first; the other themes follow only when these run out before k hits.")
    points_per_community: int = Field(3, gt=0, le=1000, description="Points the global mode takes from each report (a theme's and each of its sub-themes') before their other points and then the theme's other passages.")
    min_similarity: float = Field(-1.0, ge=-1, le=1, description="Community reports less similar than this to the question are not used by the global mode (-1: every report, up to max_communities, since a corpus-wide question is often unlike every theme).")


class TimeSettings(_Section):
    window_depth: int = Field(4, gt=1, le=1000, description="Under a time window, a retriever is asked for k x this many hits (then this many times more again, up to every chunk) so that k dated hits survive the filter.")


class LLMSettings(_Section):
    base_url_env: str = Field("WORKBENCH_LLM_BASE_URL", description="Environment variable holding an OpenAI-compatible base URL.")
    model_env: str = Field("WORKBENCH_LLM_MODEL", description="Environment variable holding the chat model name.")
    api_key_env: str = Field("WORKBENCH_LLM_API_KEY", description="Environment variable holding the API key.")
    timeout_seconds: float = Field(60, gt=0, le=3600, description="Timeout of one chat request.")
    max_tokens: int = Field(160, gt=0, le=100_000, description="Longest reply asked of the chat model, in tokens (answers are asked for in one to three sentences).")
    local_model: Literal["smollm2-135m", "qwen2.5-coder-1.5b"] = Field("smollm2-135m", description="The chat model `llm-serve` serves: 'smollm2-135m' (SmolLM2-135M-Instruct, bundled, fast, rarely cites correctly) or 'qwen2.5-coder-1.5b' (Qwen2.5-Coder-1.5B-Instruct, a 1.1 GB file that cites correctly far more often: docs/models.md; install it first with `python -m workbench models install qwen2.5-coder-1.5b`). Either file is checked against its pinned SHA-256 before it is served.")


class AnswerSettings(_Section):
    max_chunks: int = Field(6, gt=0, le=1000, description="Chunks given to the model for one answer: one per hop of the answer paths first, then the hits, then chunks the subgraph cites.")
    max_answer_paths: int = Field(3, gt=0, le=1000, description="Cited paths of the question's structural reading (what breaks if X fails, who owns X...) given to the model first, in every mode, as the hops that answer the question.")
    support_threshold: float = Field(0.6, ge=0, le=1, description="Support score (share of a sentence's terms found in its cited chunks; 0 if a name is missing) at which a cited chunk counts as supporting its sentence; measured on tests/data/answer_support.jsonl.")
    min_edge_confidence: float = Field(0.5, ge=0, le=1, description="An edge below this confidence is a hypothesis: an answer resting only on it must say so.")


class AppSettings(_Section):
    allowed_roots: list[str] = Field(default_factory=lambda: ["."], description="Folders whose files a path typed into the app (the Corpus page's folder box, the Evaluate page's task file) may name; anything elsewhere is refused. A relative root is read from the folder the app was started in ('.': that folder). Uploads are always allowed.")


class Settings(_Section):
    chunking: ChunkingSettings = Field(default_factory=ChunkingSettings)
    ingest: IngestSettings = Field(default_factory=IngestSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    canonicalization: CanonicalizationSettings = Field(default_factory=CanonicalizationSettings)
    graph: GraphSettings = Field(default_factory=GraphSettings)
    embedding: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    vector_store: VectorStoreSettings = Field(default_factory=VectorStoreSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    graphrag: GraphRAGSettings = Field(default_factory=GraphRAGSettings)
    communities: CommunitySettings = Field(default_factory=CommunitySettings)
    episodes: EpisodeSettings = Field(default_factory=EpisodeSettings)
    global_search: GlobalSearchSettings = Field(default_factory=GlobalSearchSettings)
    time: TimeSettings = Field(default_factory=TimeSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    answers: AnswerSettings = Field(default_factory=AnswerSettings)
    app: AppSettings = Field(default_factory=AppSettings)


def setting_default(path: str) -> Any:
    """The default of the setting ``"section.field"``, as the settings model states it.

    A function or dataclass of the core that offers a setting's value as its own default takes
    it from here (``alpha: float = setting_default("graphrag.ppr_damping")``), so the value is
    stated once; ``tests/test_defaults.py`` fails on a signature that restates one.

    >>> setting_default("graphrag.ppr_damping")
    0.85
    >>> setting_default("graph.impact_relations")[:2]
    ['depends_on', 'backed_by']
    """
    section, _, name = path.partition(".")
    section_field = Settings.model_fields.get(section)
    model = section_field.annotation if section_field is not None else None
    if not (isinstance(model, type) and issubclass(model, BaseModel) and name in model.model_fields):
        raise KeyError(f"{path!r} is not a setting: write 'section.field', e.g. 'graphrag.ppr_damping'")
    return model.model_fields[name].get_default(call_default_factory=True)


def load_settings(path: str | Path | None = None) -> Settings:
    """Load settings from a YAML file; defaults for anything it leaves out.

    ``path=None`` reads the project's ``settings.yaml`` if present. A missing explicit path, bad
    YAML, an unknown key, a wrong type or a user regex that does not compile raises
    :class:`SettingsError` naming the file and key.
    """
    if path is None:
        if not DEFAULT_SETTINGS_PATH.exists():
            return Settings()
        path = DEFAULT_SETTINGS_PATH
    path = Path(path)
    try:
        raw = safe_yaml.load(path.read_text(encoding="utf-8"), max_bytes=MAX_SETTINGS_BYTES) or {}
    except safe_yaml.YAMLRefused as exc:
        raise SettingsError(f"{path}: settings file {exc}") from None
    except FileNotFoundError:
        raise SettingsError(f"{path}: settings file not found") from None
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise SettingsError(f"{path}: cannot read settings: {exc}") from None
    if not isinstance(raw, dict):
        raise SettingsError(f"{path}: settings must be a mapping of sections, got {type(raw).__name__}")
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            key = ".".join(str(p) for p in err["loc"])
            msg = "unknown key" if err["type"] == "extra_forbidden" else err["msg"].removeprefix("Value error, ")
            if err["type"] == "extra_forbidden" and key in RENAMED:
                msg = f"renamed {RENAMED[key]}: write {RENAMED[key].rpartition('.')[2]} instead"
            if err["type"] == "literal_error":  # say what was given, not only what is allowed
                msg = f"{err['input']!r} is not one of the choices: {msg}"
            problems.append(f"{key}: {msg}")
        raise SettingsError(f"{path}: " + "; ".join(problems)) from None
    problems = _regex_problems(settings)
    if problems:
        raise SettingsError(f"{path}: " + "; ".join(problems))
    return settings


def _stated_range(field_info) -> str:
    """The bounds the model puts on a number setting, as written after its description.

    >>> _stated_range(GraphSettings.model_fields["max_path_hops"])
    ' (more than 0, at most 10)'
    """
    said = {"gt": "more than", "ge": "at least", "lt": "less than", "le": "at most"}
    parts = [f"{said[name]} {getattr(rule, name):,}" for rule in field_info.metadata for name in said
             if hasattr(rule, name)]
    return f" ({', '.join(parts)})" if parts else ""


def render_defaults_yaml() -> str:
    """The default settings as commented YAML: the text of the project's ``settings.yaml``."""
    lines = [
        "# Context Graph Workbench settings. Every key is shown with its default and what it does.",
        "# Unknown keys and wrong types stop the workbench with a message naming the key.",
        "# Regenerate after changing workbench/settings/: python -m workbench settings --defaults > settings.yaml",
    ]
    defaults = Settings()
    for section_name in Settings.model_fields:
        section = getattr(defaults, section_name)
        lines.append("")
        lines.append(f"{section_name}:")
        for name, field_info in type(section).model_fields.items():
            lines.append(f"  # {field_info.description}{_stated_range(field_info)}")
            value = section.model_dump(mode="json")[name]
            if isinstance(value, (list, dict)) and any(isinstance(v, (list, dict)) for v in value):
                dumped = yaml.safe_dump({name: value}, sort_keys=False, allow_unicode=True, width=100,
                                        default_flow_style=None).rstrip()
                lines.extend("  " + line for line in dumped.splitlines())
            else:
                flat = yaml.safe_dump(value, allow_unicode=True, width=10_000, default_flow_style=True)
                lines.append(f"  {name}: " + flat.replace("\n...\n", "").strip())
    return "\n".join(lines) + "\n"
