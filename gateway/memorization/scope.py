"""How long what a statement tells holds: the words the durable rule of
:mod:`gateway.memorization.disclosure` (step 4) reads, and :func:`is_episode`.

Seed 002 §3.2: the profile, seen by every friend of the user, is what holds about the
user, their basic attributes and likes; events are episodes. A disclosure tells an
episode (:func:`is_episode`) when it names a one-off time
(:data:`gateway.memorization.salience.EVENT_TIME`, :data:`ONE_OFF_TIME`: yesterday, last
weekend, this morning, 昨天, 上周末, 今天早上), a one-off activity (:data:`ONE_OFF_ACTIVITY`:
went to, watched, had a great dinner, 去了, 吃了) or a passing feeling (:data:`MOMENT`:
exhausted, 好累) and no state, habit or change (:data:`STATE`: now, since, anymore, every,
现在, 已经, 开始, 每天; :data:`CHANGE`: moved, started, quit, 搬到, 辞职), no frequency or
span that holds (:data:`ONGOING`: twice a day, from next month, 一天两次, 在大阪读修士, 一紧张就)
and nothing taken on (:data:`TAKEN_ON`: traded in for, closed on, transferred to, turned 8,
提车, 接手). A statement about something else is lasting only when it names a lasting topic
(:data:`DURABLE_EN` / :data:`DURABLE_ZH`, a frequency: :data:`HABIT`, or something taken on). Lasting whatever their date: a plan (:data:`PLAN`), a lasting
condition (:data:`CONDITION`: an allergy, an intolerance, a diagnosis;
:func:`names_chronic_condition`) and a death among the user's people or pets
(:data:`DEATH`). The health of the user or their people (:data:`HEALTH`, its chronic part
:data:`CHRONIC`) marks a lasting fact's ``attribute``. Patterns with no nested
quantifiers: each is linear in the text.
"""

from __future__ import annotations

import re

from gateway.memorization.lexicon import (
    CHRONIC_EN,
    CHRONIC_ZH,
    COMPLAINTS_EN,
    COMPLAINTS_ZH,
    FEELINGS_EN,
    FREQUENCY_EN,
    FREQUENCY_ZH,
    PLAN_CUES,
    TAKEN_ON_EN,
    TAKEN_ON_ZH,
    TITLES_ZH,
    WEEKDAY_EN,
)
from gateway.memorization.lexicon import PEOPLE_EN as _PEOPLE_EN
from gateway.memorization.lexicon import PEOPLE_ZH as _PEOPLE_ZH
from gateway.memorization.salience import EVENT_TIME

#: Lasting topics (English): a disclosure naming one is a profile fact unless anchored to a day.
DURABLE_EN = re.compile(
    _PEOPLE_EN + r"s?\b"
    r"|\b(?:allerg\w*|intoleran\w*|celiac|coeliac|diabet\w*|asthma\w*|epilep\w*|migraines?|adhd|autis\w*|dyslex\w*|"
    r"anxiety|depression|pregnan\w*|diagnos\w*|condition|medication|surgery|injur\w*|disabilit\w*|wheelchair|"
    r"blood\s+pressure|cholesterol|insomnia|arthritis|\w+itis|fractured?|knee|back\s+pain|hearing|vision|glasses|diet|"
    r"vegetarian|vegan|pescatarian|gluten|dairy|lactose|keto|halal|kosher|meat|pork|beef|fish|seafood|shellfish|"
    r"peanuts?|nuts?|eggs?|sugar|spicy|caffeine|coffee|tea|alcohol|sober|drink|smoke|smoking|"
    r"live|living|lives|moved|moving|relocat\w*|apartment|flat|house|home|neighbou?rhood|city|town|country|"
    r"born|grew\s+up|hometown|from|based|"
    r"work|works|working|job|career|company|office|remote|boss|colleague|coworker|shift|shifts|engineer|developer|"
    r"part[\s-]time|full[\s-]time|staff|commute|commuting|bus|train|subway|metro|tram|"
    r"teacher|nurse|doctor|manager|designer|lawyer|student|freelanc\w*|self-employed|startup|retired|promot\w*|"
    r"hired|fired|laid\s+off|quit|resign\w*|employer|business|study|studying|major|degree|university|college|"
    r"school|grade|class|phd|master's|"
    r"name|called|named|years?\s+old|birthday|anniversary|married|wedding|divorc\w*|engaged|single|dating|"
    r"car|bike|motorcycle|drive|own|bought|laptop|iphone|android|mac|pc|piano|guitar|camera|garden|"
    r"like|likes|love|loves|prefer|prefers|hate|hates|dislike|favou?rite|enjoy|enjoys|fan|into|can't\s+stand|"
    r"afraid|scared|speak|speaks|language|native|fluent|learning|hobby|play|plays|training|marathon|"
    r"always|never|usually|often|sometimes|rarely|most\s+(?:days|mornings|evenings|nights|weekends|weeks)|"
    r"every\s+(?:day|morning|evening|night|week|weekend)|panic|leave|maternity|paternity|sabbatical)\b",
    re.IGNORECASE,
)
#: Lasting topics (Chinese).
DURABLE_ZH = re.compile(
    _PEOPLE_ZH + r"|炎(?!热)|过敏|不耐受|糖尿病|哮喘|高血压|血压|血糖|血脂|胆固醇|痛风|颈椎|腰椎|腰|膝盖|腿|肩|脖子|嗓子|胃|牙|矫正|视力|体重|湿疹|鼻炎|失眠|抑郁|焦虑|怀孕|确诊|诊断|病|药|手术|受伤|近视|眼镜|"
    r"怀上|素|吃肉|不吃|不能吃|不喝|戒|忌口|清真|辣|咖啡|茶|酒|烟|海鲜|花生|坚果|鸡蛋|牛奶|乳糖|麸质|"
    r"住|搬|老家|家乡|出生|长大|城市|小区|房子|公寓|租|宿舍|"
    r"工作|上班|公司|职业|工程师|程序员|老师|护士|医生|经理|设计师|律师|会计|销售|客服|厨师|司机|编辑|记者|公务员|"
    r"前端|后端|运营|学生|在\S{1,8}(?:做|当|干)(?!饭|菜)|自由职业|创业|退休|升职|辞职|离职|跳槽|入职|"
    r"失业|夜班|加班|同事|专业|大学|学校|读书|年级|博士|硕士|上学|毕业|"
    r"叫|名字|岁|生日|纪念日|结婚|离婚|订婚|单身|恋爱|"
    r"车|自行车|电动车|开车|电脑|手机|房|钢琴|吉他|相机|"
    r"喜欢|爱|讨厌|偏好|最爱|受不了|热爱|怕|说|语|学|爱好|练|跑步|马拉松|健身|"
    r"每天|每周|平时|一直|从来|经常|总是|习惯"
)
#: A lasting thing that changed: durable even when dated ("I moved to Berlin last month").
CHANGE = re.compile(
    r"\b(?:moved|relocated|started|starting|quit|left|joined|adopted|got\s+(?:married|engaged|divorced|a\s+new|a\s+job|"
    r"promoted|hired|fired|laid\s+off)|had\s+a\s+baby|was\s+(?:born|diagnosed|promoted|hired|fired)|diagnosed|"
    r"retired|graduated|became|switched|gave\s+up|no\s+longer|anymore|any\s+more|not\s+\w+\s+anymore|"
    r"bought|sold|broke\s+up)\b"
    r"|搬|换了|辞职|离职|跳槽|入职|养了|结婚|离婚|分手|生了|确诊|退休|毕业|开始|不再|戒了|买了|卖了"
    r"|升(?:职|任)|升了?(?:为|成)?\S{0,2}?" + TITLES_ZH + r"|转学|考(?:上|进|取|起)了?|换导师",
    re.IGNORECASE,
)
#: A one-off moment (seed 002 §3.2: events are episodes, the profile is what holds): a
#: day or part of one named as when it happened, beyond :data:`EVENT_TIME` ("the other
#: day", "last weekend", 上周末, 今天早上, 前几天).
ONE_OFF_TIME = re.compile(
    r"\b(?:the\s+other\s+day|earlier\s+today|this\s+past\s+(?:week|weekend)|over\s+the\s+weekend|"
    r"at\s+the\s+weekend|on\s+" + WEEKDAY_EN + r"(?!s|\s+(?:nights|mornings|evenings|afternoons)))\b"
    r"|今早|今天早上|前几天|那天|上次",
    re.IGNORECASE,
)
#: Something that holds rather than happens: a state or a change of one ("now", "since",
#: "anymore", 现在, 已经, 开始) or a habit ("every", "usually", 一直, 每天, 平时).
STATE = re.compile(
    r"\b(?:now|since|anymore|any\s+more|no\s+longer|currently|these\s+days|nowadays|still|for\s+good|"
    r"from\s+(?:now|here)\s+on(?:\s+out)?|"
    r"always|usually|normally|generally|often|never|every|most\s+(?:days|mornings|evenings|nights|weekends)|"
    r"lately|recently|for\s+(?:(?:\d+|a\s+few|a\s+couple\s+of|two|three|four|five|six|many|several)\s+)?"
    r"(?:days|weeks|months|years|ages))\b"
    r"|现在|已经|开始|目前|如今|一直|不再|从此|以后|每天|每周|每个|经常|总是|平时|一般|老是|最近|这几年|多年|好几年",
    re.IGNORECASE,
)
#: A lasting state begun or taken on (seed 002 §3.2: what the user owns, where they work,
#: who their people and pets are belong to the profile): an acquisition, a transfer, a
#: takeover, an age reached, a business opened, a child enrolled, an animal taken in
#: (:data:`gateway.memorization.lexicon.TAKEN_ON_EN` / ``TAKEN_ON_ZH``: "traded the old car in
#: for a minivan last week", "closed on a boat", "transferred to the ICU last month", "Dr
#: Okafor is taking me over", "Kuba turns 8 next month", 上周提车了, 调到总部了, 前几天捡了只猫).
#: As with :data:`CHANGE`, the day it happened dates the change; what it began holds after it.
TAKEN_ON = re.compile(r"\b" + TAKEN_ON_EN + r"\b|" + TAKEN_ON_ZH, re.IGNORECASE)
#: Something that holds over a span beyond :data:`STATE` (a habit or a state, not a moment):
#: a frequency (:data:`gateway.memorization.lexicon.FREQUENCY_EN` / ``FREQUENCY_ZH``: "twice a
#: day", "3x a week", "ten days at a time", 一天两次, 每周三次), an open interval that starts
#: at a time to come ("from next month": the state holds from then on) or a span to come
#: ("for the next month"); in Chinese a post or a course of study where it is held
#: (在 + place + 读 / 念 + a course, or 做 / 当 / 教 / 干: 在大阪读修士, 在外企做HR; not an errand
#: there: 在家做饭, 在医院做检查, nor a finished one: 做了, 做完), "still" (还在, 仍然, 依然, as English "still"
#: in :data:`STATE`), a conditional habit (一 X 就 Y: 一紧张就胃疼, Li & Thompson 1981, 23.2 on
#: 一...就), a complaint come back (又犯, 复发, 老毛病: it recurs, so it is the user's), a
#: school year (今年高三, 读大二, 三年级) or a span of years at a trade (做了八年广告).
#: A habitual or individual-level predicate is no episode (Carlson 1977, ch. 2).
ONGOING = re.compile(
    r"\b(?:" + FREQUENCY_EN + r"|from\s+(?:next|this\s+coming)\s+(?:week|month|year|term|semester|season|"
    + WEEKDAY_EN + r")|for\s+the\s+(?:next|coming)\s+(?:(?:few|couple\s+of|\d+|two|three|four|five|six)\s+)?"
    r"(?:days?|weeks?|months?|years?))\b"
    r"|" + FREQUENCY_ZH
    + r"|在(?:(?![做当教干读念])[\u4e00-\u9fffA-Za-z]){1,8}?(?:(?:读|念)(?:书|研|博|硕|本科|大学|高中|初中|小学|中学|修士|研究生|MBA|PhD)"
    r"|(?:做|当|教|干)(?![了完过饭菜梦]|作业|检查|手术|体检|家务|运动|瑜伽|按摩))"
    r"|还在|仍在|仍然|依然|一[\u4e00-\u9fff]{1,6}就|又犯|复发|老毛病"
    r"|(?:上|读|在读|今年|念|现在)(?:高|初|大|研)[一二三四](?![点些下样倍])|[一二三四五六]年级"
    r"|(?:做|干|当|教|开|住|养|学)了[一二三四五六七八九十两几\d]{1,3}(?:个)?多?年",
    re.IGNORECASE,
)
#: A habit told by its frequency (the first alternatives of :data:`ONGOING`: "naproxen now
#: twice a day", 每周三次): a lasting topic for a statement about something else, as
#: "every day" is in :data:`DURABLE_EN`.
HABIT = re.compile(r"\b" + FREQUENCY_EN + r"\b|" + FREQUENCY_ZH, re.IGNORECASE)
#: A one-off activity told in the past ("I went to a jazz concert", "we watched Dune",
#: "had a rough day at work", 去看了一场电影, 吃了火锅): an episode whatever its date. "saw"
#: with a determiner or a bare plural ("saw a fox", "we saw whales": a sighting, a perception
#: verb in the simple past with its object, Vendler 1957's achievement) but not a clause
#: ("saw that", "saw it coming"), a pronoun or a word ending in s that is no plural ("saw this", "saw his").
ONE_OFF_ACTIVITY = re.compile(
    r"\b(?:went\s+(?:to|out|for|on|hiking|shopping|camping|swimming|skiing|running)|visited|watched|attended|"
    r"saw\s+(?:a|an|the|(?!(?:this|is|was|has|as|its|his|hers|yours|ours|theirs|us|thus|plus|less|unless|across|"
    r"always|sometimes|perhaps|yes|ss)\b)[a-z]{2,}s(?!['\w]))|ate|tried\s+(?:a|an|the|out)|cooked|baked|hosted|celebrated|threw\s+a|"
    r"caught\s+(?:a|the)|ran\s+into|had\s+(?:a|an)\s+(?:\w+\s+){0,2}(?:day|time|night|evening|morning|"
    r"afternoon|weekend|meeting|party|dinner|lunch|breakfast|date|call|chat|fight|argument|talk))\b"
    r"|去了|看了|吃了|参加了|见了|玩了|逛了|聚餐|聚了|爬了|喝了",
    re.IGNORECASE,
)
#: How the user feels right now ("I'm exhausted", "feeling stressed", 好累, 有点烦): an
#: episode unless :data:`STATE` says it lasts.
MOMENT = re.compile(
    r"\b(?:feel|feeling|felt|" + FEELINGS_EN + r")\b"
    r"|好累|很累|太累|累死|累了|好困|犯困|困了|饿了|好饿|好烦|很烦|烦死|心烦|烦躁|紧张|激动|开心|难过|郁闷|心情|无聊|崩溃",
    re.IGNORECASE,
)
#: A plan of the user's ("We're going to Japan in April", "报了十月份的全马"): it holds
#: until it happens, so every friend should know it (profile), with its date.
PLAN = re.compile(PLAN_CUES, re.IGNORECASE)
#: A lasting condition of the body (seed 002 §3.2 counts health among the user's basic
#: attributes): an allergy, an intolerance, a diagnosis. Found out on a day ("ate mango
#: the other day and found out I'm allergic", "前几天吃了芒果才知道自己芒果过敏") it still
#: holds afterwards, so it is durable whatever its date or the episode around it.
CONDITION = re.compile(r"\b(?:allergic|allergy|allergies|intolerant|intolerance|celiac|coeliac|diagnosed\s+with|"
                       r"(?:pre)?diabetic|asthmatic|epileptic)\b|过敏|不耐受|确诊|查出|诊断出", re.IGNORECASE)
#: A death among the user's people or pets ("my grandpa passed away", "we lost Biscuit
#: last tuesday", "had to put our dog down", 外婆去世了): it tells an episode with a day,
#: yet who the user's people and pets are (seed 002 §3.2: family, pets) has changed for
#: good, and a later "should we get another dog?" or "plans for the holidays" needs it; so
#: it is durable whatever its date. "lost" counts only with a name or one of the user's
#: people or pets ("lost my keys" is not a death).
DEATH = re.compile(r"\b(?:passed\s+away|passed\s+on|died|put\s+(?:\w+\s+){0,3}(?:down|to\s+sleep)|"
                   r"lost\s+(?:(?:my|our)\s+(?:\w+\s+)?" + _PEOPLE_EN + r"|(?-i:[A-Z][a-z]+)))\b"
                   r"|去世|过世|离世|病逝", re.IGNORECASE)
#: The health of the user or their people (seed 002 §3.2 counts it among the basic
#: attributes; "my daughter is allergic to peanuts" decides dinner too): a condition
#: (:data:`CONDITION`), a chronic complaint or a body part that limits them ("bad knees",
#: "blood pressure", 膝盖, 血压, 痛风, 腰). A lasting fact naming one is marked
#: ``attribute: health`` so recall's profile pick keeps a place for it: "any hikes nearby?"
#: needs the knees, "what should I order?" the allergy, and neither shares a word with the
#: request.
HEALTH = re.compile(r"\b(?:" + CHRONIC_EN + "|" + COMPLAINTS_EN + r")\b|" + COMPLAINTS_ZH + "|" + CHRONIC_ZH, re.IGNORECASE)
#: A diagnosed or chronic condition among :data:`HEALTH` (an allergy, diabetes, high blood
#: pressure, gout, 过敏, 高血压, 痛风): ``attribute: condition``, which the profile pick
#: prefers to a passing complaint ("my knee aches after dancing").
CHRONIC = re.compile(r"\b" + CHRONIC_EN + r"\b|" + CHRONIC_ZH, re.IGNORECASE)


def names_chronic_condition(text: str) -> bool:
    """``text`` names a chronic condition (:data:`CHRONIC`: "high blood pressure", 痛风),
    not only taking medicine or a pregnancy (those have a slot or change): "went to the
    doctor yesterday, turns out I have high blood pressure" holds after that day."""
    return any(m.group().lower() not in _NOT_A_CONDITION and not m.group().lower().startswith("pregnan")
               for m in CHRONIC.finditer(text))


_NOT_A_CONDITION = frozenset({"medication", "吃药", "服药", "怀孕"})


def is_episode(text: str) -> bool:
    """A disclosure that tells an episode, not something that holds (seed 002 §3.2: the
    profile is the user's stable attributes and likes, events are what happened): it
    names a one-off time (:data:`EVENT_TIME`, :data:`ONE_OFF_TIME`), a one-off activity
    (:data:`ONE_OFF_ACTIVITY`) or a passing feeling (:data:`MOMENT`), and no state, habit
    or change (:data:`STATE`, :data:`ONGOING`, :data:`CHANGE`, :data:`TAKEN_ON`). Linear in
    ``len(text)``."""
    if STATE.search(text) or CHANGE.search(text) or ONGOING.search(text) or TAKEN_ON.search(text):
        return False
    return bool(EVENT_TIME.search(text) or ONE_OFF_TIME.search(text) or ONE_OFF_ACTIVITY.search(text)
                or MOMENT.search(text))
