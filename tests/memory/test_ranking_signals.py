"""Ranking signals and the rerank step (issue 11 items 2 and 3; seeds 001 and 004), pure."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from gateway.memory.config import MemoryConfig, RankingConfig
from gateway.memory.ranking import QuerySignals, rerank
from gateway.memory.records import MemoryRecord, MemoryType, Scope, Source
from gateway.memory.signals import carries_date, emotion_of, is_when_question, query_period, recency

NOW = datetime(2024, 8, 20, 12, 0, tzinfo=UTC)  # a Tuesday


@pytest.mark.parametrize(("question", "start", "end"), [
    ("What did I do last summer?", "2023-06-01", "2023-09-01"),
    ("Where did we go in May 2023?", "2023-05-01", "2023-06-01"),
    ("What happened on May 7, 2023?", "2023-05-07", "2023-05-08"),
    ("What did I cook two weeks ago?", "2024-08-06", "2024-08-13"),
    ("What did I eat yesterday?", "2024-08-19", "2024-08-20"),
    ("What did I read last month?", "2024-07-01", "2024-08-01"),
    ("What happened in 2022?", "2022-01-01", "2023-01-01"),
    ("上周我做了什么？", "2024-08-12", "2024-08-19"),
    ("我去年去了哪里？", "2023-01-01", "2024-01-01"),
    ("我五月去了哪里？", "2024-05-01", "2024-06-01"),
    ("去年五月我在做什么？", "2023-05-01", "2023-06-01"),
    ("2023年3月发生了什么", "2023-03-01", "2023-04-01"),
    ("去年夏天我们去哪儿玩了？", "2023-06-01", "2023-09-01"),
    ("三天前我说了什么？", "2024-08-17", "2024-08-18"),
])
def test_query_period_names_the_span_relative_to_the_request(question, start, end):
    span = query_period(question, NOW)
    assert span is not None
    assert (span[0].date().isoformat(), span[1].date().isoformat()) == (start, end)


@pytest.mark.parametrize("question", [
    "What should I cook for dinner?", "I may go out later", "我喜欢什么菜？", "How many months did it take?",
])
def test_query_period_is_none_without_a_period(question):
    assert query_period(question, NOW) is None


def test_when_questions_en_and_zh():
    assert is_when_question("When did Caroline go to the support group?")
    assert is_when_question("What date is the wedding?")
    assert is_when_question("你什么时候去的北京？") and is_when_question("婚礼是哪天？")
    assert not is_when_question("Where did Caroline go?") and not is_when_question("你去了哪里？")


def rec(text: str, occurred: datetime = NOW, **extra) -> MemoryRecord:
    meta = extra.pop("metadata", {})
    return MemoryRecord(
        id=extra.pop("id", "0" * 32), user_id="u", friend_id="f", scope=extra.pop("scope", Scope.EVENT),
        type=extra.pop("type", MemoryType.EPISODIC), text=text, importance=extra.pop("importance", 0.5),
        emotion=extra.pop("emotion", None), occurred_at=occurred, created_at=NOW, updated_at=NOW,
        source=Source.CONVERSATION, confidence=1.0, metadata=meta,
    )


def test_carries_date():
    assert carries_date(rec("I went to a support group yesterday"))
    assert carries_date(rec("We married in June 2019"))
    assert carries_date(rec("我上周去了北京"))
    assert carries_date(rec("it happened", metadata={"occurred_expression": "last week"}))
    assert not carries_date(rec("I love painting sunsets"))
    assert not carries_date(rec("You may like it"))


def test_emotion_lexicon_en_and_zh():
    assert emotion_of("I was so happy and excited") == "joy"
    assert emotion_of("最近很焦虑，压力很大") == "fear"
    assert emotion_of("我很难过") == "sadness"
    assert emotion_of("The bus leaves at nine") is None


def test_recency_halves_every_half_life():
    assert recency(NOW - timedelta(days=30), NOW, 30 * 86400) == pytest.approx(0.5)
    assert recency(NOW - timedelta(days=60), NOW, 30 * 86400) == pytest.approx(0.25)
    assert recency(NOW + timedelta(days=1), NOW, 30 * 86400) == 1.0


OFF = RankingConfig(recency_weight=0, importance_weight=0, emotion_weight=0, period_weight=0, dated_weight=0, neighbour_weight=0, session_weight=0)


def ids(n: int) -> list[str]:
    return [f"{i:032x}" for i in range(n)]


def order_of(records: list[MemoryRecord], base: list[float], query: QuerySignals, config: RankingConfig) -> list[str]:
    by_id = {r.id: r for r in records}
    return [d for d, _ in rerank([r.id for r in records], dict(zip(by_id, base, strict=True)), by_id, query, config)]


def test_period_question_puts_the_memory_of_that_period_first_en_and_zh():
    a, b = ids(2)
    in_may = rec("We hiked up the hill", datetime(2024, 5, 12, tzinfo=UTC), id=b)
    in_july = rec("We hiked up the hill", datetime(2024, 7, 3, tzinfo=UTC), id=a)
    config = OFF.model_copy(update={"period_weight": 0.3})
    for question in ("Where did we hike in May?", "我们五月去哪儿爬山了？"):
        signals = QuerySignals.of(question, NOW)
        assert order_of([in_july, in_may], [0.9, 0.8], signals, config) == [b, a]
        assert order_of([in_july, in_may], [0.9, 0.8], signals, OFF) == [a, b]  # weight 0: fused order


def test_when_question_prefers_a_dated_memory():
    a, b = ids(2)
    plain = rec("Caroline went to the LGBTQ support group", id=a)
    dated = rec("Caroline: I went to the LGBTQ support group yesterday", id=b)
    config = OFF.model_copy(update={"dated_weight": 0.15})
    signals = QuerySignals.of("When did Caroline go to the support group?", NOW)
    assert order_of([plain, dated], [0.9, 0.8], signals, config) == [b, a]
    other = QuerySignals.of("Where did Caroline go?", NOW)
    assert order_of([plain, dated], [0.9, 0.8], other, config) == [a, b]


def test_recency_importance_emotion_and_priors_each_move_a_memory_up():
    a, b = ids(2)
    q = QuerySignals.of("what do you remember", NOW)
    old, new = rec("x", NOW - timedelta(days=300), id=a), rec("x", NOW - timedelta(days=1), id=b)
    assert order_of([old, new], [0.8, 0.78], q, OFF.model_copy(update={"recency_weight": 0.1})) == [b, a]
    low, vital = rec("x", id=a, importance=0.5), rec("x", id=b, importance=1.0)
    assert order_of([low, vital], [0.8, 0.78], q, OFF.model_copy(update={"importance_weight": 0.1})) == [b, a]
    sad = QuerySignals.of("I feel so sad and lonely today", NOW)
    calm, grief = rec("we walked the dog", id=a), rec("I cried when my grandpa passed away", id=b)
    assert order_of([calm, grief], [0.8, 0.78], sad, OFF.model_copy(update={"emotion_weight": 0.05})) == [b, a]
    ev, pref = rec("x", id=a), rec("x", id=b, type=MemoryType.PREFERENCE, scope=Scope.PROFILE)
    assert order_of([ev, pref], [0.8, 0.78], q, OFF.model_copy(update={"type_priors": {"preference": 0.05}})) == [b, a]
    assert order_of([ev, pref], [0.8, 0.78], q, OFF.model_copy(update={"scope_priors": {"profile": 0.05}})) == [b, a]


def test_neighbours_and_session_pull_up_turns_of_the_best_conversation():
    a, b, c, d = ids(4)
    hit = rec("x", id=a, metadata={"conversation_id": "s1", "position": 4})
    next_turn = rec("x", id=b, metadata={"conversation_id": "s1", "position": 5})
    elsewhere = rec("x", id=c, metadata={"conversation_id": "s2", "position": 9})
    far = rec("x", id=d, metadata={"conversation_id": "s1", "position": 12})
    q = QuerySignals.of("anything", NOW)
    records, base = [hit, elsewhere, next_turn, far], [0.9, 0.6, 0.55, 0.5]
    assert order_of(records, base, q, OFF) == [a, c, b, d]
    assert order_of(records, base, q, OFF.model_copy(update={"neighbour_weight": 0.2})) == [a, b, c, d]
    assert order_of(records, base, q, OFF.model_copy(update={"session_weight": 0.2})) == [a, b, far.id, c]


def test_ranking_weights_live_in_the_memory_config():
    config = MemoryConfig.model_validate({"ranking": {"recency_weight": 0.1, "type_priors": {"preference": 0.05}}})
    assert config.ranking.recency_weight == 0.1 and config.ranking.type_priors == {"preference": 0.05}
    with pytest.raises(ValueError, match="ranking"):
        MemoryConfig.model_validate({"ranking": {"recency_wieght": 0.1}})


def test_diversity_lets_another_conversation_in_before_a_third_turn_of_the_first():
    a, b, c, d = ids(4)
    s1 = [rec("x", id=x, metadata={"conversation_id": "s1", "position": i}) for i, x in enumerate((a, b, c))]
    other = rec("x", id=d, metadata={"conversation_id": "s2", "position": 0})
    q = QuerySignals.of("anything", NOW)
    assert order_of([*s1, other], [0.9, 0.85, 0.8, 0.7], q, OFF) == [a, b, c, d]
    assert order_of([*s1, other], [0.9, 0.85, 0.8, 0.7], q, OFF.model_copy(update={"diversity_weight": 0.1})) == [a, b, d, c]


def test_a_question_naming_a_speaker_prefers_what_that_speaker_said():
    a, b = ids(2)
    said_by_other = rec("Caroline: we went camping at the beach", id=a)
    said_by_melanie = rec("we went camping in the forest", id=b, metadata={"speaker": "Melanie"})
    q = QuerySignals.of("Where has Melanie camped?", NOW)
    assert order_of([said_by_other, said_by_melanie], [0.8, 0.78], q, OFF) == [a, b]
    assert order_of([said_by_other, said_by_melanie], [0.8, 0.78], q, OFF.model_copy(update={"speaker_weight": 0.05})) == [b, a]
    q = QuerySignals.of("Where has Caroline camped?", NOW)
    assert order_of([said_by_melanie, said_by_other], [0.8, 0.78], q, OFF.model_copy(update={"speaker_weight": 0.05})) == [a, b]


def test_default_session_share_lifts_a_turn_of_the_day_the_question_is_about():
    """Turn-by-turn memories (no conversation id) group by day; with the shipped weight
    (session_weight 0.2) a turn of the day most candidates come from passes one of another
    day that is 0.08 ahead by fused score; at 0.1 (the weight before) it does not."""
    a, b, c = ids(3)
    day1, day2 = datetime(2021, 5, 8, 13, tzinfo=UTC), datetime(2021, 6, 9, 13, tzinfo=UTC)
    hit, same_day, other_day = rec("x", day1, id=a), rec("x", day1, id=b), rec("x", day2, id=c)
    q = QuerySignals.of("anything", NOW)
    records, base = [hit, other_day, same_day], [0.9, 0.60, 0.52]
    assert RankingConfig().session_weight == 0.2
    assert order_of(records, base, q, RankingConfig()) == [a, b, c]
    assert order_of(records, base, q, RankingConfig(session_weight=0.1)) == [a, c, b]


def reference_scores(order, base, records, query, config):
    """rerank's score of each candidate, each signal added in turn (as written before the
    per-record terms were kept across the reranks of one query)."""
    from gateway.memory.ranking import _group, _position
    from gateway.memory.signals import record_emotion, speaker_of
    from gateway.memory.tokenize import tokenize

    ids_ = [d for d in order if d in records]
    groups = {d: _group(records[d]) for d in ids_}
    totals: dict[str, float] = {}
    for d in ids_:
        totals[groups[d]] = totals.get(groups[d], 0.0) + base.get(d, 0.0)
    best_total = max(totals.values(), default=0.0) or 1.0
    at: dict[tuple[str, int], float] = {}
    for d in ids_:
        if (p := _position(records[d])) is not None:
            at[(groups[d], p)] = max(at.get((groups[d], p), 0.0), base.get(d, 0.0))
    out = {}
    for d in ids_:
        r, score = records[d], base.get(d, 0.0)
        score += config.recency_weight * recency(r.occurred_at, query.now, config.recency_half_life_s)
        score += config.importance_weight * (r.importance - 0.5)
        if query.emotion is not None and record_emotion(r) == query.emotion:
            score += config.emotion_weight
        score += config.type_priors.get(r.type.value, 0.0) + config.scope_priors.get(r.scope.value, 0.0)
        if query.period is not None and query.period[0] <= r.occurred_at < query.period[1]:
            score += config.period_weight
        if query.when and carries_date(r):
            score += config.dated_weight
        if query.words and (speaker := speaker_of(r)) and set(tokenize(speaker)) <= query.words:
            score += config.speaker_weight
        score += config.session_weight * totals[groups[d]] / best_total
        if (p := _position(r)) is not None:
            score += config.neighbour_weight * max(at.get((groups[d], p + s), 0.0)
                                                   for w in range(1, config.neighbour_window + 1) for s in (-w, w))
        out[d] = score
    return out


def test_signal_terms_kept_across_the_reranks_of_one_query_give_the_same_scores():
    # the store reranks each search of a request (auto_recall: three) with one memo of the
    # records' signal terms: scores equal, bit for bit, to each signal added in turn
    config = RankingConfig(emotion_weight=0.05, period_weight=0.3, dated_weight=0.15, speaker_weight=0.05,
                           neighbour_weight=0.2, session_weight=0.2, type_priors={"preference": 0.05},
                           scope_priors={"profile": 0.03})
    records = [rec(text, NOW - timedelta(days=3 * i + 1), id=f"{i:032x}", importance=0.1 * (i % 10),
                   type=MemoryType.PREFERENCE if i % 4 == 0 else MemoryType.EPISODIC,
                   scope=Scope.PROFILE if i % 4 == 0 else Scope.EVENT,
                   metadata={"conversation_id": f"c{i % 3}", "position": i, "speaker": "Melanie" if i % 5 else "Jon"})
               for i, text in enumerate(["I was so happy at the lake last week", "Melanie: we went camping in May",
                                         "I cried when my grandpa passed away", "we walked the dog yesterday",
                                         "Jon bought a red bicycle", "she painted the shed on 2024-05-03"] * 3)]
    by_id = {r.id: r for r in records}
    for question in ("When was Melanie so happy at the lake in May?", "what did Jon buy", "I feel sad and lonely"):
        query = QuerySignals.of(question, NOW)
        memo: dict = {}
        for subset in (records[:12], records[4:], records[::2]):  # overlapping candidate sets, one memo
            order = [r.id for r in subset]
            base = {d: 0.9 - 0.01 * k for k, d in enumerate(order)}
            got = dict(rerank(order, base, by_id, query, config, memo))
            assert got == reference_scores(order, base, by_id, query, config)  # exact floats
        assert set(memo) == set(by_id)
