"""Redis key naming: tenancy by key, not by filter string.

Every key of a user lives under ``<prefix>:{<user>}:`` where ``<user>`` is the user id
percent-encoded (:func:`escape_key_part`), inside a Redis Cluster hash tag ``{...}`` so a
cluster shards by user and one transaction or script can touch all of a user's keys. A *partition* is one
user's profile memories, or one (user, friend) pair's event memories:

=========================================  =============================================
``mg:{u}:m:<id>``                           record hash (:mod:`gateway.memory.codec`)
``mg:{u}:vs:profile`` / ``vs:event:<f>``    vector set of a partition (vectorset backend)
``mg:{u}:ix:profile`` / ``ix:event:<f>``    ids of a partition, zset by lex (``list``)
``mg:{u}:kw:profile:<t>`` / ``kw:event:<f>:<t>``  keyword postings of term t (zset)
``mg:{u}:friends``                          set of raw friend ids that have events
``mg:users``                                set of raw user ids (re-embed walks it)
``mg:meta``                                 hash: embedding model, dims, backend
``mg:emb:<model>:<dims>:<sha256>``          cached float32 vector of one text
=========================================  =============================================

Escaped parts contain only ``[A-Za-z0-9_.-%]``: never ``{``, ``}``, ``:``, ``*`` or
``?``, so a partition's keys cannot collide with another's and SCAN patterns built from
them match one user only.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from gateway.memory.records import MemoryRecord, Scope, Tenant

__all__ = ['KeySpace', 'Partition', 'escape_key_part', 'visible_partitions']

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-")
_ALL_SAFE = re.compile(r"[A-Za-z0-9_.\-]*")


def escape_key_part(value: str) -> str:
    """Percent-encode the UTF-8 bytes of ``value`` outside ``[A-Za-z0-9_.-]`` (injective:
    ``%`` itself is encoded). ``"a|b"`` -> ``"a%7Cb"``, ``"猫"`` -> ``"%E7%8C%AB"``.

    Every search builds a few dozen keys, so a value that needs no escaping (the common
    case: ids, English terms) is returned as is after one regex match, and the rest are
    cached (:func:`_escaped`, 4,096 entries)."""
    if _ALL_SAFE.fullmatch(value):
        return value
    return _escaped(value)


@functools.lru_cache(maxsize=4096)
def _escaped(value: str) -> str:
    return "".join(chr(b) if b in _SAFE else f"%{b:02X}" for b in value.encode("utf-8"))


@dataclass(frozen=True, slots=True)
class Partition:
    """One vector set's worth of records: a user's profile (``friend_id=None``) or the
    events of one (user, friend) pair."""

    user_id: str
    friend_id: str | None

    @property
    def scope(self) -> Scope:
        return Scope.PROFILE if self.friend_id is None else Scope.EVENT

    @classmethod
    def of(cls, record: MemoryRecord) -> Partition:
        """The partition ``record`` lives in."""
        return cls(record.user_id, record.friend_id if record.scope is Scope.EVENT else None)


def visible_partitions(tenant: Tenant, scopes: frozenset[Scope] | None = None) -> list[Partition]:
    """Partitions ``tenant`` may read (seed 002), restricted to ``scopes`` when given."""
    wanted = scopes or frozenset(Scope)
    parts = []
    if Scope.PROFILE in wanted:
        parts.append(Partition(tenant.user_id, None))
    if Scope.EVENT in wanted and tenant.friend_id is not None:
        parts.append(Partition(tenant.user_id, tenant.friend_id))
    return parts


@dataclass(frozen=True, slots=True)
class KeySpace:
    """Key names under one ``prefix`` (``memory.key_prefix``)."""

    prefix: str

    def user_base(self, user_id: str) -> str:
        """``<prefix>:{<escaped user>}:``: the start of every key of ``user_id``."""
        return f"{self.prefix}:{{{escape_key_part(user_id)}}}:"

    def record(self, user_id: str, record_id: str) -> str:
        return f"{self.user_base(user_id)}m:{record_id}"

    def _suffix(self, part: Partition) -> str:
        if part.friend_id is None:
            return "profile"
        return f"event:{escape_key_part(part.friend_id)}"

    def vector_set(self, part: Partition) -> str:
        return f"{self.user_base(part.user_id)}vs:{self._suffix(part)}"

    def listing(self, part: Partition) -> str:
        return f"{self.user_base(part.user_id)}ix:{self._suffix(part)}"

    def postings(self, part: Partition, term: str) -> str:
        return f"{self.user_base(part.user_id)}kw:{self._suffix(part)}:{escape_key_part(term)}"

    def partition_tag(self, part: Partition) -> str:
        """Partition name as stored in the record hash (``tp`` field, search backend TAG)."""
        return self._suffix(part)

    def registry(self, user_id: str) -> str:
        """Set of the user's keys not derivable from the partitions (keyword postings), so
        forgetting a user touches only that user's keys, never a keyspace SCAN."""
        return f"{self.user_base(user_id)}keys"

    def friends(self, user_id: str) -> str:
        return f"{self.user_base(user_id)}friends"

    def user_pattern(self, user_id: str) -> str:
        """SCAN MATCH pattern for every key of ``user_id`` (no glob chars inside)."""
        return f"{self.user_base(user_id)}*"

    @property
    def users(self) -> str:
        return f"{self.prefix}:users"

    @property
    def meta(self) -> str:
        return f"{self.prefix}:meta"

    def embedding_cache(self, model: str, dims: int, text_sha256: str) -> str:
        return f"{self.prefix}:emb:{escape_key_part(model)}:{dims}:{text_sha256}"

    @property
    def index_prefix(self) -> str:
        """search backend: FT index prefix covering every user's keys."""
        return f"{self.prefix}:{{"
