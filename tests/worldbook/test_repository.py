"""Lorebook storage: one role's books never show for another role, one user's never for
another user; role-wide books show for every user of the role (issue 12, item 1)."""

import uuid

import pytest
import redis.asyncio as aioredis
from pydantic import ValidationError

from gateway.lorebook.model import Lorebook, LoreEntry
from gateway.lorebook.repository import LorebookRepository


@pytest.fixture
async def repo(redis_url):
    client = aioredis.Redis.from_url(redis_url)
    yield LorebookRepository(client, "t" + uuid.uuid4().hex[:10])
    await client.aclose()


def book(id_, friend, user=None, *contents):
    entries = tuple(LoreEntry(id=f"{id_}-{i}", content=c, keywords=("k",)) for i, c in enumerate(contents))
    return Lorebook(id=id_, friend_id=friend, user_id=user, entries=entries)


async def test_books_are_isolated_per_role_and_user(repo):
    await repo.put(book("world", "luna", None, "role-wide"))
    await repo.put(book("mine", "luna", "alice", "alice only"))
    await repo.put(book("other", "sol", None, "other role"))
    await repo.put(book("odd", "luna:x", "ali{ce}", "escaped ids"))
    seen = {b.id for b in await repo.books("luna", "alice")}
    assert seen == {"world", "mine"}
    assert {b.id for b in await repo.books("luna", "bob")} == {"world"}
    assert {b.id for b in await repo.books("sol", "alice")} == {"other"}
    assert {b.id for b in await repo.books("luna:x", "ali{ce}")} == {"odd"}
    assert await repo.get("luna", "bob", "mine") is None
    assert (await repo.get("luna", "alice", "mine")).entries[0].content == "alice only"


async def test_every_write_bumps_the_scope_version(repo):
    assert await repo.versions("luna", "alice") == (0, 0)
    await repo.put(book("world", "luna", None, "a"))
    await repo.put(book("mine", "luna", "alice", "b"))
    assert await repo.versions("luna", "alice") == (1, 1)
    assert await repo.delete("luna", None, "world")
    assert await repo.versions("luna", "alice") == (2, 1)


async def test_timed_state_round_trips_and_expires_entries(repo):
    await repo.save_timed_state("luna", "alice", "c1", {"e1": (3, 5, 5, 9, 1), "e2": (0, 0, 2, 4, 0)})
    assert await repo.timed_state("luna", "alice", "c1") == {"e1": (3, 5, 5, 9, 1), "e2": (0, 0, 2, 4, 0)}
    await repo.save_timed_state("luna", "alice", "c1", {}, expired=["e2"])
    assert await repo.timed_state("luna", "alice", "c1") == {"e1": (3, 5, 5, 9, 1)}
    assert await repo.timed_state("luna", "alice", "c2") == {}


def test_entry_fields_use_seed_001_names_and_reject_bad_keys():
    entry = LoreEntry.model_validate({
        "id": "e", "content": "c", "keywords": ["猫"], "triggerType": "emotional", "isConstant": True,
        "relevanceWeight": 0.5, "emotionalContext": ["joy"], "secondaryKeys": ["/a+b/i"],
        "selectiveLogic": "not_all", "sticky": 2, "position": "depth", "depth": 1, "role": "user",
    })
    assert entry.is_constant and entry.trigger_type == "emotional" and entry.role == "user"
    assert LoreEntry(id="e", content="c", keywords=("/a(/",)).keywords == ("/a(/",)  # kept, as a plain key
    with pytest.raises(ValidationError, match=r"dates\.0\n  String should match pattern"):
        LoreEntry(id="e", content="c", dates=("tomorrow",))
