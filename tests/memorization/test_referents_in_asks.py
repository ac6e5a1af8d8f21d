"""A fact whose referent sits in the ask beside it keeps the ask (gateway/memorization/disclosure.py
``_HERE``, ``_PLACE_NAMED``, ``_APPOSITIVE_EN``; kinds.py ``_AGED_ZH``; asks.py ``REQUEST_ZH`` on 来):
"since we got here" names its place only in the question before it, "my new manager" names the
person only as an appositive of the name before it, 两岁的豆豆 tells an age inside a request, and
来北京 is the verb of motion, not the imperative "give me". Each used to form a memory without the
value (or none at all)."""

from __future__ import annotations

import pytest

from gateway.memorization.disclosure import analyse


def _texts(text: str) -> list[str]:
    return [m.text for m in analyse(text).memories]


@pytest.mark.parametrize(("text", "place"), [
    ("any dog groomers in boise that take corgis? mine's gone full yeti since we got here for this contract", "boise"),
    ("need a decent barber near lodi, cheaper rent is why we moved out here but i dont know anybody yet", "lodi"),
    ("best pizza near Lodi? we just moved here", "Lodi"),
    ("海淀区有什么好的幼儿园，刚搬过来", "海淀区"),
])
def test_here_keeps_the_ask_that_names_the_place(text: str, place: str) -> None:
    texts = _texts(text)
    assert len(texts) == 1 and place in texts[0], texts


@pytest.mark.parametrize("text", [
    "here is my code, why does it fail?",  # presenting, no place
    "what should I cook tonight? we're staying in",
    # the speaker named ("X here"), and an infinitive after "to" is no place
    "wedding photographer here, shoot everything on a canon r6, whats the smartest way to back up 3000 raws",
])
def test_no_here_of_a_place_keeps_no_ask(text: str) -> None:
    assert not any("?" in t for t in _texts(text)), _texts(text)


def test_a_place_of_its_own_needs_no_ask() -> None:
    texts = _texts("best pizza near lodi? we just moved to Fresno and love it here")
    assert texts == ["we just moved to Fresno and love it here"], texts


def test_an_appositive_keeps_the_name_it_follows() -> None:
    texts = _texts("what should i ask aisha, my new manager, in our first 1:1? she already seems way more organized")
    assert len(texts) == 1 and "aisha" in texts[0] and "my new manager" in texts[0], texts


def test_a_possessive_clause_is_no_appositive() -> None:
    # "my sister" with a verb is a clause of its own, not an appositive: the ask is not pulled in
    texts = _texts("what's a good gift? my sister loves gardening")
    assert texts == ["my sister loves gardening"], texts


@pytest.mark.parametrize(("text", "kept"), [
    ("给两岁的豆豆挑几本绘本呗，这小子现在嘴可能叭叭了", "两岁的豆豆"),
    ("给我三岁的女儿推荐几本绘本", "三岁的女儿"),
    ("帮我家五岁的儿子选个自行车", "五岁的儿子"),
    ("给三岁的女儿挑绘本", "三岁的女儿"),
])
def test_an_age_of_the_users_person_inside_an_ask_is_told(text: str, kept: str) -> None:
    assert any(kept in t for t in _texts(text)), _texts(text)


@pytest.mark.parametrize("text", [
    "朋友家两岁的孩子喜欢什么玩具",  # another's child
    "两岁的孩子一般会说多少话",  # a child in general
    "给两岁的孩子买什么玩具",
    "如果给三岁的女儿报班，报什么好",  # supposed
])
def test_a_generic_or_supposed_age_forms_nothing(text: str) -> None:
    assert _texts(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    ("来北京带孙子这一个多月，天天腰酸背痛，有啥不累腰的抱孩子法子不", "来北京"),
    ("来大理三个月了，民宿6间房，有啥不花钱的引流办法", "来大理"),
    ("来深圳半年了", "来深圳"),
])
def test_lai_before_a_place_is_the_verb_of_motion(text: str, kept: str) -> None:
    assert any(kept in t for t in _texts(text)), _texts(text)


@pytest.mark.parametrize("text", ["来个笑话", "来点轻松的", "来一份减脂餐的菜谱", "来首歌"])
def test_lai_with_an_indefinite_object_still_asks(text: str) -> None:
    assert _texts(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    ("what does a junior data analyst at a freight logistics company even wear?? i start aug 4", "junior data analyst"),
    ("any tips for a new nursing job? I start next week", "nursing job"),
])
def test_a_start_with_no_object_keeps_the_ask_that_names_the_job(text: str, kept: str) -> None:
    texts = _texts(text)
    assert len(texts) == 1 and kept in texts[0], texts


def test_a_start_with_nothing_named_keeps_no_ask() -> None:
    assert _texts("what should I wear? i start monday") == ["i start monday"]


def test_a_childs_first_weeks_at_a_school_stage_are_told() -> None:
    from gateway.memorization.kinds import _MY_NEW_EN
    assert _MY_NEW_EN.search("is Mia's first week at nursery always this hard?")
    assert _MY_NEW_EN.search("Oscar's first fortnight in reception at St Werburgh's has flattened him")
    assert not _MY_NEW_EN.search("How was Google's first year in China?")


@pytest.mark.parametrize(("text", "who"), [
    # "we both" means the pair the ask named
    ("first dance song ideas for me and my fiancé sami? we're both obsessed with 90s r&b", "sami"),
    ("what should i cook for me and my husband tonight? we both hate mushrooms", "husband"),
    # Wu 伊 and Cantonese 佢 are third-person pronouns: their antecedent is in the ask
    ("怎么跟新来的周阿姨讲烧菜清淡点，伊是安徽人，口味重", "周阿姨"),
    ("點樣同我阿嫲講飲食要少鹽，佢有高血壓", "阿嫲"),
])
def test_a_pair_or_a_dialect_pronoun_keeps_the_ask_that_names_them(text: str, who: str) -> None:
    texts = _texts(text)
    assert len(texts) == 1 and who in texts[0], texts


@pytest.mark.parametrize(("text", "memory"), [
    ("我在伊利上班", "我在伊利上班"),  # 伊 of a name is no pronoun
    ("我们俩上个月领证了", "我们俩上个月领证了"),
])
def test_a_name_with_yi_or_a_pair_at_the_start_is_read_as_before(text: str, memory: str) -> None:
    assert _texts(text) == [memory]
