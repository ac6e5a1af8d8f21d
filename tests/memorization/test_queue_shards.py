"""The sharded job queue (issue 15 item 1): users map to shards for good, workers read
every shard fairly, each shard keeps retry and dead letters of its own, and the
two-step enqueue (claim on the user's slot, XADD on the shard's) never loses a turn to a
failed XADD. Every test runs on one node and on the local Redis Cluster."""

from __future__ import annotations

import json
import time
import uuid
from datetime import UTC, datetime
from typing import Any

import pytest
import redis
import redis.asyncio as aredis

from gateway.memorization.jobs import Job, Turn
from gateway.memorization.keys import QueueKeys
from gateway.memorization.queue import CLAIM_SCRIPT, ClaimedNotQueued, parse_ref
from gateway.memorization.runtime import queue_for
from gateway.memorization.service import Memorization, _Pending
from gateway.memory.factory import is_cluster
from gateway.memory.records import Tenant
from gateway.memory.scripts import run as run_script
from tests.memorization.conftest import memorize_config

REDIS_MODES = ["single", "cluster"]  # every test once on one node, once on the local cluster


def job(user_id: str, text: str) -> Job:
    now = datetime.now(UTC)
    turn = Turn(role="user", text=text, hash=uuid.uuid4().hex, at=now, index=0)
    return Job(job_id=uuid.uuid4().hex, user_id=user_id, friend_id="tutor", enqueued_at=now, turns=(turn,))


def users_by_shard(keys: QueueKeys, per_shard: int) -> dict[int, list[str]]:
    """``per_shard`` user ids for every shard of ``keys``."""
    found: dict[int, list[str]] = {s: [] for s in range(keys.shards)}
    i = 0
    while min(len(v) for v in found.values()) < per_shard:
        user = f"user-{i}"
        if len(found[keys.shard_of(user)]) < per_shard:
            found[keys.shard_of(user)].append(user)
        i += 1
    return found


def test_a_user_always_maps_to_one_shard_and_users_spread_over_all_shards():
    keys = QueueKeys("mgq", 4)
    users = [f"u{i}" for i in range(400)] + ["猫", "a|b", "{x}"]
    assert [keys.shard_of(u) for u in users] == [QueueKeys("mgq", 4).shard_of(u) for u in users]
    counts = [sum(1 for u in users if keys.shard_of(u) == s) for s in range(4)]
    assert all(c > 60 for c in counts), counts
    assert QueueKeys("mgq", 1).shard_of("anyone") == 0


def test_shard_keys_have_one_hash_tag_each_spread_over_the_slot_range():
    from redis.crc import key_slot

    keys = QueueKeys("mgq", 3)
    slots = [key_slot(keys.stream(s).encode()) for s in range(3)]
    assert [key_slot(keys.retry(s).encode()) for s in range(3)] == slots == [key_slot(keys.dead(s).encode()) for s in range(3)]
    assert [slot * 3 // 16384 for slot in slots] == [0, 1, 2]  # one per third of the slots: one per primary of 3
    assert not keys.stream(0).startswith(keys.user_base("mgq#0.0"))  # a user named like a tag is escaped


async def test_workers_drain_every_shard_and_each_user_stays_on_its_shard(env):
    config = memorize_config("verbatim", queue={"shards": 3})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    users = [u for group in users_by_shard(queue.keys, 2).values() for u in group]
    for user in users:
        for n in range(2):
            await queue.push(job(user, f"{user} plays instrument number {n}"))
    for shard in range(3):
        entries: Any = await env.redis.xrange(queue.keys.stream(shard))
        owners = {Job.model_validate_json(f[b"j"]).user_id for _i, f in entries}
        assert owners == {u for u in users if queue.keys.shard_of(u) == shard} and len(entries) == 4
    await env.drain(config, store, n=2)
    for user in users:
        texts = sorted(r.text for r in (await store.list(Tenant(user, "tutor"))).items)
        assert texts == [f"{user} plays instrument number 0", f"{user} plays instrument number 1"]
    assert await queue.stats() == type(await queue.stats())(0, 0, 0, 0, 0.0)


async def test_a_read_takes_from_every_shard_so_a_busy_shard_starves_none(env):
    config = memorize_config("verbatim", queue={"shards": 3})
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    by_shard = users_by_shard(queue.keys, 1)
    busy, quiet = by_shard[0][0], by_shard[2][0]
    for n in range(40):
        await queue.push(job(busy, f"busy {n}"))
    await queue.push(job(quiet, "quiet one"))
    seen: set[int] = set()
    for _ in range(3):  # every read starts one shard further: shard 2 is reached within 3 reads of 10
        seen |= {parse_ref(ref)[0] for ref, _f in await queue.read("w", 10, None)}
    assert 2 in seen


async def test_retries_and_dead_letters_stay_on_their_shard_and_list_across_shards(env):
    config = memorize_config("verbatim", queue={"shards": 3})
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    by_shard = users_by_shard(queue.keys, 1)
    for shard in (1, 2):
        await queue.push(job(by_shard[shard][0], f"fails on shard {shard}"))
    taken = await queue.read("w", 10, None)
    assert sorted(parse_ref(ref)[0] for ref, _f in taken) == [1, 2]
    (ref1, fields1), (ref2, _fields2) = sorted(taken, key=lambda e: parse_ref(e[0])[0])
    await queue.retry(ref1, Job.model_validate_json(fields1[b"j"]), not_before_ms=0)
    await queue.dead_letter(ref2, "{}", "boom on shard 2")
    assert await env.redis.zcard(queue.keys.retry(1)) == 1 and await env.redis.xlen(queue.keys.dead(2)) == 1
    assert await queue.promote_due() == 1 and await env.redis.xlen(queue.keys.stream(1)) == 1
    (dead_id, letter), = await queue.dead_letters()
    assert parse_ref(dead_id)[0] == 2 and dead_id.endswith("@2") and letter["error"] == "boom on shard 2"
    assert await queue.read_dead_letter(dead_id) == letter
    assert await queue.read_dead_letter(parse_ref(dead_id)[1]) is None  # the same id on shard 0: none
    requeued = await queue.requeue_dead(dead_id, job(by_shard[2][0], "again"))
    assert requeued is not None and parse_ref(requeued)[0] == 2
    assert await queue.drop_dead(dead_id) is False and await queue.dead_letters() == []


async def test_a_failed_xadd_releases_the_claim_so_the_retry_is_not_deduplicated_away(env):
    config = memorize_config("verbatim", queue={"shards": 3})
    queue = queue_for(config, env.redis)
    turns = [("hash-1", '{"role":"user","text":"I keep bees","hash":"hash-1","index":0,"at":"2026-01-01T00:00:00Z"}')]
    stream = queue.keys.stream(queue.keys.shard_of("alice"))
    await env.redis.set(stream, "not a stream")  # XADD answers WRONGTYPE; the claim script works
    with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
        await queue.enqueue("{}", "alice", "tutor", turns, 600)
    assert not await env.redis.sismember(queue.keys.seen("alice", "tutor"), "hash-1")
    await env.redis.delete(stream)
    entry = await queue.enqueue("{}", "alice", "tutor", turns, 600)
    assert entry is not None and parse_ref(entry)[0] == queue.keys.shard_of("alice")
    assert await queue.enqueue("{}", "alice", "tutor", turns, 600) is None  # now it is deduplicated


@pytest.mark.parametrize("redis_mode", ["single"])  # ACL users of one node (a cluster needs them on every node)
async def test_when_neither_xadd_nor_the_release_works_the_buffer_retries_only_the_xadd(env, redis_url):
    """An ACL user that may claim (EVALSHA: the script's own SADD) but neither XADD nor
    SREM: the enqueue raises ClaimedNotQueued with the job; the service keeps it and, once
    XADD is allowed, its retry appends that job (a second claim would find the turns seen
    and queue nothing: the turns would be lost)."""
    config = memorize_config("verbatim", queue={"shards": 3})
    admin = env.redis
    name, password = "u" + uuid.uuid4().hex[:8], uuid.uuid4().hex
    await admin.execute_command("ACL", "SETUSER", name, "on", f">{password}", "~*", "+@all", "-xadd", "-srem")
    limited = aredis.Redis.from_url(redis_url, username=name, password=password)
    try:
        service = Memorization(config, limited, None, None, None)
        turns = (("hash-2", '{"role":"user","text":"I keep bees","hash":"hash-2","index":0,"at":"2026-01-01T00:00:00Z"}'),)
        pending = _Pending('{"job_id":"j","user_id":"alice","friend_id":"tutor","enqueued_at":"2026-01-01T00:00:00Z"}',
                           "alice", "tutor", turns)
        with pytest.raises(ClaimedNotQueued):
            await service.queue.enqueue(pending.header_json, "alice", "tutor", list(turns), 600)
        await admin.srem(service.queue.keys.seen("alice", "tutor"), "hash-2")
        with pytest.raises(redis.exceptions.NoPermissionError):
            await service._push(pending)
        assert pending.claimed is not None and await admin.sismember(service.queue.keys.seen("alice", "tutor"), "hash-2")
        await admin.execute_command("ACL", "SETUSER", name, "+xadd")
        entry = await service._push(pending)
        assert entry is not None
        shard, entry_id = parse_ref(entry)
        (found_id, fields), = await admin.xrange(service.queue.keys.stream(shard))
        assert found_id.decode() == entry_id and b"I keep bees" in fields[b"t"]
    finally:
        await limited.aclose()
        await admin.execute_command("ACL", "DELUSER", name)


async def test_the_cluster_client_is_used_in_cluster_mode(env, redis_mode):
    assert is_cluster(env.redis) == (redis_mode == "cluster")


async def test_jobs_left_by_the_pre_shard_queue_are_moved_to_their_shards_and_done(env):
    """Upgrading: the one-stream queue's jobs, retries and dead letters (``<prefix>:jobs``,
    ``:retry``, ``:dead``) are moved to the users' shards when workers start."""
    config = memorize_config("verbatim", queue={"shards": 3})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    prefix = config.queue.key_prefix
    header = job("alice", "x").model_dump(exclude={"turns", "epoch"}, mode="json")
    turn = '{"role":"user","text":"I restore old clocks.","hash":"h-old","index":0,"at":"2026-01-01T00:00:00Z"}'
    await env.redis.xadd(f"{prefix}:jobs", {"h": json.dumps(header), "e": "0", "t": f"[{turn}]"})
    await env.redis.xadd(f"{prefix}:jobs", {"j": job("bob", "I sail on weekends.").model_dump_json()})
    parked = job("carol", "I grow chillies.")
    await env.redis.zadd(f"{prefix}:retry", {parked.model_dump_json(): 0})
    await env.redis.xadd(f"{prefix}:dead", {"job": job("dave", "I draw maps.").model_dump_json(), "error": "boom", "entry": "1-0"})
    await env.drain(config, store)
    for user, text in (("alice", "I restore old clocks."), ("bob", "I sail on weekends."), ("carol", "I grow chillies.")):
        assert [r.text for r in (await store.list(Tenant(user, "tutor"))).items] == [text]
    (dead_id, letter), = await queue.dead_letters()
    assert parse_ref(dead_id)[0] == queue.keys.shard_of("dave") and letter["error"] == "boom"
    for name in ("jobs", "dead"):
        assert await env.redis.xlen(f"{prefix}:{name}") == 0
    assert await env.redis.zcard(f"{prefix}:retry") == 0
    assert await queue.adopt_legacy() == 0


async def test_turns_claimed_by_a_gateway_that_died_before_its_xadd_are_queued_by_the_next_enqueue(env):
    """The claim script ran (turns in the seen set, job in the claims hash), then the
    gateway died before XADD. The user's next enqueue after ``claim_stale_s`` queues that
    job again; once a worker took it, its claim is gone and nothing is queued twice."""
    config = memorize_config("verbatim", queue={"shards": 3})
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    now = int(time.time() * 1000)
    lost = job("alice", "x").model_dump(exclude={"turns", "epoch"}, mode="json")
    turn = '{"role":"user","text":"I restore old clocks.","hash":"h-lost","index":0,"at":"2026-01-01T00:00:00Z"}'
    keys = [queue.keys.seen("alice", "tutor"), queue.keys.epoch("alice"), queue.keys.claims("alice"), queue.keys.claimed("alice")]
    await run_script(queue.client, CLAIM_SCRIPT, keys, [600, now, 300_000, lost["job_id"], json.dumps(lost), "0", "h-lost", turn])  # then the gateway died
    assert await queue.enqueue(json.dumps(lost), "alice", "tutor", [("h-lost", turn)], 600, now_ms=now + 1000) is None
    assert (await queue.stats()).length == 0  # seen, and not stale yet: nothing queued
    later = job("alice", "y").model_dump(exclude={"turns", "epoch"}, mode="json")
    turn2 = '{"role":"user","text":"I sail on weekends.","hash":"h-new","index":0,"at":"2026-01-01T00:00:00Z"}'
    await queue.enqueue(json.dumps(later), "alice", "tutor", [("h-new", turn2)], 600, now_ms=now + 301_000)
    assert (await queue.stats()).length == 2  # the new job and the stale claim's job
    await env.drain(config, store)
    texts = sorted(r.text for r in (await store.list(Tenant("alice", "tutor"))).items)
    assert texts == ["I restore old clocks.", "I sail on weekends."]
    assert await env.redis.hlen(queue.keys.claims("alice")) == await env.redis.zcard(queue.keys.claimed("alice")) == 0
    assert await queue.enqueue(json.dumps(later), "alice", "tutor", [("h-new", turn2)], 600, now_ms=now + 900_000) is None
    assert (await queue.stats()).length == 0


async def test_a_retry_resumes_its_own_claim_that_redis_ran_after_the_call_timed_out(env):
    """The claim script ran but its reply was lost (Redis stalled past the client's
    timeout, then executed the call): the gateway's retry (``resume``) finds no new turn
    but its own claim held, and queues the job at once; a fresh call with the same turns
    (no resume) still queues nothing."""
    config = memorize_config("verbatim")
    store = await env.store("t" + uuid.uuid4().hex[:12])
    queue = queue_for(config, env.redis)
    now = int(time.time() * 1000)
    lost = job("alice", "x").model_dump(exclude={"turns", "epoch"}, mode="json")
    turn = '{"role":"user","text":"I restore old clocks.","hash":"h-lost","index":0,"at":"2026-01-01T00:00:00Z"}'
    keys = [queue.keys.seen("alice", "tutor"), queue.keys.epoch("alice"), queue.keys.claims("alice"), queue.keys.claimed("alice")]
    await run_script(queue.client, CLAIM_SCRIPT, keys, [600, now, 300_000, lost["job_id"], json.dumps(lost), "0", "h-lost", turn])
    assert await queue.enqueue(json.dumps(lost), "alice", "tutor", [("h-lost", turn)], 600, now_ms=now + 1000) is None
    assert (await queue.stats()).length == 0
    assert await queue.enqueue(json.dumps(lost), "alice", "tutor", [("h-lost", turn)], 600, now_ms=now + 1000,
                               resume=True) is not None
    await env.drain(config, store)
    assert [r.text for r in (await store.list(Tenant("alice", "tutor"))).items] == ["I restore old clocks."]
    assert await queue.enqueue(json.dumps(lost), "alice", "tutor", [("h-lost", turn)], 600, resume=True) is None


async def test_a_consumers_own_pending_entries_are_read_on_every_shard_without_counting_a_delivery(env):
    """``own_pending``: what a worker was handed and did not settle, over every shard,
    with the delivery counts as they were (reading them again counts none); another
    consumer's entries are not listed, and an entry deleted meanwhile is acked away."""
    config = memorize_config("verbatim", queue={"shards": 3})
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    users = [group[0] for group in users_by_shard(queue.keys, 1).values()]
    for user in users:
        await queue.push(job(user, f"{user} keeps bees"))
    mine = await queue.read("w1", 2, None)
    theirs = await queue.read("w2", 10, None)
    assert len(mine) == 2 and len(theirs) == 1
    for _ in range(3):  # e.g. a worker that keeps failing to settle them
        found = await queue.own_pending("w1", 10)
        assert sorted((ref, deliveries) for ref, _f, deliveries in found) == sorted((ref, 1) for ref, _f in mine)
        assert all(job_fields == dict(fields) for (_r, job_fields, _d), (_m, fields) in
                   zip(sorted(found), sorted(mine), strict=True))
    assert [ref for ref, *_ in await queue.own_pending("w2", 10)] == [ref for ref, _f in theirs]
    assert len(await queue.own_pending("w1", 1)) == 1  # count bounds the whole list
    shard, entry = parse_ref(mine[0][0])
    await env.redis.xdel(queue.keys.stream(shard), entry)  # settled by someone else meanwhile
    assert [ref for ref, *_ in await queue.own_pending("w1", 10)] == [mine[1][0]]
    assert (await queue.stats()).pending == 2  # the deleted one was acked: mine[1] and theirs remain
