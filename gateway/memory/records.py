"""Memory records and their input/output shapes.

Vocabulary from memory research: *episodic* memories are events that happened (Tulving
1972), *semantic* ones are facts; *trait*, *goal* and *preference* describe the user
(persona profile); *inference* is something derived from other records (``based_on``).
Two scopes (seed 002): a ``profile`` memory belongs to the user and every friend (persona)
of that user sees it; an ``event`` memory belongs to one (user, friend) pair.
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from itertools import islice
from typing import Annotated, Any

from pydantic import AfterValidator, AwareDatetime, BaseModel, BeforeValidator, ConfigDict, Field, ValidationInfo, model_validator

from gateway.memory.ids import MEMORY_ID_PATTERN, is_memory_id
from gateway.runtime.errors import InvalidRequest
from gateway.runtime.json_input import value_depth

__all__ = ['FOLLOWED_BY', 'FOLLOWS', 'MAX_BASED_ON', 'MAX_FOLLOWERS', 'MAX_KEYWORDS', 'MAX_KEYWORD_CHARS', 'MAX_METADATA_BYTES', 'MAX_METADATA_DEPTH', 'MAX_SPLIT_DEPTH', 'MAX_TENANT_ID_CHARS', 'NON_BLANK', 'NON_BLANK_SCHEMA', 'RESERVED_METADATA', 'SPLIT_FROM', 'STATEMENTS', 'STORED', 'JsonBoolean', 'JsonDateTime', 'JsonInteger', 'JsonNumber', 'KeywordList', 'MemoryPage', 'MemoryPatch', 'MemoryRecord', 'MemoryType', 'Metadata', 'NewMemory', 'Scope', 'ScoredMemory', 'Source', 'Tenant', 'UnitNumber', 'build_record', 'check_metadata', 'check_tenant_id', 'embedded_views', 'indexed_text', 'json_integer', 'json_number', 'profile_topic', 'reserved_metadata', 'split_sources', 'statement_spans', 'tenant_id_problem', 'visible_to']

MAX_TENANT_ID_CHARS = 256
#: ``metadata`` limits, checked when the request is validated (before any embedding):
#: nesting depth of its lists/objects and size as compact UTF-8 JSON. Caller data only
#: rides along with a memory, so 32 levels and 64 KiB are generous.
MAX_METADATA_DEPTH = 32
MAX_METADATA_BYTES = 65536

#: A JSON Schema ``pattern`` (unanchored, so: "has one such character") that a text
#: passes exactly when it is not blank by Python's ``str.strip()`` (what
#: :func:`gateway.memory.validation.check_text` refuses, 422): the class lists every
#: character ``str.isspace()`` is true for, which ECMAScript's ``\s`` does not match alike
#: (U+001C..U+001F, U+0085). Declared on the API's text fields (:data:`NON_BLANK_SCHEMA`)
#: so the OpenAPI schema says what the routes accept.
NON_BLANK = r"[^\t-\r\x1c- \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"
#: ``json_schema_extra`` of a text field the store refuses when blank (the check stays the
#: store's: a blank text is its 422 naming the field).
NON_BLANK_SCHEMA: dict[str, Any] = {"pattern": NON_BLANK}


def check_metadata(value: dict[str, Any]) -> dict[str, Any]:
    """``value`` if it is JSON data within :data:`MAX_METADATA_DEPTH` and
    :data:`MAX_METADATA_BYTES` (linear: one iterative walk, one serialization).

    Raises:
        ValueError: too deep, too large, or not JSON-serializable text (pydantic reports
            it as a validation error of ``metadata``, a 400 at the API).
    """
    if not value:
        return value  # most records: nothing to walk or serialize
    if value_depth(value, stop_at=MAX_METADATA_DEPTH) > MAX_METADATA_DEPTH:
        raise ValueError(f"metadata nests more than {MAX_METADATA_DEPTH} levels deep")
    try:
        size = len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())
    except (TypeError, ValueError, UnicodeEncodeError) as exc:
        raise ValueError(f"metadata must be JSON data with valid Unicode text ({type(exc).__name__})") from None
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"metadata is {size} bytes as JSON; the limit is {MAX_METADATA_BYTES}")
    return value


#: Validation context of records read back from the store (:func:`codec.record_from_hash`):
#: their metadata passed :func:`check_metadata` when written, so a read skips its walk and
#: serialization (a search reads every hit's record).
STORED = {"stored": True}
#: The ``metadata`` key under which memorization records the id of the older profile
#: memory a new one follows (:func:`gateway.memorization.neardup.follows_of`); recall shows
#: the newer memory with the older one.
FOLLOWS = "follows"
#: The ``metadata`` key under which a record lists the ids of the newer records whose
#: ``metadata.follows`` names it (oldest first, at most :data:`MAX_FOLLOWERS`, the newest
#: kept): the reverse link, so recall fetches the newer statements on a shown memory
#: without a search. The store keeps it, not the writer: it
#: is its own hash field, added by the write of each live follower in the same atomic
#: script call (:meth:`gateway.memory.scripts.Batch.follow`), never written or erased by a
#: rewrite of the record (:func:`gateway.memory.codec.record_to_hash` leaves it out of
#: ``metadata``), shown in ``metadata`` when read. An id there may name a record since
#: retired, erased or no longer following: readers check the follower itself.
FOLLOWED_BY = "followed_by"
#: Most ids one record's :data:`FOLLOWED_BY` keeps (the newest).
MAX_FOLLOWERS = 8
#: The ``metadata`` key of a memory made of an older memory's unchanged clauses
#: (:mod:`gateway.memorization.split`): the ids of the memories it continues, newest first
#: (the older memory, then the memories that one continued: a split of a split-off memory
#: names every generation), at most :data:`MAX_SPLIT_DEPTH`; a record written before the
#: list holds the older memory's id alone (:func:`split_sources` reads both). Recall takes
#: a memory that follows any of them as following the newer one (the chain's recall step,
#: through :func:`split_sources`).
SPLIT_FROM = "split_from"
#: Most ids one memory's :data:`SPLIT_FROM` keeps (the newest generations).
MAX_SPLIT_DEPTH = 8
#: The ``metadata`` key of a memory that joins several statements of one turn
#: (:mod:`gateway.memorization.disclosure`): the ``[start, end]`` character span of each in
#: the memory's text, in order, the first from 0 and the last to the text's end. A change
#: retires only the statement it changes (:mod:`gateway.memorization.neardup`);
#: :func:`statement_spans` reads it.
STATEMENTS = "statements"


def statement_spans(text: str, metadata: Mapping[str, Any]) -> list[tuple[int, int]]:
    """The statements of a memory whose ``text`` and ``metadata`` are given
    (:data:`STATEMENTS`) as ``(start, end)`` spans, or ``[]`` unless the list is well formed
    for this text: at least two pairs of integers, in order and not overlapping, none empty,
    the first from 0 and the last to ``len(text)`` (a text edited since, or a caller's own
    value, reads as one statement). Linear in the list's length."""
    value = metadata.get(STATEMENTS)
    if not isinstance(value, list) or len(value) < 2:
        return []
    spans: list[tuple[int, int]] = []
    at = 0
    for pair in value:
        if not (isinstance(pair, list) and len(pair) == 2 and all(type(n) is int for n in pair)):
            return []
        start, end = pair
        if start < at or end <= start or end > len(text):
            return []
        spans.append((start, end))
        at = end
    return spans if spans[0][0] == 0 and spans[-1][1] == len(text) else []


def split_sources(metadata: Mapping[str, Any]) -> list[str]:
    """The ids of the memories a memory continues (:data:`SPLIT_FROM`), newest first: a
    list as written, or a lone id (written before the list), the well-formed memory ids
    only (:func:`~gateway.memory.ids.is_memory_id`: a caller's metadata may hold anything
    there, and a read by such an id would fail), the first :data:`MAX_SPLIT_DEPTH` of them
    (memorization writes no more; a caller's longer list, up to the metadata's byte limit,
    would otherwise have every recall that shows the memory read them all); ``[]`` when
    none. Stops after :data:`MAX_SPLIT_DEPTH` well-formed ids."""
    value = metadata.get(SPLIT_FROM)
    listed = [value] if isinstance(value, str) else value if isinstance(value, list) else []
    return list(islice((v for v in listed if is_memory_id(v)), MAX_SPLIT_DEPTH))

#: The ``metadata`` keys the store writes and a caller may not: a memory written through
#: ``POST`` / ``PATCH /v1/memories``, the console's ``PATCH /v1/admin/memories/{id}`` or the
#: MCP tools with one of them is refused (400 naming ``metadata.<key>``:
#: :func:`reserved_metadata`), not stored without it. An import (``POST
#: /v1/admin/users/{user_id}/import``, ``memgate memories import``) takes records as an
#: export wrote them, with the key, and ignores its value: the list is the store's, rebuilt
#: from each imported follower's ``metadata.follows``.
RESERVED_METADATA = (FOLLOWED_BY,)


def reserved_metadata(metadata: Mapping[str, Any] | None) -> str | None:
    """The first :data:`RESERVED_METADATA` key of a caller's ``metadata``, as the field
    at fault (``metadata.followed_by``), or None."""
    if not metadata:
        return None
    return next((f"metadata.{key}" for key in RESERVED_METADATA if key in metadata), None)


def _check_new_metadata(value: dict[str, Any], info: ValidationInfo) -> dict[str, Any]:
    if info.context is not None and info.context.get("stored"):
        return value
    return check_metadata(value)


Metadata = Annotated[dict[str, Any], AfterValidator(_check_new_metadata)]

#: List limits of a memory, checked when the request is validated (before any embedding
#: or write): ``keywords`` items and characters per keyword, ``based_on`` ids. Each
#: keyword becomes index terms, a postings key each (:mod:`gateway.memory.keyword_index`),
#: so the list is bounded like the text (memorization writes at most 12 keywords of 64
#: characters, :mod:`gateway.memorization.keywords`).
MAX_KEYWORDS = 64
MAX_KEYWORD_CHARS = 100
MAX_BASED_ON = 64

KeywordList = Annotated[
    list[Annotated[str, Field(max_length=MAX_KEYWORD_CHARS)]],
    Field(max_length=MAX_KEYWORDS, description=f"Extra search terms (at most {MAX_KEYWORDS}, "
          f"each at most {MAX_KEYWORD_CHARS} characters)."),
]
IdList = Annotated[list[str], Field(max_length=MAX_BASED_ON, description=f"Ids of source records (at most {MAX_BASED_ON}).")]


def _check_lists(record: Any, info: ValidationInfo) -> Any:
    """A record's ``keywords`` and ``based_on`` within the limits above, unless read back
    from the store (:data:`STORED`: checked when written). Raises ValueError naming the field."""
    if info.context is not None and info.context.get("stored"):
        return record
    if len(record.keywords) > MAX_KEYWORDS:
        raise ValueError(f"keywords has {len(record.keywords)} items; the limit is {MAX_KEYWORDS}")
    for i, keyword in enumerate(record.keywords):
        if len(keyword) > MAX_KEYWORD_CHARS:
            raise ValueError(f"keywords[{i}] has {len(keyword)} characters; the limit is {MAX_KEYWORD_CHARS}")
    if len(record.based_on) > MAX_BASED_ON:
        raise ValueError(f"based_on has {len(record.based_on)} items; the limit is {MAX_BASED_ON}")
    return record


def json_number(value: Any) -> Any:
    """``value`` when it is a JSON number (an int or float, not a bool); a pydantic
    before-validator (:data:`JsonNumber`), so ``"0.5"`` or ``true`` is refused, not coerced.

    Raises:
        ValueError: anything else ("must be a JSON number").
    """
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError("must be a JSON number")
    return value


def json_integer(value: Any) -> Any:
    """``value`` as an int when it is a JSON integer (an int, or a float with no fraction
    such as ``3.0``; not a bool); the before-validator of :data:`JsonInteger`.

    Raises:
        ValueError: anything else ("must be a JSON integer").
    """
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError("must be a JSON integer")
    return value


def _json_boolean(value: Any) -> Any:
    if not isinstance(value, bool):
        raise ValueError("must be true or false")
    return value


def _json_datetime(value: Any) -> Any:
    if not isinstance(value, (str, datetime)):
        raise ValueError("must be an RFC 3339 date-time string with a time zone")
    return value


# JSON scalars as the schema says: litestar validates bodies with ``strict=False``, which
# would take ``false`` for 0.0, ``"0.5"`` for 0.5, ``0`` for false and a number of seconds
# for a date-time; these refuse them (Python callers may still pass datetime objects).
JsonNumber = Annotated[float, BeforeValidator(json_number)]
JsonInteger = Annotated[int, BeforeValidator(json_integer)]
JsonBoolean = Annotated[bool, BeforeValidator(_json_boolean)]
JsonDateTime = Annotated[AwareDatetime, BeforeValidator(_json_datetime)]
#: A JSON number in [0, 1] (bounds inside the type so ``UnitNumber | None`` keeps them).
UnitNumber = Annotated[float, Field(ge=0.0, le=1.0), BeforeValidator(json_number)]


class Scope(StrEnum):
    """Who sees a memory: the user's every friend (profile) or one friend (event)."""

    PROFILE = "profile"
    EVENT = "event"


class MemoryType(StrEnum):
    """Kind of memory (see module docstring)."""

    EPISODIC = "episodic"
    SEMANTIC = "semantic"
    TRAIT = "trait"
    GOAL = "goal"
    PREFERENCE = "preference"
    INFERENCE = "inference"


class Source(StrEnum):
    """Where a memory came from."""

    CONVERSATION = "conversation"
    MANUAL = "manual"
    INFERENCE = "inference"
    IMPORT = "import"


def tenant_id_problem(value: object) -> str | None:
    """Why ``value`` is not a usable user/friend id, or None when it is.

    The one definition of the id rules, applied to config keys, minted
    keys, per-request end-user ids (body ``user``, ``X-Memgate-User`` /
    ``X-Memgate-Friend``), the memory API, admin routes and the CLI: a non-empty ``str``
    of at most 256 characters, without control characters (Unicode category Cc: NUL, tab,
    newline, DEL...) and without leading or trailing whitespace. HTTP strips leading and
    trailing whitespace from header values (RFC 9110 §5.5), so an id that had any could
    not mean the same tenant in a header and in a JSON body. Anything else (``|``, ``*``,
    ``/``, quotes, braces, inner spaces, CJK...) is allowed: ids are percent-encoded in
    Redis keys (:mod:`gateway.memory.keys`), never spliced raw.
    """
    if not isinstance(value, str) or not value:
        return "must be a non-empty string"
    if len(value) > MAX_TENANT_ID_CHARS:
        return f"is longer than {MAX_TENANT_ID_CHARS} characters"
    if any(unicodedata.category(c) == "Cc" for c in value):
        return "must not contain control characters (NUL, tab, newline...)"
    if value[0].isspace() or value[-1].isspace():
        return "must not start or end with whitespace"
    return None


def check_tenant_id(value: object, param: str) -> str:
    """``value`` if :func:`tenant_id_problem` accepts it.

    Raises:
        InvalidRequest: empty, oversized, control characters, leading/trailing
            whitespace, or not a string (400, ``param`` named).
    """
    problem = tenant_id_problem(value)
    if problem is not None:
        raise InvalidRequest(f"{param} {problem}", param=param)
    return value  # type: ignore[return-value]


@dataclass(frozen=True, slots=True)
class Tenant:
    """Whose memories a call sees: ``user_id`` and, for event memories, ``friend_id``.

    ``friend_id=None`` sees the user's profile memories only and cannot add events.

    Raises:
        InvalidRequest: on construction, for ids :func:`check_tenant_id` rejects.
    """

    user_id: str
    friend_id: str | None = None

    def __post_init__(self) -> None:
        check_tenant_id(self.user_id, "user_id")
        if self.friend_id is not None:
            check_tenant_id(self.friend_id, "friend_id")


class _Model(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", use_enum_values=False)


class NewMemory(_Model):
    """A memory to store; the store assigns ``id``, tenant and timestamps."""

    scope: Scope = Field(description="profile (all friends see it) or event (one friend).")
    type: MemoryType = Field(
        MemoryType.SEMANTIC, description="Kind of memory. Default semantic (a fact), as "
        "`memgate memories add`."
    )
    text: str = Field(min_length=1, json_schema_extra=NON_BLANK_SCHEMA, description="The memory in natural language.")
    context: str | None = Field(
        None, min_length=1, json_schema_extra=NON_BLANK_SCHEMA, description="Text searched with the memory but not part of it, e.g. the "
        "message a conversational turn answers: embedded and keyword-indexed before `text` "
        "(:func:`indexed_text`; LoCoMo dev R@10 rose by ~10 points with the preceding turn, README). "
        "Same size limit as `text`.",
    )
    context_after: str | None = Field(
        None, min_length=1, json_schema_extra=NON_BLANK_SCHEMA, description="Text searched with the memory but not part of it that came "
        "after it, e.g. the reply a conversational turn received: the memory's vector is the mean of "
        "two views, `context` + `text` and `text` + `context_after` (:func:`embedded_views`; LoCoMo dev, "
        "README \"How memories are ranked\"); not keyword-indexed. Same size limit as `text`.",
    )
    keywords: KeywordList = Field(default_factory=list)
    importance: UnitNumber = Field(0.5, description="0 trivial .. 1 vital.")
    emotion: str | None = Field(None, max_length=64, description="Emotion label, if any.")
    occurred_at: JsonDateTime | None = Field(
        None, description="When it happened; None: now (the time it is stored)."
    )
    source: Source = Field(Source.MANUAL, description="Where the memory came from.")
    confidence: UnitNumber = Field(1.0, description="Belief that it is true.")
    based_on: IdList = Field(default_factory=list)
    metadata: Metadata = Field(default_factory=dict, description="Caller's JSON data (at most 32 levels deep, 64 KiB as JSON).")


class MemoryPatch(_Model):
    """Fields to change on a record; ``None`` leaves a field as it is. Scope cannot change
    (it decides which partition the record lives in): supersede instead."""

    type: MemoryType | None = Field(None, description="New kind.")
    text: str | None = Field(None, min_length=1, json_schema_extra=NON_BLANK_SCHEMA, description="New text (re-embedded).")
    keywords: KeywordList | None = Field(None, description="New keyword list (limits as NewMemory).")
    importance: UnitNumber | None = Field(None, description="New importance.")
    emotion: str | None = Field(None, max_length=64, description="New emotion label.")
    occurred_at: JsonDateTime | None = Field(None, description="New time it happened.")
    confidence: UnitNumber | None = Field(None, description="New confidence.")
    metadata: Metadata | None = Field(None, description="Replacement metadata (limits as NewMemory).")


class MemoryRecord(_Model):
    """A stored memory. Retired and superseded records stay gettable and listable (audit
    trail) but search skips them unless asked (``include_retired``)."""

    id: str = Field(pattern=MEMORY_ID_PATTERN, description="Sortable id (ids.new_memory_id).")
    user_id: str = Field(description="Owner.")
    friend_id: str | None = Field(description="Friend of an event memory; None for profile.")
    scope: Scope = Field(description="profile or event.")
    type: MemoryType = Field(description="Kind of memory.")
    text: str = Field(description="The memory in natural language.")
    context: str | None = Field(None, description="Text searched with the memory but not part of it (NewMemory.context).")
    context_after: str | None = Field(
        None, description="Text that followed the memory, embedded with it but not part of it (NewMemory.context_after)."
    )
    keywords: list[str] = Field(default_factory=list, description="Extra search terms.")
    importance: float = Field(ge=0.0, le=1.0, description="0 trivial .. 1 vital.")
    emotion: str | None = Field(None, description="Emotion label, if any.")
    occurred_at: AwareDatetime = Field(description="When it happened.")
    created_at: AwareDatetime = Field(description="When it was first stored.")
    updated_at: AwareDatetime = Field(description="When it was last changed.")
    source: Source = Field(description="Where it came from.")
    confidence: float = Field(ge=0.0, le=1.0, description="Belief that it is true.")
    based_on: list[str] = Field(default_factory=list, description="Ids of source records.")
    supersedes: str | None = Field(None, description="Id of the record this one replaces.")
    superseded_by: str | None = Field(None, description="Id of the record replacing this one.")
    retired: bool = Field(False, description="Contradicted or superseded: kept, not searched.")
    retired_at: AwareDatetime | None = Field(None, description="When it was retired.")
    retired_reason: str | None = Field(None, description="Why it was retired.")
    metadata: Metadata = Field(default_factory=dict, description="Caller's JSON data (at most 32 levels deep, 64 KiB as JSON).")

    @model_validator(mode="after")
    def _limits(self, info: ValidationInfo) -> MemoryRecord:
        return _check_lists(self, info)


class ScoredMemory(_Model):
    """A search hit: the record, the score hits are ranked by, and the cosine similarity.

    ``score`` is what orders the hits (highest first). With hybrid search (a query text
    and ``memory.hybrid_alpha < 1``) it is the fused score of the vector and keyword (BM25)
    rankings in [0, 1] (``memory.fusion``: ``convex``, the default, ``alpha * cos / max cos
    + (1 - alpha) * bm25 / max bm25`` over the candidates,
    :func:`gateway.memory.ranking.convex_scores`; or ``rrf``, weighted reciprocal rank fusion
    scaled into (0, 1], :func:`gateway.memory.ranking.fused_scores`); otherwise it equals
    ``similarity``; the store then adds the ``memory.ranking`` signals
    (:func:`gateway.memory.ranking.rerank`) and clamps to [0, 1].
    ``similarity`` is always the cosine similarity of the record's vector to the query,
    clamped to [0, 1]; search ``threshold`` applies to it. ``similarity`` defaults to
    ``score`` when not given (hand-made hits).
    """

    record: MemoryRecord = Field(description="The matching record.")
    score: float = Field(
        ge=0.0, le=1.0,
        description="Ranking score, highest first: the fused (vector + keyword) score in [0, 1] "
        "with hybrid search (memory.fusion: convex combination of the normalised cosine and BM25, "
        "or weighted RRF), else the cosine similarity, plus the "
        "memory.ranking signals (recency, importance, emotion, priors, period, neighbours), "
        "clamped to [0, 1].",
    )
    similarity: float = Field(
        ge=0.0, le=1.0, description="Cosine similarity to the query clamped to [0, 1]; threshold applies to it."
    )
    relevance: float | None = Field(
        None, ge=0.0, le=1.0, description="P(related): the cosine calibrated for the store's "
        "embedder on bundled zh + en sentence pairs (gateway.memory.calibration), so one cut "
        "means the same with any embedder; null when calibration is off (memory.calibrate).",
    )

    @property
    def strength(self) -> float:
        """What seed 002's ``similarity_threshold`` (recall agent, MCP ``recall_memory``)
        applies to: ``relevance`` when the store has a calibration, else ``similarity``.
        Raw cosines do not share a scale across embedders (multilingual-e5 scores unrelated
        Chinese pairs above 0.7; all-MiniLM-L6-v2 scores related pairs near 0.4), P(related)
        does, so 0.5 means "as likely related as not" with any embedder."""
        return self.relevance if self.relevance is not None else self.similarity

    @model_validator(mode="before")
    @classmethod
    def _similarity_defaults_to_score(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("similarity") is None and "score" in data:
            return {**data, "similarity": data["score"]}
        return data


class MemoryPage(_Model):
    """One page of :meth:`MemoryStore.list`, newest first."""

    items: list[MemoryRecord] = Field(description="Records of this page.")
    next_cursor: str | None = Field(description="Pass to the next call; None on the last page.")


def build_record(tenant: Tenant, new: NewMemory, record_id: str, now: datetime) -> MemoryRecord:
    """The record ``new`` becomes when ``tenant`` stores it at ``now`` (pure)."""
    friend = tenant.friend_id if new.scope is Scope.EVENT else None
    data = new.model_dump(exclude={"occurred_at"})
    return MemoryRecord(
        id=record_id, user_id=tenant.user_id, friend_id=friend, created_at=now,
        updated_at=now, occurred_at=new.occurred_at or now, **data,
    )


def indexed_text(memory: NewMemory | MemoryRecord) -> str:
    """What is embedded and keyword-indexed for ``memory``: its ``context`` (if any) and
    ``text``, one line each."""
    return f"{memory.context}\n{memory.text}" if memory.context else memory.text


def embedded_views(memory: NewMemory | MemoryRecord) -> tuple[str, ...]:
    """The texts whose embeddings, averaged, are ``memory``'s vector: :func:`indexed_text`
    (what led to it, and the memory), then, when it has a ``context_after``, the memory and
    what followed (``text`` + newline + ``context_after``). A turn is then found both by the
    message it answers and by the reply it got; one vector per record either way
    (:func:`gateway.memory.embeddings.base.embed_memories`)."""
    if memory.context_after:
        return indexed_text(memory), f"{memory.text}\n{memory.context_after}"
    return (indexed_text(memory),)


def profile_topic(record: MemoryRecord) -> str:
    """The topic of a profile entry in seed 002's ``recall_memory`` result: ``metadata.topic``
    when set, else the first keyword, else the memory type."""
    topic = record.metadata.get("topic")
    if isinstance(topic, str) and topic:
        return topic
    return record.keywords[0] if record.keywords else record.type.value


def visible_to(record: MemoryRecord, tenant: Tenant) -> bool:
    """Seed 002: profile memories reach every friend of the user; events only their pair."""
    if record.user_id != tenant.user_id:
        return False
    return record.scope is Scope.PROFILE or record.friend_id == tenant.friend_id
