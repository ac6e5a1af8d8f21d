"""Lorebooks in Redis, isolated per role and user like memories (:mod:`gateway.memory.keys`).

=====================================================  ===================================
``<p>:lore:{f:<friend>}:books`` / ``:ver``             role-wide books (every user of the
                                                       role), hash ``id -> JSON``; version
``<p>:{<user>}:lore:<friend>:books`` / ``:ver``        one user's books for the role
``<p>:{<user>}:lore:<friend>:conv:<conversation>``     timed effects of one conversation,
                                                       hash ``entry id -> "ss,se,cs,ce,p"`` (TimedState)
=====================================================  ===================================

Ids are escaped with :func:`gateway.memory.keys.escape_key_part` (no ``{``, ``}``, ``:``,
``*`` or ``?`` in a part), so one tenant's keys cannot collide with another's; per-user
keys sit in the user's hash tag, so erasing the user's keys erases them. Every write
increments the scope's version, which readers use to cache compiled books.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from gateway.lorebook.model import Lorebook, LoreEntry
from gateway.memory.keys import escape_key_part

if TYPE_CHECKING:
    import redis.asyncio as aioredis

__all__ = ["CONVERSATION_TTL_S", "LorebookRepository", "TimedState"]

#: Timed-effect state of a conversation expires after a week without a request.
CONVERSATION_TTL_S = 7 * 24 * 3600

#: ``entry id -> (sticky start, sticky end, cooldown start, cooldown end, protected)``,
#: in chat-message counts, as the trigger engine keeps them (SDK ``Lorebooks.timed_state``).
TimedState = dict[str, tuple[int, int, int, int, int]]


class LorebookRepository:
    """Reads and writes lorebooks of ``(friend_id, user_id | None)`` scopes."""

    def __init__(self, redis: aioredis.Redis, prefix: str) -> None:
        self.redis = redis
        self.prefix = prefix

    def scope_key(self, friend_id: str, user_id: str | None) -> str:
        """The key stem of a scope (module docstring)."""
        friend = escape_key_part(friend_id)
        if user_id is None:
            return f"{self.prefix}:lore:{{f:{friend}}}"
        return f"{self.prefix}:{{{escape_key_part(user_id)}}}:lore:{friend}"

    async def put(self, book: Lorebook) -> None:
        """Create or replace ``book`` (by id, in its scope)."""
        stem = self.scope_key(book.friend_id, book.user_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hset(f"{stem}:books", book.id, book.model_dump_json(by_alias=True))
            pipe.incr(f"{stem}:ver")
            await pipe.execute()

    async def get(self, friend_id: str, user_id: str | None, book_id: str) -> Lorebook | None:
        raw = await self.redis.hget(f"{self.scope_key(friend_id, user_id)}:books", book_id)
        return None if raw is None else Lorebook.model_validate_json(raw)

    async def delete(self, friend_id: str, user_id: str | None, book_id: str) -> bool:
        stem = self.scope_key(friend_id, user_id)
        async with self.redis.pipeline(transaction=True) as pipe:
            pipe.hdel(f"{stem}:books", book_id)
            pipe.incr(f"{stem}:ver")
            removed, _ = await pipe.execute()
        return bool(removed)

    async def in_scope(self, friend_id: str, user_id: str | None) -> list[Lorebook]:
        """The books of one scope only (role-wide when ``user_id`` is None), by id."""
        mapping = await self.redis.hgetall(f"{self.scope_key(friend_id, user_id)}:books")
        return [Lorebook.model_validate_json(raw) for _, raw in sorted(mapping.items())]

    async def put_entry(
        self, friend_id: str, user_id: str | None, book_id: str, entry: LoreEntry,
        check: Callable[[Lorebook], None] | None = None,
    ) -> Lorebook | None:
        """Create or replace ``entry`` (by id) in a book; None when the book does not exist.
        ``check`` sees the changed book before it is written (it raises to refuse it).
        Read-modify-write: two concurrent edits of one book resolve last-writer-wins."""
        book = await self.get(friend_id, user_id, book_id)
        if book is None:
            return None
        others = tuple(e for e in book.entries if e.id != entry.id)
        replaced = len(others) < len(book.entries)
        entries = tuple(entry if e.id == entry.id else e for e in book.entries) if replaced else (*others, entry)
        updated = book.model_copy(update={"entries": entries})
        if check is not None:
            check(updated)
        await self.put(updated)
        return updated

    async def delete_entry(self, friend_id: str, user_id: str | None, book_id: str, entry_id: str) -> bool:
        """Remove entry ``entry_id`` from a book; False when the book or entry does not exist."""
        book = await self.get(friend_id, user_id, book_id)
        if book is None or all(e.id != entry_id for e in book.entries):
            return False
        await self.put(book.model_copy(update={"entries": tuple(e for e in book.entries if e.id != entry_id)}))
        return True

    async def versions(self, friend_id: str, user_id: str | None) -> tuple[int, int]:
        """``(role-wide version, user version)``: one round trip; 0 when never written."""
        async with self.redis.pipeline(transaction=False) as pipe:
            pipe.get(f"{self.scope_key(friend_id, None)}:ver")
            pipe.get(f"{self.scope_key(friend_id, user_id)}:ver" if user_id else f"{self.prefix}:lore:none")
            role, user = await pipe.execute()
        return int(role or 0), int(user or 0)

    async def books(self, friend_id: str, user_id: str | None) -> list[Lorebook]:
        """Every book the caller sees: the role's, then the user's (if ``user_id``)."""
        scopes = [self.scope_key(friend_id, None)] + ([self.scope_key(friend_id, user_id)] if user_id else [])
        async with self.redis.pipeline(transaction=False) as pipe:
            for stem in scopes:
                pipe.hgetall(f"{stem}:books")
            found = await pipe.execute()
        out: list[Lorebook] = []
        for mapping in found:
            out.extend(Lorebook.model_validate_json(raw) for _, raw in sorted(mapping.items()))
        return out

    async def forget_user(self, user_id: str) -> int:
        """Delete every per-user key of ``user_id`` (their books, versions and conversation
        timers, all under ``<prefix>:{user}:lore:``); role-wide books stay. SCAN with a
        pattern inside the user's hash tag (one slot on a cluster). Returns keys deleted."""
        pattern = f"{self.prefix}:{{{escape_key_part(user_id)}}}:lore:*"
        deleted = 0
        batch: list[str] = []
        async for key in self.redis.scan_iter(match=pattern, count=500):
            batch.append(key)
            if len(batch) == 500:
                deleted += await self.redis.unlink(*batch)
                batch = []
        if batch:
            deleted += await self.redis.unlink(*batch)
        return deleted

    def _conversation_key(self, friend_id: str, user_id: str, conversation: str) -> str:
        return f"{self.scope_key(friend_id, user_id)}:conv:{escape_key_part(conversation)}"

    async def timed_state(self, friend_id: str, user_id: str, conversation: str) -> TimedState:
        """The timed effects of one conversation (empty when none)."""
        raw = await self.redis.hgetall(self._conversation_key(friend_id, user_id, conversation))
        state: TimedState = {}
        for key, value in raw.items():
            parts = (value.decode() if isinstance(value, bytes) else value).split(",")
            if len(parts) != 5:  # the two-field format of earlier versions: not comparable
                continue
            name = key.decode() if isinstance(key, bytes) else key
            ss, se, cs, ce, protected = (int(p or 0) for p in parts)
            state[name] = (ss, se, cs, ce, protected)
        return state

    async def save_timed_state(
        self, friend_id: str, user_id: str, conversation: str, changed: Mapping[str, tuple[int, int, int, int, int]],
        expired: Iterable[str] = (),
    ) -> None:
        """Write ``changed`` entries, drop ``expired`` ones, refresh the TTL."""
        key = self._conversation_key(friend_id, user_id, conversation)
        async with self.redis.pipeline(transaction=True) as pipe:
            gone = list(expired)
            if gone:
                pipe.hdel(key, *gone)
            if changed:
                pipe.hset(key, mapping={k: ",".join(map(str, v)) for k, v in changed.items()})
            pipe.expire(key, CONVERSATION_TTL_S)
            await pipe.execute()

