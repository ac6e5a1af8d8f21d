"""The store's Redis boundary (gateway/memory/redis_errors.py): redis-py failing on a
connection torn down under a command (its cluster client lets an ``AttributeError`` from its
own connection code through while a node dies) is the store being unavailable (503, fail-open),
like a lost connection; an ``AttributeError`` of anything else is a bug and passes through."""

from __future__ import annotations

import pytest
from redis.asyncio.connection import Connection

from gateway.memory.redis_errors import redis_boundary, torn_down
from gateway.runtime.errors import MemoryUnavailable


async def _send_on_a_torn_down_connection() -> None:
    connection = Connection(host="127.0.0.1", port=1)
    connection._writer = None  # what a concurrent disconnect leaves behind
    await connection._send_packed_command([b"*1\r\n$4\r\nPING\r\n"])


async def test_a_connection_torn_down_under_a_command_is_unavailable() -> None:
    with pytest.raises(AttributeError) as raised:
        await _send_on_a_torn_down_connection()
    assert torn_down(raised.value)  # the real redis-py failure, raised in its connection module
    with pytest.raises(MemoryUnavailable, match="torn down"):
        with redis_boundary():
            await _send_on_a_torn_down_connection()


def test_an_attribute_error_of_our_own_passes_through() -> None:
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        with redis_boundary():
            object().nope  # type: ignore[attr-defined]  # noqa: B018
    assert not torn_down(ValueError("x"))
