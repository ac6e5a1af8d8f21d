"""Who created each stored response: tenancy of the ``/v1/responses`` routes.

Every memgate key calls the upstream with the operator's one upstream key, so the
upstream cannot tell tenants apart: a response id is readable, cancellable, deletable and
continuable (``previous_response_id``) by anyone holding it. The gateway therefore records
the tenant, ``(user_id, friend_id)`` of the principal the create ran as (a service key's
named end user included), of every response id a create returned, and lets only that
tenant use the id afterwards; any other key gets the upstream's own not-found answer
(:class:`ResponseNotFound`, :class:`PreviousResponseNotFound`), so an id's existence
is not revealed either. An id the gateway never recorded (created before this record
existed, directly at the upstream, or expired) is not found for everyone but admin keys.
Admin keys (which may already act on any user) pass every check.

Storage: ``<p>:responses:owner:<id>`` (``<p>`` the memory key prefix) holds
``{"user", "friend", "from"}`` as JSON (``from``: the ``previous_response_id`` the
response continued, or null), written before the client sees the id and expiring after
``upstream.responses_retention_s`` (the upstream's own retention of stored responses;
OpenAI keeps them 30 days). Deleting a response through the gateway deletes its record.

Ids are checked with :data:`RESPONSE_ID` (letters, digits and ``_ - . = +``, not
starting with ``.``, at most 512 characters: OpenAI's ``resp_<hex>`` and the base64 ids
of some compatible servers): a segment such as ``..`` or one with a ``/`` (``%2F``) never
names a response, and the route percent-encodes the id it sends, so no upstream path
built from an id can climb out of ``/responses/``.

Two more ways to reach a stored response's content by id, with the same rule:

- **Conversations** (``conversation: "conv_..."`` or ``{"id": "conv_..."}`` on create,
  OpenAI's Conversations API). The gateway does not proxy ``/v1/conversations``, so
  tenants cannot create one through it; whoever first uses a conversation id in a create
  claims it (:meth:`ResponseOwners.claim_conversation`: ``SET NX`` of
  ``<p>:responses:conv:<id>``, made before the upstream is called, so of two racing
  tenants exactly one wins; a claim stays even if the upstream then refuses the create),
  and any other tenant's create naming it gets a 404 in the upstream's style
  (:class:`ConversationNotFound`) without an upstream call. The API keeps conversations
  without the 30-day limit of responses, so a claim expires
  ``upstream.conversation_claims_ttl_s`` after its owner's **last** use (each create by
  the owner restarts it; another tenant's refused try does not); past it the id is
  unclaimed and the next tenant to use it claims it. Admin keys pass and claim nothing.
- **Stored items** named in ``input`` (OpenAI API reference, input items): an
  ``item_reference`` (``{"type": "item_reference", "id"}``, or ``{"id"}`` without
  ``type``), and equally **any input item carrying an ``id``**, which the upstream resolves
  to the stored item (a replayed ``reasoning`` item ``rs_...`` with ``store: true``, an
  output ``message`` ``msg_...``, a ``function_call`` ``fc_...``, ...), and the
  ``approval_request_id`` of an ``mcp_approval_response`` (or replayed ``mcp_call``),
  which names another response's ``mcp_approval_request`` item. Items belong to responses:
  with each response id the gateway hands out it records, under the same tenant and TTL,
  the ids of the response's output items (non-stream: the reply's ``output``; stream:
  every ``response.output_item.added`` / ``.done`` item, before that event is written),
  and the ids of the input items the upstream lists to the response's owner
  (``GET .../input_items``), in ``<p>:responses:item:<id>`` (``SET NX``: an item's first
  owner stays its owner). An input naming an item not recorded for the caller is refused
  with :class:`ItemNotFound` (404, ``param: input[i].id`` or
  ``input[i].approval_request_id``) before the upstream is called: refused, not stripped,
  since an item without its id changes meaning (a reasoning item without
  ``encrypted_content`` is nothing but its id), and the 404 is the upstream's own answer
  for an unknown item. An item id the client made up is refused the same way. Admin keys
  pass. ``call_id`` values (function call outputs) are not item ids: the upstream matches
  them within the request's own context (its input, or a ``previous_response_id`` that is
  checked), so they are not looked up.

Upstream resources named by id (:func:`~.responses_wire.referenced_resources`):
containers (``tools[i].container``, a shell tool's ``environment.container_id``, a
replayed call's ``container_id``), vector stores (``tools[i].vector_store_ids``), stored
prompts (``prompt.id``) and files (the ``file_id`` of an ``input_file`` / ``input_image``
content part, of a prompt variable, of an image-generation mask, a container's
``file_ids``). The shared upstream key reaches every one of them, so a create may name
only (:meth:`ResponseOwners.unshared_resource`) the ids the operator lists in
``upstream.responses_shared_ids`` (its own resources, made at the upstream; a key's own
``responses_shared_ids`` add to the list for that key) and the
containers the gateway saw created for the caller: the ``container_id`` of a
``code_interpreter_call`` (or a ``shell_call``'s ``environment.container_id``) among the
output items it records (non-stream, stream, ``GET`` / ``cancel``, and the hidden rounds
of the gateway's own tool loop; not the input items
listed, which echo what a client sent), recorded as ``<p>:responses:container:<id>``
with the items (same tenant, ``SET NX``, TTL, index). The gateway does not proxy
``/v1/files``, ``/v1/vector_stores`` or prompts, so such ids are never a tenant's own: an
unlisted one is refused for every key but admin keys. The refusal
(:class:`ResourceNotFound`: 404, ``param`` the field, e.g. ``tools[0].vector_store_ids[1]``,
made before the upstream is called) reads the same whether the id exists, is another
tenant's or was made up.

Forgetting a user (:meth:`ResponseOwners.forget_user`, run with the plugins' forget hooks
by :func:`gateway.chain.forget.forget_user`): every record written for a user (any friend) is
also listed in the user's index ``<p>:responses:user:<escaped user id>``, a sorted set of
record keys scored by the epoch millisecond each expires at, written **before** the
record (so a record that exists is always listed; expired entries are trimmed on each
write, and the index expires with the longest TTL). A forget deletes each listed record
whose value still names the user (a Lua check-and-delete per key, so another tenant's
later claim of the same id stays), then the entries it handled, a batch at a time: an
interrupted forget leaves what a retry finishes, and nothing of another user is touched.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

from redis.exceptions import RedisError

from gateway.memory.keys import escape_key_part
from gateway.memory.scripts import Script, execute
from gateway.runtime.errors import MemoryUnavailable, NotFound
from gateway.runtime.principal import Principal

if TYPE_CHECKING:
    import redis.asyncio as aioredis

__all__ = ["RESPONSE_ID", "ConversationNotFound", "ItemNotFound", "PreviousResponseNotFound", "ResourceNotFound",
           "ResponseNotFound", "ResponseOwners", "conversation_of"]

log = logging.getLogger("memgate.proxy")

#: What a response id in a path may be (module docstring).
RESPONSE_ID = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.=+-]{0,511}")


def _shown(response_id: str) -> str:
    return response_id if len(response_id) <= 80 else response_id[:80] + "..."


class ResponseNotFound(NotFound):
    """The upstream's answer for an unknown stored response (404,
    ``invalid_request_error``, no code), also given for another tenant's id."""

    code = None  # type: ignore[assignment]  # the upstream sends no code

    def __init__(self, response_id: str) -> None:
        super().__init__(f"Response with id '{_shown(response_id)}' not found.")


class PreviousResponseNotFound(NotFound):
    """The upstream's answer for an unknown ``previous_response_id`` on create (404,
    ``param: previous_response_id``, ``code: previous_response_not_found``)."""

    code = "previous_response_not_found"

    def __init__(self, response_id: str) -> None:
        super().__init__(f"Previous response with id '{_shown(response_id)}' not found.",
                         param="previous_response_id")


class ConversationNotFound(NotFound):
    """The upstream's answer for an unknown ``conversation`` on create (404,
    ``param: conversation``, no code), also given for another tenant's conversation."""

    code = None  # type: ignore[assignment]

    def __init__(self, conversation_id: str) -> None:
        super().__init__(f"Conversation with id '{_shown(conversation_id)}' not found.", param="conversation")


class ItemNotFound(NotFound):
    """An ``item_reference`` to an item that is not the caller's (404, ``param:
    input[i].id``, no code), worded as the upstream's answer for an unknown item."""

    code = None  # type: ignore[assignment]

    def __init__(self, item_id: str, param: str) -> None:
        super().__init__(f"Item with id '{_shown(item_id)}' not found.", param=param)


class ResourceNotFound(NotFound):
    """A container, vector store, prompt or file id a create may not name (404, ``param``
    the field, no code): the same answer whether the id exists or not (module docstring)."""

    code = None  # type: ignore[assignment]

    def __init__(self, noun: str, resource_id: str, param: str) -> None:
        super().__init__(f"{noun} with id '{_shown(resource_id)}' not found. A key may name only the "
                         "containers its own responses created and the ids the gateway's operator shares "
                         "(upstream.responses_shared_ids).", param=param)


def conversation_of(body: dict[str, Any]) -> str | None:
    """The conversation id a create names (``conversation`` as a string or ``{"id"}``),
    or None (types are checked before, by ``check_request``)."""
    conversation = body.get("conversation")
    value = conversation.get("id") if isinstance(conversation, dict) else conversation
    return value if isinstance(value, str) else None


#: Deletes KEYS[1] when its JSON value names ARGV[1] as ``user`` (a record another tenant
#: claimed after this user's expired stays). Reply: keys deleted (0 or 1).
FORGET_RECORD = Script("responses_forget_record", """
local raw = redis.call('GET', KEYS[1])
if not raw then return 0 end
local ok, owner = pcall(cjson.decode, raw)
if ok and type(owner) == 'table' and owner['user'] == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
""")

#: Index entries a forget handles per round trip.
FORGET_BATCH = 500


class ResponseOwners:
    """The records of the module docstring in Redis; also the hook that forgets a user's
    records (:class:`gateway.chain.sdk.Forgetter`, run by :func:`gateway.chain.forget.forget_user`).

    Args:
        redis: the gateway's Redis client.
        prefix: the memory key prefix.
        ttl_s: seconds a response or item record lives (the upstream's retention).
        conversation_ttl_s: seconds a conversation claim lives after its last use.
    """

    name: ClassVar[str] = "responses"

    def __init__(self, redis: aioredis.Redis, prefix: str, ttl_s: float, conversation_ttl_s: float | None = None) -> None:
        self._redis = redis
        self._prefix = prefix
        self._ttl_ms = max(1, int(ttl_s * 1000))
        self._conv_ttl_ms = max(1, int((ttl_s if conversation_ttl_s is None else conversation_ttl_s) * 1000))

    def key(self, response_id: str) -> str:
        return f"{self._prefix}:responses:owner:{response_id}"

    def conversation_key(self, conversation_id: str) -> str:
        return f"{self._prefix}:responses:conv:{conversation_id}"

    def item_key(self, item_id: str) -> str:
        return f"{self._prefix}:responses:item:{item_id}"

    def container_key(self, container_id: str) -> str:
        return f"{self._prefix}:responses:container:{container_id}"

    def user_key(self, user_id: str) -> str:
        """The user's index: a sorted set of the record keys written for the user (any
        friend), scored by the epoch millisecond each expires at."""
        return f"{self._prefix}:responses:user:{escape_key_part(user_id)}"

    @staticmethod
    def _tenant(principal: Principal) -> str:
        return json.dumps({"user": principal.user_id, "friend": principal.friend_id}, ensure_ascii=False)

    @staticmethod
    def _is(raw: Any, principal: Principal) -> bool:
        """True when the stored JSON ``raw`` names ``principal``'s tenant."""
        if raw is None:
            return False
        try:
            owner = json.loads(raw)
        except ValueError:
            return False
        return isinstance(owner, dict) and owner.get("user") == principal.user_id \
            and owner.get("friend") == principal.friend_id

    async def _index(self, principal: Principal, keys: list[str], ttl_ms: int) -> None:
        """Add ``keys`` (expiring in ``ttl_ms``) to the index of ``principal``'s user, drop
        the entries already expired, and keep the index for the longest TTL. Called
        before the records are written, so a forget never misses a record that exists.

        Raises:
            RedisError: Redis failed (the caller maps it).
        """
        now = int(time.time() * 1000)
        index = self.user_key(principal.user_id)
        async with self._redis.pipeline(transaction=False) as pipe:  # one key: one slot
            pipe.zadd(index, dict.fromkeys(keys, now + ttl_ms))
            pipe.zremrangebyscore(index, "-inf", now)
            pipe.pexpire(index, max(self._ttl_ms, self._conv_ttl_ms))
            await pipe.execute()

    async def claim_conversation(self, conversation_id: str, principal: Principal) -> bool:
        """True when ``principal`` may use ``conversation_id``: an admin key, the tenant
        recorded for it (whose use restarts the claim's TTL), or the first tenant to use
        it (recorded now, for the conversation TTL).

        Raises:
            MemoryUnavailable: Redis failed (503: the check fails closed).
        """
        if principal.admin:
            return True
        if RESPONSE_ID.fullmatch(conversation_id) is None:
            return False
        key = self.conversation_key(conversation_id)
        try:
            await self._index(principal, [key], self._conv_ttl_ms)
            raw: Any = await self._redis.set(key, self._tenant(principal), nx=True, px=self._conv_ttl_ms, get=True)
            if raw is None:  # claimed now
                return True
            if not self._is(raw, principal):
                return False
            await self._redis.pexpire(key, self._conv_ttl_ms)
        except RedisError as exc:
            raise MemoryUnavailable(f"conversation owner record: {exc!r}") from None
        return True

    async def record_items(self, item_ids: list[str], principal: Principal, container_ids: Sequence[str] = ()) -> None:
        """Record ``principal``'s tenant as the owner of each item id and container id
        (``SET NX``: an item or container keeps its first owner), expiring with the
        responses' records.

        Raises:
            MemoryUnavailable: Redis failed (503).
        """
        keys = [self.item_key(i) for i in item_ids if RESPONSE_ID.fullmatch(i)] \
            + [self.container_key(c) for c in container_ids if RESPONSE_ID.fullmatch(c)]
        if not keys:
            return
        value = self._tenant(principal)
        try:
            await self._index(principal, keys, self._ttl_ms)
            async with self._redis.pipeline(transaction=False) as pipe:
                for key in keys:
                    pipe.set(key, value, px=self._ttl_ms, nx=True)
                await pipe.execute()
        except RedisError as exc:
            raise MemoryUnavailable(f"response item record: {exc!r}") from None

    async def unowned_item(self, item_ids: list[tuple[str, str]], principal: Principal) -> tuple[str, str] | None:
        """The first ``(id, param)`` of ``item_ids`` not recorded for ``principal``'s
        tenant, or None (always None for an admin key). One pipelined round trip.

        Raises:
            MemoryUnavailable: Redis failed (503: the check fails closed).
        """
        if principal.admin or not item_ids:
            return None
        for item_id, param in item_ids:
            if RESPONSE_ID.fullmatch(item_id) is None:
                return item_id, param
        try:
            async with self._redis.pipeline(transaction=False) as pipe:  # keys in any slot (cluster)
                for item_id, _ in item_ids:
                    pipe.get(self.item_key(item_id))
                raws: list[Any] = await pipe.execute()
        except RedisError as exc:
            raise MemoryUnavailable(f"response item lookup: {exc!r}") from None
        for (item_id, param), raw in zip(item_ids, raws, strict=True):
            if not self._is(raw, principal):
                return item_id, param
        return None

    async def unshared_resource(self, refs: list[tuple[str, str, str]], principal: Principal,
                                shared: Mapping[str, Collection[str]]) -> tuple[str, str, str] | None:
        """The first ``(kind, id, param)`` of ``refs``
        (:func:`~.responses_wire.referenced_resources`) that ``principal`` may not name:
        not in ``shared[kind]`` and, for a container, not recorded for its tenant; or
        None (always None for an admin key). At most one pipelined round trip.

        Raises:
            MemoryUnavailable: Redis failed (503: the check fails closed).
        """
        if principal.admin:
            return None
        pending = [ref for ref in refs if ref[1] not in shared.get(ref[0], ())]
        lookups = [ref[1] for ref in pending if ref[0] == "containers" and RESPONSE_ID.fullmatch(ref[1])]
        raws: list[Any] = []
        if lookups:
            try:
                async with self._redis.pipeline(transaction=False) as pipe:  # keys in any slot (cluster)
                    for container_id in lookups:
                        pipe.get(self.container_key(container_id))
                    raws = await pipe.execute()
            except RedisError as exc:
                raise MemoryUnavailable(f"container owner lookup: {exc!r}") from None
        owned = {c for c, raw in zip(lookups, raws, strict=True) if self._is(raw, principal)}
        for ref in pending:
            if ref[0] != "containers" or ref[1] not in owned:
                return ref
        return None

    async def owner_of(self, response_id: str) -> Principal | None:
        """The tenant recorded for ``response_id`` as a bare principal (user and friend
        only), or None (no record, or Redis failed: logged)."""
        try:
            raw: Any = await self._redis.get(self.key(response_id))
            owner = json.loads(raw) if raw is not None else None
        except (RedisError, ValueError) as exc:
            log.warning("response owner of %s not read: %r", response_id, exc)
            return None
        if not isinstance(owner, dict) or not isinstance(owner.get("user"), str) \
                or not isinstance(owner.get("friend"), str):
            return None
        return Principal(key_id="", user_id=owner["user"], friend_id=owner["friend"])

    async def record(self, response_id: str, principal: Principal, continued: str | None) -> None:
        """Record ``principal``'s tenant as the creator of ``response_id``.

        Raises:
            MemoryUnavailable: Redis failed (503).
        """
        value = json.dumps({"user": principal.user_id, "friend": principal.friend_id, "from": continued},
                           ensure_ascii=False)
        try:
            await self._index(principal, [self.key(response_id)], self._ttl_ms)
            await self._redis.set(self.key(response_id), value, px=self._ttl_ms)
        except RedisError as exc:
            raise MemoryUnavailable(f"response owner record: {exc!r}") from None

    async def owns(self, response_id: str, principal: Principal) -> bool:
        """True when ``principal`` may use ``response_id``: an admin key, or the tenant
        recorded for it.

        Raises:
            MemoryUnavailable: Redis failed (503: the check fails closed).
        """
        if principal.admin:
            return True
        if RESPONSE_ID.fullmatch(response_id) is None:
            return False
        try:
            raw: Any = await self._redis.get(self.key(response_id))
        except RedisError as exc:
            raise MemoryUnavailable(f"response owner lookup: {exc!r}") from None
        return self._is(raw, principal)

    async def forget(self, response_id: str) -> None:
        """Drop the record of a deleted response (a failure only leaves it to expire)."""
        try:
            await self._redis.delete(self.key(response_id))
        except RedisError as exc:
            log.warning("response owner record of %s not deleted: %r", response_id, exc)

    async def forget_user(self, user_id: str) -> None:
        """Delete every record of ``user_id`` (all friends: responses, conversation
        claims, items, containers) and the user's index; records another user holds stay (each key
        is deleted only while its value names ``user_id``). Index entries are removed
        after their records, :data:`FORGET_BATCH` at a time, so an interrupted forget
        leaves what a second one finishes, and records written meanwhile are forgotten
        too. Cost: linear in the user's entries.

        Raises:
            MemoryUnavailable: Redis failed (503).
        """
        index = self.user_key(user_id)
        try:
            while True:
                raw: list[Any] = await self._redis.zrange(index, 0, FORGET_BATCH - 1)
                if not raw:
                    return
                keys = [k.decode() if isinstance(k, bytes) else str(k) for k in raw]

                def build(pipe: Any, keys: list[str] = keys) -> None:
                    for key in keys:  # each record its own slot: one script call per key
                        FORGET_RECORD.queue(pipe, [key], [user_id])
                await execute(self._redis, build)
                await self._redis.zrem(index, *raw)
        except RedisError as exc:
            raise MemoryUnavailable(f"forgetting the responses records of a user: {exc!r}") from None
