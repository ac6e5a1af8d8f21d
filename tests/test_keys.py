"""Client keys: config keys, the Redis key store, revocation TTL, service keys, 503."""

import json
import time

import httpx
import pytest
from click.testing import CliRunner

from gateway.cli.main import main
from gateway.config import ClientConfig
from gateway.proxy.auth import Authenticator, resolve_end_user
from gateway.proxy.keystore import RedisKeyStore, key_digest
from gateway.runtime.errors import AuthenticationFailed, KeyStoreUnavailable
from tests.support import plugins as tp
from tests.support.gateway import ALICE_KEY, SERVICE_KEY


class Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now


async def test_revoked_key_stops_working_within_the_cache_ttl(redis_url):
    import redis.asyncio as aioredis

    client = aioredis.from_url(redis_url)
    store = RedisKeyStore(client, prefix="tkeys" + str(time.time_ns()))
    key, stored = await store.create("dana", "coach", allowed_models=("gpt-4o*",))
    clock = Clock()
    auth = Authenticator([], store, cache_ttl=5.0, clock=clock)
    principal = await auth.authenticate(f"Bearer {key}")
    assert (principal.user_id, principal.friend_id, principal.key_id) == ("dana", "coach", stored.key_id)
    assert principal.may_use("gpt-4o-mini") and not principal.may_use("o3")
    await store.revoke(stored.key_id)
    clock.now += 4.9
    assert (await auth.authenticate(f"Bearer {key}")).user_id == "dana"  # still cached
    clock.now += 0.2
    with pytest.raises(AuthenticationFailed):
        await auth.authenticate(f"Bearer {key}")
    listed = await store.list()
    assert listed[0].revoked_at is not None
    raw = await client.hgetall(f"{store._prefix}:keys:h:{key_digest(key)}")
    assert key.encode() not in b"".join(list(raw.keys()) + list(raw.values()))  # hashed at rest
    await client.aclose()


async def test_key_store_unreachable_is_503_but_config_keys_still_work():
    import redis.asyncio as aioredis

    dead = aioredis.from_url("redis://127.0.0.1:9", socket_connect_timeout=0.2)
    auth = Authenticator([ClientConfig(key="k-static", user_id="u")], RedisKeyStore(dead), cache_ttl=5)
    assert (await auth.authenticate("Bearer k-static")).user_id == "u"
    with pytest.raises(KeyStoreUnavailable) as info:
        await auth.authenticate("Bearer k-unknown")
    assert info.value.status == 503
    await dead.aclose()


def test_only_a_service_key_may_name_the_end_user():
    auth = Authenticator([ClientConfig(key="s", user_id="backend", service=True),
                          ClientConfig(key="o", user_id="alice", friend_id="tutor")], None, 5)
    import asyncio

    service = asyncio.run(auth.authenticate("Bearer s"))
    ordinary = asyncio.run(auth.authenticate("Bearer o"))
    named = resolve_end_user(service, "end-user-9", {"x-memgate-friend": "coach"})
    assert (named.user_id, named.friend_id) == ("end-user-9", "coach")
    assert resolve_end_user(service, "u", {"x-memgate-user": "hdr"}).user_id == "hdr"
    same = resolve_end_user(ordinary, "mallory", {"x-memgate-user": "mallory", "x-memgate-friend": "x"})
    assert (same.user_id, same.friend_id) == ("alice", "tutor")


def test_service_key_end_user_reaches_the_plugins(start_gateway, upstream):
    seen = []

    class Spy(tp.Recording):
        name = "spy"

        async def rewrite_request(self, call, request):
            seen.append((call.principal.user_id, call.principal.friend_id))
            return request

    gw = start_gateway(registry={"spy": Spy}, plugins=[{"name": "spy"}])
    body = {"model": "gpt-4o", "messages": [], "user": "end-user-1"}
    httpx.post(gw.base_url + "/chat/completions", json=body, headers={"authorization": f"Bearer {SERVICE_KEY}",
                                                                      "x-memgate-friend": "pal"}, timeout=30)
    httpx.post(gw.base_url + "/chat/completions", json=body, headers={"authorization": f"Bearer {ALICE_KEY}",
                                                                      "x-memgate-user": "bob"}, timeout=30)
    assert seen == [("end-user-1", "pal"), ("alice", "tutor")]
    assert upstream.chat_requests()[0].json["user"] == "end-user-1"  # still forwarded as sent


def test_cli_keys_create_list_revoke_against_a_running_gateway(start_gateway, upstream, tmp_path):
    # 0: every request reads the key store, so the revocation shows on the next request
    # without waiting out a cache TTL (the cache itself is tested on an injected clock)
    gw = start_gateway(auth={"cache_ttl_s": 0})
    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({"memory": {"redis_url": gw.config.memory.redis_url,
                                             "key_prefix": gw.config.memory.key_prefix}}))
    runner = CliRunner()
    created = runner.invoke(main, ["keys", "create", "--config", str(config), "--user", "erin", "--friend", "pal"])
    assert created.exit_code == 0, created.output
    record = json.loads(created.stdout)
    headers = {"authorization": f"Bearer {record['key']}"}
    body = {"model": "gpt-4o", "messages": []}
    assert httpx.post(gw.base_url + "/chat/completions", json=body, headers=headers, timeout=30).status_code == 200
    listed = runner.invoke(main, ["keys", "list", "--config", str(config)])
    assert record["key_id"] in listed.output and record["key"] not in listed.output
    revoked = runner.invoke(main, ["keys", "revoke", "--config", str(config), record["key_id"]])
    assert revoked.exit_code == 0
    assert httpx.post(gw.base_url + "/chat/completions", json=body, headers=headers, timeout=30).status_code == 401
    missing = runner.invoke(main, ["keys", "revoke", "--config", str(config), "k_nope"])
    assert missing.exit_code != 0 and "no key" in missing.output


GROUP_CHAIN = [{"name": "context_selection", "enabled": False}]
GROUP_CHAT = [
    {"role": "system", "content": "You are Kiki, the group's helper."},
    {"role": "user", "name": "alice", "content": "anyone tried the new ramen place on 5th street?",
     "memgate": {"id": "m1", "ts": "2025-03-01T12:00:00+08:00"}},
    {"role": "user", "name": "bob", "content": "my docker build fails with 'no space left on device'",
     "memgate": {"id": "m2", "ts": "2025-03-01T12:00:30+08:00"}},
    {"role": "user", "name": "carol", "content": "alice: yes! the tonkotsu broth is amazing",
     "memgate": {"id": "m3", "reply_to": "m1", "ts": "2025-03-01T12:01:00+08:00"}},
    {"role": "user", "name": "dave", "content": "run docker system prune -a to free the build cache",
     "memgate": {"id": "m4", "reply_to": "m2", "ts": "2025-03-01T12:01:30+08:00", "mentions": ["bob"]}},
    {"role": "user", "name": "bob", "content": "@Kiki prune freed 30GB but docker build still fails at COPY, why?",
     "memgate": {"id": "m5", "reply_to": "m4", "ts": "2025-03-01T12:03:00+08:00"}},
]


def test_cli_mints_a_group_key_with_its_plugins(start_gateway, upstream, tmp_path):
    """memgate keys create --service --group --plugin context_selection --plugin-config ...:
    the minted key runs context selection (off for everyone else) with its config."""
    gw = start_gateway(auth={"cache_ttl_s": 0}, plugins=GROUP_CHAIN)
    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({"memory": {"redis_url": gw.config.memory.redis_url,
                                             "key_prefix": gw.config.memory.key_prefix}, "plugins": GROUP_CHAIN}))
    runner = CliRunner()
    created = runner.invoke(main, [
        "keys", "create", "--config", str(config), "--user", "groupbot", "--friend", "kiki", "--service", "--group",
        "--plugin", "context_selection", "--plugin-config", 'context_selection={"bot_names": ["Kiki"]}'])
    assert created.exit_code == 0, created.output
    record = json.loads(created.stdout)  # stdout: the JSON record (stderr: the key for people)
    assert record["group"] and record["plugins"] == {
        "context_selection": {"enabled": True, "config": {"bot_names": ["Kiki"]}}}
    body = {"model": "gpt-4o", "messages": GROUP_CHAT}
    reply = httpx.post(gw.base_url + "/chat/completions", json=body, headers={"authorization": f"Bearer {record['key']}"})
    assert reply.status_code == 200, reply.text
    sent = [m["content"] for m in upstream.chat_requests()[-1].json["messages"]]
    assert "anyone tried the new ramen place on 5th street?" not in sent  # selected: the ramen thread is left out
    assert GROUP_CHAT[-1]["content"] in sent and GROUP_CHAT[2]["content"] in sent
    httpx.post(gw.base_url + "/chat/completions", json=body, headers={"authorization": f"Bearer {ALICE_KEY}"})
    assert len(upstream.chat_requests()[-1].json["messages"]) == len(GROUP_CHAT)  # off for other keys

    for bad, why in ((["--plugin", "nope"], "--plugin.nope: no such plugin"),
                     (["--plugin-config", "context_selection={\"relevance_threshold\": 7}"], "relevance_threshold"),
                     (["--plugin-config", "context_selection=[1]"], "expected NAME={JSON object}")):
        failed = runner.invoke(main, ["keys", "create", "--config", str(config), "--user", "x", "--friend", "y", *bad])
        assert failed.exit_code == 1 and why in failed.output, failed.output
