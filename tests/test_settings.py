"""Memory settings units on real Redis (gateway/settings/memory_settings.py): precedence and locks, the
per-process cache and its invalidation, fail-open reads, config validation, the CLI."""

from __future__ import annotations

import asyncio
import json
import uuid

import pytest
import redis.asyncio as aioredis
from click.testing import CliRunner
from pydantic import Field

from gateway.chain.chain import LoadedPlugin, check_settings, settings_schema
from gateway.chain.sdk import CallContext, JsonBoolean, JsonInteger, PluginConfig, UserSettings
from gateway.cli.main import main
from gateway.config import parse_config
from gateway.proxy.keystore import RedisKeyStore
from gateway.runtime.config import ConfigError
from gateway.runtime.errors import InvalidRequest, PermissionDenied
from gateway.runtime.principal import Principal
from gateway.settings.memory_settings import (
    CORE,
    CallSettings,
    SettingsConfig,
    SettingsService,
    SettingsStore,
)

effective = CORE.effective


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_precedence_is_yaml_then_key_then_user_and_locks_win():
    config = SettingsConfig(defaults={"recall_rounds": 2, "profile_topk": 4}, locked=["profile_topk"])
    values, explicit = effective(config, {"recall_rounds": 3, "event_topk": 7, "profile_topk": 9},
                                 {"recall_rounds": 5, "profile_topk": 1, "show_thinking": True})
    assert (values["recall_rounds"], values["event_topk"], values["profile_topk"], values["show_thinking"]) == (5, 7, 4, True)
    assert explicit == {"recall_rounds", "profile_topk", "event_topk", "show_thinking"}
    # a stored value outside today's bounds is ignored, not a crash
    values, _ = effective(SettingsConfig(), {}, {"recall_rounds": 9, "similarity_threshold": 0.7})
    assert (values["recall_rounds"], values["similarity_threshold"]) == (3, 0.7)
    assert schema_model_accepts(values)


def schema_model_accepts(values) -> bool:
    return CORE.model.model_validate(values).model_dump() == values


def test_call_settings_replace_plugin_config_only_when_set_somewhere():
    unset = CallSettings()
    assert unset.value("similarity_threshold", 0.3) == 0.3 and unset.similarity_threshold == 0.5
    assert CallSettings({**CORE.defaults(), "similarity_threshold": 0.9}, frozenset({"similarity_threshold"})).value(
        "similarity_threshold", 0.3) == 0.9


def test_a_plugin_switched_off_by_a_setting_does_not_run_for_the_call():
    plugin = LoadedPlugin("p", object(), 1.0, 1.0, "original", switches=("recall_enabled", "personalization"))
    call = CallContext(request_id="r", principal=Principal("k", "u"), original=None, headers={}, upstream=None)  # type: ignore[arg-type]
    assert plugin.runs_for(call)
    call.settings = CallSettings({**CORE.defaults(), "personalization": False})
    assert not plugin.runs_for(call)
    assert LoadedPlugin("q", object(), 1.0, 1.0, "original").runs_for(call)
    # settings that do not carry a plugin's switch (built without its schema) take its declared default
    call.settings = CallSettings()
    assert not LoadedPlugin("r", object(), 1.0, 1.0, "original", ("flag",), {"flag": False}).runs_for(call)
    assert LoadedPlugin("r", object(), 1.0, 1.0, "original", ("flag",), {"flag": True}).runs_for(call)


class Flagged:
    """A plugin declaring settings of its own (no hook: the table is all that reads it)."""

    name = "flagged"
    Config = PluginConfig
    settings_switches = ("recall_enabled", "flag_on")

    class Settings(UserSettings):
        flag_on: JsonBoolean = True
        depth: JsonInteger = Field(2, ge=1, le=4, description="How deep.")

    def __init__(self, config, services) -> None:
        self.config = config

    async def rewrite_request(self, call, request):
        note = {"role": "system", "content": f"FLAG depth={call.settings.depth}"}
        return request.model_copy(update={"messages": [note, *request.messages]})


def test_config_refuses_bad_defaults_unknown_locks_and_bad_key_settings():
    schema = settings_schema([], {"flagged": Flagged})

    def check(raw):
        check_settings(parse_config(raw), schema)

    with pytest.raises(ConfigError, match=r"settings.defaults.recall_rounds"):
        check({"settings": {"defaults": {"recall_rounds": 6}}})
    with pytest.raises(ConfigError, match=r"settings.defaults.depth"):
        check({"settings": {"defaults": {"depth": 5}}})
    with pytest.raises(ConfigError, match=r"settings.locked.*recal_rounds"):
        check({"settings": {"locked": ["recal_rounds"]}})
    with pytest.raises(ConfigError, match=r"clients.0.settings.profile_topk"):
        check({"clients": [{"key": "k", "user_id": "u", "settings": {"profile_topk": 0}}]})
    with pytest.raises(ConfigError, match=r"clients.0.settings.flag_on: must be true or false"):
        check({"clients": [{"key": "k", "user_id": "u", "settings": {"flag_on": "no"}}]})
    ok = parse_config({"clients": [{"key": "k", "user_id": "u", "settings": {"profile_topk": 2, "flag_on": False}}],
                       "settings": {"defaults": {"depth": 3}, "locked": ["flag_on"]}})
    check_settings(ok, schema)
    assert ok.clients[0].settings == {"profile_topk": 2, "flag_on": False}
    with pytest.raises(ConfigError, match=r"settings.defaults.depth: unknown setting"):  # without the plugin
        check_settings(ok, settings_schema([], {}))


def test_plugins_declare_settings_the_core_merges_once():
    schema = settings_schema([], {"flagged": Flagged})
    assert schema.names[:8] == tuple(CORE.names) and schema.names[8:] == ("flag_on", "depth")
    assert schema.bounds["depth"] == {"minimum": 1, "maximum": 4} and schema.owners == {
        "flag_on": ("flagged",), "depth": ("flagged",)}
    values, explicit = schema.effective(SettingsConfig(defaults={"depth": 3}, locked=["flag_on"]), {"flag_on": False}, {})
    assert (values["depth"], values["flag_on"], explicit) == (3, True, frozenset({"depth"}))  # a lock wins over the key
    values, _ = schema.effective(SettingsConfig(), {"depth": 2.0, "flag_on": "yes"}, {"depth": 7})
    assert (values["depth"], type(values["depth"]), values["flag_on"]) == (2, int, True)  # bad values ignored one by one
    with pytest.raises(InvalidRequest) as bad:
        schema.check({"depth": 0})
    assert bad.value.param == "depth" and "greater than or equal to 1" in bad.value.message
    patch = schema.patch.model_json_schema()["properties"]
    assert patch["depth"]["anyOf"][0] == {"type": "integer", "minimum": 1, "maximum": 4}
    # the built-in plugins declare their switches themselves
    from plugins import builtin_plugins

    builtin = settings_schema([], builtin_plugins())
    assert builtin.owners == {"auto_recall": ("auto_recall",), "personalization": ("personalization",)}


def test_clashing_declarations_stop_start_up_naming_them():
    class Twin(Flagged):
        name = "twin"

        class Settings(UserSettings):
            depth: JsonInteger = Field(2, ge=1, le=5, description="How deep.")

    class Core(Flagged):
        class Settings(UserSettings):
            recall_rounds: JsonInteger = 3

    class Required(Flagged):
        class Settings(UserSettings):
            needed: JsonBoolean

    class BadSwitch(Flagged):
        Settings = None  # type: ignore[assignment]
        settings_switches = ("recall_rounds",)

    same = type("Same", (Flagged,), {"name": "same"})
    assert settings_schema([], {"flagged": Flagged, "same": same}).owners["depth"] == ("flagged", "same")
    with pytest.raises(ConfigError, match=r"'flagged' and 'twin' declare setting 'depth' differently"):
        settings_schema([], {"flagged": Flagged, "twin": Twin})
    with pytest.raises(ConfigError, match=r"'core' declares setting 'recall_rounds', a core setting"):
        settings_schema([], {"core": Core})
    with pytest.raises(ConfigError, match=r"'required': setting 'needed' needs a default"):
        settings_schema([], {"required": Required})
    with pytest.raises(ConfigError, match=r"'bad' declares settings switch 'recall_rounds', which is not a boolean"):
        settings_schema([], {"bad": BadSwitch})


async def test_a_write_applies_at_once_in_its_process_and_within_the_ttl_elsewhere(redis_url):
    redis = aioredis.from_url(redis_url)
    store = SettingsStore(redis, "tset" + uuid.uuid4().hex[:8])
    clock = Clock()
    here = SettingsService(SettingsConfig(cache_ttl_s=5), store, clock)
    there = SettingsService(SettingsConfig(cache_ttl_s=5), store, clock)
    assert (await there.for_call("u/1", "f", {}))[0].recall_rounds == 3  # cached in "there" now
    assert (await here.for_call("u/1", "f", {}))[0].recall_rounds == 3  # and in "here"
    await here.update("u/1", "f", {"recall_rounds": 1}, {})
    assert (await here.for_call("u/1", "f", {}))[0].recall_rounds == 1  # the writer: at once
    assert (await there.for_call("u/1", "f", {}))[0].recall_rounds == 3  # another process: cached...
    clock.now += 5.01
    assert (await there.for_call("u/1", "f", {}))[0].recall_rounds == 1  # ...for at most cache_ttl_s
    await here.update("u/1", "f", {"recall_rounds": None}, {})
    assert (await here.view("u/1", "f", {})).overrides == {}
    await redis.aclose()


async def test_a_failed_or_slow_read_gives_the_defaults_and_says_so(redis_url):
    dead = aioredis.from_url("redis://127.0.0.1:9", socket_connect_timeout=0.2)
    config = SettingsConfig(defaults={"recall_rounds": 2}, read_timeout_ms=5000)
    settings, problem = await SettingsService(config, SettingsStore(dead)).for_call("u", "f", {"event_topk": 3})
    assert problem == "unavailable" and (settings.recall_rounds, settings.event_topk) == (2, 3)
    await dead.aclose()

    never = asyncio.Event()

    class Hanging(SettingsStore):
        async def read(self, user_id, friend_id):
            await never.wait()

    slow = SettingsService(SettingsConfig(read_timeout_ms=20), Hanging(None))  # type: ignore[arg-type]
    settings, problem = await slow.for_call("u", "f", {})
    assert problem == "timeout" and settings.values == CORE.defaults()


async def test_writes_refuse_locked_and_unknown_names_naming_them(redis_url):
    redis = aioredis.from_url(redis_url)
    service = SettingsService(SettingsConfig(locked=["show_thinking"]), SettingsStore(redis, "tset" + uuid.uuid4().hex[:8]))
    with pytest.raises(PermissionDenied) as locked:
        await service.update("u", "f", {"show_thinking": None}, {})
    assert locked.value.param == "show_thinking" and locked.value.status == 403
    with pytest.raises(InvalidRequest) as unknown:
        await service.update("u", "f", {"show_thoughts": True}, {})
    assert unknown.value.param == "show_thoughts" and unknown.value.status == 400
    with pytest.raises(InvalidRequest):
        await service.update("u", "", {"recall_rounds": 2}, {})
    keys = RedisKeyStore(redis, "tkeys" + uuid.uuid4().hex[:8])
    with pytest.raises(PermissionDenied):
        await keys.create("u", "f", settings={"show_thinking": True}, locked=("show_thinking",))
    await redis.aclose()


def test_cli_settings_get_set_and_keys_create_with_settings(redis_url, tmp_path):
    prefix = "tcli" + uuid.uuid4().hex[:8]
    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({"memory": {"redis_url": redis_url, "key_prefix": prefix},
                                  "settings": {"locked": ["inference"]}}))
    runner = CliRunner()
    base = ["--config", str(config), "--user", "erin", "--friend", "pal"]
    done = runner.invoke(main, ["settings", "set", *base, "recall_rounds=2", "show_tool_calls=true"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.stdout)["overrides"] == {"recall_rounds": 2, "show_tool_calls": True}
    got = json.loads(runner.invoke(main, ["settings", "get", *base]).stdout)
    assert got["settings"]["recall_rounds"] == 2 and got["locked"] == ["inference"]
    bad = runner.invoke(main, ["settings", "set", *base, "recall_rounds=9"])
    assert bad.exit_code != 0 and "recall_rounds" in bad.output
    locked = runner.invoke(main, ["settings", "set", *base, "inference=false"])
    assert locked.exit_code != 0 and "inference: locked" in locked.output
    runner.invoke(main, ["settings", "set", *base, "recall_rounds=null"])
    assert json.loads(runner.invoke(main, ["settings", "get", *base]).stdout)["overrides"] == {"show_tool_calls": True}
    # a built-in plugin's own setting (personalization declares it) is set and checked the same way
    plugin_field = runner.invoke(main, ["settings", "set", *base, "personalization=false"])
    assert plugin_field.exit_code == 0 and json.loads(plugin_field.stdout)["settings"]["personalization"] is False
    bad_plugin_field = runner.invoke(main, ["settings", "set", *base, "personalization=3"])
    assert bad_plugin_field.exit_code != 0 and "personalization: must be true or false" in bad_plugin_field.output

    created = runner.invoke(main, ["keys", "create", "--config", str(config), "--user", "erin", "--friend", "pal",
                                   "--set", "profile_topk=2", "--set", "show_thinking=true"])
    assert created.exit_code == 0, created.output
    assert json.loads(created.stdout)["settings"] == {"profile_topk": 2, "show_thinking": True}
    with_switch = runner.invoke(main, ["keys", "create", "--config", str(config), "--user", "erin", "--friend", "pal",
                                       "--set", "auto_recall=false"])
    assert with_switch.exit_code == 0 and json.loads(with_switch.stdout)["settings"] == {"auto_recall": False}
    bad_key = runner.invoke(main, ["keys", "create", "--config", str(config), "--user", "erin", "--friend", "pal",
                                   "--set", "profile_topk"])
    assert bad_key.exit_code != 0 and "name=value" in bad_key.output
    locked_key = runner.invoke(main, ["keys", "create", "--config", str(config), "--user", "erin", "--friend", "pal",
                                      "--set", "inference=false"])
    assert locked_key.exit_code != 0 and "inference" in locked_key.output



def test_cli_settings_default_the_friend_and_show_what_the_plugins_use(redis_url, tmp_path):
    """``memgate settings`` as the console's Settings page: ``--friend`` defaults to the
    friend of the user's config key (as ``memgate memories`` does), and ``in_use`` says
    what the config's chain uses for a setting nobody set, until one is set."""
    config = tmp_path / "gateway.yaml"
    config.write_text(json.dumps({
        "clients": [{"key": "k-erin", "user_id": "erin", "friend_id": "pal"}],
        "memory": {"redis_url": redis_url, "key_prefix": "tcli" + uuid.uuid4().hex[:8]},
        "plugins": [{"name": "auto_recall", "config": {"threshold": 0.3}}, {"name": "hybrid_injection"}],
    }))
    runner = CliRunner()
    got = runner.invoke(main, ["settings", "get", "--config", str(config), "--user", "erin"])
    assert got.exit_code == 0, got.output
    view = json.loads(got.stdout)
    assert view["friend_id"] == "pal" and view["settings"]["similarity_threshold"] == 0.5
    assert view["in_use"]["similarity_threshold"] == {"auto_recall": 0.3, "hybrid_injection": 0.3}
    done = runner.invoke(main, ["settings", "set", "--config", str(config), "--user", "erin", "similarity_threshold=0.4"])
    assert done.exit_code == 0, done.output
    changed = json.loads(done.stdout)
    assert changed["friend_id"] == "pal" and changed["overrides"] == {"similarity_threshold": 0.4}
    assert "similarity_threshold" not in changed["in_use"]
    nobody = runner.invoke(main, ["settings", "get", "--config", str(config), "--user", "nobody"])
    assert nobody.exit_code == 2 and "--friend is required (no key in the config or in Redis has user_id 'nobody')" in nobody.output

class GatedStore(SettingsStore):
    """Reads Redis, then (first read only) waits for ``gate``; counts reads."""

    def __init__(self, redis, prefix):
        super().__init__(redis, prefix)
        self.reads = 0
        self.started = asyncio.Event()
        self.gate = asyncio.Event()

    async def read(self, user_id, friend_id):
        self.reads += 1
        first = self.reads == 1
        data = await super().read(user_id, friend_id)
        if first:
            self.started.set()
            await self.gate.wait()
        return data


async def test_a_burst_of_one_pair_makes_one_read(redis_url):
    redis = aioredis.from_url(redis_url)
    store = GatedStore(redis, "tset" + uuid.uuid4().hex[:8])
    service = SettingsService(SettingsConfig(read_timeout_ms=60_000), store)
    calls = [asyncio.ensure_future(service.for_call("u", "f", {})) for _ in range(20)]
    await store.started.wait()
    store.gate.set()
    results = await asyncio.gather(*calls)
    assert store.reads == 1 and all(problem is None for _, problem in results)
    await redis.aclose()


async def test_a_read_older_than_a_write_is_not_cached_over_it(redis_url):
    redis = aioredis.from_url(redis_url)
    store = GatedStore(redis, "tset" + uuid.uuid4().hex[:8])
    service = SettingsService(SettingsConfig(read_timeout_ms=60_000), store)
    early = asyncio.ensure_future(service.for_call("u", "f", {}))  # reads {} then waits
    await store.started.wait()
    await service.update("u", "f", {"recall_rounds": 1}, {})
    store.gate.set()
    assert (await early)[0].recall_rounds == 3  # it started before the write
    assert (await service.for_call("u", "f", {}))[0].recall_rounds == 1  # the stale read was not cached
    await redis.aclose()


def test_the_routes_show_what_recall_uses_for_a_setting_nobody_set(start_gateway, upstream):
    """similarity_threshold unset: `settings` shows the seed default (0.5) and `in_use`
    what the chain's plugins really apply (auto_recall's threshold 0.3, hybrid_injection's
    search threshold); once set, it is no longer listed."""
    import httpx

    from tests.support.gateway import ADMIN_KEY, ALICE_KEY

    gw = start_gateway(plugins=[{"name": "auto_recall", "config": {"threshold": 0.3}}, {"name": "hybrid_injection"}])
    alice = {"authorization": f"Bearer {ALICE_KEY}"}
    view = httpx.get(gw.url + "/v1/memory/settings", headers=alice, timeout=30).json()
    assert view["settings"]["similarity_threshold"] == 0.5
    assert view["in_use"]["similarity_threshold"]["auto_recall"] == 0.3
    assert set(view["in_use"]["similarity_threshold"]) == {"auto_recall", "hybrid_injection"}
    admin = httpx.get(gw.url + "/v1/admin/users/alice/settings", params={"friend_id": "tutor"},
                      headers={"authorization": f"Bearer {ADMIN_KEY}"}, timeout=30).json()
    assert admin["in_use"]["similarity_threshold"]["auto_recall"] == 0.3
    changed = httpx.put(gw.url + "/v1/memory/settings", json={"similarity_threshold": 0.4}, headers=alice, timeout=30).json()
    assert changed["settings"]["similarity_threshold"] == 0.4 and "similarity_threshold" not in changed["in_use"]


def test_a_plugin_declared_setting_is_served_checked_and_obeyed(start_gateway, upstream):
    """A plugin outside the built-ins (``module:Class``) declares two settings: the routes,
    their OpenAPI schema and the chat path take them as the core's own."""
    import httpx
    import openai

    from tests.support.gateway import ALICE_KEY

    gw = start_gateway(plugins=[{"name": "tests.test_settings:Flagged"}])
    alice = {"authorization": f"Bearer {ALICE_KEY}"}
    components = httpx.get(gw.url + "/openapi/openapi.json", timeout=30).json()["components"]["schemas"]
    assert {"flag_on", "depth"} <= set(components["SettingsPatch"]["properties"])
    assert components["MemorySettings"]["properties"]["depth"]["maximum"] == 4
    view = httpx.get(gw.url + "/v1/memory/settings", headers=alice, timeout=30).json()
    assert (view["settings"]["flag_on"], view["settings"]["depth"], view["bounds"]["depth"]) == (
        True, 2, {"minimum": 1, "maximum": 4})
    bad = httpx.put(gw.url + "/v1/memory/settings", json={"depth": 9}, headers=alice, timeout=30)
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "depth"

    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)

    def first_sent() -> dict:
        upstream.requests.clear()
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
        return [r for r in upstream.requests if r.path.endswith("/chat/completions")][-1].json["messages"][0]

    assert first_sent()["content"] == "FLAG depth=2"
    off = httpx.put(gw.url + "/v1/memory/settings", json={"flag_on": False, "depth": 3}, headers=alice, timeout=30)
    assert off.status_code == 200 and off.json()["overrides"] == {"flag_on": False, "depth": 3}
    assert first_sent() == {"role": "user", "content": "hi"}  # switched off: the plugin did not run
    httpx.put(gw.url + "/v1/memory/settings", json={"flag_on": True}, headers=alice, timeout=30)
    assert first_sent()["content"] == "FLAG depth=3"
