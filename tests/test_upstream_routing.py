"""Upstream routing by model glob and the separate idle / total timeouts (openai-compat
item 21)."""

import json

import httpx

from tests.support.gateway import ALICE_KEY
from tests.support.upstream_double import HangReply, SSEReply, fixture

HEADERS = {"authorization": f"Bearer {ALICE_KEY}"}


def test_models_are_routed_to_the_upstream_whose_glob_matches(start_gateway, upstream):
    gw = start_gateway(upstream={"routes": [
        {"models": ["claude-*"], "base_url": upstream.url + "/alt/v1", "api_key": "sk-alt"}]})
    for model in ("claude-3-5-sonnet", "gpt-4o"):
        httpx.post(gw.base_url + "/chat/completions", json={"model": model, "messages": []}, headers=HEADERS, timeout=30)
    claude, gpt = upstream.chat_requests()
    assert claude.path == "/alt/v1/chat/completions" and claude.headers["authorization"] == "Bearer sk-alt"
    assert gpt.path == "/v1/chat/completions" and gpt.headers["authorization"] == "Bearer sk-upstream-secret"


def test_a_silent_stream_is_ended_by_the_idle_timeout(start_gateway, upstream):
    gw = start_gateway(upstream={"idle_timeout_s": 0.3, "total_timeout_s": 30})
    upstream.enqueue(SSEReply(fixture("text_with_usage"), pieces=400, delay=1.5))
    with httpx.stream("POST", gw.base_url + "/chat/completions", headers=HEADERS,
                      json={"model": "gpt-4o", "messages": [], "stream": True,
                            "stream_options": {"include_usage": True}}, timeout=10) as response:
        data = response.read()
    last = json.loads(data.strip().split(b"\n\n")[-1][len(b"data: "):])
    assert last["error"]["code"] == "upstream_timeout"
    assert data.startswith(fixture("text_with_usage")[:300])


def test_no_first_byte_within_the_idle_timeout_is_504(start_gateway, upstream):
    gw = start_gateway(upstream={"idle_timeout_s": 0.3})
    upstream.enqueue(HangReply(5))
    response = httpx.post(gw.base_url + "/chat/completions", json={"model": "gpt-4o", "messages": []},
                          headers=HEADERS, timeout=10)
    assert response.status_code == 504 and response.json()["error"]["code"] == "upstream_timeout"


def test_total_timeout_bounds_a_slow_but_steady_stream(start_gateway, upstream):
    gw = start_gateway(upstream={"idle_timeout_s": 5, "total_timeout_s": 0.5})
    upstream.enqueue(SSEReply(fixture("text_with_usage"), pieces=200, delay=0.2))
    with httpx.stream("POST", gw.base_url + "/chat/completions", headers=HEADERS,
                      json={"model": "gpt-4o", "messages": [], "stream": True,
                            "stream_options": {"include_usage": True}}, timeout=10) as response:
        data = response.read()
    assert b"[DONE]" not in data
    assert json.loads(data.strip().split(b"\n\n")[-1][len(b"data: "):])["error"]["code"] == "upstream_timeout"
