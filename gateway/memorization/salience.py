"""What a verbatim memory is worth, sans-IO, zh + en, no model.

:func:`is_small_talk`: greetings, thanks, acknowledgements and sign-offs ("hi", "Thanks,
that's all for now", "好的谢谢", "哈哈哈", "q4") carry nothing to remember. A turn is small
talk when, once punctuation, emoji and spaces are gone, it is at most
:data:`MIN_CONTENT_CHARS` characters of Latin letters and digits with no CJK, or it splits
entirely into the phrases of :data:`SMALL_TALK_EN` (whole words) and
:data:`SMALL_TALK_ZH` (longest match first, Chinese having no spaces). Anything else
stays: a short turn with one content word ("I'm vegan", "我27岁") is kept. A receipt of new
information ("学到了", "涨知识了", "受教了") is an acknowledgement too, in the dialects' words
as in Mandarin's (晓得了, the southwestern and Wu 知道了: "好嘛晓得了").

:func:`profile_type`: a user turn that states a lasting preference or fact about the user
belongs in the ``profile`` scope (seed 002: the user's profile is shared with every
friend; events stay with one friend), typed ``preference`` or ``semantic``. The cues are
first-person statements (:data:`PREFERENCE_CUES`, :data:`FACT_CUES`), seed 000 P3's
style words (简洁, 详细, 注释, 新手, 专家) among them; questions and hypotheticals ("do
you like...?", "如果我喜欢") are not statements, and a statement anchored to a day
(:data:`EVENT_TIME`) is an event.

:func:`is_passing`: a memory that tells only how the speaker is at the moment (a passing
state of body or mind, :data:`PASSING_STATE`: "wide awake again", 忐忑, 压力山大), a task
just finished (:data:`COMPLETED`: 初稿写完了, "clocked off") or a remark about the listener
("you're so patient with me"), with no habit or duration (:data:`HABITUAL`) that would
make it the speaker's own, is an event, never profile (seed 002 §3.2: the profile holds the
user's basic attributes and lasting likes); :func:`profile_type` and
:mod:`gateway.memorization.disclosure`'s durable rule both read it.

A greeting with the addressee first ("老师好", "亲早上好") is small talk as the addressee
after it is (:data:`_VOCATIVE_GREETING_ZH`).

:func:`is_affirmation`, :func:`proposition`, :func:`confirmed_type`: a user's bare "yes"
is small talk unless it confirms a fact-checking question of the other side ("So your
flight is on May 3rd?"); :mod:`gateway.memorization.verbatim` then keeps the question
with the answer, typed by reading the question as the user's own statement.

Cue lists, not a classifier: measured on the labelled turns of
``tests/fixtures/worth_remembering.jsonl`` (zh + en; ``python -m bench verbatim``) and
``tests/memorization/data/salience.jsonl``; the figures are in the tests and the README.
"""

from __future__ import annotations

import re

from gateway.memorization.lexicon import (
    FEELINGS_EN,
    KIN_CLOSE_EN,
    MOMENT_STATES_EN,
    MOMENT_STATES_ZH,
    PEOPLE_ZH,
    PETS_EN,
    SIBLING_ZH,
)
from gateway.memory.records import MemoryType
from gateway.runtime.text import CJK_RE

__all__ = ['AFFIRM_EN', 'AFFIRM_ZH', 'CLOSING_EN', 'CLOSING_ZH', 'COMPLETED', 'EVENT_TIME', 'FACT_CUES', 'HABITUAL', 'MIN_CONTENT_CHARS', 'PASSING_STATE',
           'PREFERENCE_CUES', 'PROPOSITION_CHARS', 'SMALL_TALK_EN', 'SMALL_TALK_ZH', 'as_statement', 'confirmed_type', 'is_affirmation', 'is_closing', 'is_passing',
           'is_small_talk', 'profile_type', 'proposition']

#: Characters at the end of the other side's message :func:`proposition` reads (the
#: chat path keeps 300 of them as a turn's context: ``capture.CONTEXT_CHARS``).
PROPOSITION_CHARS = 300

#: Latin letters and digits (no CJK) at most this many: nothing to remember ("ok", "q4").
MIN_CONTENT_CHARS = 3

SMALL_TALK_EN = frozenset("""
hi hello hey hiya yo howdy greetings morning evening afternoon night good goodnight gn
thanks thank thx ty tysm you u so much very a lot lots many again cheers appreciated
ok okay k kk okey alright alrighty fine sure yes yeah yep yup ya no nope nah
great cool nice awesome perfect wonderful excellent amazing lovely sweet neat sounds
bye goodbye cya see later soon take care ttyl
lol lmao haha hahaha hehe hmm hm mm oh ah wow aw uh um oops
got it understood noted gotcha makes sense right i see there worries helps helped helpful one
that's thats all for now it is was will do that this
np no problem welcome you're youre please
really interesting hilarious funny sweet kind good me to too same true agreed indeed
wait what sec second moment minute hold on let think continue go keep going more try
brb gtg talk tomorrow later ton tons bunch exactly correct absolutely totally definitely of
""".split())

#: Words that confirm what the other side just said (:func:`confirmation`).
AFFIRM_EN = frozenset("yes yeah yep yup ya yea right correct exactly indeed absolutely true".split())
#: Chinese confirmations (:func:`confirmation`), longest first.
AFFIRM_ZH = ("没错", "正确", "对的", "对啊", "是的", "是啊", "就是", "确实", "对", "是")

SMALL_TALK_ZH = tuple(sorted("""
你好 您好 大家好 嗨 哈喽 哈啰 早 早安 早上好 中午好 下午好 晚上好 晚安 午安
谢谢 谢谢你 谢谢您 谢啦 谢了 多谢 感谢 感谢你 非常感谢 太感谢了 辛苦了 麻烦了 不客气 没关系 没事 没问题
好的 好滴 好哒 好吧 好呀 好啊 好 行 行吧 可以 嗯 嗯嗯 恩 哦 噢 喔 哦哦 啊 呀 吧 啦 了 呢 么 嘛
是的 是 对 对的 对啊 没错 明白 明白了 了解 了解了 知道了 收到 懂了 我懂了 我知道了 晓得了 晓得啦 我晓得了
哈哈 哈 呵呵 嘿嘿 嘻嘻 哇 哇塞 厉害 棒 太棒了 不错 很好 真好 牛
学到了 学习了 涨知识了 涨姿势了 长见识了 受教了 原来如此 原来是这样 懂啦 再见 拜拜 拜 回头见 下次见 先这样 就这样 那就这样 先这样吧 就这些 没有了 没了 暂时没有了
在吗 在不在 在 笑死 笑死我了 稍等 稍等一下 等一下 等等 等下 我想想 让我想想 想想 继续 接着说 接着 真的吗 真的 真的假的
爱你 爱你哟 爱了 爱了爱了 爱死你了 比心 么么哒 帮大忙了 你也是 你也一样 同样 明天聊 改天聊 回头聊 有道理 说得对 确实 没错 对对 再来一个 再来 换一个 重来 重新来 啦啦 吧吧
""".split(), key=len, reverse=True))

#: First-person statements of a preference (``preference``), and standing instructions on
#: how to answer (seed 000 P3: language, length, technical depth, code comments).
PREFERENCE_CUES = re.compile(
    r"\b(?:i|we)\s+(?:(?:really|do\s+not|don't|dont|also|absolutely|truly|just|still|much|generally|usually|always)\s+){0,2}"
    r"(?:like|love|enjoy|prefer|hate|dislike|adore|can't\s+stand|cannot\s+stand)\b"
    r"(?!\s+(?:it|that|this|these|those|them|your|the\s+idea)\b)"
    r"|\bi'?d\s+(?:much\s+)?rather\b|\bi\s+would\s+(?:much\s+)?rather\b"
    r"|\bmy\s+fav(?:ou?rite)?\b|\bi'?m\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\b"
    r"|\bi\s+(?:don't|do\s+not|never)\s+(?:eat|drink|smoke)\b"
    r"|\bfrom\s+now\s+on\b|\b(?:answer|reply|respond|talk|write)\s+(?:to\s+me\s+)?in\s+[a-z]+(?:ese|ish|ian|ch|an)\b"
    r"|\b(?:add|include|with)\s+(?:\w+\s+)?comments\b|\bskip\s+the\s+(?:basics|theory|details)\b"
    r"|\b(?:keep|make)\s+(?:\w+\s+){0,2}(?:short|shorter|brief|concise|simple|detailed)\b"
    r"|我(?:很|真的|特别|非常|最|比较|更|也|还|一直|从来)?(?:不)?(?:喜欢|爱吃|爱看|爱玩|爱听|讨厌|偏好|偏爱|受不了|热爱)"
    r"|我最爱|我(?:从来|一般|平时)?不(?:吃|喝|抽)"
    r"|请(?:回答|回复)?(?:简洁|简短|详细)|(?:简洁|简短|详细|带注释)(?:一点|一些|点)?的?(?:回答|解释|代码)"
    r"|(?:回答|回复|解释)\S{0,4}(?:简短|简洁|详细|短一点|长一点)|(?:加|带|写)\S{0,3}注释"
    r"|用(?:中文|英文|英语|日语|日文|韩语|粤语|法语|德语|西班牙语)(?:回答|回复|跟我说|和我说|交流)",
    re.IGNORECASE,
)

#: Whose name or role a first-person fact states ("my wife's name is...", 我女儿叫...): close
#: kin and pets (:mod:`gateway.memorization.lexicon`).
_RELATION_EN = r"(?:" + KIN_CLOSE_EN + "|" + PETS_EN + ")"
_RELATION_ZH = r"(?:" + PEOPLE_ZH + "|" + SIBLING_ZH + ")"

#: First-person statements of a lasting fact about the user (``semantic``): identity,
#: work, home, age, family, body, habits.
FACT_CUES = re.compile(
    r"\bmy\s+name\s+is\b|\bcall\s+me\b|\bi'?m\s+called\b"
    r"|\bi\s+(?:work|worked)\s+(?:\w+\s+){0,3}(?:as|at|in|for|from)\b"
    r"|\bi'?m\s+an?\s+(?!bit\b|little\b|lot\b|mess\b|few\b|wreck\b)\w+"
    r"|\bi\s+am\s+an?\s+(?!bit\b|little\b|lot\b|mess\b|few\b|wreck\b)\w+"
    r"|\bi'?ve\s+been\s+an?\s+\w+"
    r"|\bi\s+(?:live|grew\s+up)\s+in\b|\bi'?m\s+from\b|\bi\s+was\s+born\b|\bi\s+speak\b"
    r"|\bi\s+(?:usually|always|never|often|normally|generally|tend\s+to)\b"
    r"|\bi(?:'m|\s+am)\s+(?:\w+\s+)?(?:allergic|intolerant|vegetarian|vegan|married|divorced|single|pregnant|retired|"
    r"left-handed|right-handed|diabetic|asthmatic|colou?rblind|dyslexic|autistic|introverted|extroverted|"
    r"afraid\s+of|scared\s+of|terrified\s+of)\b"
    r"|\b(?:i|we)\s+(?:have|'ve\s+got|have\s+got)\s+(?:a|an|one|two|three|four|\d+)\s+(?:\w+\s+)?"
    r"(?:kids?|children|sons?|daughters?|dogs?|cats?|brothers?|sisters?|pets?)\b"
    r"|\bmy\s+" + _RELATION_EN + r"'s\s+name\s+is\b"
    r"|\bmy\s+" + _RELATION_EN + r"(?:\s+[A-Z]\w+)?\s+(?:is|are|'s)\s+(?:an?\s+|\d|called\b|named\b)"
    r"|\bmy\s+birthday\s+is\b"
    r"|\bi'?m\s+\d{1,3}\s*(?:years?\s+old|yo)\b|\bi\s+am\s+\d{1,3}\s*years?\s+old\b"
    r"|我(?:的名字)?叫|我是(?:一[名个位]|个)?\S{0,8}(?:人|师|生|员|家|者|手|工程师|医生|护士|学生|老师)"
    r"|我在\S{1,12}(?:工作|上班|上学|读书)|我(?:在\S{1,12})?(?:做|当|担任)\S{0,8}(?:经理|师|员|医生|护士|老师|主管|总监|老板)"
    r"|我住在|我来自|我(?:的)?(?:老家|家乡)|我出生(?:在|于)"
    r"|我(?:今年)?(?:\d{1,3}|[一二三四五六七八九十两]{1,3})岁|我对\S{1,10}过敏|我(?:是)?(?:素食|吃素)"
    r"|我(?:有|养了?)(?:一|两|三|四|\d)(?:个|只|条|位)|我(?:是)?(?:新手|初学者|专家|资深)"
    r"|我(?:的)?" + _RELATION_ZH + r"(?:的名字)?(?:叫|是)"
    r"|我(?:平时|一般|通常|经常|总是|每天都?|习惯)|我(?:很|特别|比较|有点|一直|超)?怕(?:冷|热|黑|高|疼|吵|狗|猫|蛇|虫)",
    re.IGNORECASE,
)

#: A day-level time anchor: the statement is about something that happened or will
#: happen then (an event), even when it reads like a preference ("I loved the film
#: yesterday", "我今天不吃辣").
EVENT_TIME = re.compile(
    r"\b(?:today|tonight|yesterday|tomorrow|this\s+(?:morning|afternoon|evening|week|weekend|month)|"
    r"(?:last|next)\s+(?:night|week|weekend|month|monday|tuesday|wednesday|thursday|friday|saturday|sunday)|"
    r"just\s+now)\b"
    r"|今天|今晚|昨天|昨晚|明天|前天|后天|刚才|刚刚|上周|下周|这周|本周|上个月|下个月|这个月",
    re.IGNORECASE,
)

#: How the speaker is at the moment, in body or mind ("I'm wide awake again", "drained",
#: "so relieved", 忐忑, 压力山大, 累瘫了, 好慌): a stage-level predicate, true of the
#: speaker for a while, as against an individual-level one that holds of them ("I'm
#: colorblind", 我乳糖不耐受; Carlson 1977, *Reference to Kinds in English*, ch. 2). Seed 002
#: §3.2 keeps the profile for the user's basic attributes and lasting likes; a passing state
#: is an event (:func:`is_passing`). Words: :mod:`gateway.memorization.lexicon`.
PASSING_STATE = re.compile(r"\b(?:" + FEELINGS_EN + "|" + MOMENT_STATES_EN + r")\b|" + MOMENT_STATES_ZH, re.IGNORECASE)
#: A task the speaker has just finished (论文初稿写完了, 刚搬完, "just clocked off", "first
#: shift done"): the completive phase complement 完 with 了 (Li & Thompson 1981, 3.2.3 on phase
#: complements) and its English counterparts tell that an activity ended, an event, not
#: something that holds afterwards (:func:`is_passing`).
COMPLETED = re.compile(
    r"\b(?:clocked\s+(?:off|out)|(?:first\s+)?(?:day|week|shift)\s+"
    r"(?:back\s+)?(?:\w+\s+){0,3}done)\b"
    r"|[\u4e00-\u9fff]完(?:了|啦|咯|$)",
    re.IGNORECASE,
)
#: A habit, a generic statement or a duration ("I always get nervous before flights",
#: "every time", "exhausted for weeks", "since the baby came", 一坐车就晕, 每次, 老是, 好几个月):
#: it makes a passing state a trait of the speaker or a lasting condition (a habitual
#: sentence is individual-level, Carlson 1977, ch. 2), so :func:`is_passing` does not read
#: it as the moment's.
HABITUAL = re.compile(
    r"\b(?:always|usually|normally|generally|often|every|whenever|each\s+time|tend\s+to|never|constantly|"
    r"most\s+(?:days|mornings|evenings|nights|weekends)|since|"
    r"for\s+(?:(?:\d+|a\s+few|a\s+couple\s+of|two|three|four|five|six|several|many)\s+)?(?:days|weeks|months|years|ages))\b"
    r"|每次|每天|每回|每到|每逢|一直|总是|老是|经常|常常|动不动|平时|一般|从来|天天|一[\u4e00-\u9fff]{1,6}就"
    r"|好几(?:天|周|个月|年)|几个月了|这几年|多年|好久|很久|长期",
    re.IGNORECASE,
)
#: A piece led by the second person ("you're so patient with me", 你真有耐心): about the
#: listener, nothing the user tells about themselves (:func:`is_passing`; :data:`_MINE`, the
#: user as a subject or owner, keeps the piece: "you know my dog Rex").
_LISTENER = re.compile(r"^\W*(?:(?:and|but|oh|also)\s+)?(?:you|you're|youre|you've|you'd|your|ur|u)\b|^\W*(?:你|您)", re.IGNORECASE)
_MINE = re.compile(r"\b(?:i|i'm|im|my|our|we)\b|我|咱|俺", re.IGNORECASE)
#: Where a memory text is cut into pieces for :func:`is_passing`: clause and sentence
#: punctuation, and a space between two Chinese characters (typed for a comma).
_PIECE_CUT = re.compile(r"[,，、。.!！?？;；:：~～…]+|(?<=[\u4e00-\u9fff])\s+(?=[\u4e00-\u9fff])")


def is_passing(text: str) -> bool:
    """True when ``text`` (a memory in the user's words) tells only how its speaker is at
    the moment, a task they just finished, or something about the listener: every piece
    of it (cut at :data:`_PIECE_CUT`) is small talk (:func:`is_small_talk`), led by the
    second person without the user ("you're so patient"), or names a passing state
    (:data:`PASSING_STATE`) or a finished task (:data:`COMPLETED`) with no habit or
    duration (:data:`HABITUAL`), and not all of them are small talk. "hi. wide awake at 4am
    again lol", 搬完了，累瘫了 and 我这两天心里有点忐忑 are passing; "we're moving to Denver,
    so excited" (a plan beside the feeling), "I always get nervous before flights" (a
    habit) and 我妈身体不好，我挺担心的 are
    not. Linear in ``len(text)``."""
    told = False
    for piece in _PIECE_CUT.split(text):
        piece = piece.strip()
        if not piece or is_small_talk(piece):
            continue
        if _LISTENER.match(piece) and not _MINE.search(piece):
            told = True
            continue
        if HABITUAL.search(piece) or not (PASSING_STATE.search(piece) or COMPLETED.search(piece)):
            return False
        told = True
    return told


_QUESTION = re.compile(r"[?？]\s*$|^\s*(?:do|does|did|are|is|can|could|would|will|should|what|why|how|when|where|who)\b"
                       r"|^\s*(?:如果|假如|要是)|吗[?？]?\s*$", re.IGNORECASE)
#: An assistant question that offers help or asks for feedback, not one that checks a
#: fact ("Would you like more detail?", "Did that help?", "需要我再解释一下吗？", "有什么可以帮你的？").
_OFFER = re.compile(
    r"\bwould\s+you\s+like\b|\bdo\s+you\s+want\s+(?:me|us|a|an|more|some|to\s+(?:see|try|know|hear|go\s+on|continue))\b"
    r"|\bshall\s+i\b|\bshould\s+i\b|\bwant\s+me\s+to\b|\bcan\s+i\s+help\b"
    r"|\b(?:did|does|do|is|was)\s+(?:that|this|it|everything)\s+(?:help|make\s+sense|work|clear|helpful|ok|okay)\b"
    r"|\banything\s+else\b|\bready\b|\b(?:continue|go\s+on|proceed)\b|\bnext\s+(?:step|one)\b"
    r"|需要我|要不要|要我|想让我|我可以帮|我来帮|还有什么|有帮助|明白了?吗|清楚吗|懂了?吗|可以吗|继续吗|好吗|行吗"
    r"|(?:可以|能)(?:帮|为)(?:你|您)|需要(?:什么)?帮(?:忙|助)",
    re.IGNORECASE,
)
#: A question tag that only asks to confirm ("..., right?", "对吗？"): dropped from the
#: proposition before its type is read.
_TAG = re.compile(r"(?:[,，\s]*(?:right|correct|is\s+that\s+(?:right|correct)|yes|no|对吗|是吗|是吧|对吧|对不对|是不是|吧|吗))?"
                  r"\s*[?？]*\s*$", re.IGNORECASE)
#: A sentence after a question that says what the asker will do with the answer ("我可以帮你留意附近
#: 的亲子活动", "这样我好推荐", "I can suggest a few spots nearby", "that way I can tailor the plan"):
#: the purpose of the question, told after it (Quirk et al. 1985, 15.48 on clauses of purpose;
#: an asker's account of why they ask), which asks nothing itself, so the reply still answers the
#: question before it. At most :data:`WHY_ASKED_CHARS` characters.
_WHY_ASKED = re.compile(r"^(?:我(?:可以|好|能|再|就|来|会)|这样(?:我|才|就|好|可以)|方便(?:我|给你|给您)|好让我|以便|"
                        r"(?:(?:so|that\s+way|then)\s+)?i\s+(?:can|could|will|'ll)\b|i'll\b|that\s+(?:way|will|'ll)\b|"
                        r"it'?ll\s+help\b|this\s+(?:will|'ll)\s+help\b)", re.IGNORECASE)
_ASKED_MARK = re.compile(r"[?？]|(?:吗|呢)\s*[。.!！]?\s*$")
WHY_ASKED_CHARS = 60
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_SECOND_PERSON = ((re.compile(r"\byou\s+are\b", re.I), "I am"), (re.compile(r"\byou\s+were\b", re.I), "I was"), (re.compile(r"\byou're\b", re.I), "I'm"),
                  (re.compile(r"\byou'd\b", re.I), "I'd"), (re.compile(r"\byou've\b", re.I), "I've"),
                  (re.compile(r"\byour\b", re.I), "my"), (re.compile(r"\byou\b", re.I), "I"),
                  (re.compile("你们"), "我们"), (re.compile("您|你"), "我"))
_WORD = re.compile(r"[a-z0-9']+")
_STRIP = re.compile(r"[\W_]+", re.UNICODE)  # punctuation, emoji, spaces
_CJK = CJK_RE


#: A term of address after small talk ("谢谢你啊闺女", "好的老师", "收到亲"): a vocative
#: names the listener, it adds nothing about the speaker (vocatives in Chinese
#: conversation, Li & Thompson 1981, 7.4 on terms of address), so it is dropped before
#: the small-talk check.
_VOCATIVES_ZH = r"(?:闺女|姑娘|小伙子|老师|亲爱的|亲|宝贝|宝|小助手|助手|同学|老铁|兄弟|姐妹|老哥|大哥|大姐|哥|姐)"
_VOCATIVE_ZH = re.compile(r"(?:啊|呀|哈)?" + _VOCATIVES_ZH + "$")
#: A term of address before a greeting ("老师好", "亲早上好", "同学晚安"): Chinese greets
#: with the addressee first (称呼 + 好), so the vocative is dropped there too.
_VOCATIVE_GREETING_ZH = re.compile(r"^" + _VOCATIVES_ZH + r"(?=好|早|晚安|午安|(?:早上|上午|中午|下午|晚上)好)")


def _only_zh_small_talk(text: str) -> bool:
    rest = _VOCATIVE_ZH.sub("", text) if len(text) > 2 else text
    rest = _VOCATIVE_GREETING_ZH.sub("", rest)
    while rest:
        for phrase in SMALL_TALK_ZH:
            if rest.startswith(phrase):
                rest = rest[len(phrase):]
                break
        else:
            return False
    return True


#: A pre-closing of a topic the speaker raised, or the speaker's word on why they told it
#: (Schegloff & Sacks 1973, "Opening up closings": the teller closes their own telling):
#: "不说了" / "不说这些了" / "不想说了" / "算了不提了", "就想找个地方吐槽一下", "谢谢你听我念叨",
#: "rant over", "sorry for the rant", "thanks for listening", "just needed to vent"; and the
#: interjections a vent is addressed with (家人们, 谁懂啊: to an audience, not about anyone).
#: A clause that is only one of these tells nothing (:func:`is_closing`); "他什么都不说了"
#: (someone else's silence) is no closing: the phrase must lead its clause.
CLOSING_ZH = re.compile(
    r"^(?:唉|哎|嗐|害|诶|哈|好了|算了|行了|那|我|就|也|先|嗯)*[，,\s]*"
    r"(?:(?:(?:不|别)(?:想|多)?(?:说|聊|提|讲|扯)(?:话|这些|这个|那些|那个|介个|它)?(?:啦|了|咯|吧)?"
    r"|(?:就|只是)?想(?:找(?:个)?(?:地方|人)|跟你)?(?:吐槽|倾诉|说说|发泄|念叨|唠叨|碎碎念)(?:一下|下)?"
    r"|(?:谢谢|多谢|感谢)(?:你|您)?(?:听我|陪我)(?:念叨|唠叨|吐槽|说|聊|讲|叨叨|bb|碎碎念|发牢骚)(?:这么多|了|这些)?"
    r"|(?:说|吐槽|讲)(?:出来|完)了?(?:好受|舒服|痛快)(?:多了|点了|些了|一点)?"
    r"|家人们|集美们|姐妹们|谁懂(?:啊|呀|哇)?)[啊呀吧了啦哈咯喽哦~～!！。.…\s]*){1,3}$")
CLOSING_EN = re.compile(
    r"^(?:(?:ok|okay|anyway|anyways|sorry|but|and|so|lol|ugh)\W+)*"
    r"(?:(?:ok\s+)?rant\s+over|end\s+(?:of\s+)?rant|sorry\s+(?:for|about)\s+(?:the|my|this|that)\s+(?:rant|vent|venting|ramble|rambling)"
    r"|thanks?\s+(?:you\s+)?for\s+(?:listening|letting\s+me\s+(?:vent|rant|ramble))"
    r"|(?:i\s+)?(?:just\s+)?(?:needed|wanted|had)\s+to\s+(?:vent|rant|say\s+it(?:\s+somewhere)?|get\s+(?:it|that|this)\s+off\s+my\s+chest)"
    r"|(?:i\s+)?(?:don'?t|do\s+not)\s+need\s+(?:any\s+)?(?:advice|a\s+solution|solutions|fixing)"
    r"|(?:not\s+)?(?:tryna|trying\s+to)\s+be\s+(?:sad|dramatic|negative)(?:\s+(?:rn|right\s+now))?)"
    r"\W*(?:lol|haha)?\W*$", re.IGNORECASE)


def is_closing(text: str) -> bool:
    """``text`` (one clause) is only a pre-closing of the speaker's own telling or a vent's
    address to an audience (:data:`CLOSING_ZH`, :data:`CLOSING_EN`): small talk. Linear in
    ``len(text)``."""
    stripped = text.strip()
    return bool(CLOSING_ZH.match(stripped) or CLOSING_EN.match(stripped))

def is_small_talk(text: str) -> bool:
    """True when ``text`` is a greeting, thanks, acknowledgement or sign-off with nothing
    else (rules in the module docstring). Linear in ``len(text)`` (texts are cut to
    ``redaction.max_chars`` before this runs)."""
    lowered = text.lower()
    bare = _STRIP.sub("", lowered)
    if not _CJK.search(bare):
        if len(bare) <= MIN_CONTENT_CHARS:
            return True
        return all(word in SMALL_TALK_EN for word in _WORD.findall(lowered))
    latin = _WORD.findall(_CJK.sub(" ", lowered))
    if latin and not all(word in SMALL_TALK_EN for word in latin):
        return False
    return _only_zh_small_talk("".join(_CJK.findall(bare)) if latin else bare)


def profile_type(text: str) -> MemoryType | None:
    """``preference`` or ``semantic`` when ``text`` states a lasting preference or fact
    about its speaker (first person), else None (an event). Questions and hypotheticals
    are never profile, nor is a statement anchored to a day (:data:`EVENT_TIME`: "I
    loved the film yesterday" is an event), nor one that tells only how the speaker is at
    the moment (:func:`is_passing`: "just clocked off, totally drained" is an event)."""
    if _QUESTION.search(text) or EVENT_TIME.search(text) or is_passing(text):
        return None
    if PREFERENCE_CUES.search(text):
        return MemoryType.PREFERENCE
    if FACT_CUES.search(text):
        return MemoryType.SEMANTIC
    return None


def is_affirmation(text: str) -> bool:
    """True when ``text`` is small talk (:func:`is_small_talk`) that says yes: one of
    :data:`AFFIRM_EN` as a word ("yep, that's right", "exactly") or :data:`AFFIRM_ZH`
    ("对", "嗯嗯对的", "没错")."""
    if not is_small_talk(text):
        return False
    lowered = text.lower()
    return any(w in AFFIRM_EN for w in _WORD.findall(lowered)) or any(a in text for a in AFFIRM_ZH)


def proposition(previous: str) -> str | None:
    """The fact-checking question at the end of ``previous`` (the other side's message a
    reply answers), or None: its last sentence when that is a question ("So your flight
    is on May 3rd?", "你是说你对芒果过敏？") that neither offers help nor asks for
    feedback ("Would you like more detail?", "Did that help?", "要不要我帮你写一个例子？")
    and says more than small talk; a short sentence after it that says what the asker will
    do with the answer (:data:`_WHY_ASKED`: "我可以帮你留意附近的亲子活动", "I can suggest a few
    spots nearby") leaves the question the one the reply answers. Reads the last :data:`PROPOSITION_CHARS` characters
    only (constant work whatever the message's length)."""
    sentences = [p for p in _SENTENCE_END.split(previous.strip()[-PROPOSITION_CHARS:]) if p.strip()]
    if not sentences:
        return None
    last = sentences[-1].strip()
    if len(sentences) > 1 and len(last) <= WHY_ASKED_CHARS and _WHY_ASKED.match(last) and not _ASKED_MARK.search(last):
        last = sentences[-2].strip()  # "你们住苏州哪个区？我可以帮你留意附近的亲子活动。": the reply answers the question
    if not re.search(r"[?？]\s*$|(?:吗|吧)\s*$", last) or _OFFER.search(last):
        return None
    if is_small_talk(_TAG.sub("", last)):
        return None
    return last


#: An English yes/no question's subject-operator inversion, undone to its declarative
#: counterpart (Quirk et al. 1985, 11.5: "Are you a nurse?" ~ "You are a nurse"): the
#: operator after its subject (you / your + one noun); a dummy do / does dropped, did kept
#: ("Did you move to Lisbon?" -> "you did move to Lisbon"). Modals are left alone ("Can you
#: ..." is a request, not a question about the user).
_INVERTED = re.compile(r"^\s*(am|are|is|was|were|have|has|had|do|does|did)\s+(you|your\s+[a-z]+(?!'))\b", re.IGNORECASE)


def _declarative(question: str) -> str:
    """``question`` with an English yes/no inversion undone (:data:`_INVERTED`); any other
    text unchanged."""
    match = _INVERTED.match(question)
    if not match:
        return question
    operator, subject = match.group(1).lower(), match.group(2)
    lead = subject if operator in ("do", "does") else f"{subject} {operator}"
    return lead + question[match.end():]


def as_statement(question: str) -> str:
    """``question`` (a :func:`proposition`) read as the user's own words: the question tag
    and a lead-in ("so", "just to check") dropped and the second person made first
    ("you're allergic to shellfish, right?" -> "I'm allergic to shellfish"; "你是说你对芒果过敏？"
    -> "我是说我对芒果过敏"; "How old is your son?" -> "How old is my son"; an inverted yes/no
    question in its declarative order, "Are you a nurse?" -> "I am a nurse", :func:`_declarative`)."""
    statement = _TAG.sub("", question)
    statement = re.sub(r"^\s*(?:so|ok(?:ay)?|got\s+it|just\s+to\s+(?:check|confirm)|to\s+confirm)\b[\s,:]*", "",
                       statement, flags=re.IGNORECASE)
    statement = _declarative(statement)
    for pattern, first_person in _SECOND_PERSON:
        statement = pattern.sub(first_person, statement)
    return statement


def confirmed_type(question: str) -> MemoryType | None:
    """:func:`profile_type` of a confirmed :func:`proposition`, read as the user's own
    statement (:func:`as_statement`)."""
    return profile_type(as_statement(question))
