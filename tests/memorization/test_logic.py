"""Sans-IO memorization logic with literal inputs: dates, redaction, dedupe, capture,
reconcile and inference checks, keywords, language, backoff, span links."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

from gateway.memorization.capture import CONTEXT_CHARS, capture_exchange, conversation_id, memorize_disabled
from gateway.memorization.config import RedactionConfig, RedactionRule, WorkerConfig
from gateway.memorization.dedupe import hashed_turns
from gateway.memorization.facts import reconcile_ops, to_new_memory
from gateway.memorization.inference import inference_ops
from gateway.memorization.jobs import Job
from gateway.memorization.keywords import keywords_of
from gateway.memorization.observe import link_from_traceparent
from gateway.memorization.prompts import language_of
from gateway.memorization.redact import Redactor, luhn_ok
from gateway.memorization.schemas import ExtractedFact, Inferences, ReconcileDecision
from gateway.memorization.worker import backoff_s
from gateway.memory.dates import relative_in, resolve_occurred
from gateway.memory.records import MemoryRecord, NewMemory, Scope, Tenant, build_record
from gateway.proxy.assembly import reply_from_completion
from gateway.proxy.wire import ChatRequest

WED = datetime(2024, 5, 8, 15, 30, tzinfo=UTC)  # a Wednesday


@pytest.mark.parametrize("expression, expected", [
    ("yesterday", date(2024, 5, 7)), ("昨天", date(2024, 5, 7)), ("前天", date(2024, 5, 6)),
    ("today", date(2024, 5, 8)), ("tomorrow", date(2024, 5, 9)), ("last week", date(2024, 4, 29)),
    ("上周", date(2024, 4, 29)), ("上个月", date(2024, 4, 1)), ("last month", date(2024, 4, 1)),
    ("去年", date(2023, 1, 1)), ("3 days ago", date(2024, 5, 5)), ("三天前", date(2024, 5, 5)),
    ("two weeks ago", date(2024, 4, 24)), ("2个月前", date(2024, 3, 8)), ("last Friday", date(2024, 5, 3)),
    ("上周五", date(2024, 5, 3)), ("周一", date(2024, 5, 6)), ("2024-04-01", date(2024, 4, 1)),
    ("2023-12", date(2023, 12, 1)), ("2021", date(2021, 1, 1)),
])
def test_relative_dates_resolve_against_the_message_time(expression, expected):
    assert resolve_occurred(expression, WED).date() == expected


@pytest.mark.parametrize("text, expression, expected", [
    ("I went to a support group yesterday.", "yesterday", date(2024, 5, 7)),
    ("We moved to Lisbon two weeks ago, finally", "two weeks ago", date(2024, 4, 24)),
    ("A few days ago I quit my job", "a few days ago", date(2024, 5, 5)),
    ("Last Friday was my birthday", "last friday", date(2024, 5, 3)),
    ("我上周五去了北京", "上周五", date(2024, 5, 3)),
    ("大前天下了一场大雨", "大前天", date(2024, 5, 5)),
    ("我三天前辞职了", "三天前", date(2024, 5, 5)),
    ("去年夏天我们去了日本", "去年", date(2023, 1, 1)),
    ("Today is fine, yesterday was not", "yesterday", date(2024, 5, 7)),  # "today" names the message's own day
])
def test_a_relative_expression_in_a_message_names_its_day(text, expression, expected):
    found, when = relative_in(text, WED)
    assert found == expression and when.date() == expected


@pytest.mark.parametrize("text", ["see you today", "this week is busy", "nothing temporal here", "我今天很开心",
                                  "yesterdays", "the lastweek typo"])
def test_messages_naming_no_other_day_give_none(text):
    assert relative_in(text, WED) is None


def test_unknown_or_empty_date_expressions_resolve_to_none():
    assert resolve_occurred("when I was young", WED) is None
    assert resolve_occurred(None, WED) is None and resolve_occurred("  ", WED) is None


def test_redaction_removes_keys_emails_phones_and_luhn_valid_cards_only():
    r = Redactor.from_config(RedactionConfig())
    assert r.redact("key sk-proj-abcdefghijklmnop1234 here") == "key [api_key] here"
    assert r.redact("write to a.b+c@mail.example.org!") == "write to [email]!"
    assert r.redact("card 4111 1111 1111 1111") == "card [card]"
    assert r.redact("order 4111 1111 1111 1112") == "order 4111 1111 1111 1112"
    assert r.redact("call +1 415-555-0132 or 13812345678") == "call [phone] or [phone]"
    kept = "On 2023-05-08 at 10:30 I paid 1200 for 3 tickets in 2024"
    assert r.redact(kept) == kept
    assert luhn_ok("79927398713") and not luhn_ok("79927398710")


def test_redaction_extra_rules_and_switch():
    extra = RedactionConfig(extra=(RedactionRule(name="ssn", pattern=r"\b\d{3}-\d{2}-\d{4}\b"),))
    assert Redactor.from_config(extra).redact("ssn 123-45-6789") == "ssn [ssn]"
    assert Redactor.from_config(RedactionConfig(enabled=False)).redact("x@y.com") == "x@y.com"


def test_repeated_identical_messages_get_different_hashes_and_resends_the_same():
    first = hashed_turns("c", [("user", "yes"), ("assistant", "ok"), ("user", "yes")])
    again = hashed_turns("c", [("user", "yes"), ("assistant", "ok"), ("user", "yes"), ("assistant", "done")])
    assert first[0] != first[2] and again[:3] == first
    assert hashed_turns("other", [("user", "yes")])[0] != first[0]
    assert hashed_turns("c", [("user", "yes"), ("assistant", "ok"), ("user", "yes")], 2) == first[2:]


def test_conversation_id_prefers_header_then_metadata_then_the_history_prefix():
    request = ChatRequest(model="m", messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}],
                          metadata={"conversation_id": "meta-1"})
    assert conversation_id(request, {"x-memgate-conversation-id": "hdr"}) == "hdr"
    assert conversation_id(request, {}) == "meta-1"
    plain = ChatRequest(model="m", messages=[{"role": "system", "content": "S"}, {"role": "user", "content": "hi"}])
    longer = plain.model_copy(update={"messages": [*plain.messages, {"role": "assistant", "content": "x"}, {"role": "user", "content": "more"}]})
    assert conversation_id(plain, {}) == conversation_id(longer, {}) != conversation_id(request.model_copy(update={"messages": [{"role": "user", "content": "hey"}]}), {})
    assert memorize_disabled({"x-memgate-memorize": "OFF"}) and not memorize_disabled({})


def test_capture_takes_user_and_assistant_turns_and_the_reply_with_message_time():
    request = ChatRequest(model="m", messages=[
        {"role": "system", "content": "S"}, {"role": "user", "content": [{"type": "text", "text": "part"}]},
        {"role": "assistant", "content": "a1"}, {"role": "tool", "content": "t"}, {"role": "user", "content": "u2"}])
    reply = reply_from_completion({"choices": [{"index": 0, "message": {"role": "assistant", "content": "r"}}]}, cancelled=True)
    cap = capture_exchange(request, reply, headers={}, user_id="u", friend_id="f", request_id="r1",
                           received_at=WED, traceparent=None, max_candidates=64, job_id="j")
    assert [(t.role, t.text, t.index) for t in cap.turns] == [("user", "part", 1), ("assistant", "a1", 2), ("user", "u2", 4), ("assistant", "r", 5)]
    assert cap.header.partial and all(t.at == WED for t in cap.turns)
    limited = capture_exchange(request, reply, headers={}, user_id="u", friend_id="f", request_id="r1",
                               received_at=WED, traceparent=None, max_candidates=2, job_id="j")
    assert [t.text for t in limited.turns] == ["u2", "r"]
    # each turn carries the end of the message before it (limited: the one before the window too)
    assert [t.context for t in cap.turns] == ["", "part", "a1", "u2"]
    assert [t.context for t in limited.turns] == ["a1", "u2"]
    # ... and the start of the one after it (the reply for the last user message; none for the reply)
    assert [t.context_after for t in cap.turns] == ["a1", "u2", "r", ""]
    assert [t.context_after for t in limited.turns] == ["r", ""]
    long = ChatRequest(model="m", messages=[{"role": "assistant", "content": "x" * 1000 + " What food do you like?"},
                                            {"role": "user", "content": "Italian"}])
    turns = capture_exchange(long, reply, headers={}, user_id="u", friend_id="f", request_id="r1",
                             received_at=WED, traceparent=None, max_candidates=64, job_id="j").turns
    assert turns[1].context.endswith("What food do you like?") and len(turns[1].context) == CONTEXT_CHARS


def _job() -> Job:
    return Job(job_id="j1", user_id="u", friend_id="f", conversation_id="c", enqueued_at=WED)


def _record(text: str, rid: str) -> MemoryRecord:
    return build_record(Tenant("u", "f"), NewMemory(scope=Scope.PROFILE, type="semantic", text=text), rid, WED)


def test_facts_from_the_assistant_never_become_the_users_profile_and_preferences_fill_slots():
    from_assistant = to_new_memory(ExtractedFact(text="The tutor lived in Rome", speaker="assistant", scope="profile"), _job(), WED)
    assert from_assistant.scope is Scope.EVENT and from_assistant.metadata["speaker"] == "assistant"
    pref = to_new_memory(ExtractedFact(text="Prefers short answers", type="preference", slot="Response Length", value="concise",
                                       occurred="yesterday"), _job(), WED)
    assert pref.metadata["slot"] == "response_length" and pref.metadata["value"] == "concise"
    assert pref.occurred_at.date() == date(2024, 5, 7)


def test_reconcile_checks_targets_and_never_drops_a_fact_silently():
    old_a, old_b = _record("lives in Berlin", "0" * 31 + "a"), _record("likes tea", "0" * 31 + "b")
    memories = [NewMemory(scope=Scope.PROFILE, type="semantic", text=t) for t in ["lives in Paris", "hates tea", "has a cat", "is 30"]]
    candidates = [[old_a], [old_b], [old_a], []]
    decisions = [ReconcileDecision(fact=0, event="UPDATE", target="m1", text="moved Berlin -> Paris"),
                 ReconcileDecision(fact=1, event="DELETE", target="m2"),
                 ReconcileDecision(fact=2, event="UPDATE", target="m1")]  # m1 already updated: becomes ADD
    ops = reconcile_ops(_job(), memories, candidates, decisions)
    assert [(o.kind, o.target) for o in ops] == [("update", old_a.id), ("delete", old_b.id), ("add", None), ("add", None)]
    assert ops[0].memory.text == "moved Berlin -> Paris"
    bogus = reconcile_ops(_job(), memories[:1], [[old_a]], [ReconcileDecision(fact=0, event="DELETE", target="m7")])
    assert bogus == []  # a DELETE of something not shown is a NOOP
    assert reconcile_ops(_job(), memories[:1], [[old_a]], [ReconcileDecision(fact=0, event="UPDATE", target="m7")])[0].kind == "add"


def test_inferences_need_two_real_memories_and_enough_confidence():
    shown = {"m1": _record("writes Rust", "0" * 31 + "1"), "m2": _record("maintains a crate", "0" * 31 + "2")}
    answer = Inferences.model_validate({"inferences": [
        {"conclusion": "Rust developer", "confidence": 0.8, "basedOn": ["m1", "m2"]},
        {"conclusion": "weak", "confidence": 0.5, "basedOn": ["m1", "m2"]},
        {"conclusion": "one source", "confidence": 0.9, "basedOn": ["m1"]},
        {"conclusion": "made up", "confidence": 0.9, "basedOn": ["m1", "m9"]}]})
    ops = inference_ops(_job(), answer, shown, 0.6)
    assert [o.memory.text for o in ops] == ["Rust developer"]
    assert ops[0].memory.based_on == [shown["m1"].id, shown["m2"].id] and ops[0].memory.scope is Scope.PROFILE


def test_keywords_language_backoff_and_links():
    assert keywords_of("I adopted a puppy named Rex, 我喜欢狗") == ["adopted", "puppy", "named", "rex", "我喜", "喜欢", "欢狗"]
    assert language_of(["我昨天去了北京 with friends"]) == "zh" and language_of(["hello"]) == "en"
    assert [backoff_s(n, WorkerConfig()) for n in (1, 2, 3, 20)] == [2.0, 4.0, 8.0, 300.0]
    link = link_from_traceparent("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
    assert link is not None and link.context.span_id == 0xB7AD6B7169203331
    assert link_from_traceparent("garbage") is None and link_from_traceparent(None) is None
