"""The plugin chain: hook order, fail-open, budgets, overrides, start-up checks."""

import json
import time

import httpx
import openai
import pytest

from gateway.chain.validate import validate_plugins
from gateway.config import parse_config
from gateway.runtime.config import ConfigError
from tests.support import plugins as tp
from tests.support.gateway import ALICE_KEY, BOB_KEY
from tests.support.upstream_double import fixture

BODY = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hello"}]}


def post(gw, body=BODY, key=ALICE_KEY):
    return httpx.post(gw.base_url + "/chat/completions", content=json.dumps(body).encode(),
                      headers={"authorization": f"Bearer {key}", "content-type": "application/json"}, timeout=20)


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


@pytest.fixture(autouse=True)
def clear_events():
    tp.EVENTS.clear()
    yield
    tp.EVENTS.clear()


def test_request_hooks_run_in_yaml_order_and_the_others_in_reverse(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[
        {"name": "rec_a", "config": {"label": "a"}}, {"name": "rec_b", "config": {"label": "b"}}])
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    list(client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "x"}], stream=True))
    wait_for(lambda: len(tp.EVENTS) == 8)
    text_len = len("".join(json.loads(e[6:])["choices"][0]["delta"].get("content") or ""
                           for e in fixture("text_with_usage").split(b"\n\n")
                           if e.startswith(b"data: {") and json.loads(e[6:])["choices"]))
    assert tp.EVENTS == [
        "a.rewrite_request", "b.rewrite_request",
        "b.on_chunk", "a.on_chunk",
        "b.on_stream_end", "a.on_stream_end",
        f"b.on_complete:done:{text_len}", f"a.on_complete:done:{text_len}",
    ]


def test_non_stream_response_filters_run_in_reverse(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[
        {"name": "rec_a", "config": {"label": "a"}}, {"name": "rec_b", "config": {"label": "b"}}])
    assert post(gw).status_code == 200
    wait_for(lambda: len(tp.EVENTS) == 6)
    assert tp.EVENTS[:4] == ["a.rewrite_request", "b.rewrite_request", "b.filter_response", "a.filter_response"]


def test_rewrite_changes_only_what_the_plugin_changed(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "inject", "config": {"text": "MEM"}}])
    body = {**BODY, "temperature": 0.3, "future_field": [1]}
    post(gw, body)
    sent = upstream.chat_requests()[-1].json
    assert sent == {**body, "messages": [{"role": "system", "content": "MEM"}, *BODY["messages"]]}


def test_a_raising_plugin_sends_the_original_request(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "inject"}, {"name": "raising"}])
    response = post(gw)
    assert response.status_code == 200
    assert upstream.chat_requests()[-1].body == json.dumps(BODY).encode()
    assert response.headers["x-memgate-degraded"] == "raising:error:RuntimeError"
    assert ('\nmemgate_plugin_failures_total{hook="rewrite_request",plugin="raising",reason="error"} 1.0\n'
            in httpx.get(gw.url + "/metrics", timeout=30).text)


def test_on_failure_skip_keeps_the_other_plugins_work(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "inject"}, {"name": "raising", "on_failure": "skip"}])
    post(gw)
    assert upstream.chat_requests()[-1].json["messages"][0] == {"role": "system", "content": "INJECTED"}


def test_a_plugin_past_its_budget_is_cut_off_and_the_original_goes(start_gateway, upstream):
    # the hook never returns: a reply at all means the budget cut it off
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "sleeping", "budget_ms": 100}])
    response = post(gw)
    assert response.headers["x-memgate-degraded"] == "sleeping:timeout"
    assert upstream.chat_requests()[-1].body == json.dumps(BODY).encode()


def test_the_request_phase_deadline_bounds_all_hooks(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, chain={"request_deadline_ms": 200},
                       plugins=[{"name": "inject"}, {"name": "sleeping", "budget_ms": 3_600_000}])
    response = post(gw)  # the hook never returns, its budget is an hour: the deadline cut it
    assert response.headers["x-memgate-degraded"] == "sleeping:deadline"
    assert upstream.chat_requests()[-1].body == json.dumps(BODY).encode()


def test_stream_filter_rewrites_chunks_and_leaves_the_rest_exact(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "shout"}])
    client = openai.OpenAI(base_url=gw.base_url, api_key=ALICE_KEY, max_retries=0)
    chunks = list(client.chat.completions.create(model="gpt-4o", messages=[], stream=True))
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("I'M UNABLE TO PROVIDE REAL-TIME WEATHER UPDATES.")
    assert chunks[0].choices[0].delta.role == "assistant"


def test_per_key_override_disables_a_plugin_for_one_key(start_gateway, upstream):
    from tests.support.gateway import BOB_KEY as bob  # noqa: F401

    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "inject"}], clients=[
        {"key": ALICE_KEY, "user_id": "alice"},
        {"key": BOB_KEY, "user_id": "bob", "plugins": {"inject": {"enabled": False}}},
    ])
    post(gw, key=ALICE_KEY)
    assert upstream.chat_requests()[-1].json["messages"][0]["content"] == "INJECTED"
    post(gw, key=BOB_KEY)
    assert upstream.chat_requests()[-1].body == json.dumps(BODY).encode()


def test_per_key_override_merges_config(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "inject"}], clients=[
        {"key": ALICE_KEY, "user_id": "alice", "plugins": {"inject": {"config": {"text": "ALICE"}}}}])
    post(gw)
    assert upstream.chat_requests()[-1].json["messages"][0]["content"] == "ALICE"


def config_with(plugins, clients=()):
    return parse_config({"plugins": plugins, "clients": list(clients)})


def test_start_up_refuses_an_order_that_breaks_runs_after():
    config = config_with([{"name": "follower"}, {"name": "inject"}])
    with pytest.raises(ConfigError, match=r"'follower' \(entry 0\) must run after 'inject' \(entry 1\)"):
        validate_plugins(config, tp.REGISTRY)
    validate_plugins(config_with([{"name": "inject"}, {"name": "follower"}]), tp.REGISTRY)


def test_start_up_names_the_path_of_a_bad_plugin_key():
    with pytest.raises(ConfigError, match=r"plugins\.1\.config\.txt: Extra inputs are not permitted"):
        validate_plugins(config_with([{"name": "rec_a"}, {"name": "inject", "config": {"txt": "x"}}]), tp.REGISTRY)
    with pytest.raises(ConfigError, match=r"clients\.0\.plugins\.inject\.config\.text"):
        validate_plugins(config_with([{"name": "inject"}], [
            {"key": "k", "user_id": "u", "plugins": {"inject": {"config": {"text": 5}}}}]), tp.REGISTRY)


def test_start_up_refuses_an_unknown_plugin():
    with pytest.raises(ConfigError, match="unknown plugin 'nope'"):
        validate_plugins(config_with([{"name": "nope"}]), tp.REGISTRY)
