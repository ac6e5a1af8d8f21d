"""Spans for the request, each plugin hook and the upstream call; W3C trace context."""

import json

import httpx

from tests.support import plugins as tp
from tests.support.gateway import ALICE_KEY
from tests.support.processes import poll

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT = f"00-{TRACE_ID}-00f067aa0ba902b7-01"


def finished_spans(gw, name: str) -> dict:
    """The gateway's finished spans by name, once ``name`` is among them: the request span
    ends just after the reply's last bytes went out, so the client may be faster."""
    def spans() -> dict | None:
        found = {s.name: s for s in gw.spans.get_finished_spans()}
        return found if name in found else None

    return poll(spans, 10, f"the span {name!r} to end")


def test_traceparent_is_continued_and_propagated_with_gen_ai_attributes(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "rec_a", "config": {"label": "a"}}])
    body = {"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}
    response = httpx.post(gw.base_url + "/chat/completions", json=body,
                          headers={"authorization": f"Bearer {ALICE_KEY}", "traceparent": PARENT}, timeout=30)
    assert response.status_code == 200
    sent = upstream.chat_requests()[-1].headers["traceparent"]
    assert sent.split("-")[1] == TRACE_ID and sent != PARENT  # same trace, our span as parent
    spans = finished_spans(gw, "chat gpt-4o")
    request = spans["chat gpt-4o"]
    assert format(request.context.trace_id, "032x") == TRACE_ID
    assert format(request.parent.span_id, "016x") == "00f067aa0ba902b7"
    assert request.attributes["gen_ai.request.model"] == "gpt-4o"
    assert request.attributes["gen_ai.operation.name"] == "chat"
    assert request.attributes["memgate.user_id"] == "alice"
    assert request.attributes["memgate.friend_id"] == "tutor"
    hook = spans["plugin rec_a.rewrite_request"]
    up = spans["upstream chat gpt-4o"]
    assert hook.parent.span_id == request.context.span_id
    assert up.parent.span_id == request.context.span_id
    assert sent.split("-")[2] == format(up.context.span_id, "016x")


def test_usage_attributes_on_streams(start_gateway, upstream):
    gw = start_gateway(registry=tp.REGISTRY, plugins=[{"name": "rec_a", "config": {"label": "a"}}])
    with httpx.stream("POST", gw.base_url + "/chat/completions",
                      json={"model": "gpt-4o", "messages": [], "stream": True},
                      headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=30) as r:
        r.read()
    request = finished_spans(gw, "chat gpt-4o")["chat gpt-4o"]
    assert request.attributes["gen_ai.usage.input_tokens"] == 14
    assert request.attributes["gen_ai.usage.output_tokens"] == 30
    assert request.attributes["gen_ai.response.model"] == "gpt-4o-2024-08-06"


def test_every_response_carries_the_gateway_overhead(start_gateway, upstream):
    gw = start_gateway()
    response = httpx.post(gw.base_url + "/chat/completions", content=json.dumps({"model": "gpt-4o", "messages": []}),
                          headers={"authorization": f"Bearer {ALICE_KEY}"}, timeout=30)
    overhead = float(response.headers["x-memgate-overhead-ms"])
    assert 0 <= overhead < 1000
