"""Memory-model and worker robustness on real Redis, a real worker and the upstream double
as the memory model (issue 9, items 1 and 14): a job that overruns or keeps wedging its
worker is dead-lettered and the worker moves on; every memory-model call is capped
(max_tokens, maxItems); a server that rejects ``response_format: json_schema`` with
llama-cpp-python's 500 is detected and the client falls back; placeholder and repeated
facts are never stored."""

from __future__ import annotations

import uuid
from typing import Any

from gateway.memorization.queue import parse_ref
from gateway.memorization.runtime import queue_for
from gateway.memory.records import Tenant
from tests.memorization.conftest import memorize_config, user_stream
from tests.memorization.memory_model import fact
from tests.memorization.test_workers import enqueue
from tests.support.upstream_double import HangReply

ALICE = Tenant("alice", "tutor")
REDIS_MODES = ["single", "cluster"]  # every test once on one node, once on the local cluster


async def fresh_store(env: Any) -> Any:
    return await env.store("t" + uuid.uuid4().hex[:12])


async def texts(store: Any) -> list[str]:
    return sorted(r.text for r in (await store.list(ALICE)).items if r.metadata.get("kind") != "gist")


async def test_a_job_that_overruns_is_dead_lettered_at_once_and_the_next_job_is_done(env, upstream):
    config = memorize_config("extract", worker={"job_timeout_s": 2.0, "max_attempts": 5},
                             gists={"enabled": False})
    store = await fresh_store(env)
    model = env.model_double
    hung: list[str] = []

    def hang_first_decision(rec):
        body = rec.json or {}
        name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name")
        if name == "memorize_decision" and not hung:
            hung.append(name)
            return HangReply(seconds=30)
        return model(rec)

    upstream.default = hang_first_decision
    model.on("memorize_extraction", {"facts": [fact("The user plays the oboe")]})
    await enqueue(env, config, "I keep my notes in a diary.")
    await enqueue(env, config, "I play the oboe.")
    await env.drain(config, store)  # model timeout_s is 5: only the job budget (2 s: a normal job on a loaded machine fits) can end the hang
    dead = await queue_for(config, env.redis).dead_letters()
    assert len(dead) == 1
    assert dead[0][1]["error"] == "JobTimeout: overran job_timeout_s=2.0"
    assert '"attempt":1' in dead[0][1]["job"]  # not retried: it would overrun again
    assert await texts(store) == ["The user plays the oboe"]


async def test_a_job_that_keeps_killing_its_worker_is_dead_lettered_on_reclaim_not_run_again(env):
    config = memorize_config("extract", worker={"claim_min_idle_ms": 1, "max_deliveries": 3})
    store = await fresh_store(env)
    queue = queue_for(config, env.redis)
    await queue.ensure_group()
    entry = await enqueue(env, config, "A message that wedges every worker that takes it.")
    # three workers took it and died (or the gateway was restarted three times)
    assert len(await queue.read("dead-1", 10, None)) == 1
    _shard, entry_id = parse_ref(entry)
    await env.redis.xclaim(user_stream(queue), queue.group, "dead-2", 0, [entry_id])
    await env.redis.xclaim(user_stream(queue), queue.group, "dead-3", 0, [entry_id])
    await env.drain(config, store)
    dead = await queue.dead_letters()
    assert len(dead) == 1 and "delivered 4 times without an ack (max_deliveries=3" in dead[0][1]["error"]
    assert env.model_double.calls["memorize_decision"] == []  # never handled a fourth time
    assert (await queue.stats()).pending == 0


async def test_every_call_is_capped_and_the_extraction_schema_limits_the_facts(env):
    config = memorize_config("extract", max_facts=2, model={"max_tokens": 300})
    store = await fresh_store(env)
    env.model_double.on("memorize_extraction", {"facts": [fact("The user likes tea"), fact("The user likes jam"),
                                                          fact("The user likes rye bread")]})
    await enqueue(env, config, "I like tea, jam and rye bread.")
    await env.drain_with(config, store)
    bodies = [b for calls in env.model_double.calls.values() for b in calls]
    assert bodies and all(b["max_tokens"] == 300 for b in bodies)
    extraction = env.model_double.calls["memorize_extraction"][0]
    schema = extraction["response_format"]["json_schema"]["schema"]
    assert schema["properties"]["facts"]["maxItems"] == 2
    assert await texts(store) == ["The user likes jam", "The user likes tea"]  # a third is dropped


async def test_placeholder_empty_and_repeated_facts_are_never_stored(env):
    config = memorize_config("extract", gists={"enabled": False})
    store = await fresh_store(env)
    env.model_double.on(
        "memorize_extraction",
        {"facts": [fact("..."), fact(""), fact("N/A"), fact("The user likes jazz"), fact("the user likes  jazz."),
                   fact("…")]},
        {"facts": [fact("The user likes jazz"), fact("The user owns a trumpet")]},
    )
    await enqueue(env, config, "I like jazz.")
    await env.drain(config, store)
    assert await texts(store) == ["The user likes jazz"]
    await enqueue(env, config, "Jazz, yes, and I own a trumpet.")
    await env.drain(config, store)
    assert await texts(store) == ["The user likes jazz", "The user owns a trumpet"]
    # the known fact never reached reconcile as a new fact: only the trumpet did
    shown = [line for call in env.model_double.calls["memorize_reconcile"] for m in call["messages"]
             if m["role"] == "user" for line in m["content"].splitlines() if line.startswith("New fact")]
    assert shown == ["New fact 0: The user owns a trumpet"]


async def test_a_server_rejecting_json_schema_with_500_gets_json_object_with_the_schema_and_it_is_remembered(env):
    # one job at a time: concurrent jobs' first calls would all go out before the rejection
    config = memorize_config("extract", gists={"enabled": False}, worker={"concurrency": 1})
    store = await fresh_store(env)
    model = env.model_double
    model.reject_formats = {"json_schema"}
    model.on("memorize_extraction", {"facts": [fact("The user rows on Sundays")]},
             {"facts": [fact("The user swims on Mondays")]})
    await enqueue(env, config, "I row on Sundays.")
    await enqueue(env, config, "I swim on Mondays.")
    await env.drain_with(config, store)
    assert await texts(store) == ["The user rows on Sundays", "The user swims on Mondays"]
    # one rejected json_schema call, then json_object with the schema (llama-cpp-python's
    # grammar-constrained form) for every call of the same client
    assert model.formats[0] == "json_schema" and model.formats.count("json_schema") == 1
    assert set(model.formats[1:]) == {"json_object_schema"}
    sent = model.calls["memorize_extraction"][0]
    assert sent["messages"][0]["content"].endswith(
        'Answer with only a JSON object (memorize_extraction) with the keys "facts", "gist".')
    schema = sent["response_format"]["schema"]
    assert sent["response_format"]["type"] == "json_object"
    assert schema["properties"]["facts"]["maxItems"] == config.max_facts and "$defs" in schema


async def test_a_server_rejecting_the_schema_in_json_object_gets_plain_json_object(env):
    config = memorize_config("extract", gists={"enabled": False}, worker={"concurrency": 1})
    store = await fresh_store(env)
    model = env.model_double
    model.reject_formats = {"json_schema", "json_object_schema"}
    model.on("memorize_extraction", {"facts": [fact("The user knits scarves")]})
    await enqueue(env, config, "I knit scarves.")
    await env.drain_with(config, store)
    assert await texts(store) == ["The user knits scarves"]
    assert model.formats[:3] == ["json_schema", "json_object_schema", "json_object"]
    assert set(model.formats[3:]) == {"json_object"}
    assert model.calls["memorize_extraction"][0]["response_format"] == {"type": "json_object"}


async def test_a_server_rejecting_both_formats_gets_prompt_only_json(env):
    config = memorize_config("extract", gists={"enabled": False})
    store = await fresh_store(env)
    model = env.model_double
    model.reject_formats = {"json_schema", "json_object_schema", "json_object"}
    model.on("memorize_extraction", {"facts": [fact("The user paints watercolours")]})
    await enqueue(env, config, "I paint watercolours.")
    await env.drain_with(config, store)
    assert await texts(store) == ["The user paints watercolours"]
    assert model.formats[:4] == ["json_schema", "json_object_schema", "json_object", "prompt"]
    assert set(model.formats[4:]) == {"prompt"}
    assert "response_format" not in model.calls["memorize_extraction"][0]


async def test_a_failing_server_is_an_upstream_error_not_a_downgrade(env):
    from gateway.memorization.schemas import Decision
    from gateway.runtime.errors import UpstreamError
    from tests.memorization.memory_model import BARE_500

    model = env.model_double
    model.reject_with = BARE_500
    client = env.model_client()
    messages = [{"role": "user", "content": "x"}]
    try:
        # every format rejected; then: structured formats rejected without naming the
        # format and the prompt-only answer unusable (an overloaded server)
        for rejected in ({"json_schema", "json_object_schema", "json_object", "prompt"},
                         {"json_schema", "json_object_schema", "json_object"}):
            model.reject_formats = rejected
            model.always["memorize_decision"] = "Sorry, I am overloaded."
            try:
                await client.complete_json(messages, Decision, "memorize_decision")
            except UpstreamError as exc:
                assert exc.upstream_status == 500  # type: ignore[attr-defined]
            else:
                raise AssertionError("expected UpstreamError")
            assert client.json_mode == "json_schema"  # not downgraded
    finally:
        await client.aclose()


async def test_a_rejection_naming_the_format_downgrades_even_if_the_small_model_then_answers_badly(env):
    from gateway.memorization.schemas import Decision
    from gateway.proxy.model_client import ModelOutputError

    model = env.model_double
    model.reject_formats = {"json_schema"}  # llama-cpp-python's 500 names response_format
    model.on("memorize_decision", "not json", "still not json", {"should_remember": True, "reason": "ok"})
    client = env.model_client()
    messages = [{"role": "user", "content": "x"}]
    try:
        try:
            await client.complete_json(messages, Decision, "memorize_decision")
        except ModelOutputError:
            pass
        else:
            raise AssertionError("expected ModelOutputError after the repair call")
        assert client.json_mode == "json_object_schema"
        assert model.formats == ["json_schema", "json_object_schema", "json_object_schema"]  # answer + one repair
        assert (await client.complete_json(messages, Decision, "memorize_decision")).should_remember
        assert model.formats[3:] == ["json_object_schema"]  # remembered: no json_schema attempt
    finally:
        await client.aclose()


async def test_a_raw_newline_inside_a_fact_is_read_and_a_placeholder_gist_is_not_stored(env):
    # Gemma 3 270M under llama-cpp-python's schema grammar writes a literal newline inside
    # a JSON string (strict JSON forbids it) and copies the prompt's "..." as the gist
    config = memorize_config("extract")
    store = await fresh_store(env)
    env.model_double.on("memorize_extraction", '{ "facts": [{"text": "The user brews beer at home.\n" }], "gist": "..."}')
    await enqueue(env, config, "I brew beer at home.")
    await env.drain_with(config, store)
    assert await queue_for(config, env.redis).dead_letters() == []
    items = (await store.list(ALICE)).items
    assert [r.text for r in items] == ["The user brews beer at home."]  # no gist record "<date>: ..."


async def test_a_raw_newline_does_not_hide_a_schema_violation(env):
    from gateway.memorization.schemas import Extraction
    from gateway.proxy.model_client import ModelOutputError, parse_json_reply

    try:
        parse_json_reply('{"facts": [{"text": "a\nb", "scope": "forever"}]}', Extraction)
    except ModelOutputError as exc:
        assert "'profile' or 'event'" in str(exc)  # the schema's error, not the newline's
    else:
        raise AssertionError("expected ModelOutputError")
