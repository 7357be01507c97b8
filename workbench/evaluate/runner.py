"""Run retrieval strategies over a task set and score every task x strategy.

Scoring is at document level: a strategy's hits are mapped to their documents, de-duplicated
in rank order, and compared with the task's gold documents (at chunk level when the task gives
gold chunks). Beside the ranking metrics, each case records what expansion is for and what it
costs: the gold documents it found that the direct strategy missed, the non-gold documents it
added, the reading cost of its hits, and whether it surfaced a note that a later note
CONTRADICTS or supersedes.

Which notes are outdated is :func:`workbench.corpus.outdated.outdated_documents`.

Examples
--------
>>> reading_cost(["abcd", "efgh1"])
(9, 3)
"""

from __future__ import annotations

import math
import time
import uuid
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, Callable, Iterable, Sequence

from ..model.jsonable import to_json
from .metrics import all_found, ndcg_at_k, precision_at_k, recall_at_k, reciprocal_rank
from .tasks import EvalTask

if TYPE_CHECKING:
    from ..corpus.workspace_view import WorkspaceView

__all__ = [
    "AnswerCase",
    "UNANSWERABLE_TAG",
    "DEFAULT_STRATEGIES",
    "DEFAULT_DIRECT",
    "CHARS_PER_TOKEN",
    "CaseResult",
    "EvalRun",
    "StrategyFailed",
    "reading_cost",
    "ranked_units",
    "run_evaluation",
    "scoring_depth",
]

#: The baseline: exactly the direct stage expansion starts from (best chunk per document), so
#: every difference an expansion mode makes against it is its edges' own.
DEFAULT_DIRECT = "direct"
#: The strategies a run compares unless told otherwise (the ``eval`` command and the Evaluate page):
#: expansion over relations, the same with co-mention edges followed too, and graphrag.
DEFAULT_STRATEGIES = ("direct", "expand", "expand-comention", "graphrag")
#: Tokens are estimated as characters / 4 (the usual rule of thumb for English BPE tokenizers).
CHARS_PER_TOKEN = 4

Retrieve = Callable[..., Any]
#: Tasks with this tag cannot be answered from the corpus: the answer must say the evidence is insufficient.
UNANSWERABLE_TAG = "unanswerable"


class StrategyFailed(RuntimeError):
    """A strategy raised on a task; the message names the strategy and the task."""


@dataclass
class AnswerCase:
    """The answer stage of one case: what the model said from the case's retrieval, checked
    (:mod:`workbench.answer.checks`), kept apart from the retrieval metrics."""

    text: str
    model: str
    citations: list[str]
    """Chunk ids of the context the answer cites."""
    coverage: float
    """Factual sentences citing a chunk of the context / factual sentences."""
    supported_share: float
    """Factual sentences supported by their citations / factual sentences."""
    factual_sentences: int
    unknown_citations: int
    unsupported_citations: int
    hypotheses_as_fact: int
    says_insufficient: bool
    expected_insufficient: bool
    insufficiency_ok: bool
    passed: bool
    problems: list[str]
    seconds: float
    error: str = ""
    """The model request failed (then nothing else is meaningful)."""


@dataclass
class CaseResult:
    """One task scored for one strategy."""

    task_id: str
    strategy: str
    mode_used: str
    k: int
    level: str
    """``document`` or ``chunk``: what was compared with the gold."""
    recall: float
    precision: float
    mrr: float
    ndcg: float
    all_found: bool
    """Every gold prerequisite was in the top k."""
    ranked: list[str]
    """Documents (or chunks) returned, de-duplicated in rank order, top k."""
    gold: list[str]
    missed: list[str]
    """Gold ids not in the top k."""
    found_beyond_direct: list[str]
    """Gold ids this strategy found in its top k that the direct strategy did not."""
    added_irrelevant: list[str]
    """Non-gold ids this strategy returned that the direct strategy did not."""
    reading_chars: int
    reading_tokens: int
    """Estimated as ``ceil(chars / 4)``."""
    surfaced_outdated: list[str]
    """Returned documents that a later note contradicts or supersedes."""
    latency_ms: float
    tags: list[str] = field(default_factory=list)
    question: str = ""
    answer: AnswerCase | None = None
    """The answer stage (``eval --answers``), None when answers were not asked for."""
    depth: int = 0
    """Ranks scored: the run's one depth for every strategy (0 in runs saved before it was kept)."""


@dataclass
class EvalRun:
    """A whole evaluation: every case, with what is needed to reproduce and compare it."""

    run_id: str
    created: str
    """UTC timestamp, ISO 8601."""
    task_file: str
    strategies: list[str]
    direct: str
    k: int
    settings: dict
    cases: list[CaseResult]
    seconds: float = 0.0
    """Wall-clock time of the whole run, warm-up included (0 for runs saved before it was kept)."""
    warm_up_seconds: float = 0.0
    """Of which the untimed warm-up (one query per strategy before the timed cases)."""
    answer_model: str = ""
    """The chat model of the answer stage; empty when the run has none."""
    depth: int = 0
    """Ranks every strategy is scored to: ``k`` x the most hits per ``k`` any strategy of the run
    returns (expand: 2), the same for all (0 in runs saved before it was kept)."""

    def to_json(self) -> dict:
        return to_json(self)

    @classmethod
    def from_json(cls, data: dict) -> "EvalRun":
        cases = [CaseResult(**{**c, "answer": AnswerCase(**c["answer"]) if c.get("answer") else None})
                 for c in data.get("cases", [])]
        return cls(**{**data, "cases": cases})

    def case(self, task_id: str, strategy: str) -> CaseResult:
        for c in self.cases:
            if c.task_id == task_id and c.strategy == strategy:
                return c
        raise KeyError(f"run {self.run_id} has no case {task_id!r} for strategy {strategy!r}")

    @property
    def task_ids(self) -> list[str]:
        return list(dict.fromkeys(c.task_id for c in self.cases))


def reading_cost(texts: Iterable[str]) -> tuple[int, int]:
    """Characters of the returned texts and the token estimate ``ceil(chars / 4)``.

    >>> reading_cost([])
    (0, 0)
    """
    chars = sum(len(t) for t in texts)
    return chars, math.ceil(chars / CHARS_PER_TOKEN)


def ranked_units(hits: Sequence[Any], level: str = "document") -> list[str]:
    """Hit documents (or chunk ids) de-duplicated in rank order."""
    key = (lambda h: h.chunk_id) if level == "chunk" else (lambda h: h.document)
    return list(dict.fromkeys(key(h) for h in hits))


def _default_retrieve() -> Retrieve:
    from ..retrieve import retrieve

    return retrieve


def scoring_depth(strategies: Sequence[str], k: int) -> int:
    """The one depth every strategy of a run is scored to: ``k`` times the most hits per ``k``
    any of them returns (expand and comention return ``k`` direct hits and up to ``k`` more).

    >>> scoring_depth(["direct", "expand"], 5), scoring_depth(["direct", "vector"], 5)
    (10, 5)
    """
    from ..retrieve import RETRIEVERS

    return k * max((RETRIEVERS[s].capabilities.max_hits_per_k for s in strategies if s in RETRIEVERS), default=1)


def _score(task: EvalTask, strategy: str, result: Any, k: int, depth: int, latency_ms: float,
           outdated: dict[str, tuple[str, ...]]) -> CaseResult:
    hits = list(result.hits)
    # Everything a mode returns is scored, every strategy to the run's one depth: expansion's
    # linked notes are what it is judged on (and what its reader pays for), and the direct
    # baseline is scored as deep, so a difference is the edges' own.
    ranked = ranked_units(hits, task.level)[:depth]
    gold = list(task.gold)
    chars, tokens = reading_cost(h.text for h in hits)
    surfaced = sorted({h.document for h in hits if h.document in outdated})
    return CaseResult(
        task_id=task.id, strategy=strategy, mode_used=getattr(result, "mode_used", strategy), k=k, level=task.level,
        recall=recall_at_k(ranked, gold, depth), precision=precision_at_k(ranked, gold, depth),
        mrr=reciprocal_rank(ranked, gold, depth), ndcg=ndcg_at_k(ranked, gold, depth),
        all_found=all_found(ranked, gold, depth),
        ranked=ranked, gold=gold, missed=[g for g in gold if g not in ranked],
        found_beyond_direct=[], added_irrelevant=[], reading_chars=chars, reading_tokens=tokens,
        surfaced_outdated=surfaced, latency_ms=round(latency_ms, 2), tags=list(task.tags), question=task.question,
        depth=depth,
    )


def run_evaluation(
    ws,
    tasks: Sequence[EvalTask],
    strategies: Sequence[str] = DEFAULT_STRATEGIES,
    direct: str = DEFAULT_DIRECT,
    k: int | None = None,
    task_file: str = "",
    retrieve: Retrieve | None = None,
    progress: Callable[[int, int], None] | None = None,
    warm_up: bool = True,
    answer_client: Any = None,
) -> EvalRun:
    """Run every strategy (the direct one first) on every task and score the cases.

    Parameters
    ----------
    ws : Workspace
        The workspace the tasks were resolved against.
    tasks : resolved tasks (see :func:`workbench.evaluate.tasks.load_resolved_tasks`).
    strategies : retrieval mode names; ``direct`` is added first if missing.
    direct : the strategy every other one is compared with.
    k : hits per query (default: ``ws.settings.retrieval.k``); metrics are at ``k``.
    retrieve : ``retrieve(ws, query, mode=..., k=...) -> RetrievalResult``; default
        :func:`workbench.retrieve.retrieve`.
    warm_up : before timing anything, run every strategy once on the first question and embed
        every question once, so that no strategy's latency includes loading models, building
        indexes or embedding a question another strategy then reuses (the direct strategy runs
        first on every task and would otherwise pay for all).
    answer_client : a chat client (``chat(messages) -> str``): when given, every case also gets
        an answer stage (:class:`AnswerCase`): the model answers from the case's cited context
        (:func:`workbench.answer.material.build_context`) and the answer is checked; tasks tagged
        ``unanswerable`` must be answered with "the evidence is insufficient". Not timed in
        ``latency_ms``.

    Raises
    ------
    StrategyFailed
        When a strategy raises on a task.
    """
    if not tasks:
        raise ValueError("run_evaluation needs at least one task")
    retrieve = retrieve or _default_retrieve()
    k = k or ws.settings.retrieval.k
    order = [direct] + [s for s in dict.fromkeys(strategies) if s != direct]
    depth = scoring_depth(order, k)
    from ..retrieve.cache import indexes_for

    outdated = indexes_for(ws).outdated  # read once per workspace version, as every answer's context reads it
    cases: list[CaseResult] = []
    total, done = len(tasks) * len(order), 0
    run_started = time.perf_counter()
    if warm_up:
        for strategy in order:
            try:
                retrieve(ws, tasks[0].question, mode=strategy, k=k)
            except Exception:  # noqa: BLE001 - the timed call below reports the failure with its task
                pass
        try:
            from ..retrieve.vector import embed_query

            for task in tasks:
                embed_query(ws, task.question)
        except Exception:  # noqa: BLE001 - no model: the strategies fall back and say so
            pass
    warm_up_seconds = time.perf_counter() - run_started
    if progress:
        progress(0, total)
    for task in tasks:
        by_strategy: dict[str, CaseResult] = {}
        for strategy in order:
            started = time.perf_counter()
            try:
                result = retrieve(ws, task.question, mode=strategy, k=k)
            except Exception as exc:  # a strategy's failure is reported with where it happened
                raise StrategyFailed(f"strategy {strategy!r} failed on task {task.id!r}: {exc}") from exc
            elapsed = (time.perf_counter() - started) * 1000
            by_strategy[strategy] = _score(task, strategy, result, k, depth, elapsed, outdated)
            if answer_client is not None:
                by_strategy[strategy].answer = answer_case(ws, task, result, answer_client)
            done += 1
            if progress:
                progress(done, total)
        base = by_strategy[direct]
        for strategy, case in by_strategy.items():
            if strategy == direct:
                continue
            case.found_beyond_direct = [g for g in case.ranked if g in case.gold and g not in base.ranked]
            case.added_irrelevant = [d for d in case.ranked if d not in case.gold and d not in base.ranked]
        cases.extend(by_strategy.values())
    return EvalRun(
        run_id=datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S-") + uuid.uuid4().hex[:6],
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
        task_file=str(task_file), strategies=order, direct=direct, k=k,
        settings=ws.settings.model_dump(mode="json"), cases=cases,
        seconds=round(time.perf_counter() - run_started, 3), warm_up_seconds=round(warm_up_seconds, 3),
        answer_model=str(getattr(answer_client, "model", "")) if answer_client is not None else "",
        depth=depth,
    )


def answer_case(ws: WorkspaceView, task: EvalTask, result: Any, client: Any) -> AnswerCase:
    """Answer ``task`` from ``result`` with ``client`` and check the answer."""
    from ..answer.material import answer, build_context
    from ..extract.llm import LLMError

    unanswerable = UNANSWERABLE_TAG in task.tags
    context = build_context(ws, result)
    try:
        reply = answer(ws, context, client=client, unanswerable=unanswerable)
    except LLMError as exc:
        return AnswerCase(text="", model=str(getattr(client, "model", "")), citations=[], coverage=0.0,
                          supported_share=0.0, factual_sentences=0, unknown_citations=0, unsupported_citations=0,
                          hypotheses_as_fact=0, says_insufficient=False, expected_insufficient=unanswerable,
                          insufficiency_ok=False, passed=False, problems=[str(exc)], seconds=0.0, error=str(exc))
    checks = reply.checks
    assert checks is not None  # a client was given
    return AnswerCase(
        text=reply.text, model=reply.model, citations=reply.citations, coverage=checks.coverage,
        supported_share=checks.supported_share, factual_sentences=checks.factual_sentences,
        unknown_citations=len(checks.unknown_citations), unsupported_citations=len(checks.unsupported_citations),
        hypotheses_as_fact=len(checks.hypotheses_as_fact), says_insufficient=checks.says_insufficient,
        expected_insufficient=unanswerable, insufficiency_ok=checks.insufficiency_ok, passed=checks.passed,
        problems=checks.problems, seconds=reply.seconds,
    )
