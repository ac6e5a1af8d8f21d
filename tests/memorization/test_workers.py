"""Queue and worker guarantees on real Redis: reclaim, dead letters, idempotency, forget,
inference, gists, trace links (issue 5, items 2, 4, 5, 6, 7)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from gateway.chain.forget import forget_user
from gateway.chain.sdk import CallContext
from gateway.chain.services import PluginServices
from gateway.memorization.jobs import job_from_fields
from gateway.memorization.processor import JobProcessor
from gateway.memorization.runtime import queue_for
from gateway.memorization.service import Memorization
from gateway.memorization.worker import Worker
from gateway.memory.records import Tenant
from gateway.proxy.assembly import reply_from_completion
from gateway.proxy.wire import ChatRequest
from gateway.runtime.config import TelemetryConfig
from gateway.runtime.principal import Principal
from gateway.runtime.telemetry import Telemetry
from plugins.memorize import MemorizePlugin
from tests.memorization.conftest import memorize_config, user_stream
from tests.memorization.memory_model import fact
from tests.support.upstream_double import completion

ALICE = Tenant("alice", "tutor")
TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
REDIS_MODES = ["single", "cluster"]  # every test once on one node, once on the local cluster


async def enqueue(env: Any, config: Any, *user_texts: str, reply: str = "Noted.", settings: Any = None) -> str | None:
    plugin = MemorizePlugin(config, PluginServices(redis=env.redis))
    messages = [{"role": "user", "content": t} for t in user_texts]
    call = CallContext(request_id="req_" + uuid.uuid4().hex, principal=Principal("k", "alice", "tutor"),
                       original=ChatRequest(model="gpt-4o-mini", messages=messages), headers={},
                       upstream=None, trace_context=TRACEPARENT)  # type: ignore[arg-type]  # no upstream calls
    if settings is not None:
        call.settings = settings
    return await plugin.memorization.enqueue(call, reply_from_completion(completion(reply)), datetime.now(UTC))


async def fresh_store(env: Any) -> Any:
    return await env.store("t" + uuid.uuid4().hex[:12])


async def test_a_job_whose_worker_died_is_reclaimed_and_done_exactly_once(env):
    config = memorize_config("verbatim", worker={"claim_min_idle_ms": 50})
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    await enqueue(env, config, "I play the cello in an orchestra.")
    taken = await queue.read("dead-worker", 10, None)  # delivered, never acked: the worker "dies"
    assert len(taken) == 1
    await env.drain(config, store, n=2)
    items = (await store.list(ALICE)).items
    assert [r.text for r in items] == ["I play the cello in an orchestra."]
    assert (await queue.stats()).pending == 0
    # the dead worker wakes up and handles its copy anyway: nothing is stored twice
    worker = Worker(JobProcessor(config, store, queue), config.worker)
    assert await worker.handle(*taken[0]) == "duplicate"
    assert (await store.count(ALICE)) == 1


async def test_a_verbatim_job_is_stored_without_tracking_its_conversation(env):
    # conversation first-seen times serve extract mode (gists, inference) only; a
    # verbatim job skips that round trip and write (issue 10: worker cost per job)
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    await enqueue(env, config, "I keep bees on the roof.")
    (_entry, fields), = await env.redis.xrange(user_stream(queue))
    job = job_from_fields(fields)
    assert await JobProcessor(config, store, queue).process(job) == "done"
    assert [r.text for r in (await store.list(ALICE)).items] == ["I keep bees on the roof."]
    assert not await env.redis.exists(queue.keys.conversations(job.user_id, job.friend_id))


async def test_skipped_small_talk_is_counted_not_silently_dropped(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    await enqueue(env, config, "thanks!", "I keep bees on the roof.", "ok bye")
    (_entry, fields), = await env.redis.xrange(user_stream(queue))
    telemetry = Telemetry(TelemetryConfig())
    processor = JobProcessor(config, store, queue, telemetry=telemetry)
    assert await processor.process(job_from_fields(fields)) == "done"
    assert [r.text for r in (await store.list(ALICE)).items] == ["I keep bees on the roof."]
    assert telemetry.metrics.get("memgate_memorize_turns_skipped_total", reason="small_talk") == 2.0


async def test_replaying_a_half_applied_job_writes_the_same_records(env):
    config = memorize_config("extract")
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    env.model_double.on("memorize_extraction", {"facts": [fact("The user has two cats"), fact("The user works as a nurse")]})
    await enqueue(env, config, "I have two cats and I work as a nurse.")
    (_entry_id, fields), = [(i.decode(), f) for i, f in await env.redis.xrange(user_stream(queue))]
    job = job_from_fields(fields)
    client = env.model_client()
    processor = JobProcessor(config, store, queue, client)
    assert await processor.process(job) == "done"  # crash before the ack: no done marker
    env.model_double.on("memorize_extraction", {"facts": [fact("A different answer the second time")]})
    assert await processor.process(job) == "done"
    await client.aclose()
    assert sorted(r.text for r in (await store.list(ALICE)).items) == ["The user has two cats", "The user works as a nurse"]
    assert len(env.model_double.calls["memorize_extraction"]) == 1  # the stored plan was replayed


async def test_a_poisoned_job_gets_one_repair_call_then_is_dead_lettered_without_retries(env):
    config = memorize_config("extract", worker={"max_attempts": 3})
    store = await fresh_store(env)
    env.model_double.always["memorize_decision"] = "this is not JSON at all"
    await enqueue(env, config, "My email is joe@example.com and I like jazz.")
    await env.drain(config, store)
    queue = queue_for(config, env.redis)
    dead = await queue.dead_letters()
    assert len(dead) == 1 and "ModelOutputError" in dead[0][1]["error"]
    # the first answer, then one repair call showing the model its answer; no blind retries
    # at temperature 0 (issue 9, item 14), although max_attempts would allow 3 attempts
    calls = env.model_double.calls["memorize_decision"]
    assert len(calls) == 2
    assert calls[1]["messages"][-2] == {"role": "assistant", "content": "this is not JSON at all"}
    assert calls[1]["messages"][-1]["content"].startswith("That answer could not be used")
    assert '"attempt":1' in dead[0][1]["job"]
    assert "joe@example.com" not in dead[0][1]["job"] and "[email]" in dead[0][1]["job"]
    assert (await queue.stats()).dead == 1 and await store.count(ALICE) == 0


async def test_a_forget_while_the_job_waits_leaves_nothing_behind(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await enqueue(env, config, "I am planning a surprise party for Sam.")
    await forget_user([Memorization(config, env.redis, store, None, None)], store, "alice")
    await env.drain(config, store)
    assert await store.count(ALICE) == 0
    assert await enqueue(env, config, "I am planning a surprise party for Sam.") is not None  # dedupe set forgotten too


async def test_a_forget_that_slips_in_during_the_write_still_wins(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    await enqueue(env, config, "My bank PIN hint is my dog's birthday.")
    original = store.import_records

    async def forget_then_write(records):  # the forget lands between the epoch check and the write
        await forget_user([Memorization(config, env.redis, store, None, None)], store, "alice")
        return await original(records)

    store.import_records = forget_then_write
    try:
        await env.drain(config, store)
    finally:
        store.import_records = original
    assert await store.count(ALICE) == 0


async def test_inference_every_n_conversations_keeps_only_grounded_confident_conclusions(env):
    config = memorize_config("extract", inference={"enabled": True, "interval": 1, "min_confidence": 0.6})
    store = await fresh_store(env)
    env.model_double.on("memorize_extraction", {"facts": [fact("The user writes Rust at work"), fact("The user maintains a Rust crate")]})
    env.model_double.on("memorize_inference", {"inferences": [
        {"conclusion": "The user is a professional Rust developer", "confidence": 0.85, "basedOn": ["m1", "m2"]},
        {"conclusion": "The user dislikes Go", "confidence": 0.3, "basedOn": ["m1", "m2"]},
        {"conclusion": "Invented grounding", "confidence": 0.9, "basedOn": ["m1", "m99"]},
    ]})
    await enqueue(env, config, "At work I write Rust, and I maintain a crate.")
    await env.drain(config, store)
    inferred = [r for r in (await store.list(ALICE)).items if r.type.value == "inference"]
    assert [r.text for r in inferred] == ["The user is a professional Rust developer"]
    assert inferred[0].source.value == "inference" and inferred[0].confidence == 0.85
    for memory_id in inferred[0].based_on:
        assert (await store.get(ALICE, memory_id)).type.value == "semantic"


async def test_a_user_whose_inference_setting_is_off_triggers_no_inference(env):
    from gateway.settings.memory_settings import CORE, CallSettings

    config = memorize_config("extract", inference={"enabled": True, "interval": 1, "min_confidence": 0.6})
    store = await fresh_store(env)
    env.model_double.on("memorize_extraction", {"facts": [fact("The user writes Rust at work"), fact("The user maintains a Rust crate")]})
    env.model_double.on("memorize_inference", {"inferences": [
        {"conclusion": "The user is a professional Rust developer", "confidence": 0.85, "basedOn": ["m1", "m2"]}]})
    off = CallSettings({**CORE.defaults(), "inference": False}, frozenset({"inference"}))
    await enqueue(env, config, "At work I write Rust, and I maintain a crate.", settings=off)
    await env.drain(config, store)
    assert sorted(r.text for r in (await store.list(ALICE)).items) == [
        "The user maintains a Rust crate", "The user writes Rust at work"]
    assert not env.model_double.calls.get("memorize_inference")


async def test_a_conversation_keeps_one_dated_gist(env):
    config = memorize_config("extract")
    store = await fresh_store(env)
    env.model_double.on("memorize_extraction",
                        {"facts": [], "gist": "The user talked about moving house."},
                        {"facts": [], "gist": "The user is moving house and feels stressed."})
    await enqueue(env, config, "We're moving house next week.")
    await env.drain(config, store)
    await enqueue(env, config, "We're moving house next week.", "It's stressing me out.")
    await env.drain(config, store)
    gists = [r for r in (await store.list(ALICE)).items if r.metadata.get("kind") == "gist"]
    assert len(gists) == 1 and gists[0].scope.value == "event" and gists[0].type.value == "episodic"
    assert gists[0].text.endswith("The user is moving house and feels stressed.") and gists[0].text[:4].isdigit()
    second_prompt = env.model_double.calls["memorize_extraction"][1]["messages"][-1]["content"]
    assert "The user talked about moving house." in second_prompt


async def test_each_job_has_a_span_linked_to_its_request(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    exporter = InMemorySpanExporter()
    telemetry = Telemetry(TelemetryConfig(), exporter)
    await enqueue(env, config, "I run marathons.")
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    worker = Worker(JobProcessor(config, store, queue), config.worker, telemetry)
    for entry_id, fields in await queue.read(worker.name, 10, None):
        assert await worker.handle(entry_id, fields) == "done"
    span, = [s for s in exporter.get_finished_spans() if s.name == "memorize job"]
    assert f"{span.links[0].context.trace_id:032x}" == TRACEPARENT.split("-")[1]
    assert telemetry.metrics.get("memgate_memorize_jobs_total", outcome="done") == 1


async def test_the_memorize_plugin_starts_serve_workers_with_its_lifecycle_and_exports_queue_gauges(env):
    from gateway.memorization.runtime import wait_drained
    from plugins.memorize import MemorizePlugin

    config = memorize_config("verbatim")
    store = await fresh_store(env)
    telemetry = Telemetry(TelemetryConfig())
    services = PluginServices(redis=env.redis, memory=store, upstreams=None, telemetry=telemetry)  # type: ignore[arg-type]
    plugin = MemorizePlugin(config, services)
    await enqueue(env, config, "I am learning to sail.")
    await plugin.start()
    try:
        await wait_drained(queue_for(config, env.redis), 10)
    finally:
        await plugin.stop()
    assert [r.text for r in (await store.list(ALICE)).items] == ["I am learning to sail."]
    text = (await telemetry.metrics.render())[0].decode()
    assert "\nmemgate_memorize_queue_length 0.0\n" in text and "\nmemgate_memorize_dead_letters 0.0\n" in text
    assert '\nmemgate_memorize_jobs_total{outcome="done"} 1.0\n' in text
