"""Life topics of a request or a memory by cue lexicons (plugins.topics.topics_of): the
same reading on both sides, English by whole words, Chinese by substrings."""

from __future__ import annotations

import pytest

from plugins.topics import MAX_CHARS, TOPICS, names_of, topics_of, words_of


@pytest.mark.parametrize(("text", "topics"), [
    ("Should I get a check-up at the vet for Mochi?", {"pets", "health"}),
    ("high blood pressure", {"health"}),  # a cue of two words, also with a hyphen: "road-trip"
    ("Our tabby cat naps on the radiator", {"pets"}),
    ("any photography classes nearby?", {"home", "pastimes", "study"}),
    ("What should I wear to the wedding on Saturday?", {"home", "partner"}),
    ("I'm lactose intolerant", {"health", "diet"}),
    ("我家狗狗最近不爱吃东西", {"pets", "diet", "home"}),
    ("孙子下个月上小学了", {"kids"}),
    ("周末附近有什么好玩的", {"home", "pastimes"}),
    ("老板让我下周出差", {"work", "travel"}),
    ("我在外企做HR", {"work"}),  # an English word typed inside Chinese is still a word
    ("My fiancée's kid", {"partner", "kids"}),
    ("both mortgages are fixed", {"money"}),  # an English plural of an exact cue: mortgage
    ("my knees and the babies' lunches", {"health", "kids", "diet"}),  # -s, -ies, -es
    ("Is there a choir for older folks around here?", {"pastimes", "home"}),  # music; a place phrase
    ("how do I claim my expenses on my tax return", {"money"}),
    ("the boat needs a new engine", {"getting_around"}),
])
def test_a_text_gets_the_topics_its_cues_name(text, topics):
    assert topics_of(text) == topics


@pytest.mark.parametrize("text", [
    "thanks, that's great!", "make it shorter", "好的好的", "爱你", "lol ok", "",
    "the category of the concatenated catalogue",  # "cat" only as a whole word
    "我实在忍不住笑了",  # 住 only in words of living somewhere (住在, 住的...), not in 忍不住
    "芒果班戟",  # 班 only in shifts (上班, 夜班...), not in 班戟
    "yes his news was glass-clear",  # no plural reading of short words, -ss or a cue-less stem
])
def test_small_talk_and_look_alike_words_have_no_topic(text):
    assert topics_of(text) == frozenset()


def test_a_request_and_the_fact_it_needs_share_a_topic_although_no_word_matches():
    assert topics_of("I have a vet appointment tomorrow") & topics_of("my rabbit Clover is eleven")
    assert topics_of("小宝宝晚上老哭咋办") & topics_of("外孙刚满月")
    assert topics_of("any good weekend outings around here?") & topics_of("We live in Porto")
    assert not topics_of("help me fix this python error") & topics_of("my rabbit Clover is eleven")


def test_only_the_first_max_chars_are_read_and_every_topic_is_known():
    assert topics_of("x " * MAX_CHARS + "my dog") == frozenset()
    assert topics_of("my dog " + "x " * MAX_CHARS) == {"pets"}
    assert {t for text in ("my dog", "my wife", "my son", "my mum") for t in topics_of(text)} <= set(TOPICS)


@pytest.mark.parametrize(("request_text", "fact"), [
    # family roles: "the boys", "our girl" are the user's kids; "family" / 一家三口 is the household
    ("any rainy-day ideas for the boys?", "my son Arlo is six"),
    ("we're planning a family picnic, what should we pack?", "our twins just started kindergarten"),
    ("一家三口周末去哪儿玩", "老公在杭州上班"),
    ("二宝老是咳嗽怎么办", "孩子对青霉素过敏"),
    # body parts and medical tests are health
    ("my wrist still clicks when I type", "the x-ray showed a small fracture"),
    ("肩膀抬不起来了", "核磁结果出来了是劳损"),
    # education levels are studies; work status (back at work, on leave, retired) is work
    ("thinking about a bachelor's after this", "I'm doing a diploma in nursing at night"),
    ("想专升本，有啥建议", "在读自考大专"),
    ("上班族怎么安排时间", "下周一复工"),
    # letting property is home and money
    ("should I raise the rent for my tenants?", "we own two rental flats in Leeds"),
    # a business the user runs, a trade or an occupation is work (and a guesthouse is home)
    ("老客户要来玩几天，怎么招待", "我在丽江开了家客栈"),
    ("想招个帮手，招聘启事怎么写", "我做了十年广告，现在自己接单"),
    ("update my LinkedIn headline", "I'm a pastry chef at a hotel in Bath"),
    ("which certifications are worth it?", "I work as an electrician"),
    # a route starts where the user is: home, like 附近
    ("推荐一条骑行路线", "我住在苏州工业园区"),
    ("any scenic cycling routes?", "we live in Harrogate"),
    # school administration and student life are studies
    ("助学金怎么申请", "我在师范学院读大二"),
    ("期末挂科了怎么办", "开学军训累死了"),
    # a cot is a baby's; animals are pets
    ("how long until she outgrows the crib?", "she sleeps in a cot in our room"),
    ("the animals keep fighting", "our two kittens are five months old"),
    # a breed is a pet
    ("how long a walk is too long for an old dog?", "our greyhound Ziggy is eleven"),
    ("狗狗掉毛严重怎么办", "家里有只边牧"),
])
def test_a_word_class_the_lexicons_cover_links_a_request_to_its_fact(request_text, fact):
    assert topics_of(request_text) & topics_of(fact)


def test_a_family_size_is_not_read_into_a_company():
    assert "kids" not in topics_of("我在一家外企上班")


@pytest.mark.parametrize(("request_text", "fact"), [
    # a physical activity is health as well as a pastime: the body limits it
    ("is running a 10k too much for me right now?", "my GP says my ankle is still weak"),
    ("去爬山合适吗", "膝盖一到冬天就疼"),
])
def test_an_exercise_request_meets_the_health_fact_that_limits_it(request_text, fact):
    assert "health" in topics_of(request_text) & topics_of(fact)


def test_sleep_hours_and_a_workplace_unit_are_read_in_chinese():
    assert "health" in topics_of("帮我排一下作息") & topics_of("最近老熬夜")
    assert "work" in topics_of("我被调到别的部门了")


@pytest.mark.parametrize(("text", "names"), [
    ("Also we just adopted a beagle puppy, his name is Pixel. We love him", {"pixel"}),
    ("How old is Pepper? — she's 11!", {"pepper"}),
    ("my son Theo turned 2 and Ava starts school", {"theo", "ava"}),
    ("Kuba turns 8 next month", set()),  # a sentence's first word may be any word
    ("MRI back and its NOT a tear, see you on Sunday in April", set()),  # all capitals, days and months
    ("we moved to didsbury", set()),  # lower case only
    ("I told him: Nope", set()),  # after a colon, a quote or a dash a new sentence starts
])
def test_names_are_capitalised_words_inside_a_sentence(text, names):
    assert names_of(text) == names


def test_words_are_looked_up_in_any_case():
    assert "pixel" in words_of("PIXEL keeps chewing my cables") and "pixel" in words_of("pixel's bowl")
