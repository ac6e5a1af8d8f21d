"""What a store was built with, recorded once per key prefix (``<prefix>:meta`` hash).

Vectors from two models (or two sizes, or two backends) cannot be compared, so start-up
compares the recorded settings with the configured ones and refuses to run on a mismatch,
naming the command that fixes it (``memgate memories reembed``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass

import redis.asyncio as aredis

from gateway.memory.keys import KeySpace

__all__ = ['REEMBED_COMMAND', 'StoreMismatch', 'StoreSettings', 'check_settings', 'mismatch_message', 'record_settings']

REEMBED_COMMAND = "memgate memories reembed"


class StoreMismatch(RuntimeError):
    """The store was built with other embedding settings than the configured ones."""


@dataclass(frozen=True, slots=True)
class StoreSettings:
    """Settings that decide what the stored vectors mean."""

    embedding_model: str
    embedding_dims: int
    backend: str
    index_version: str

    @classmethod
    def from_hash(cls, raw: Mapping[bytes, bytes]) -> StoreSettings | None:
        data = {k.decode(): v.decode() for k, v in raw.items()}
        try:
            return cls(data["embedding_model"], int(data["embedding_dims"]), data["backend"], data["index_version"])
        except (KeyError, ValueError):
            return None


def mismatch_message(prefix: str, stored: StoreSettings, wanted: StoreSettings) -> str:
    """Start-up error text: what differs and how to fix it (pure)."""
    diffs = [
        f"{name} {getattr(stored, name)!r} -> {getattr(wanted, name)!r}"
        for name in asdict(wanted)
        if getattr(stored, name) != getattr(wanted, name)
    ]
    return (
        f"memory store '{prefix}' was built with other settings than the config now gives "
        f"({'; '.join(diffs)}). Run `{REEMBED_COMMAND}` to re-embed every memory with the "
        "configured model and rebuild the index, or restore the previous memory.embedding "
        "settings."
    )


async def check_settings(client: aredis.Redis, keys: KeySpace, wanted: StoreSettings) -> None:
    """Record ``wanted`` on first use; afterwards require it unchanged.

    Raises:
        StoreMismatch: the recorded settings differ (message: :func:`mismatch_message`).
    """
    stored = StoreSettings.from_hash(await client.hgetall(keys.meta))
    if stored is None:
        await record_settings(client, keys, wanted)
    elif stored != wanted:
        raise StoreMismatch(mismatch_message(keys.prefix, stored, wanted))


async def record_settings(client: aredis.Redis, keys: KeySpace, settings: StoreSettings) -> None:
    """Overwrite the recorded settings (after a re-embed)."""
    fields = {k: str(v) for k, v in asdict(settings).items()}
    await client.hset(keys.meta, mapping=fields)
