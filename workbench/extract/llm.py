"""Optional LLM extraction: ask an OpenAI-compatible chat model for a chunk's triples.

The client is passed in (anything with ``.chat(messages) -> str``), so tests use a fake and
nothing here touches the network unless configured. Answers are parsed leniently: a reply
that is not JSON, or items without subject/relation/object, become problem lines, never
exceptions. A model's triples are guesses, not statements a person can check at a glance: they
are stored as candidates (origin ``candidate``) with the model's confidence (0.5 when it gives
none), kept out of the graph until a user accepts them (``candidates accept``).

Examples
--------
>>> class Canned:
...     def chat(self, messages):
...         return '```json\\n[{"subject": "Cart", "relation": "uses", "object": "Redis"}]\\n```'
>>> from workbench.model import Chunk, Document
>>> doc = Document("d", "/d", "d", "text", "Cart uses Redis.", "h")
>>> [(t.subject, t.relation, t.object, t.origin, t.confidence)
...  for t in LLMExtractor(Canned()).extract(doc, [Chunk("c1", "d", 0, doc.text, 0, 16)]).triples]
[('Cart', 'uses', 'Redis', 'candidate', 0.5)]
"""

from __future__ import annotations

import json
import os
import re
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from typing import Protocol

from .base import Extraction
from ..model import Chunk, Document, Triple
from ..settings import LLMSettings, setting_default

__all__ = ["ChatClient", "LLMError", "LLMExtractor", "OpenAICompatibleClient", "client_from_settings", "parse_triples"]

#: Confidence of a model's triple that states none of its own.
LLM_CONFIDENCE = 0.5
#: Origin of the model's triples: candidates, never graph facts until accepted.
LLM_ORIGIN = "candidate"

_SYSTEM_PROMPT = (
    "You extract knowledge-graph triples from text. Reply with JSON only: a list of objects "
    'with keys "subject", "relation", "object", and optionally "subject_type", "object_type" and '
    '"confidence" (0 to 1, how sure the text makes you). '
    "Relations are short snake_case verbs such as depends_on, uses, owned_by, runs_on, part_of, "
    "caused_by. Names are written as in the text. Only state what the text states. "
    "Reply [] when there is nothing."
)


class LLMError(RuntimeError):
    """A chat request failed: unreachable server, HTTP error, or an answer without content."""


class ChatClient(Protocol):
    """What :class:`LLMExtractor` needs from a model."""

    def chat(self, messages: list[dict[str, str]]) -> str:
        """The assistant's reply to ``messages`` (``[{"role": ..., "content": ...}]``)."""
        ...


class OpenAICompatibleClient:
    """A chat client for any server speaking the OpenAI ``/chat/completions`` API (stdlib only)."""

    def __init__(self, base_url: str, model: str, api_key: str | None = None,
                 timeout: float = setting_default("llm.timeout_seconds"),
                 max_tokens: int | None = None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.api_key = api_key
        self.timeout = timeout
        self.max_tokens = max_tokens

    def chat(self, messages: list[dict[str, str]]) -> str:
        """Post the messages; the first choice's content. Raises :class:`LLMError`."""
        request_body: dict = {"model": self.model, "messages": messages, "temperature": 0}
        if self.max_tokens:
            request_body["max_tokens"] = self.max_tokens
        body = json.dumps(request_body).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        request = urllib.request.Request(self.url, data=body, headers=headers, method="POST")
        try:
            with urllib.request.urlopen(request, timeout=self.timeout) as response:
                payload = json.loads(response.read().decode("utf-8"))
        except urllib.error.HTTPError as exc:
            raise LLMError(f"{self.url}: HTTP {exc.code} {exc.reason}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            raise LLMError(f"{self.url}: cannot reach the model server ({exc})") from None
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise LLMError(f"{self.url}: the answer is not JSON ({exc})") from None
        try:
            content = payload["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise LLMError(f"{self.url}: the answer has no choices[0].message.content") from None
        if not isinstance(content, str):
            raise LLMError(f"{self.url}: choices[0].message.content is not text")
        return content


def client_from_settings(llm: LLMSettings, environ: Mapping[str, str] | None = None) -> OpenAICompatibleClient | None:
    """A client from the environment variables the settings name; ``None`` if not configured.

    Examples
    --------
    >>> client_from_settings(LLMSettings(), environ={}) is None
    True
    >>> client_from_settings(LLMSettings(), {"WORKBENCH_LLM_BASE_URL": "http://127.0.0.1:1/v1",
    ...                                      "WORKBENCH_LLM_MODEL": "m"}).url
    'http://127.0.0.1:1/v1/chat/completions'
    """
    env = os.environ if environ is None else environ
    base_url = (env.get(llm.base_url_env) or "").strip()
    model = (env.get(llm.model_env) or "").strip()
    if not base_url or not model:
        return None
    return OpenAICompatibleClient(base_url, model, (env.get(llm.api_key_env) or "").strip() or None, llm.timeout_seconds,
                                  llm.max_tokens)


_FENCE_RE = re.compile(r"```(?:json)?\s*(.*?)```", re.DOTALL | re.IGNORECASE)


def parse_triples(reply: str, chunk_id: str) -> tuple[list[Triple], list[str]]:
    """Triples from a model reply, leniently; problems for what could not be used.

    Accepts a JSON list, ``{"triples": [...]}``, either inside a code fence or surrounded
    by prose.

    Examples
    --------
    >>> parse_triples('Sure! [{"subject": "A", "relation": "uses", "object": "B"}, {"subject": "A"}]', "c1")[1]
    ['chunk c1: LLM item 2 lacks subject/relation/object; skipped']
    >>> parse_triples("no idea", "c1")[1]
    ['chunk c1: LLM answer is not JSON; skipped']
    """
    data = _load_json(reply)
    if data is None:
        return [], [f"chunk {chunk_id}: LLM answer is not JSON; skipped"]
    if isinstance(data, dict):
        data = data.get("triples", data.get("relations"))
    if not isinstance(data, list):
        return [], [f"chunk {chunk_id}: LLM answer is not a list of triples; skipped"]
    triples, problems = [], []
    for number, item in enumerate(data, start=1):
        fields = [item.get(k) if isinstance(item, dict) else None for k in ("subject", "relation", "object")]
        if not all(isinstance(f, str) and f.strip() for f in fields):
            problems.append(f"chunk {chunk_id}: LLM item {number} lacks subject/relation/object; skipped")
            continue
        subject, relation, obj = (f.strip() for f in fields if isinstance(f, str))
        relation = re.sub(r"\W+", "_", relation).strip("_").lower() or relation
        triples.append(
            Triple(
                subject, relation, obj, chunk_id, _confidence(item.get("confidence")), LLM_ORIGIN,
                _type(item.get("subject_type")), _type(item.get("object_type")),
            )
        )
    return triples, problems


def _confidence(value) -> float:
    """The model's own confidence when it is a number in [0, 1], else :data:`LLM_CONFIDENCE`."""
    if isinstance(value, (int, float)) and not isinstance(value, bool) and 0 <= value <= 1:
        return float(value)
    return LLM_CONFIDENCE


def _type(value) -> str:
    return value.strip().lower() if isinstance(value, str) and value.strip() else "concept"


def _load_json(reply: str):
    candidates = [m.group(1) for m in _FENCE_RE.finditer(reply)] + [reply]
    for text in candidates:
        text = text.strip()
        for opener, closer in (("[", "]"), ("{", "}")):
            start, end = text.find(opener), text.rfind(closer)
            if start < 0 or end <= start:
                continue
            try:
                return json.loads(text[start:end + 1])
            except json.JSONDecodeError:
                continue
    return None


class LLMExtractor:
    """Asks a chat model for each chunk's triples.

    Parameters
    ----------
    client : ChatClient
        Anything with ``.chat(messages) -> str``, e.g. :class:`OpenAICompatibleClient`.
    max_chars : int
        Longest chunk text sent; longer chunks are cut (and reported).
    """

    name = "llm"

    def __init__(self, client: ChatClient, max_chars: int = 6000) -> None:
        self.client = client
        self.max_chars = max_chars

    def messages_for(self, chunk: Chunk) -> list[dict[str, str]]:
        """The chat messages sent for one chunk."""
        return [
            {"role": "system", "content": _SYSTEM_PROMPT},
            {"role": "user", "content": chunk.text[: self.max_chars]},
        ]

    def extract(self, document: Document, chunks: Sequence[Chunk]) -> Extraction:
        """Triples the model states for each chunk; failures become problem lines."""
        result = Extraction()
        for chunk in chunks:
            if not chunk.text.strip():
                continue
            if len(chunk.text) > self.max_chars:
                result.problems.append(f"chunk {chunk.id}: only the first {self.max_chars} characters were sent to the LLM")
            try:
                reply = self.client.chat(self.messages_for(chunk))
            except LLMError as exc:
                result.problems.append(f"chunk {chunk.id}: LLM request failed: {exc}")
                continue
            triples, problems = parse_triples(reply, chunk.id)
            result.triples.extend(triples)
            result.problems.extend(problems)
        return result
