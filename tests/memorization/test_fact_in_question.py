"""Facts said inside a question clause (gateway/memorization/kinds.py), English and Chinese:
by grammar category, each with asks of the same shape that state nothing of the user's and
must still form nothing.

1. A possessive presupposes its referent: "with my eczema", "my CPAP mask", and "with a
   pacemaker" after the subject I; not a measure everyone has ("my blood pressure"), nor a
   condition of someone else ("a friend with asthma") or of people at large.
2. "my" + a proper name picks out one thing of the user's ("my ferret Noodle"); a day or a
   name in a phrase of its own ("my Sunday off", "my address with Medicare") is none.
3. A fronted "when I ..." clause of time before an ask states the user's routine; a future
   or a question about when ("when will I ...") does not.
4. Chinese: 我 + a demonstrative + a chronic condition, 我家 + 那只 / 那条 + an animal, a
   relative clause on 我; not 这样的我, not 你推荐的我, not a condition supposed with 如果.
5. Chinese: a place with the proximal 这边 (the speaker is there), a move before an ask
   (搬到 X 之后), a trip about to happen (要去 … 了), a partner named in chat words (npy / gf);
   not a place that is no one's, the other side's 那边, a supposed move, an impersonal 要…了.
6. "as a <role>" after the subject I, "my" / 我家 + a pet's breed, "my" + a thing had for good
   (an allotment, a cello), and a Chinese ask led by 我
   whose words fill a slot (我在苏州上班…); not a role played, a pet elsewhere, 的话.
7. An ask for what the assistant was told ("what am I allergic to?", "remind me what ...",
   我家狗叫什么来着): the question word stands for the attribute, so nothing is stated; an ask
   about something else that names the attribute keeps it.
"""

from __future__ import annotations

import pytest

from gateway.memorization.clause_classifier import candidates
from gateway.memorization.disclosure import analyse
from tests.memorization.conftest import kept_texts as _kept

# -- 1. a condition or device named as the user's own --------------------------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("can I do hot yoga with my eczema?", "my eczema"),
    ("how often should I replace my CPAP mask", "my CPAP mask"),
    ("can I go scuba diving with a pacemaker?", "with a pacemaker"),
    ("what's the best way to hide my insulin pump under a dress", "my insulin pump"),
])
def test_a_condition_or_device_the_question_says_is_the_users_is_kept(text: str, kept: str):
    memories = _kept(text)
    assert memories and kept in memories[0]


@pytest.mark.parametrize("text", [
    "can people with eczema do hot yoga?",  # people at large
    "what should I get for a friend with asthma?",  # the with-phrase modifies the friend
    "how do I check my blood pressure at home?",  # a measure everyone has
    "if I had a pacemaker could I still use a table saw?",  # supposed
    "is tinnitus permanent?",
])
def test_a_condition_of_no_one_or_of_someone_else_forms_nothing(text: str):
    assert _kept(text) == []


# -- 2. "my" + a proper name -------------------------------------------------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("what treats are safe for my ferret Noodle?", "my ferret Noodle"),
    ("why does my Subaru Outback pull to the left when braking", "my Subaru Outback"),
    ("should I switch from Lloyds to Monzo for everyday banking?", "switch from Lloyds"),  # the state before the change
])
def test_my_and_a_proper_name_inside_a_question_is_kept(text: str, kept: str):
    memories = _kept(text)
    assert memories and kept in memories[0]


@pytest.mark.parametrize("text", [
    "what should I cook for my Sunday lunch?",  # a day, no name
    "how do I update my address with Medicare?",  # the name is in a phrase of its own
    "what should I name my new puppy, something like Biscuit?",  # a name proposed, in a phrase of its own
    "what treats are safe for ferrets?",
    "how do I switch from dark mode to light mode?",  # no name: nothing of the user's
    "if I switched from Lloyds to Monzo would I lose my history?",  # supposed
])
def test_a_day_or_a_name_outside_the_noun_phrase_forms_nothing(text: str):
    assert _kept(text) == []


# -- 3. "when I ..." before an ask ---------------------------------------------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("when I get off my night shift at 7, what should I eat before bed?", "when I get off my night shift at 7"),
    ("when my commute is over two hours each way, how do I stay sane", "when my commute is over two hours each way"),
])
def test_a_when_clause_of_the_users_routine_before_a_question_is_kept(text: str, kept: str):
    memories = _kept(text)
    assert memories and memories[0] == kept


@pytest.mark.parametrize("text", [
    "when will I know if I passed?",  # "when" asks
    "when I retire, where should I live?",  # a future
    "when does the bakery open?",
])
def test_a_when_question_or_a_future_when_clause_forms_nothing(text: str):
    assert _kept(text) == []


# -- 4. Chinese: the speaker's own condition, pet, or a description of 我 -------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("我这个痛风还能喝啤酒吗", "我这个痛风"),
    ("我家那条五岁的柯基老是掉毛怎么办", "我家那条五岁的柯基"),
    ("做了二十年会计的我转行学编程还来得及吗", "做了二十年会计的我"),
])
def test_the_speakers_condition_pet_or_description_inside_a_question_is_kept(text: str, kept: str):
    memories = _kept(text)
    assert memories and kept in memories[0]


@pytest.mark.parametrize("text", [
    "我这个情况能吃西瓜吗",  # no condition named
    "你推荐的我能吃吗",  # the thing recommended is the topic
    "这样的我还有救吗",  # a demonstrative of manner, nothing said
    "如果我这个痛风犯了能喝啤酒吗",  # supposed
    "邻居家那只猫老来我家怎么办",  # someone else's cat
    "五岁的柯基掉毛严重吗",
])
def test_no_condition_someone_elses_pet_or_a_supposition_forms_nothing(text: str):
    assert _kept(text) == []


# -- 5. Chinese: where the speaker is, a move, a trip about to happen, a partner in chat words --

@pytest.mark.parametrize(("text", "kept"), [
    ("成都这边哪家火锅不排队", "成都这边"),  # 这边 is centred on the speaker
    ("调到深圳以后通勤坐地铁还是开车好？", "调到深圳以后"),  # a move of the speaker's, the ask's time clause
    ("要去大理支教半年了，要准备啥", "要去大理支教半年了"),  # 要…了: a trip already arranged
    ("npy是四川人，过年去他家带点啥", "npy是四川人"),
])
def test_where_the_speaker_is_or_goes_inside_an_ask_is_kept(text: str, kept: str):
    memories = _kept(text)
    assert memories and kept in memories[0]


@pytest.mark.parametrize("text", [
    "公司这边能报销打车费吗",  # no place of the user's named
    "你们那边现在几点",  # the other side's place
    "如果搬到深圳以后通勤怎么办",  # supposed
    "要下雨了带伞吗",  # impersonal, no trip
    "深圳通勤坐地铁还是开车好",  # a place, no one there
])
def test_a_generic_place_the_other_sides_place_or_a_supposed_move_forms_nothing(text: str):
    assert _kept(text) == []


# -- 6. a role, a breed, or a slot of the user's stated inside the ask ----------------------

@pytest.mark.parametrize(("text", "kept"), [
    ("how do I do my taxes as a freelance photographer?", "as a freelance photographer"),
    ("what harness works for my dachshund on long walks", "my dachshund"),
    ("我家柯基老是掉毛怎么办", "我家柯基"),
    ("我在苏州上班周末去上海玩坐高铁方便吗", "我在苏州上班"),  # 我 + a slot's words: the topic of the ask
    ("how do I keep pigeons off my allotment?", "my allotment"),  # a thing had for good
    ("is it ok to leave my cello in a cold car for an hour", "my cello"),
])
def test_a_role_a_breed_or_a_slot_of_the_user_inside_an_ask_is_kept(text: str, kept: str):
    memories = _kept(text)
    assert memories and kept in memories[0]


@pytest.mark.parametrize("text", [
    "what should I dress up as a nurse or a pilot for halloween",  # a role played
    "what do photographers charge for a wedding?",  # no one's role
    "what harness works for a dachshund",  # no one's dog
    "我家楼下的柯基老叫怎么办",  # the dog downstairs, not the user's
    "我在苏州上班的话周末去哪玩",  # supposed with 的话
    "在苏州上班累不累",  # no one's
    "how do I keep pigeons off an allotment?",  # no one's
    "can you check my essay for typos",  # a thing of the moment
])
def test_a_role_played_a_pet_elsewhere_or_a_supposed_slot_forms_nothing(text: str):
    assert _kept(text) == []


# -- 7. an ask for what the assistant was told ------------------------------------------------

@pytest.mark.parametrize("text", [
    "What am I allergic to?",
    "Remind me what I am allergic to.",
    "Can you remind me what I am allergic to?",
    "do you remember which foods my daughter is intolerant to",
    "what was my dog called again?",
    "what meds am I on again?",
    "我对什么过敏来着？",
    "我家狗叫什么来着",
    "你还记得我闺女对啥过敏吗",
])
def test_an_ask_for_what_the_assistant_was_told_forms_nothing(text: str) -> None:
    found = analyse(text)
    assert found.memories == ()
    assert found.dropped in ("request", "question")
    assert candidates(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    ("what can I eat with my peanut allergy?", "my peanut allergy"),
    ("what can my diabetic dad eat?", "my diabetic dad"),
    ("我家娃对鸡蛋过敏能吃啥", "鸡蛋过敏"),
    ("remind me, my son is allergic to eggs - what cake can I bake?", "allergic to eggs"),
])
def test_an_ask_about_something_else_keeps_the_attribute_it_names(text: str, kept: str) -> None:
    assert any(kept in m for m in _kept(text))
