"""Requests, questions and small talk form no memory, by grammar category
(gateway/memorization/kinds.py, :func:`clause_kind`; asks.py; gateway/memorization/salience.py).

Each category has asks or reactions that formed a memory before these rules (a question
without a question mark, a wish for something the assistant hands over, a reaction to the
reply with no "thanks" word...), and beside it true disclosures of a similar shape that must
still be kept: losing a fact is worse than storing a junk line."""

from __future__ import annotations

import pytest

from gateway.memorization.clause_classifier import candidates
from gateway.memorization.disclosure import Clause, analyse, clause_kind
from gateway.memorization.verbatim import verbatim_plan
from tests.memorization.test_worth_remembering import _job


def _formed(text: str) -> list[str]:
    """Every text ``text`` would store: its memories and the statement kept when nothing better is found."""
    found = analyse(text)
    return [m.text for m in found.memories] + ([found.statement.text] if found.statement else [])


@pytest.mark.parametrize("text", [
    # 多 + a one-syllable adjective asks for a degree: 多大 / 多久 / 多长时间 / 多远
    "孩子多大能吃蜂蜜", "土豆炖多长时间能烂", "从机场到市区多远",
    # 几 + a measure word asks for a number
    "一天喝几杯水合适",
    # the negative half of an A-not-A question, its verb dropped: V(O)没 / V(O)不
    "手机一直插着充电伤电池没",
    # an alternative question A 还是 B with parallel halves and no particle
    "这个药饭前吃还是饭后吃", "周末去爬山还是去看展",
    # a question particle before an emoji
    "现在开始学还来得及吗😭",
])
def test_a_chinese_question_without_a_question_mark_forms_nothing(text: str):
    assert _formed(text) == []


@pytest.mark.parametrize("text", [
    # a wish or need whose indefinite object is something the assistant hands over
    "我想要一份减脂餐的菜谱", "需要一个搬家清单", "想要一个适合新手的健身计划",
    # 想 + 让你 / 请你: the listener is to act
    "我想让你帮我改改简历", "想请你推荐个餐厅",
    # 想 + a verb of consuming + 点: something unspecified to pick
    "我想看点轻松的电影",
    # the object first as the topic, then 帮我 / 给我 and a measure word or a reduplicated verb
    "周报模板帮我写一个", "英文自我介绍给我一个模板", "这段代码帮我看看",
    # the form of the answer, a repeat, the disposal 把 as a command
    "说详细点", "用大白话解释一下", "刚才那个再讲一遍", "把这段话改成正式一点的语气", "我想听个睡前故事",
])
def test_a_chinese_request_with_a_wish_or_a_fronted_object_forms_nothing(text: str):
    assert _formed(text) == []


@pytest.mark.parametrize("text", [
    "哈哈哈好可爱",  # an exclamation of degree judging a thing, no subject
    "哎呀你真是太贴心了",  # an interjection, then a clause about the other side
    "我试了一下 挺好用的",  # an objectless 试了: the object is the suggestion
    "学到了", "涨知识了",  # receipts of new information
    "好的 那我先去做饭了", "我这就去买",  # leave-taking
    "懂了 我再研究研究", "行 那就按你说的办", "我又来了",  # uptake of the advice, being back
    "说得太好了", "我再问一个", "我问的不是这个",  # judging the answer, talk about the conversation
])
def test_chinese_small_talk_forms_nothing(text: str):
    assert _formed(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    ("我想换工作了", "我想换工作了"),  # a plan, no artefact asked for
    ("我想要个孩子", "我想要个孩子"),  # a wish for no artefact
    ("我想学钢琴很久了", "我想学钢琴很久了"),
    ("我家孩子多大都不爱吃菜", "我家孩子多大都不爱吃菜"),  # 多大 + 都: "whatever the age", no question
    ("我还是喜欢猫", "我还是喜欢猫"),  # the adverb 还是 after the subject: no alternative
    ("最后还是去了北京出差", "最后还是去了北京出差"),
    ("我去北京出差了", "我去北京出差了"),  # a trip told, no leave-taking
    ("我先去医院复查了 医生说恢复得不错", "我先去医院复查了"),  # not the turn's last word: it tells more
    ("我女儿好可爱", "我女儿好可爱"),  # a judgement with a subject of the user's
    ("妈妈每天给我做早饭", "妈妈每天给我做早饭"),  # 给我 after a person: a habit, no fronted object
    ("老公帮我做了个蛋糕", "老公帮我做了个蛋糕"),
    ("有没有护腰推荐 我骑电动车上班的", "我骑电动车上班的"),  # the speaker after the ask
    ("阿姨回老家了 现在请了个钟点工 每天早上来四个小时", "请了个钟点工"),  # 请 + 了: hired, not "please"
    ("去年请过一个住家保姆", "请过一个住家保姆"),
])
def test_a_chinese_disclosure_of_a_similar_shape_is_kept(text: str, kept: str):
    assert any(kept in memory for memory in _formed(text)), _formed(text)


def test_a_headless_de_phrase_after_an_ask_says_what_the_thing_must_do():
    found = analyse("有啥护膝推荐 跑步能戴的")
    assert found.kinds == ("question", "other") and not found.memories and found.statement is None
    # on its own in the opening clause, a trade named by V + O + 的 is the speaker's
    assert "干装修的" in _formed("干装修的 手上老起茧 有什么护手霜推荐")[0]


@pytest.mark.parametrize("text", [
    # a revision of the reply: make / keep it + a comparative, or the comparative alone
    "make it shorter", "can you make it shorter", "a bit longer maybe", "shorter and with fewer emojis",
    # a verbless noun phrase typed as a query
    "recipe for banana bread", "best way to clean a cast iron pan", "cheap date ideas near downtown",
    "something quick for dinner", "tips for sleeping on a plane",
    # an indirect question with "I" dropped
    "wondering if I should take the job", "not sure what to cook tonight",
])
def test_an_english_ask_without_its_verb_forms_nothing(text: str):
    assert _formed(text) == []


@pytest.mark.parametrize(("text", "kinds"), [
    # a verbless noun phrase before or after the ask of its sentence is part of the ask: a request, so the
    # learned clause classifier (which scores only clauses of kind other) cannot promote it
    ("tulips and vintage watering cans, what colours go together", ("request", "question")),
    ("need a quick dinner, 20 min max, toddler friendly", ("request", "request", "request")),
])
def test_a_noun_phrase_dislocated_from_an_ask_is_part_of_it(text: str, kinds: tuple[str, ...]):
    assert analyse(text).kinds == kinds and _formed(text) == [] and candidates(text) == []


def test_a_named_or_participle_phrase_beside_an_ask_stays_a_candidate():
    # a name, an -ing participle ("I'm" dropped), an irregular past or a "no X" may be the user's fact:
    # left to the rules and the classifier
    assert [c.text for c in candidates("Theo, any ideas for a party?")] == ["Theo"]
    assert "lifeguarding at the Y all summer" in [c.text for c in candidates("lifeguarding at the Y all summer, how do i not get fried")]
    assert [c.text for c in candidates("jos gone dairy free, what cake can i bake, no butter")] == ["jos gone dairy free", "no butter"]
    assert [c.text for c in candidates("insulin pens ran out, which pharmacy is open late")] == ["insulin pens ran out"]


@pytest.mark.parametrize("text", [
    "thx these look good", "great ideas thank you", "ok perfect thank you sooo much 🙏",  # thanks anywhere
    "sounds like a plan",  # an evaluation of the proposal, its subject dropped
    "ur a lifesaver fr", "you've been such a big help", "hey u up lol",  # about the listener
    "gonna try that tonight", "gonna go make dinner now",  # the next step is the suggestion; leave-taking
    "hiya 👋 first time using this", "quick question about taxes",  # talk about the conversation
    "nvm figured it out", "ok that helps a lot actually", "cool ill try that",  # the suggestion's outcome, uptake
    "i love you lol", "no that's not what i meant",  # the listener as object, talk about the conversation
    "idk what to do", "now in spanish please with emojis", "a packing list for a week in the alps",  # an ask
])
def test_english_reactions_to_the_reply_form_nothing(text: str):
    assert _formed(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    ("make it vegetarian, I don't eat meat", "I don't eat meat"),
    ("keep answers short from now on", "keep answers short from now on"),  # a standing instruction
    ("thanks, my daughter loved it", "my daughter loved it"),
    ("thanks my son has autism so this helps", "my son has autism"),  # thanks, but it names the user's people
    ("you're right, I'm allergic to nuts", "I'm allergic to nuts"),
    ("gonna try it, I'm a beginner cook", "I'm a beginner cook"),
    ("Went fully vegan last month, so no more eggs or cheese.", "no more eggs or cheese"),  # no comparative
    ("lifeguarding at the Y all summer, how do i not get fried, im pale as anything", "im pale as anything"),
    ("I'd like to move to Spain someday", "I'd like to move to Spain someday"),
])
def test_an_english_disclosure_of_a_similar_shape_is_kept(text: str, kept: str):
    assert any(kept in memory for memory in _formed(text)), _formed(text)


def test_a_revision_of_the_reply_is_a_request_not_a_preference():
    assert clause_kind(Clause("make it shorter", "", False)) == "request"
    assert clause_kind(Clause("keep it short", "", False)) == "disclosure"  # no comparative: a standing instruction


def test_the_plan_counts_what_it_dropped():
    texts = ["宝宝多大可以吃盐", "哎呀你这个小机器人真懂事", "best plant iron foods that arent just spinach"]
    plan = verbatim_plan(_job(*[("user", t) for t in texts]), texts, ["user"], skip_small_talk=True, profile=True,
                         formation="disclosure")
    assert plan.ops == () and plan.skipped == 3
    assert plan.dropped == {"question": 1, "meta": 1, "request": 1}


@pytest.mark.parametrize("text", [
    "行 俺再想想", "哈哈哈哈好的 我转给她", "行 我转告他", "您这词儿倍儿好，我抄下来了", "我念给我妈听",
    "如果明年去考个在职硕士会不会太吃力啊，我就随便问问", "再给我列个能吃的和不能吃的表 简单点",
])
def test_what_the_user_does_with_the_reply_forms_nothing(text: str):
    assert _formed(text) == []


@pytest.mark.parametrize(("text", "kept"), [
    ("我转给她了两千块", "两千块"),  # money sent: a fact, no reply passed on
    ("我们十月份领证，就请亲近的人", "就请亲近的人"),  # 请 = invite, no "please"
])
def test_a_transfer_or_an_invitation_is_no_request(text: str, kept: str):
    assert any(kept in memory for memory in _formed(text)), _formed(text)


@pytest.mark.parametrize("text", [
    "jess says hi lol", "Priya sends her love",
    "neighbour asked if i could rewire her basement, roughly what do guys charge for that these days",
    "roughly what do electricians charge per hour",
])
def test_a_greeting_passed_on_and_an_approximate_question_form_nothing(text: str):
    assert _formed(text) == []


def test_a_greeting_passed_on_beside_a_fact_keeps_the_fact():
    assert any("vegan" in memory for memory in _formed("my wife says hi, she is vegan btw"))
