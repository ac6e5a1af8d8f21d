"""What each clause of a user turn is (step 2 of :mod:`gateway.memorization.disclosure`):
a request, a question, small talk, talk about the conversation, a disclosure or other.

**What each clause is** (:func:`clause_kind`), first match wins:
``small_talk`` (:func:`gateway.memorization.salience.is_small_talk`, plus "I see",
"I think so", "我知道了"); a liking or standing instruction
(:data:`gateway.memorization.salience.PREFERENCE_CUES`: "keep it short", "请回答简洁一点")
is a ``disclosure``; ``request`` (checked before ``question``: "Can you write me a
poem?" is a request): an imperative first word "give / tell
/ write / recommend", "can you", "please", "I'd like / I want / I need + a thing or
you", "I'm looking for", "help me", 帮我 请 给我 推荐 我想要 我需要; ``question`` (the
sentence's question mark, an interrogative or auxiliary first word (not "had" + object +
participle, the causative: :data:`gateway.memorization.asks.HAVE_DONE_EN`), 吗/呢 at the end
(嘛 not after the speaker's own statement: :data:`gateway.memorization.asks.OBVIOUS_MA_ZH`; 吧
not after a softened statement, :data:`gateway.memorization.asks.SOFTENED_BA_ZH`; 呢 not after a
situation that goes on, :data:`gateway.memorization.asks.DURATIVE_NE_ZH`; a bare negator, "没有",
is an answer, :data:`gateway.memorization.asks.BARE_NO_ZH`),
a Chinese question word: 什么 怎么 哪 几 多少 能不能 ... outside "什么都" and "前几天",
with the colloquial 啥 (什么) and 干嘛 outside "啥都"; a
clause that starts with "any": "any easy swap for..."); ``meta`` (talk
about the conversation: "I have a question", "I'll try that", "that sounds good",
a reaction with its "I" dropped, "love it", and a judgement of the assistant's words,
"你说得对", "说到我心坎里了", any Chinese clause led by 你 / 您: a statement about the
other side is no fact about the user);
a first-person statement after a mirative lead ("turns out", "just found out":
:data:`_MIRATIVE_EN`) is a ``disclosure`` even with "??" at its end;
``disclosure`` (a first-person statement: the clause starts, after a discourse word
such as "btw / also / since / because / as / 其实 / 因为 / 对了" or a fronted time
("last weekend", "yesterday"), with I / my / we /
our / 我 / 我们 / 咱, or with a past tense whose "I" was dropped ("Ran my first 10k
on Sunday", "Had knee surgery in March": :data:`_DROPPED_I_EN`; not after a statement
with a subject of its own, not about the reply, "tried that"), or names "my <someone>",
a bare "Mom" / "Grandpa" leading the clause, or 我<家人> anywhere, or "As a nurse"
/ 作为一名护士; a Chinese clause without a subject but with a durable cue, "在上海工作",
"血压有点高", "闺女考上了" (the user's body, people, possessions, job), is the user's
too: Chinese drops the subject); so is a Chinese clause with no subject that opens the
turn (nothing but small talk before it: the zero subject is the speaker, Li & Thompson
1981, ch. 24) and tells a change with the sentence-final 了 ("换平台了", "团团8个月了"), an
ongoing activity with 在 ("还在喂母乳"), a trip planned for a coming time ("下个月去新加坡
开会"), a trade ("跑外卖的") or a pseudo-cleft ("快递用的中通", not 的 + 那个 + noun), and any Chinese clause
in a slot's own words ("二战考研") or naming a disease by its -炎 ("手腕腱鞘炎"); a bare
number ("43") is ``other`` (an answer), as is a presentative clause ("班上有个孩子总打人":
:data:`_PRESENTATIVE_ZH`, the referent 有 brings in is its subject), 还是 before a negation is "still" ("还是没好"),
not an alternative question, and an estimate with 吧 ("一百来个吧") asks nothing;
anything else is ``other``. Asks and talk about the conversation are also told by their
grammar: the words are :mod:`gateway.memorization.asks`'s, and a noun phrase that is the
topic or a constraint of an ask is :func:`_part_of_ask_en`'s.

**In its turn** (:func:`clause_kinds`): what the clauses around a clause say changes its
kind: leave-taking as the turn's last clause is ``meta``, a 的 phrase after an ask, a state
a bare question right after it asks about ("is that normal?": :func:`_state_asked`) and
the topic of an English ask are part of the ask, a clause about the app the user talks
through is ``meta``, a bare name in apposition inside a statement is part of it
(:func:`_appositive_name`), and a fronted "when I / my ..." clause of time before an ask in
its sentence states the user's routine (:func:`_when_i_before_ask`). An ask that presupposes
or states something lasting of the user's is a ``disclosure`` (:func:`_attributive`: a
possessed condition, device, breed, named or lasting thing, a role, a relative clause on 我,
a place with 这边, a move before the ask, a slot stated by 我).
"""

from __future__ import annotations

import re
from collections.abc import Collection
from typing import Literal

from gateway.memorization.asks import (
    ABOUT_THE_APP,
    ALTERNATIVE_ZH,
    ALTERNATIVES_EN,
    ASKS_IF_IT_MATTERS,
    AUX_SUBJECT_EN,
    BARE_NO_ZH,
    COMPARATIVE_EN,
    CONSTRAINT_EN,
    DEICTIC_EN,
    DEICTIC_ZH,
    DURATIVE_NE_ZH,
    ESTIMATE_ZH,
    FIRST_PERSON_IN_EN,
    FOR_MY_EN,
    HAVE_DONE_EN,
    LEAVE_ZH,
    LOVE_YOU_EN,
    META_EN,
    META_ZH,
    NEGATED_EN,
    OBVIOUS_MA_ZH,
    PAST_AUX_EN,
    QUERY_NP_EN,
    QUESTION_END_ZH,
    QUESTION_IN_EN,
    QUESTION_START_EN,
    QUESTION_WORD_ZH,
    REACTION_EN,
    RELATIVE_TAIL_EN,
    REQUEST_EN,
    REQUEST_ZH,
    REVISION_EN,
    REVISION_ZH,
    SOFTENED_BA_ZH,
    SPEC_ZH,
    WH_EN,
    alternative_zh,
    request_zh,
)
from gateway.memorization.changes import MY_SOMEONE_ZH as _MY_SOMEONE_ZH
from gateway.memorization.changes import PRONOUN_EN as _PRONOUN_EN
from gateway.memorization.changes import PRONOUN_ZH as _PRONOUN_ZH
from gateway.memorization.clauses import (
    FIRST_PERSON_EN,
    FIRST_PERSON_ZH,
    LATIN_WORD,
    MY_SOMEONE_EN,
    NAMED_PERSON,
    NAMES_USER,
    VERB_EN,
    Clause,
    core_en,
    core_zh,
)
from gateway.memorization.lexicon import (
    ASK_HEALTH_EN,
    CHRONIC_EN,
    COMPLAINTS_EN,
    FUTURE_TRIP_ZH,
    KIN_BARE_ZH,
    LASTING_THINGS_EN,
    MONTH_NAMES,
    OCCUPATIONS_EN,
    PAST_TIME_ZH,
    PEOPLE_EN,
    PET_BREEDS_EN,
    PET_BREEDS_ZH,
    WEEKDAY_NAMES,
)
from gateway.memorization.lexicon import PEOPLE_ZH as _PEOPLE_ZH
from gateway.memorization.salience import HABITUAL, PREFERENCE_CUES, SMALL_TALK_EN, is_closing, is_passing, is_small_talk
from gateway.memorization.scope import CHANGE, CHRONIC, CONDITION, DURABLE_ZH, HEALTH, STATE, names_chronic_condition
from gateway.memorization.slots import slot_of, slots_of
from gateway.runtime.text import HAN_RE as _CJK

ClauseKind = Literal["disclosure", "question", "request", "small_talk", "meta", "other"]

#: A fronted time before the subject ("Last weekend I ate shrimp..."): skipped when
#: looking for the subject (a clause that is only a time, "last spring", stays an answer).
_TIME_LEAD_EN = re.compile(r"^(?:yesterday|today|tonight|(?:last|this|next)\s+(?:week|weekend|month|year|night|morning|summer|"
                           r"winter|spring|fall|autumn)|(?:this|that)\s+(?:morning|afternoon|evening))\b[\s,]+(?=\S)", re.IGNORECASE)
_AS_A_EN = re.compile(r"^as\s+an?\s+\w+", re.IGNORECASE)
#: English past-tense forms that are not "-ed" (the irregular verbs of everyday narration;
#: Quirk et al. 1985, 3.14 on irregular verbs). ``put``, ``read``, ``let``, ``set``, ``cut``
#: and ``hit`` are left out: their past is their base, an imperative ("put it in the oven").
_IRREGULAR_PAST_EN = (
    "ate|awoke|became|began|bit|blew|broke|brought|built|bought|came|caught|chose|dealt|did|drank|drew|drove|dug|"
    "fed|fell|felt|fought|found|flew|forgot|froze|gave|got|grew|had|heard|held|hid|hung|hurt|kept|knew|laid|led|left|"
    "lent|lost|made|meant|met|paid|quit|ran|rang|rode|rose|sang|sank|sat|saw|sent|shook|shot|shut|slept|sold|spent|"
    "split|spoke|stole|stood|stuck|swam|swore|took|taught|threw|told|tore|understood|was|went|woke|won|wore|wrote|"
    "been|broken|gotten|taken|seen|done|eaten|given|driven|written|spoken|chosen|stolen|thrown|worn|grown|known"
)
#: "-ed" words that are not past tenses, or whose past reading starts no narration
#: ("need", "indeed", "based on that", "compared to"): not read as a dropped "I".
_NOT_PAST_EN = ("need|needed|seed|feed|speed|bleed|breed|proceed|succeed|exceed|indeed|hundred|bed|red|shed|wed|ed|"
                "based|compared|assuming|supposed|related|given|interested|confused")
#: Words after an "-ed" form that make it read as an adjective or a passive ("stoked",
#: "fixed til next march", "tired of it", "married to a chef"): such an "-ed" form alone is no
#: past tense with a dropped "I"; a regular past counts only with an object or adverb after it.
_AFTER_PARTICIPLE_EN = "to|til|till|until|on|in|at|for|with|about|of|by|from|and|or|but|as|af|lol|tbh|now|rn|today|though"
#: A casual statement that drops its subject "I" ("Finally moved out!", "Got a new job",
#: "Just adopted a kitten", "Ran my first 10k on Sunday"): a past-tense verb first. English
#: diary and chat style drops the first-person subject of a declarative at the left edge
#: (Haegeman 1990 on diary drop; Weir 2012 on left-edge deletion); an imperative is a base
#: form, never a past tense, so a past tense first is a statement by the speaker. A past
#: tense whose object is the conversation ("tried that", "loved it", "read your answer")
#: is about the reply, not the user (:data:`_ABOUT_REPLY_EN`).
_DROPPED_I_EN = re.compile(
    r"^(?:(?:just|finally|recently|also|officially|only|actually|already|never|once|literally)\s+)?"
    r"(?:(?!(?:" + _NOT_PAST_EN + r")\b)[a-z]{2,}ed(?=\s+(?!(?:" + _AFTER_PARTICIPLE_EN + r")\b)[\w£$€#])|" + _IRREGULAR_PAST_EN
    + r"|started|moved|adopted|switched|signed|joined|"
    r"landed|passed|graduated|finished|booked|decided|turned|married|retired|proposed|enrolled|transferred|relocated)\b"
    r"|^(?:(?:just|finally|also|officially)\s+)?(?:going|heading|flying|moving|relocating)\s+(?!on\b|well\b|good\b|great\b|ok\b|crazy\b|nuts\b)"
    r"|^(?:(?:still|now)\s+)?(?:working|living|staying)\s+(?:at|in|with|from|as|nights|days|remotely|full-time|part-time)\b",
    re.IGNORECASE)
#: A past tense whose object is the reply or the conversation ("tried that", "loved it",
#: "read your answer", "did what you said"): meta talk, not a dropped "I" statement.
_ABOUT_REPLY_EN = re.compile(r"^(?:(?:just|finally|already|also|actually)\s+)?[a-z']+\s+(?:it|that|this|those|these|them|your|you|what\s+you)\b"
                             r"(?!\s+(?:is|was|are|were|to)\b)", re.IGNORECASE)
#: A self-description with "I'm" dropped, a bare role noun phrase with no verb ("arch
#: major at UT Austin", "sophomore", "night-shift nurse here"): read as :data:`_AS_A_EN`
#: ("As a nurse") is, the user's own role (:func:`clause_kind` checks there is no verb).
_ROLE_NP_EN = re.compile(r"^(?:an?\s+)?(?:[\w'-]+\s+){0,3}?(?:major|student|undergrad|grad\s+student|sophomore|freshman|"
                         r"postdoc|phd\s+candidate|resident|intern|retiree|dev|" + OCCUPATIONS_EN
                         + r")(?:\s+(?:at|in|from|for|with)\s+.{1,40}|\s+here)?$", re.IGNORECASE)
_AS_A_ZH = re.compile(r"^作为(?:一[名个位])?")
#: A trip or move planned for a coming time, with no subject ("下个月去新加坡开会", "月底回
#: 老家"): Chinese has no tense; a future time word before a bare verb of motion states a
#: scheduled event (Li & Thompson 1981, 6.1 on time words and aspect), the speaker's in an
#: opening clause (ch. 24). A plan (:data:`gateway.memorization.scope.PLAN`): durable until it happens.
_FUTURE_TRIP_ZH = FUTURE_TRIP_ZH
#: A mirative lead (the speaker's own surprise at new information: "turns out", "apparently",
#: "found out", 原来, 才知道; e.g. DeLancey 1997 on mirativity): what follows is a statement
#: even when the sentence ends in "??" ("turns out im allergic to cats??").
_MIRATIVE_EN = re.compile(r"^(?:(?:also|and|so|oh|btw|well)\s+)*(?:(?:it\s+)?turns\s+out|apparently|(?:i\s+)?(?:just\s+)?"
                          r"found\s+out|(?:i\s+)?(?:just\s+)?learned|(?:i\s+)?(?:just\s+)?realized|guess\s+what)\b[\s,:]*(?:that\s+)?",
                          re.IGNORECASE)
#: A bare number ("43", "3.5"): a quantity, which answers a how-many question.
_NUMERAL = re.compile(r"\d+(?:[.,]\d+)?")


#: The user's age or the age of someone of theirs ("my 7 year old", "turning 50", "三岁了").
_AGE = re.compile(r"\b\d{1,3}[\s-]*(?:years?|yrs?|months?|mos?|weeks?)[\s-]*old\b|\bturn(?:s|ing|ed)\s+\d{1,3}\b"
                  r"|\b(?:aged?)\s+\d{1,3}\b|[一二三四五六七八九十两\d]{1,3}(?:岁|个月大)", re.IGNORECASE)
_MY_AGED_EN = re.compile(r"\b(?:my|our)\s+\d{1,2}[\s-]*(?:years?|yrs?|months?|mos?)[\s-]*old\b", re.IGNORECASE)
#: Someone of the user's named by their age inside an ask, the Chinese "my 7 year old": an age
#: modifying a kin term or a child's name ([num]岁 / 个月 + 的 + head, Li & Thompson 1981,
#: ch. 20 on the 的 modifier) with the user's possessor (我 / 我家 / 咱家: "帮我家五岁的儿子选个
#:自行车"), or right after the beneficiary verb of the ask (给 / 帮 / 替 / 为 / 陪 / 教 / 带) with
#: a kin term, whose possessor Chinese drops when it is the speaker's ("给三岁的女儿挑绘本"), or a
#: child's name, reduplicated (豆豆) or led by 小 / 阿 (小宇, 阿杰): "给两岁的豆豆挑几本绘本". Not a
#: generic child (两岁的孩子 / 小孩 / 宝宝 / 娃 with no possessor) nor another's ("给同事三岁的女儿").
_AGE_OF_ZH = r"[一二三四五六七八九十两\d]{1,3}(?:岁|个月)(?:半|多)?大?的"
_AGED_ZH = re.compile(r"(?:我|俺|咱)(?:们)?(?:家|的)?" + _AGE_OF_ZH + r"(?:" + _PEOPLE_ZH + r"|([\u4e00-\u9fff])\1|[小阿][\u4e00-\u9fff])"
                      r"|(?<=[给帮替为陪教带])" + _AGE_OF_ZH + r"(?:(?!孩子|小孩|宝宝|娃|孩)(?:" + _PEOPLE_ZH
                      + r")|([\u4e00-\u9fff])\2|[小阿][\u4e00-\u9fff])")
#: A hypothetical, not a fact: "what if I were allergic", 如果我过敏.
_HYPOTHETICAL = re.compile(r"\b(?:if|whether|suppose|supposing|imagine|hypothetically)\b|如果|要是|假如|万一", re.IGNORECASE)
#: Diet words a verbless fragment describes the user by ("vegan now", "pescatarian remember").
_DIET_WORD = re.compile(r"\b(?:vegetarian|vegan|pescatarian|plant-based|keto|gluten-free|dairy-free|lactose[\s-]intolerant|"
                        r"halal|kosher|sober|teetotal)\b", re.IGNORECASE)


#: An ask for what the assistant was told (a recall question): its question word stands for the
#: attribute itself, so the clause presupposes only that there is one and states nothing new
#: (the open proposition of a wh-question, Karttunen 1977, "Syntax and semantics of
#: questions"): the complement of a condition asked for ("what am I allergic to", 我对什么过敏),
#: a name asked for ("what's my dog called again", 我家狗叫什么来着), or an ask to remind
#: ("remind me what ...", "do you remember which ...", 还记得...什么, ...来着 after a question word).
#: "what can I eat with my peanut allergy" asks about something else and keeps its fact.
#: Each pattern is anchored on a literal or an end, so :func:`_recall_ask` is linear.
_REMIND_EN = re.compile(r"\b(?:remind me|do you (?:still )?remember|you remember|did i (?:ever )?(?:tell|mention))\W+"
                        r"(?:what|which|who|how|when|where)\b", re.IGNORECASE)
#: The attribute left as the question's gap at the end: "... allergic to?", "... called again?".
_GAP_END_EN = re.compile(r"\b(?:(?:allergic|intolerant|sensitive|addicted) to|called|named)\W*(?:again\W*)?$", re.IGNORECASE)
_WH_EN = re.compile(r"\b(?:what|which|who)\b", re.IGNORECASE)
_WH_AGAIN_EN = re.compile(r"^(?:what|which|who|when|where|how)\b(?=[^?.!]*\bagain\W*$)", re.IGNORECASE)
_GAP_ZH = re.compile(r"(?:什么|啥|哪些|哪种|哪样)(?:东西)?过敏|叫(?:什么|啥)(?:名字|名儿)?来着")
_WH_ZH = re.compile(r"什么|啥|哪|几|多少|谁")
_SENTENCE_END = re.compile(r"[?.!？。！]")


def _recall_ask(core: str) -> bool:
    """``core`` asks the assistant for what it was told (the comment above): "remind me what
    ...", a wh-question whose gap is the attribute at its end ("what am I allergic to?"), a
    wh-question closed by "again", 我对什么过敏, 叫什么来着, 还记得 or 来着 after a Chinese question
    word. Linear in ``core``'s length (each pattern anchored on a literal or an end)."""
    if _REMIND_EN.search(core) or _WH_AGAIN_EN.match(core) or _GAP_ZH.search(core):
        return True
    gap = _GAP_END_EN.search(core)
    if gap:
        ends = [m.end() for m in _SENTENCE_END.finditer(core, 0, gap.start())]
        if _WH_EN.search(core, ends[-1] if ends else 0, gap.start()):
            return True
    remember = core.find("还记得")
    if remember >= 0 and _WH_ZH.search(core, remember + 3):
        return True
    wh = _WH_ZH.search(core)
    return bool(wh and core.find("来着", wh.end()) >= 0)


def _changed_before_ask_zh(core: str) -> bool:
    """``core`` (a Chinese ask) opens with a realized change of the speaker's as its time clause
    (:data:`_CHANGE_BEFORE_ASK_ZH`): a verb of change followed by a lasting state ("戒烟以后老想吃零食咋办"),
    or V 了 O ("升了主管以后怎么管以前的同事"); not supposed (:data:`_HYPOTHETICAL`)."""
    found = _CHANGE_BEFORE_ASK_ZH.match(core)
    if found is None or _HYPOTHETICAL.search(core):
        return False
    return bool(found.group("done")) or bool(_LASTING_AFTER_ZH.match(found.group("rest")))


def _attributive(core: str) -> bool:
    """An ask (a request or a question) that carries a fact about the user or their people
    as an attribute of the person it names (the attributive use of a state: Quirk et al.,
    *A Comprehensive Grammar of the English Language*, 1985, 7.34 on attributive and
    predicative adjectives; in Chinese the topic-comment clause before the question,
    Li & Thompson 1981, ch. 4): "can my diabetic dad eat mango", "what do I get my
    7 year old", "for my twins Mateo and Lucia", "我家娃对鸡蛋过敏能吃啥", "我孙女三岁了不爱
    吃青菜咋办". The person must be the user's (:data:`MY_SOMEONE_EN` / :data:`_MY_SOMEONE_ZH`,
    a bare Chinese kin term leading the clause with a lasting condition, :data:`_KIN_LEAD_ZH`:
    "弟弟不是蛋白过敏嘛", or I / 我) and the attribute lasting: a condition (:data:`HEALTH`;
    for the user themselves an allergy, a diagnosis or, as the comment of 我, a chronic
    condition, :data:`_I_CHRONIC_ZH`: "我痛风能吃吗", not a passing symptom, "我头疼怎么办", nor one supposed with 的话), a diet
    (:data:`_DIET_WORD`), an age (:data:`_AGE`) or a name (:data:`NAMED_PERSON`). Also an ask
    that presupposes a lasting thing of the user's by a possessive or a change of state (a
    condition or device, :data:`_MY_CONDITION_EN`, :func:`_with_condition_en`; a name,
    :data:`_MY_NAMED_EN`; a breed, :data:`_MY_BREED`; a thing had for good, :data:`_MY_LASTING_EN`;
    "switch from <name>", :data:`_SWITCH_FROM_EN`; 我家那只, :data:`_MY_ANIMAL_ZH`) or states one
    (a role, :data:`_AS_ROLE_EN`; a relative clause on 我, :func:`_described_i_zh`; a slot told by
    a clause led by 我, :data:`_STATED_BY_I_ZH`). A hypothetical ("what if I were allergic":
    :data:`_HYPOTHETICAL`) is none, nor an ask for what the assistant was told ("what am I allergic
    to", 我对什么过敏来着: :func:`_recall_ask`)."""
    if _HYPOTHETICAL.search(core) or _recall_ask(core):
        return False
    if (_MY_CONDITION_EN.search(core) or _with_condition_en(core) or _MY_NAMED_EN.search(core) or _described_i_zh(core)
            or (_I_SUBJECT_EN.search(core) and (_SWITCH_FROM_EN.search(core) or _AS_ROLE_EN.search(core)))
            or _MY_BREED.search(core) or _MY_LASTING_EN.search(core)):
        return True  # "with my asthma", "my beagle Rosco", 当过三十年老师的我: the ask presupposes it
    if _STATED_BY_I_ZH.match(core) and not _CONDITIONAL_ZH.search(core) and slots_of(core, first=True):
        return True  # 我在深圳上班周末去哪玩: the user's slot, told as the topic of the ask
    kin = _KIN_LEAD_ZH.match(core)
    if kin and (CONDITION.search(core, kin.end()) or names_chronic_condition(core[kin.end():])):
        return True  # 妈糖尿病能吃西瓜吗: a bare kin term is the speaker's own relative
    if _AGED_ZH.search(core):
        return True  # 给两岁的豆豆挑几本绘本, 帮我家五岁的儿子选个自行车: the person named by their age
    if not (MY_SOMEONE_EN.search(core) or _MY_SOMEONE_ZH.search(core) or NAMES_USER.search(core)
            or _MY_AGED_EN.search(core)):
        return False
    if _MY_AGED_EN.search(core):
        return True  # "my 7 year old": the person named by their age
    person = bool(MY_SOMEONE_EN.search(core) or _MY_SOMEONE_ZH.search(core) or _MY_ANIMAL_ZH.search(core))
    if NAMED_PERSON.search(core) or (person and _AGE.search(core)):
        return True
    if _CONDITIONAL_ZH.search(core):
        return False  # 我痛风的话能吃吗: "if I had gout", no statement
    return bool((HEALTH.search(core) and (person or CONDITION.search(core))) or _I_CHRONIC_ZH.match(core) or _i_this_state_zh(core)
                or _DIET_WORD.search(core))  # "a quick vegan lunch i can make": the diet the ask presupposes


#: A Chinese clause led by a bare kin term ("妈糖尿病...", "弟弟不是蛋白过敏嘛", "老婆乳糖
#: 不耐受..."): used bare, a kin term names the speaker's own relative, as "Mom" does in
#: English (Dahl & Koptjevskaja-Tamm 2001 on kin terms as proper names; in Chinese the bare
#: kin term in topic position is definite, Li & Thompson 1981, 4.2). Generic people
#: (孩子, 宝宝, 老人) are not among them: "孩子过敏怎么办" may ask about children at large.
_KIN_LEAD_ZH = re.compile(r"^" + KIN_BARE_ZH + r"(?![们子妹弟姐哥妈爸夫嫂])")
#: The speaker with a chronic condition as the comment of the topic 我 (the double-subject
#: construction, Li & Thompson 1981, 4.1: "我痛风能吃海鲜吗", "我高血压能喝咖啡吗"): the
#: question presupposes the condition. A passing symptom ("我头疼怎么办") is none.
#: A demonstrative between 我 and the condition ("我这个糖尿病能吃西瓜吗": 这个 points at
#: the speaker's own case, "this diabetes of mine", the possessor before a demonstrative,
#: Li & Thompson 1981, 4.2.1) keeps it the speaker's.
_I_CHRONIC_ZH = re.compile(r"^(?:我|俺)(?:本身|本来|自己|一直|也|还|有|是|这个|这种|这)*(?:高血压|高血脂|高血糖|糖尿病|痛风|哮喘|湿疹|鼻炎|贫血|"
                           r"胆固醇高|血压高|血脂高|血糖高|尿酸高|腰间盘突出|腰椎间盘突出|椎间盘突出|腰突)")
#: The speaker's own case picked out by 我这 (+ 个 / 种) before a state ("我这孕晚期了能坐飞机吗",
#: "我这三十五岁了还能转行吗", "我这过敏体质能用吗"): a demonstrative after the possessor makes a
#: definite noun phrase, "this ... of mine" (Li & Thompson 1981, 4.2.1, as in :data:`_I_CHRONIC_ZH`),
#: so the ask presupposes the state (:func:`_i_this_state_zh`). Not 这 + a time or a place (我这两天,
#: 我这周, 我这边, 我这儿: these days, this week, over here).
_I_THIS_ZH = re.compile(r"^(?:我|俺)这(?:个|种)?(?![两几阵段会周一边儿里么样天星礼月年次回])")
#: A pregnancy by its stage or week ("孕晚期", "孕28周", "怀孕五个月"): a state that lasts for months.
_PREGNANCY_STAGE_ZH = re.compile(r"孕[早中晚]期|孕[\d一二三四五六七八九十]+周|怀孕|怀二胎|怀着")


def _i_this_state_zh(core: str) -> bool:
    """``core`` opens with 我这 (:data:`_I_THIS_ZH`) and names a lasting state of the speaker's:
    an allergy or a diagnosis (:data:`CONDITION`), a chronic condition, an age (:data:`_AGE`) or a
    pregnancy (:data:`_PREGNANCY_STAGE_ZH`); a passing symptom ("我这头疼怎么办") is none."""
    m = _I_THIS_ZH.match(core)
    if m is None:
        return False
    rest = core[m.end():]
    return bool(CONDITION.search(rest) or names_chronic_condition(rest) or _AGE.search(rest) or _PREGNANCY_STAGE_ZH.search(rest))


#: A rhetorical question led by the speaker or one of their people ("我不是在减肥吗", "我老婆不是
#: 怀孕了嘛", "我们不是搬到杭州了吗"): 不是 … 吗 / 嘛 with no question word is a 反问, which asserts
#: what it negates, reminding the listener of something they know (Li & Thompson 1981, 18.5 on
#: rhetorical questions), a statement of the user's. Not a remark about what was said (我不是说了吗,
#: 不是跟你讲过), which is talk about the conversation.
_RHETORICAL_ZH = re.compile(r"^(?:(?:我|俺|咱)(?:们|家)?|" + _MY_SOMEONE_ZH.pattern + r")[^你您]{0,8}?不是"
                            r"(?![\u4e00-\u9fff]{0,2}(?:说|讲|问|告诉|提|跟你|和你|叫你|让你))"
                            r"[\u4e00-\u9fffA-Za-z0-9]{2,}(?:吗|嘛|么)[^\u3400-\u9fffA-Za-z0-9]*$")


#: The speaker's own condition or medical device named with "my" inside an ask ("is it safe to
#: run a half marathon with my asthma", "how do I wear my insulin pump with a lehenga"): a
#: possessive determiner makes its noun phrase definite and presupposes that its referent
#: exists and is the speaker's (Quirk et al. 1985, 5.50 on the genitive as a definite
#: determiner; Levinson 1983, 4.2 on the existential presupposition of definite descriptions),
#: so the question says the user has it. Not "my blood pressure / cholesterol / blood sugar",
#: measures everyone has ("how do I check my blood pressure").
_MY_CONDITION_EN = re.compile(r"\b(?:my|our)\s+(?:[\w'-]+\s+)?(?!blood\s+(?:pressure|sugar)|cholesterol)"
                              r"(?:" + CHRONIC_EN + "|" + COMPLAINTS_EN + "|" + ASK_HEALTH_EN + r")\b", re.IGNORECASE)
#: "with (a) <condition or device>" inside an ask whose subject is I ("can I still use my table
#: saw with a pacemaker"): the with-phrase is an adjunct of the clause's subject, the speaker
#: (:func:`_with_condition_en`); after a noun for a person ("a gift for a friend with asthma")
#: it modifies that person instead.
_WITH_CONDITION_EN = re.compile(r"\b(\w+)\s+with\s+(?:an?\s+)?(?:" + CHRONIC_EN + "|" + COMPLAINTS_EN + "|" + ASK_HEALTH_EN
                                + r")\b", re.IGNORECASE)
_I_SUBJECT_EN = re.compile(r"\b(?:i|i'm|im|i've|ive)\b", re.IGNORECASE)
_HOLDER_EN = re.compile(r"(?:" + PEOPLE_EN + r"|someone|somebody|anyone|anybody|people|person|persons|folks?|guys?|kids?|"
                        r"adults?|patients?|man|men|woman|women|runners?|those|others|one|ones|s)$", re.IGNORECASE)


def _with_condition_en(core: str) -> bool:
    """An English ask with the subject I and "with (a) <condition>" not after a noun for a
    person (:data:`_WITH_CONDITION_EN`). Linear in ``len(core)``."""
    if not _I_SUBJECT_EN.search(core):
        return False
    return any(not _HOLDER_EN.match(m.group(1)) for m in _WITH_CONDITION_EN.finditer(core))


#: Words that end the noun phrase after "my" ("my address with Medicare": the name is in a
#: phrase of its own) and calendar names ("my Sunday omelette": a day, not a name of a thing).
_FUNCTION_WORDS_EN = r"with|from|for|to|at|in|on|of|and|or|but|the|a|an|by|about|after|before|is|was|are|were|has|had|have"
_CALENDAR_NAMES_EN = r"(?:" + "|".join((*WEEKDAY_NAMES, *MONTH_NAMES, "Christmas", "Easter", "Thanksgiving")) + r")\b"
#: Something of the user's named with "my" and a proper name ("my tabby Biscuit", "my gf Mina",
#: "my Space Wolves army", "my 8th grade Spanish classes"): a possessive makes the noun phrase
#: definite and presupposes that the named thing is the speaker's (as :data:`_MY_CONDITION_EN`),
#: and a capitalised name after it picks out one particular pet, person, language or thing of
#: theirs. Not "I" ("my wife and I") and not an exclamation ("oh my God").
_MY_NAMED_EN = re.compile(r"\b(?:my|our)\s+(?:(?!(?:" + _FUNCTION_WORDS_EN + r")\b)[\w'-]+\s+){0,2}?"
                          r"(?-i:(?!I\b|I'|God\b|Gosh\b|Goodness\b|Lord\b|" + _CALENDAR_NAMES_EN + r")[A-Z][\w'-]*[a-z0-9])\b",
                          re.IGNORECASE)
#: A Chinese ask led by 我 / 俺 whose words fill a slot (:func:`gateway.memorization.slots.slots_of`:
#: where the user lives or works, what they study or drive): the statement of that attribute is
#: the topic and the question its comment ("我在深圳上班周末去哪玩", "我开的是比亚迪冬天续航掉多少
#: 正常": Li & Thompson 1981, ch. 4 on topic-comment; as :data:`_I_CHRONIC_ZH` is for a
#: condition); not one supposed with 的话 or 如果 (:data:`_HYPOTHETICAL`). English asks are not read
#: so: their slot words are as often the topic of the ask ("recipes i can do in a dorm microwave").
_STATED_BY_I_ZH = re.compile(r"^(?:我|俺)(?!们)")
#: A change away from something named ("should i switch from Vertical World to the Edgeworks
#: gym", "how do I move from Windows to a Mac"), in an ask whose subject is I: a verb of change of
#: state presupposes the state before it (Levinson 1983, 4.2 on presupposition triggers), so
#: the named thing is the user's now. Only a capitalised name after "from" ("switch from dark
#: mode" names nothing of the user's).
_SWITCH_FROM_EN = re.compile(r"\b(?:switch(?:ing)?|swap(?:ping)?|mov(?:e|ing)|upgrad(?:e|ing)|downgrad(?:e|ing))\s+from\s+"
                             r"(?:the\s+|my\s+|our\s+)?(?-i:(?!I\b)[A-Z][\w'-]*[a-z0-9])\b", re.IGNORECASE)
#: "as a <role>" inside an ask whose subject is I ("how do I do my taxes as a freelance designer",
#: "what laptop should I get as a first-year student"): a prepositional phrase of role related to
#: the subject, saying what the subject is (Quirk et al. 1985, 9.5 on *as*: role), as a clause led
#: by "As a nurse" does (:data:`_AS_A_EN`). Not after a verb of dressing up, becoming or applying
#: ("dress up as a nurse", "a career as a pilot": the role is wished or played, not held).
_AS_ROLE_EN = re.compile(r"(?<!dress\s)(?<!dressed\s)(?<!up\s)(?<!go\s)(?<!become\s)(?<!career\s)(?<!job\s)(?<!apply\s)"
                         r"(?<!hired\s)(?<!work\s)(?<!working\s)(?<!pose\s)(?<!retrain\s)"
                         r"\bas\s+an?\s+(?:[\w'-]+\s+){0,3}?(?:" + OCCUPATIONS_EN + r"|student|major|undergrad|sophomore|"
                         r"freshman|resident|retiree|landlord|single\s+(?:mom|mum|dad|parent)|new\s+(?:mom|mum|dad|parent)|"
                         r"first[\s-]time\s+\w+)\b", re.IGNORECASE)
#: "my" + a thing one has for good (lexicon ``LASTING_THINGS_EN``: "how do I keep slugs off my
#: allotment", "is my cello too cold in the car"): the possessive presupposes the thing and that it
#: is the speaker's (as :data:`_MY_CONDITION_EN`), and the noun names a lasting attribute: a home,
#: a vehicle, an instrument, a business, a course of study, the people one's work is for.
_MY_LASTING_EN = re.compile(r"\b(?:my|our)\s+(?:[\w'-]+\s+)?" + LASTING_THINGS_EN + r"\b", re.IGNORECASE)
#: A pet of the user's named by its breed or kind after a possessive ("how do I stop my beagle
#: howling", "我家柯基老掉毛怎么办", "我养的玄凤…"): the possessive presupposes the pet (as
#: :data:`_MY_CONDITION_EN`) and the breed is a lasting attribute of it (lexicon
#: ``PET_BREEDS_EN`` / ``PET_BREEDS_ZH``). Not a pet placed elsewhere (我家楼下的泰迪, 邻居的).
_MY_BREED = re.compile(r"\b(?:my|our)\s+(?:[\w'-]+\s+)?" + PET_BREEDS_EN + r"\b"
                       r"|(?:我|俺|咱)们?(?:家|的|养的)(?:(?!楼|邻|隔|对|朋|同|亲)[\u4e00-\u9fff]){0,6}?" + PET_BREEDS_ZH,
                       re.IGNORECASE)
#: A pet of the user's picked out by a demonstrative and a classifier for animals ("我家那只
#: 三岁的布偶", "我的那条柯基"): 我家 / 我的 + 这 / 那 + 只 / 条 / 头 / 匹 is a definite, possessed
#: animal (Li & Thompson 1981, 4.2.1 on possession and 4.2 on classifiers), whatever its breed.
_MY_ANIMAL_ZH = re.compile(r"(?:我|俺|咱)们?(?:家|的)(?:这|那)(?:只|条|头|匹)")
#: The speaker described by a relative clause on 我 ("当过三十年小学老师的我还能辅导吗", "不会做饭的
#: 我该吃啥"): a relative clause on a pronoun cannot restrict it and is descriptive, it asserts what
#: it says of the speaker (Li & Thompson 1981, 20.2 on descriptive relative clauses). Not a
#: demonstrative of manner (这样的我) nor a clause naming the other side (你推荐的我能吃吗: the
#: thing recommended is the topic, 我 the subject after it).
_DESCRIBED_I_ZH = re.compile(r"(?<![这那样么])的(?:我|俺)(?![们的家])")


def _described_i_zh(core: str) -> bool:
    """``core`` describes the speaker with a relative clause of at least three characters on 我
    (:data:`_DESCRIBED_I_ZH`) and names no other side (你 / 您) before it."""
    m = _DESCRIBED_I_ZH.search(core)
    return m is not None and m.start() >= 3 and not re.search(r"[你您]", core[:m.start()])
#: The conditional 的话 ("if", Li & Thompson 1981, 23.2): "我痛风的话能吃吗" supposes.
_CONDITIONAL_ZH = re.compile(r"的话")


#: The speaker's own affair named with its possessive dropped, as the subject
#: ("Surgery got moved up to July 14", "Appointment is at 3", "Lease ends in May":
#: situational ellipsis of the determiner, Biber et al. 1999, 3.7).
_OWN_AFFAIR_EN = re.compile(r"^(?:surgery|operation|appointment|appt|procedure|biopsy|scan|mri|chemo|physio|therapy|treatment|"
                            r"interview|lease|rent|mortgage|commute|shift|due\s+date|visa|wedding)\s+(?:is|was|got|has|had|"
                            r"ends?|starts?|moved|went|will|keeps?|\w+ed)\b", re.IGNORECASE)
#: A reminder ("remember my blood sugar", "don't forget I'm vegan", 别忘了我..., 记得我...):
#: the imperative of remembering restates a fact the other side was told (a directive
#: whose content is an assertion: Searle 1976 on indirect assertives), so the clause is
#: a disclosure when what follows names the user or their people.
_REMINDER_EN = re.compile(r"^(?:remember|don't\s+forget|dont\s+forget|do\s+not\s+forget|keep\s+in\s+mind|bear\s+in\s+mind)\b"
                          r"(?:\s+that)?", re.IGNORECASE)
_REMINDER_ZH = re.compile(r"^(?:别忘了|不要忘了|记得|记住)")
#: "<Name> and I" / "my wife and I" as the subject: the user is part of it.
_WITH_ME_EN = re.compile(r"^(?:(?:my|our)\s+)?[\w'-]+\s+and\s+(?:i|me)\b"
                         r"|^guess\s+who(?:'s|\s+is|\s+just|\s+finally|\s+got)\b", re.IGNORECASE)  # "guess who's off nights": the speaker
#: The user as the object of a statement ("Doc took me off the old pill", "they moved me
#: to days"): what happened to the user is about the user.
_ME_EN = re.compile(r"\b(?:me|myself)\b", re.IGNORECASE)
#: A verbless fragment that starts "on <something>" ("on glipizide", "on night shifts this
#: month", "on days now"): "I'm on ..." with the subject and copula dropped.
_ON_EN = re.compile(r"^on\s+(?!it\b|(?:my|the|your)\s+way\b|top\b|second\b|(?:a|the)\s+(?:phone|call)\b)[\w-]+", re.IGNORECASE)


def _self_description(core: str) -> bool:
    """A verbless English fragment that describes the user with "I'm" dropped (conversational
    ellipsis of subject and copula, Biber et al., *Longman Grammar of Spoken and Written
    English*, 1999, 3.7 on situational ellipsis; Quirk et al. 1985, 12.47): a condition
    ("Type 2 diabetic", "allergic to shellfish btw": :data:`HEALTH`), a diet ("vegan now":
    :data:`_DIET_WORD`), "on <something>" (:data:`_ON_EN`), or a noun phrase with a state
    word ("Metformin now", "bank fishing from here on out": :data:`STATE`) of at most eight
    words. No question word ("now what")."""
    words = LATIN_WORD.findall(core)
    if not words or len(words) > 8 or WH_EN.search(core):
        return False
    if HEALTH.search(core) or _DIET_WORD.search(core) or _ON_EN.match(core):
        return True
    rest = LATIN_WORD.findall(STATE.sub(" ", core))
    return len(rest) < len(words) and len(rest) >= 1 and bool(_FROM_NOW_ON.search(core) or _NOW_END.search(core))


#: "from now on", "from here on (out)", "for good": a lasting change of state.
_FROM_NOW_ON = re.compile(r"\bfrom\s+(?:now|here)\s+on(?:\s+out)?\b|\bfor\s+good\b", re.IGNORECASE)
#: "<something> now" at the end of a fragment: the new state ("Metformin now", "days now").
_NOW_END = re.compile(r"\b(?:now|these\s+days|nowadays)\W*$", re.IGNORECASE)
#: A Chinese clause with no subject whose verb takes an indefinite object with 个 / 一个 /
#: 一套 ... and no 了 ("南山区租个一室一厅", "买个二手车"): an unrealized event (V个N marks an
#: indefinite, not yet had object; Li & Thompson 1981, 4.2 and 6.1 on 了 and realized
#: events) that sets up the question after it, not a fact about the user.
_INDEFINITE_ZH = re.compile(r"^[\u4e00-\u9fff]{0,6}?(?:租|买|找|换|报|学|办|弄|养|搞|开|装|请)(?:个|一个|一套|一辆|一只|一份|一间|点)")
#: A Chinese clause that opens, after its time words (昨天, 上个月, 前两天...) and an adverb
#: (刚, 已经, 终于...), with a one- or two-character verb and the perfective 了 / experiential
#: 过, and goes on to an object ("前两天拔了智齿", "最近胖了十斤", "上个月考过了科目三"): a
#: realized event with no subject of its own. A Chinese zero subject in the first clause of
#: a turn refers to the speaker unless context names someone else (Li & Thompson 1981,
#: ch. 24 on zero pronouns; Li & Thompson 1981, 6.1 on 了 and realized events), so it is
#: the user's episode. The verb-了 must not end the clause ("试了": a reaction) and the
#: clause must not name the other side (你 / 您); 不过 / 没过 after a verb is the negated
#: potential complement ("忙不过来": cannot manage, Li & Thompson 1981, 3.2.2), no 过 of experience.
_TIME_ZH = PAST_TIME_ZH
_PERFECTIVE_ZH = re.compile(r"^" + _TIME_ZH + r"*(?:刚刚|刚|才|已经|终于|又|也|还)?[一-鿿]{1,2}(?<![不没])(?:了|过)(?:了)?(?=[一-鿿\d])"
                            r"(?!.*[你您])")
#: Subjectless impersonal verbs (weather, 下雨了): no one's event.
_IMPERSONAL_ZH = re.compile(r"雨|雪|风|雾|雷|天气|降温|升温|停电|停水|堵车|天黑|天亮|天冷|天热|变天|过年|春节")
#: A change of state told with the sentence-final 了 and no subject ("换平台了", "断奶成功了",
#: "N3过了", "团团8个月了"): sentence-final 了 marks a currently relevant state, something
#: that has come to hold (Li & Thompson 1981, ch. 9), and the zero subject of a turn's
#: opening clause is the speaker or what the speaker names as the topic (Li & Thompson
#: 1981, ch. 24 on zero pronouns; ch. 4 on topic-comment). At least three characters before
#: 了 ("吃饱了", "到家了" and "试了" are replies of the moment, not news); not the
#: exclamative 太…了 ("太好了"), not an impersonal or calendar predicate (:data:`_IMPERSONAL_ZH`:
#: "快过年了"), not naming the other side (你 / 您: "辛苦你了"), and not a choice among the
#: options talked about, a demonstrative (这家 / 那个) or a decision with 就 ("就这家了"); not
#: 快 / 要…了, the imminent "about to" (Li & Thompson 1981, 6.1: "快到周末了" has not happened).
_CHANGED_ZH = re.compile(r"^(?!就|快|要)(?!.*[你您])(?!.*[这那](?:个|家|款|种|样|么|些))(?!.*太[\u4e00-\u9fff]{1,3}了)[\u4e00-\u9fffA-Za-z0-9]{3,}了[啊呀啦哈!！~～\u2600-\u27bf\U0001f300-\U0001faff]*$")
#: An opening clause with no subject led by 在 ("在减肥", "还在喂母乳", "一直在吃药", "在杭州
#: 上班"): 在 before a verb is the durative aspect, an ongoing activity (Li & Thompson 1981,
#: 7.2), before a place it locates the subject; either way the zero subject of a turn's
#: opening clause is the speaker's (ch. 24). Not "在吗" / "在不在" (greetings) nor a
#: demonstrative or question word after 在.
_ONGOING_ZH = re.compile(r"^(?:还|正|一直|也|都)?在(?!吗|嘛|不在|哪|这|那)[\u4e00-\u9fff]{2}")
_PLANNED_ZH = re.compile(r"^" + _FUTURE_TRIP_ZH)
#: A trip about to happen, with no subject and no time word ("要去广州实习三个月了", "马上要去
#: 成都读研了"): 要 … 了 is the imminent future, an event already arranged (Li & Thompson 1981,
#: 6.1 on 要 … 了 "about to"), so it is a plan as :data:`_PLANNED_ZH` is; in an opening clause
#: its zero subject is the speaker (ch. 24). Not a clause naming the other side.
_IMMINENT_TRIP_ZH = re.compile(r"^(?:马上|快|就|也)?要去(?!.*[你您])[\u4e00-\u9fffA-Za-z0-9]{2,12}了[啊呀啦哈!！~～]*$")
#: A place with the proximal 这边 / 这儿 / 这里 leading an ask ("郑州这边哪个夜市适合带老婆去转转",
#: "我们成都这里有什么好吃的"): "here" is centred on the speaker (Levinson 1983, 2.2.3 on place
#: deixis), so "X 这边" places the speaker in X (:func:`_placed_here_zh`). Not a place that
#: names no place of the user's own (公司这边, 网上这边, 你们那边).
_HERE_ZH = re.compile(r"^(?:我们|咱们|咱|俺们)?(?P<place>[\u4e00-\u9fff]{2,3}?)(?:这边|这儿|这里)")
_NOT_A_PLACE_ZH = re.compile(r"[我你您他她它这那们哪啥谁]|公司|学校|单位|医院|小区|家里|老家|附近|本地|当地|周边|楼下|门口|网上|群里|店里|"
                             r"城里|乡下|外面|里面|南方|北方|国内|国外|市区|郊区")


def _placed_here_zh(core: str) -> bool:
    """``core`` opens with a place and the proximal 这边 / 这儿 / 这里 (:data:`_HERE_ZH`):
    the speaker is there."""
    here = _HERE_ZH.match(core)
    return here is not None and not _NOT_A_PLACE_ZH.search(here.group("place"))


#: A move of the speaker's as the fronted time clause of an ask ("搬到上海之后租房选徐汇还是
#: 静安好", "调到深圳以后通勤怎么办"): V 到 + a place + 之后 / 以后 is a clause of time whose zero
#: subject in an opening clause is the speaker (Li & Thompson 1981, ch. 24), and the move it
#: names is what the ask is about. Not with 如果 / 要是 in the clause (:data:`_HYPOTHETICAL`).
#: A transfer told with its subject dropped (刚调到心内科, 被派到深圳分公司, 轮转到ICU): the speaker's,
#: as a move is (:data:`_MOVED_ZH`).
_TRANSFERRED_ZH = re.compile(r"^(?:刚|刚刚|已经|最近|上个月|这个月|下个月|明天|下周)?(?:被)?(?:调|派|外派|轮转|轮岗轮?)(?:到|去)(?![哪那这])")
#: An English clause that gives its content as known, not asked: a reason or time subordinate
#: with the user as subject ("now that we live in Oakland", "since I'm on nights", "because my
#: son has autism") or with the subject dropped before a change ("since switching to nights",
#: "after moving to Leeds"). Its content is presupposed true (a factive adverbial clause, Quirk
#: et al. 1985, 15.45-15.46), so it tells even inside a question's sentence.
_PRESUPPOSED_EN = re.compile(r"^(?:now\s+that|since|ever\s+since|because|cause|cuz|seeing\s+as|given\s+that)\s+"
                             r"(?:(?:i|i'm|im|i've|ive|we|we're|we've|my|our)\b"
                             r"|(?:switching|moving|starting|joining|becoming|quitting|leaving|going|retiring|transferring)\b)"
                             r"|^(?:after|since)\s+(?:switching|moving|starting|joining|quitting|leaving|retiring|transferring)\s+(?:to|at|from|my)\b",
                             re.IGNORECASE)
#: A change the user presupposes inside an ask: "my new job at Stripe", "my new place in Austin",
#: "my first week at Google" (a new X or a first period at a named place or employer); also the
#: first period of someone named at a stage of school ("Oscar's first fortnight in reception at
#: St Werburgh's": a child of the user's started school; the possessive name is a definite
#: description as "my ..." is).
_MY_NEW_EN = re.compile(r"\bmy\s+(?:new\s+(?:job|role|position|place|home|house|apartment|flat|school|team|office|employer)"
                        r"|first\s+(?:day|week|month|shift|semester|term)(?:\s+back)?)\s+(?:at|in|with|near)\s+(?-i:[A-Z])"
                        r"|(?-i:\b[A-Z][a-z]+)'s\s+first\s+(?:day|week|fortnight|month|term|year)\s+(?:at|in|of)\s+"
                        r"(?:reception|nursery|preschool|pre-k|kindergarten|daycare|school|year\s+\d|grade\s+\d|\w+\s+grade)\b",
                        re.IGNORECASE)
_MOVED_ZH = re.compile(r"^(?:刚|已经)?(?:搬到|搬去|搬来|调到|调去|转到|落户)(?![哪那这])[\u4e00-\u9fff]{2,4}?(?:之后|以后|后)")
#: Any other change of the speaker's as the fronted time clause of an ask: a verb of a lasting
#: change with its object (戒烟, 生完二胎, 升了主管, 开始吃素, 查出, 退休) before 以后 / 之后, then the
#: speaker's lasting state (老 / 总 / 一直 / 天天 ..., after at most a two-character topic: "戒烟以后
#: 老想吃零食咋办", "生完二胎以后腰一直疼
#: 怎么办") or, for a promotion told with the perfective 了 (升了主管: done, Li & Thompson 1981,
#: ch. 6), the ask itself ("升了主管以后怎么管以前的同事"). A bare time clause before a generic ask
#: ("退休以后干点啥好", "结婚以后要不要跟公婆住") may be a plan or anyone's, and stays an ask; so
#: does one before 再 / 就要 / 打算 / 准备, or supposed (:data:`_HYPOTHETICAL`).
_CHANGE_BEFORE_ASK_ZH = re.compile(r"^(?:自从|自打)?(?:刚|已经)?(?:(?P<done>升了[\u4e00-\u9fff]{1,3}?|升职)"
                         r"|(?:戒[了掉]?[烟酒糖]|生完|生了|怀上|怀孕|查出|确诊|开始|吃素|退休|毕业|离婚|结婚|分手|辞职|离职|跳槽|入职|转行|失业|被裁)"
                         r"[\u4e00-\u9fff]{0,4}?)(?:以后|之后)(?!再|就要|就得|打算|准备|要不要)(?P<rest>.{0,6})")
_LASTING_AFTER_ZH = re.compile(r"^(?:我|俺)?[\u4e00-\u9fff]{0,2}?(?:老|总|一直|天天|每天|经常|动不动|越来越)")
#: A trade named by a verb-object phrase with 的 and no copula or subject ("跑美团外卖的",
#: "干装修的", "开出租的", "卖保险的"): the 的 construction names a class of people by what
#: they do (Zhu Dexi 1961 on 的 nominalizations; Li & Thompson 1981, 20.3), "(我是)跑外卖的",
#: the speaker's occupation in an opening clause (ch. 24). The verbs are those of a trade:
#: run (a route), do, drive, sell, deliver, teach, repair.
_TRADE_ZH = re.compile(r"^(?:跑|干|做|开|卖|送|教|修)(?!得)[\u4e00-\u9fffA-Za-z0-9]{1,8}?的$")
#: A pseudo-cleft with no subject ("快递用的中通", "开的是比亚迪", "养的是布偶", "种的红颜"): "what
#: (I) use / drive / keep / grow is X", the 的 nominalization of a verb of use, keeping or
#: growing as the
#: topic and the thing as the comment (Li & Thompson 1981, 20.3 on nominalizations; ch. 4
#: on topic-comment): the speaker's habit or possession in an opening clause (ch. 24).
#: Not when a demonstrative follows 的 ("年轻人用的那个软件"): 的 then closes a relative clause
#: and 那个 + noun is its head (20.2), a noun phrase with no comment, the topic of what follows.
_CLEFT_ZH = re.compile(r"^[\u4e00-\u9fff]{0,4}?(?:用|开|骑|住|养|种|穿|喝|抽|戴)的(?:是)?(?![什哪啥谁])"
                       r"(?![这那](?:个|种|款|些|家|台|辆|套|件|只|部|本))[\u4e00-\u9fffA-Za-z0-9]{2,}")
#: A presentative clause ("班上有个孩子总打人", "群里有个人说...", "公司有位同事要调走"): 有 +
#: an indefinite noun phrase brings in a new referent, who is the subject of what follows
#: (Li & Thompson 1981, ch. 17 on presentative sentences), so the clause has a subject of its
#: own and is no zero-subject statement of the speaker's. Not after 家 / 家里 / 我: "家里有个老人"
#: is the user's household.
_PRESENTATIVE_ZH = re.compile(r"^(?!家|我|咱|俺|屋)(?:[\u4e00-\u9fff]{1,3}?(?:里|上|中|外|那边|这边|那儿|这儿)?)?"
                              r"(?:还|也|都|就|又|最近|现在)?有(?:个|一个|位|一位|些|一些|几个|两个)(?!我)")


#: A sentence-final 了 with more text after it in the same clause ("搬到杭州了附近有啥好吃的", "女儿上初一了
#: 该报什么班"): 了 at the end of a predicate closes a statement of a change that has come to hold
#: (Li & Thompson 1981, ch. 9 on the currently relevant state), and chat often runs the next
#: sentence on with no punctuation (a run-on, Quirk et al. 1985, 13.4n, as :data:`_CLAUSE_CUT`
#: reads in English): the words up to it are a statement, the rest the ask.
_FINAL_LE_ZH = re.compile(r"了(?=[\u4e00-\u9fff])(?![吗呢吧么啊呀嘛没不])")
#: An age reached, told with 了 ("八个月了", "三岁半了"): the currently relevant state of 了 (ch. 9).
_AGE_NOW_ZH = re.compile(r"[一二三四五六七八九十两\d]{1,3}(?:岁|个月)(?:半|多)?了$")
#: Looked at: the first few 了 of a clause (each test is linear, so the clause stays linear).
_FINAL_LE_TRIES = 3


def _told_before_ask_zh(core: str, opening: bool, after_statement: bool) -> bool:
    """``core`` is a Chinese ask that runs on from a statement closed by a sentence-final 了
    (:data:`_FINAL_LE_ZH`): the words up to that 了 (at least three characters before it, no
    question word, no demonstrative: 那个买了 points at the reply's thing) are a disclosure read
    as a clause of their own (:func:`clause_kind`) that tells something lasting (a slot, an
    allergy or a diagnosis, a chronic condition, an age: 宝宝八个月了辅食怎么加, or a change word:
    :data:`CHANGE`) and no passing
    state (:func:`gateway.memorization.salience.is_passing`; a symptom or an illness of the moment,
    我嗓子发炎了吃什么好, 我最近感冒了吃什么好, is no lasting fact, as :func:`_attributive` reads it),
    and the words after it ask. A supposition (:data:`_HYPOTHETICAL`: 要是搬到杭州了去哪玩)
    tells nothing, nor does a 了 of a first clause whose event is only the condition of what the
    ask is about, with no slot and no one named ("咖啡喝多了手抖正常吗", "褪黑素吃多了会不会有依赖":
    了 in the first of two clauses marks "once / when", Li & Thompson 1981, 6.1)."""
    if _HYPOTHETICAL.search(core):
        return False
    for n, m in enumerate(_FINAL_LE_ZH.finditer(core)):
        if n >= _FINAL_LE_TRIES:
            break
        head, tail = core[:m.end()], core[m.end():]
        if QUESTION_WORD_ZH.search(head) or ALTERNATIVE_ZH.search(head):
            break  # the ask began before this 了
        if len(_CJK.findall(head)) < 4 or re.search(r"[这那]", head):
            continue
        if not (QUESTION_WORD_ZH.search(tail) or QUESTION_END_ZH.search(tail) or request_zh(tail)):
            continue
        lasting = bool(slot_of(head) or CONDITION.search(head) or names_chronic_condition(head) or CHANGE.search(head)
                       or _AGE.search(head) or _AGE_NOW_ZH.search(head))
        if lasting and not is_passing(head) and clause_kind(Clause(head, "", False), opening, after_statement, opening) == "disclosure":
            return True
    return False


#: A sentence-final question particle inside a clause with more text after it ("周末去哪玩好呢我们刚搬到
#: 杭州", "能喝咖啡吗我在备孕"): 吗 / 呢 close their sentence (Li & Thompson 1981, 18.1 and 7.3), so
#: what follows is a sentence of its own run on with no punctuation.
_ASK_THEN_ZH = re.compile(r"(?:吗|呢)(?=[\u4e00-\u9fff])")


def _told_after_ask_zh(core: str) -> bool:
    """``core`` is a Chinese ask closed by 吗 / 呢 (:data:`_ASK_THEN_ZH`) with a statement run on
    after it that is a disclosure read as a clause of its own (:func:`clause_kind`), led by 我 or
    someone of the user's or filling a slot, and no supposition (:data:`_HYPOTHETICAL`)."""
    m = _ASK_THEN_ZH.search(core)
    if m is None or _HYPOTHETICAL.search(core):
        return False
    tail = core[m.end():]
    tail_core = core_zh(tail) or tail
    if len(_CJK.findall(tail)) < 4 or not (FIRST_PERSON_ZH.match(tail_core) or _MY_SOMEONE_ZH.match(tail_core) or slot_of(tail)):
        return False
    return clause_kind(Clause(tail, "", False)) == "disclosure"


def _ask_zh(clause: Clause, text: str, core: str) -> tuple[bool, bool]:
    """Whether a Chinese clause (``text``, its ``core``) is a request, and whether it asks
    (a request or a question), by its grammar alone (module docstring)."""
    # "说一下红烧肉的做法": a lead word (说一下, "let me say") that is the ask's verb when no subject follows it
    request = request_zh(core) or bool(core != text and REQUEST_ZH.match(text) and not NAMES_USER.search(core))
    asks = request or clause.asked or bool(
        (QUESTION_END_ZH.search(core) and not ESTIMATE_ZH.match(core) and not OBVIOUS_MA_ZH.match(core)
         and not BARE_NO_ZH.match(core) and not SOFTENED_BA_ZH.match(core) and not DURATIVE_NE_ZH.match(core))
        or QUESTION_WORD_ZH.search(core))
    return request, asks


def _ask_en(clause: Clause, core: str) -> tuple[bool, bool]:
    """Whether an English clause (its ``core``) is a request, and whether it asks (a request
    or a question), by its grammar alone (module docstring)."""
    request = bool(REQUEST_EN.search(core))
    unmarked = bool(QUESTION_START_EN.search(core)) and not (PAST_AUX_EN.match(core) and (
        not AUX_SUBJECT_EN.match(core) or HAVE_DONE_EN.match(core)))  # "had the left one replaced": causative, a statement
    return request, request or bool(QUESTION_IN_EN.search(core) or clause.asked or unmarked)


def _revision(text: str) -> bool:
    """``text`` (a stripped clause) asks to revise the reply just given (:data:`REVISION_EN`,
    :data:`REVISION_ZH`), no standing instruction."""
    if _CJK.search(text):
        return bool(REVISION_ZH.match(core_zh(core_en(text)) or text))
    return bool(REVISION_EN.match(core_en(text)))


def is_ask(clause: Clause) -> bool:
    """``clause`` is a request or a question by its grammar (what :func:`clause_kind` reads
    before it asks whether the ask carries a fact of the user's: "Can you give me a
    plant-based version of a Sunday roast", 我痛风能吃海鲜吗). An ask presupposes what it
    says of the user, it does not assert it (Stalnaker 1974 on presupposition as the common
    ground a speech act takes for granted; Karttunen 1977 on questions), so it tells no
    change: :mod:`gateway.memorization.neardup` lets no ask supersede. A revision of the reply
    ("make it shorter") is one; small talk and a standing instruction ("keep it short") are
    not. Linear in the clause."""
    text = clause.text.strip()
    if not text or is_small_talk(text):
        return False
    if _revision(text):
        return True
    if PREFERENCE_CUES.search(text) and not LOVE_YOU_EN.search(text):
        return False
    if _CJK.search(text):
        return _ask_zh(clause, text, core_zh(text) or text)[1]
    return _ask_en(clause, core_en(text) or text)[1]


#: What the news or a feed says, led by where it was seen or heard (看新闻说…, 刷到…, 热搜上说,
#: "the news about the strike", "saw on the news that..."): the world's, not the user's.
_NEWS_ZH = re.compile(r"^(?:唉|哎|嗐|害|诶|哇)?[，,\s]*(?:今天|刚才|刚刚|最近|昨天|早上|今早|又)?(?:在)?(?:看|刷|听|瞅)(?:了|到)?(?:个|条)?"
                      r"(?:新闻|热搜|微博|抖音|小红书|报道|公众号)|^(?:新闻|热搜|网上|报道|微博)(?:上|里)?(?:说|讲|报道|都在说|爆)")
_NEWS_EN = re.compile(r"^(?:(?:ugh|honestly|so|and|omg|wow|lol|man)\W+)*(?:the|this|that|today'?s)\s+(?:[\w-]+\s+){0,2}?news\b"
                      r"|\b(?:saw|read|heard|seen)\s+(?:it\s+)?(?:on|in)\s+the\s+(?:news|paper|papers)\b|^(?:the\s+)?headlines?\b", re.IGNORECASE)
#: What is the user's own named after the news cue ("the news about my company", 新闻说我们小区要拆):
#: the news is then about the user's things and the clause is read as before.
_OWN_AFTER = re.compile(r"\b(?:my|our)\b|我(?:的|家|们)|咱(?:的|家|们)|俺(?:的|家|们)", re.IGNORECASE)


def is_news(text: str) -> bool:
    """``text`` (a clause) is led by the news or a feed (:data:`_NEWS_ZH`, :data:`_NEWS_EN`)
    and names nothing of the user's after that lead (:data:`_OWN_AFTER`). Linear in
    ``len(text)``."""
    stripped = text.strip()
    m = _NEWS_ZH.match(stripped) or _NEWS_EN.search(stripped)
    return m is not None and not _OWN_AFTER.search(stripped, m.end())


def clause_kind(clause: Clause, first: bool = False, after_statement: bool = False,
                opening: bool | None = None) -> ClauseKind:
    """The kind of one clause (module docstring); ``first``: the turn's
    first clause (a pronoun there has no antecedent in the turn: "他下夜班白天睡不好"
    is about someone named earlier, so it is ``other``); ``after_statement``: the clause
    before it in its sentence is a statement with a subject of its own that is not the
    user ("pickle hated the car ride, yowled the whole way"): a subject-less clause after
    it shares that subject (coordination ellipsis, Quirk et al. 1985, 13.2), so a past
    tense first is no dropped "I"; ``opening``: no clause before it in the turn says
    anything (only small talk or talk about the conversation: "在吗 跑外卖的"), default
    ``first``: a Chinese zero subject there is the speaker (Li & Thompson 1981, ch. 24)."""
    text = clause.text.strip()
    opening = first if opening is None else opening
    if _NUMERAL.fullmatch(text):
        return "other"  # "43": a quantity, the answer to a how-many question, no small talk
    if not text or is_small_talk(text) or is_closing(text):
        return "small_talk"  # is_closing: "不说了", "谢谢你听我念叨", "rant over": the teller closing their telling
    if is_news(text):
        return "small_talk"  # 看新闻说又要延迟退休了, "the news about the strike": talk of the news, the world's, not the user's
    if _revision(text):
        return "request"  # "make it shorter", "语气 friendly 一点", "再平啲": a revision of the reply, no standing instruction
    if PREFERENCE_CUES.search(text) and not LOVE_YOU_EN.search(text):
        return "disclosure"  # a liking or a standing instruction: "请回答简洁一点", "keep it short"
    if not (core_zh(core_en(text)) if _CJK.search(text) else core_en(text)).strip(" !.~…"):
        return "meta"  # only a discourse word: "跟你说一下", "heads up"
    if _CJK.search(text):
        core = core_zh(text) or text
        request, asks = _ask_zh(clause, text, core)
        if asks and (_attributive(core) or _placed_here_zh(core) or (_RHETORICAL_ZH.match(core) and not QUESTION_WORD_ZH.search(core))
                     or _told_before_ask_zh(core, opening, after_statement) or _told_after_ask_zh(core)
                     or (opening and _MOVED_ZH.match(core) and not _HYPOTHETICAL.search(core))
                     or (opening and _changed_before_ask_zh(core))):
            return "disclosure"  # 我家娃对鸡蛋过敏能吃啥 / 郑州这边…: the ask carries a fact about the user or their people
        if _REMINDER_ZH.match(core) and (FIRST_PERSON_ZH.search(core[2:].lstrip("了")) or _MY_SOMEONE_ZH.search(core)):
            return "disclosure"  # 别忘了我对花生过敏: a reminder restates a fact
        if request:
            return "request"
        if asks or ALTERNATIVE_ZH.search(core) or alternative_zh(core):
            return "question"
        if DEICTIC_ZH.search(core) and not NAMES_USER.search(core):
            return "meta"  # 这个太贵了: about the reply
        if META_ZH.search(core) or is_small_talk(core):
            return "meta" if core != text or not is_small_talk(core) else "small_talk"
        if FIRST_PERSON_ZH.search(core) or _MY_SOMEONE_ZH.search(core) or _AS_A_ZH.search(core):
            return "disclosure"
        if _PRONOUN_ZH.search(core):
            return "other" if first else "disclosure"
        if _PRESENTATIVE_ZH.match(core):
            return "other"  # 班上有个孩子总动手打人: the new referent 有 brings in is the subject
        if _PERFECTIVE_ZH.match(core) and not _IMPERSONAL_ZH.search(core) and not after_statement:
            return "disclosure"  # 前两天拔了智齿: a realized event with its subject dropped is the speaker's
        if _INDEFINITE_ZH.match(core) and "了" not in core:
            return "other"  # 南山区租个一室一厅: something not yet done, the topic of an ask
        if opening and not after_statement and not _IMPERSONAL_ZH.search(core) and (
                _CHANGED_ZH.match(core) or _ONGOING_ZH.match(core) or _PLANNED_ZH.match(core) or _IMMINENT_TRIP_ZH.match(core)
                or _TRADE_ZH.match(core) or _TRANSFERRED_ZH.match(core)
                or _CLEFT_ZH.match(core)):
            return "disclosure"  # 换平台了 / 还在喂母乳 / 下个月去新加坡开会 / 跑外卖的: the speaker, subject dropped
        if opening and _placed_here_zh(core):
            return "disclosure"  # 南山这边回南天: "here" is where the speaker is (:data:`_HERE_ZH`)
        if slots_of(core, first=True):
            return "disclosure"  # 二战考研: an attribute of the user's (a slot's own words), subject dropped
        if (DURABLE_ZH.search(core) or CHANGE.search(core)) and not request_zh(core):
            return "disclosure"  # Chinese drops the subject: "在上海工作" is the user's
        return "other"
    core = core_en(text) or text
    surprise = _MIRATIVE_EN.match(text)
    if surprise and surprise.end() < len(text):
        told = core_en(text[surprise.end():])
        if FIRST_PERSON_EN.search(told) or MY_SOMEONE_EN.search(told):
            return "disclosure"  # "turns out im allergic to cats??": news, not a question
    if _PRESUPPOSED_EN.match(text):
        return "disclosure"  # "now that we live in Oakland", "since switching to nights": told as given, also in a question
    request, asks = _ask_en(clause, core)
    if asks and (_attributive(core) or _MY_NEW_EN.search(core)):
        return "disclosure"  # "can my diabetic dad eat mango", "tips for my first week at Google": a fact the ask presupposes
    if _REMINDER_EN.match(core) and (NAMES_USER.search(core[8:]) or MY_SOMEONE_EN.search(core)):
        return "disclosure"  # "Remember my blood sugar though": a reminder restates a fact
    if request:
        return "request"
    if asks:
        return "question"
    names_user = bool(NAMES_USER.search(core) or MY_SOMEONE_EN.search(core))
    if not names_user and REACTION_EN.search(core):
        return "meta"  # "thx these look good", "ur a lifesaver", "gonna try that tonight"
    verbless = not VERB_EN.search(RELATIVE_TAIL_EN.sub(" ", core))
    before_for = FOR_MY_EN.sub("", core)  # "gift ideas for my dad": whom the thing asked for is for
    if verbless and not FIRST_PERSON_IN_EN.search(core) and not _attributive(core) and not NAMES_USER.search(before_for) \
            and not MY_SOMEONE_EN.search(before_for) and (
            QUERY_NP_EN.match(core) or (COMPARATIVE_EN.match(core) and not NEGATED_EN.match(text))):
        return "request"  # "recipe for banana bread", "gift ideas for my dad", "shorter and with more emojis"
    if META_EN.search(core) or (DEICTIC_EN.search(core) and not NAMES_USER.search(core)):
        return "meta"
    subject = _TIME_LEAD_EN.sub("", core)
    dropped_i = bool(_DROPPED_I_EN.search(subject)) and not _ABOUT_REPLY_EN.match(subject) and not after_statement
    if FIRST_PERSON_EN.search(subject) or MY_SOMEONE_EN.search(core) or _AS_A_EN.search(core) or dropped_i or _MY_NEW_EN.search(core) \
            or _WITH_ME_EN.match(subject) or _OWN_AFFAIR_EN.match(subject):
        return "disclosure"
    verb = VERB_EN.search(core)
    if _ROLE_NP_EN.match(core) and not verb:
        return "disclosure"  # "arch major at UT Austin": "I'm" dropped
    if not verb and _self_description(core):
        return "disclosure"  # "allergic to shellfish btw", "on night shifts this month", "vegan now": "I'm" dropped
    if len(LATIN_WORD.findall(core)) >= 3 and _ME_EN.search(core, 1):
        return "disclosure"  # "Doc took me off the old pill": the user is the object
    if _PRONOUN_EN.search(core) and not first:
        return "disclosure"  # "..., she loves gardening": its antecedent is kept with it
    if _DROPPED_I_EN.search(subject) and _ABOUT_REPLY_EN.match(subject) and not names_user:
        return "meta"  # "figured it out", "got it working", "tried that": what the reply's suggestion did
    return "other"


#: A capitalised word after the clause's first (a name: "the Y", "Theo"), or a clause led
#: by an -ing participle ("lifeguarding all summer": "I'm" dropped, Biber et al. 1999, 3.7).
_NAMED_OR_DOING_EN = re.compile(r"(?<=\s)[A-Z]|^\W*(?:[A-Z]\w*\s*(?:,|$)|\w+ing\b)")


def _part_of_ask_en(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` is an English noun phrase with no verb that names neither the user nor
    anyone, of one of two shapes: the alternatives a wh-question right after it asks about
    (X and / or / + Y: "tulips and vintage watering cans, what colours go together",
    "maple+soy milk or aquafaba, which browns better"), or a measure or a "-friendly"
    constraint right after an ask ("need a quick dinner, 20 min max, toddler friendly"): the
    topic of the ask put before it (left dislocation) or a constraint added after it (right
    dislocation; Quirk et al. 1985, 18.37-18.38; Biber et al. 1999, 14.3 on prefaces and
    tags), part of the ask, not a statement. A "no X" constraint ("no sesame obvs") may
    restate a fact and stays as it was."""
    text = parts[i].text
    if _CJK.search(text) or VERB_EN.search(text) or NAMES_USER.search(text) or MY_SOMEONE_EN.search(text):
        return False
    if _NAMED_OR_DOING_EN.search(text) or not LATIN_WORD.search(text) or _IRREGULAR_PAST_RE.search(text):
        return False  # a name ("Theo, 7, ideas for his party?"), "lifeguarding at the Y", "pills ran out": the user's
    nxt, prev = i + 1, i - 1
    if (nxt < len(parts) and parts[nxt].sentence == parts[i].sentence and kinds[nxt] == "question"
            and WH_EN.match(core_en(parts[nxt].text)) and ALTERNATIVES_EN.search(text)):
        return True
    return (prev >= 0 and parts[prev].sentence == parts[i].sentence and kinds[prev] in ("request", "question")
            and bool(CONSTRAINT_EN.match(text)))


#: An English clause led by "when" / "whenever" and the user as subject ("when i drive home on
#: the A64 after a night", "when my shift at the bakery starts at 4am"), with no future or
#: supposition in it ("when I retire", "when I'm older someday").
_WHEN_I_EN = re.compile(r"^(?:when|whenever)\s+(?:i|i'm|im|my|we|we're|our)\b"
                        r"(?!.*\b(?:will|'ll|gonna|going\s+to|retire|grow\s+up|get\s+older|someday|one\s+day|ever)\b)",
                        re.IGNORECASE)


def _when_i_before_ask(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` is an English "when I / my ..." clause (:data:`_WHEN_I_EN`) with an ask
    after it in the same sentence ("when i drive home on the A64 after a night, how do i not nod
    off"): "when" there is no question word but the subordinator of a fronted adverbial clause of
    time (Quirk et al. 1985, 15.25), whose present tense states what habitually happens to the
    speaker; the question is the clause after it. A statement of the user's, not an ask."""
    nxt = parts[i + 1]
    if nxt.sentence != parts[i].sentence or kinds[i + 1] not in ("question", "request") or _CJK.search(parts[i].text):
        return False
    return bool(_WHEN_I_EN.match(core_en(parts[i].text)))


_IRREGULAR_PAST_RE = re.compile(r"\b(?:" + _IRREGULAR_PAST_EN + r"|gone)\b", re.IGNORECASE)


def _third_person_statement(text: str) -> bool:
    """An English clause with a finite verb whose subject is not dropped: its first word
    is no verb form (:data:`_DROPPED_I_EN`) and a verb follows ("pickle hated the car ride")."""
    core = core_en(text)
    return not _CJK.search(core) and not _DROPPED_I_EN.search(core) and bool(VERB_EN.search(core, 1))


def _state_asked(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` is the state a bare question right after it in its sentence asks about
    (:data:`ASKS_IF_IT_MATTERS`: "my knee hurts after running, is that normal?", 最近爬完楼梯
    膝盖有点疼，要不要紧？): the topic of the ask, part of it, not a fact the user tells. A
    lasting condition (:data:`CHRONIC`, :data:`CONDITION`: "I have asthma") or a slot
    statement holds whatever is asked about it and stays, and so does a clause that names
    someone of the user's ("我家猫咪咪最近老吐毛球，要紧吗": the user has a cat)."""
    nxt = parts[i + 1]
    if nxt.sentence != parts[i].sentence or kinds[i + 1] != "question":
        return False
    if not ASKS_IF_IT_MATTERS.match(core_zh(core_en(nxt.text))):
        return False
    text = parts[i].text
    core = core_zh(core_en(text))
    if MY_SOMEONE_EN.search(core) or _MY_SOMEONE_ZH.search(core) or re.match(_PEOPLE_ZH, core):
        return False  # 我家猫咪咪最近老吐毛球: who the user's people and pets are holds
    return not (CHRONIC.search(text) or CONDITION.search(text) or slot_of(text))


#: A Chinese clause that names who it is addressed to or says it asks: a polite or helping
#: lead (请 麻烦 帮 给我 替我), the listener (你 您), a modal of asking (能不能 可以 可不可以),
#: a verb of telling or advising (告诉 推荐 建议) or the speaker (我 咱 俺). A clause led by none of
#: these is a bare verb phrase whose subject was dropped.
_ADDRESSED_ZH = re.compile(r"^(?:请|麻烦|帮|给我|替我|你|您|能不能|可以|可不可以|告诉|推荐|建议|我|咱|俺)")
#: An indefinite object after the verb: a numeral or 个 + a measure word ("写个简历", "列一份清单",
#: "讲几句"): the object of an unrealized event, what an imperative asks to be made (Li &
#: Thompson 1981, 4.2 on indefinite objects).
_INDEFINITE_OBJECT_ZH = re.compile(r"^[\u4e00-\u9fff]{1,2}?(?:[一两几]?[个份篇首封套张段句条]|一下|下)")


def _in_topic_chain(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` reads as a bare imperative (a ``request``: "写扫地机的固件") but sits inside a
    topic chain about the speaker: the clause before it in its sentence is a disclosure led by
    我 / 咱 / 俺, and the sentence goes on after it with a clause that neither asks nor requests
    ("我在南山做硬件的，写扫地机的固件，白天还得上产线debug"). A subjectless clause in a topic chain
    takes the chain's topic as its zero subject (Li & Thompson 1981, ch. 24 on zero pronouns;
    Chao 1968 on topic chains), so it tells what the speaker does; an imperative would address
    the listener and end the chain. Not when the clause names its addressee or asks outright
    (:data:`_ADDRESSED_ZH`: 帮我, 请, 你) nor when its object is indefinite (:data:`_INDEFINITE_OBJECT_ZH`:
    "写个简历模板", what an ask wants made)."""
    if i == 0 or i + 1 >= len(parts) or not _CJK.search(parts[i].text):
        return False
    before, nxt = parts[i - 1], parts[i + 1]
    if before.sentence != parts[i].sentence or nxt.sentence != parts[i].sentence or parts[i].asked:
        return False
    if kinds[i - 1] != "disclosure" or kinds[i + 1] not in ("disclosure", "other"):
        return False
    if not re.match(r"(?:我|咱|俺)", core_zh(before.text)):
        return False
    core = core_zh(parts[i].text)
    return not (_ADDRESSED_ZH.match(core) or _INDEFINITE_OBJECT_ZH.match(core))


#: The user's wider circle, outside their household and kin (a friend, a colleague, a
#: neighbour): whose things and troubles a user often asks about on their behalf.
_ACQUAINTANCE_EN = (r"(?:friend|buddy|mate|pal|bestie|bff|labmate|lab\s+mate|coworker|co-worker|colleague|"
                    r"neighbou?r|boss|roommate|room\s+mate|flatmate|housemate|classmate|teammate)")
_ACQUAINTANCE_ZH = r"(?:老铁|兄弟|哥们儿?|闺蜜|同事|隔壁|邻居|朋友|同学|室友|舍友|发小)"
#: An English clause whose subject is a thing or person of an acquaintance's: "my" + an
#: acquaintance + possessive 's + a noun ("my mate's tenant", "My friend's parakeet", "my
#: buddy's wife"); not the contraction of "is" / "has" ("my friend's visiting", "my mate's
#: been ...", "my boss's leaving"): the word after 's is no -ing form, auxiliary or particle.
_OTHERS_THING_EN = re.compile(r"^(?:my|our)\s+(?:best\s+|old\s+|close\s+|good\s+)?" + _ACQUAINTANCE_EN
                              + r"(?:'s|’s|s')\s+(?!\w+ing\b|been\b|got\b|gone\b|not\b|just\b|off\b|a\b|an\b|the\b|so\b|very\b"
                              r"|really\b|always\b|still\b|also\b|going\b|gonna\b|about\b)[\w'-]+", re.IGNORECASE)
#: A Chinese clause whose subject is a thing of an acquaintance's, with 家 or 的: 我哥们家狗咬了人,
#: 闺蜜的猫绝育后胖了好多, 同事家孩子三岁还不会说整句, 隔壁王姐家的狗老叫, 老铁家饭馆被差评了 (a name of up to
#: three characters may stand between: 隔壁王姐家).
_OTHERS_THING_ZH = re.compile(r"^(?:我|俺)?(?:的)?(?:好)?" + _ACQUAINTANCE_ZH + r"[\u4e00-\u9fff]{0,3}?(?:家的?|的)(?!话)[\u4e00-\u9fff]")
#: A clause led by a supposition (Quirk et al. 1985, 15.33-15.35 on open and hypothetical
#: conditions): "if I had to teach online again", "if someone had a rental with damp",
#: 如果以后再养只狗; what it supposes has not happened. Not a hedge that frames what follows as
#: said in earnest ("if I'm honest, I've been vegan since May", "if it helps", "if you must know").
_SUPPOSED_LEAD = re.compile(r"^(?:(?:and|so|but|ok|okay|also|hmm+|like)\s+)*(?:if|suppose|supposing|imagine|hypothetically|"
                            r"what\s+if|say)\b(?!\s+(?:i'?m\s+honest|i\s+am\s+honest|i'?m\s+being\s+honest|(?:it|that)\s+(?:helps|matters)|"
                            r"you\s+(?:must\s+know|ask\s+me|wondered|were\s+wondering)))|^(?:那)?(?:如果|要是|假如|假设|万一)", re.IGNORECASE)
#: A question inside an English clause led by a supposition, the consequent put as an
#: inverted question: "if i were a carpenter would my hands be strong enough".
_ASKED_AFTER_SUPPOSED_EN = re.compile(r"\b(?:would|could|should|will|can|do|does|is|are|am)\s+(?:i|my|that|it|this|you|u|"
                                      r"they|he|she|we|there)\b", re.IGNORECASE)


def _asked_for_someone_else(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` sets up the turn's ask without telling anything of the user's: it is led
    by a supposition (:data:`_SUPPOSED_LEAD`: "If I had to teach online again, what platform
    ...", 如果以后再养只狗，猫会不会吃醋) or its subject is a thing of an acquaintance's
    (:data:`_OTHERS_THING_EN`, :data:`_OTHERS_THING_ZH`: "my coworker's dog bit a kid at the
    park, is she liable?", 闺蜜的猫绝育后胖了好多，要怎么减肥), and the turn asks: a question or request
    clause after it, or (a supposition) an inverted question inside it ("if i was to go back to
    college would that be mad"). A supposition is not a fact (the condition of the question);
    an acquaintance's pet, tenant or child is theirs, the user asks on their behalf. An
    acquaintance's thing in a clause that also names the user ("my friend's cat and i cannot be
    in the same room") or in a turn that asks nothing stays as the rules read it."""
    core = core_zh(core_en(parts[i].text))
    asks_after = any(k in ("question", "request") for k in kinds[i + 1:])
    if _SUPPOSED_LEAD.match(core):
        return asks_after or (not _CJK.search(core) and bool(_ASKED_AFTER_SUPPOSED_EN.search(core, 3)))
    if not asks_after:
        return False
    if _OTHERS_THING_EN.match(core):
        return not _I_SUBJECT_EN.search(core) and not _ME_EN.search(core)
    if _OTHERS_THING_ZH.match(core):
        rest = core[_OTHERS_THING_ZH.match(core).end():]  # type: ignore[union-attr]
        return "我" not in rest and "俺" not in rest
    return False


#: Someone a user reports a question from: the wider circle (:data:`_ACQUAINTANCE_EN`) and the
#: people of the user's work or studies (a manager, a client, a coursemate). Kin and carers are
#: not among them: "my wife asked whether we can afford it" and "my doctor asked if I smoke" are
#: about the user's own household or body.
_ASKER_EN = (r"(?:" + _ACQUAINTANCE_EN[3:-1] + r"|coursemate|course\s+mate|manager|client|customer|supervisor|"
             r"co-?founder|student|intern|colleague|guy\s+at\s+work|girl\s+at\s+work|someone\s+at\s+work|"
             r"someone\s+in\s+my\s+\w+|person\s+at\s+work|lady\s+at\s+work)")
_ASKER_ZH = (r"(?:" + _ACQUAINTANCE_ZH[3:-1] + r"|老乡|同乡|同桌|领导|老板|上司|主管|客户|学生|家长|老师|学长|学姐|学弟|学妹|"
             r"师兄|师姐|师弟|师妹|战友|网友|病人|患者|顾客|粉丝|" + _ACQUAINTANCE_EN[3:-1] + r"|coworker|manager|client)")
#: A reported question (Quirk et al. 1985, 14.31-14.32 on indirect questions: a verb of asking
#: with an if / whether / wh- clause; in Chinese 问 (我) with the question as its object clause,
#: Li & Thompson 1981, ch. 21 on sentential objects): "my buddy asked if u can run two delivery
#: apps at once", "A client asked whether her ex can move the kids", "a colleague asked me whether
#: ...", "wants to know how", 我同事问, 我们组一哥们问, 室友问我, 我 colleague 问我, 我一个老乡问 骑手能交社保不.
#: The subject is an acquaintance or a person of the user's work (:data:`_ASKER_EN`, :data:`_ASKER_ZH`)
#: or, after a clause about such a person, he / she / 他 / 她 ("...and she asked if she can
#: still get her hair relaxed", 同事被派去德国半年 他问我…). An ask *to do* ("my manager asked me
#: to lead the migration", "my doctor asked me to cut salt") is a directive that changes what
#: the user does, no reported question: "asked (me) to" is not read, only "asked (me) if /
#: whether / wh-", "asked" closing the clause, and 问 not followed by 我借 / 题 / 候 / 路.
_REPORTED_ASK_EN = re.compile(
    r"^(?:(?:and|so|also|btw|ok|okay|hey|oh|anyway|today|yesterday)\s+)*(?:(?:my|our|a|an|one\s+of\s+my|this|some)\s+)"
    r"(?:[\w'-]+\s+){0,2}?" + _ASKER_EN + r"s?\s+(?:(?:just|also|literally|kept|keeps|was|is)\s+)?"
    r"(?:asked|asks|asking|wants\s+to\s+know|wanted\s+to\s+know|was\s+wondering|is\s+wondering|wonders|wondered)"
    r"(?:\s+(?:me|us))?(?:\s+(?:if|whether|what|how|why|when|where|which|who|about)\b|\W*$)", re.IGNORECASE)
_THEY_ASKED_EN = re.compile(r"\b(?:he|she|they)\s+(?:(?:just|also)\s+)?(?:asked|asks|wants\s+to\s+know|wanted\s+to\s+know)"
                            r"(?:\s+(?:me|us))?\s+(?:if|whether|what|how|why|when|where|which|who)\b", re.IGNORECASE)
_REPORTED_ASK_ZH = re.compile(
    r"^(?:(?:我|俺|咱)们?)?(?:(?!问|说)[\u4e00-\u9fff]){0,5}?\s*" + _ASKER_ZH + r"儿?\s*(?:也|就|还|刚|刚才|今天|昨天|又|专门)?"
    r"(?:问我|问俺|想问|让我问|托我问|想知道|问)(?!题|借|候|路|好)", re.IGNORECASE)
_THEY_ASKED_ZH = re.compile(r"^(?:他|她|他们|她们)(?:也|就|还|刚|又)?(?:问我|问俺|想问|让我问|托我问|想知道|问)(?!题|借|候|路|好)")
#: The user's own part in a reported question: their answer ("i said no", 我说能) or passing it on
#: ("我帮他问问", "我转告他").
_MY_ANSWER_TO_IT = re.compile(r"^(?:(?:and|but|so)\s+)?i\s+(?:said|told\s+(?:him|her|them))\b"
                              r"|^(?:我|俺)(?:就|也)?(?:说|跟他说|跟她说|帮他问|帮她问|替他问|替她问|帮忙问)", re.IGNORECASE)
#: A clause about the asker with no subject of its own that says nothing lasting of the user:
#: led by he / she / 他 / 她 (the asker), or the doubt the exchange left ("but now im doubting
#: myself", "not sure anymore").
_ABOUT_THE_ASKER = re.compile(r"^(?:(?:and|but|so)\s+)?(?:he|she|they|he's|she's|they're|his|her)\b|^(?:他|她)(?!们家)"
                              r"|^(?:(?:and|but|so)\s+)?(?:now\s+)?(?:i'?m|im|i\s+am)\s+(?:now\s+)?(?:doubting|second[\s-]guessing|"
                              r"not\s+sure)\b", re.IGNORECASE)


def _reported_ask(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` reports a question someone else asked (:data:`_REPORTED_ASK_EN`,
    :data:`_REPORTED_ASK_ZH`; a pronoun asker right after a clause led by an acquaintance:
    :data:`_THEY_ASKED_EN`, :data:`_THEY_ASKED_ZH`): it only sets up the user's question, which is
    the asker's, and tells nothing of the user's. Not when the clause also states a lasting thing
    of the user's (:func:`_attributive`: "my coworker asked if my asthma ...")."""
    core = core_zh(core_en(parts[i].text))
    if _attributive(core):
        return False
    if _REPORTED_ASK_EN.match(core) or _REPORTED_ASK_ZH.match(core):
        return True
    if _CJK.search(core):
        return bool(_THEY_ASKED_ZH.match(core)) and i > 0 and bool(_ACQUAINTANCE_LEAD.match(core_zh(parts[i - 1].text)))
    led = _ACQUAINTANCE_LEAD.match(core)
    return led is not None and _THEY_ASKED_EN.search(core, led.end()) is not None and not _I_SUBJECT_EN.search(core)


#: A clause led by an acquaintance or a person of the user's work (the lead of :func:`_reported_ask`'s
#: pronoun asker, and the clauses about that person around a reported question).
_ACQUAINTANCE_LEAD = re.compile(r"^(?:(?:and|but|so|also|btw)\s+)?(?:(?:my|our|a|an|one\s+of\s+my)\s+)(?:[\w'-]+\s+){0,2}?"
                                + _ASKER_EN + r"s?\b(?!'s|’s)"
                                r"|^(?:(?:我|俺|咱)们?)?(?:(?!问|说)[\u4e00-\u9fff]){0,5}?" + _ASKER_ZH + r"(?![的家])", re.IGNORECASE)


def _about_the_asker(parts: list[Clause], i: int) -> bool:
    """Clause ``i`` (next to a reported question) says only something of the asker's or the user's
    part in the exchange: led by the asker (:data:`_ACQUAINTANCE_LEAD`, :data:`_ABOUT_THE_ASKER`) or the
    user's answer (:data:`_MY_ANSWER_TO_IT`), with no slot of the user's and no first person
    outside that answer ("我同事问 … 她也怀了", "室友下个月要搬出去住 他问我…", "i said no but now im doubting
    myself"). A clause that tells a lasting thing of the user's ("I'm pregnant too") stays."""
    text = parts[i].text
    core = core_zh(core_en(text))
    if _MY_ANSWER_TO_IT.match(core):
        return True
    if not (_ACQUAINTANCE_LEAD.match(core) or _ABOUT_THE_ASKER.match(core)):
        return False
    if re.match(r"(?:(?:and|but|so)\s+)?(?:now\s+)?(?:i'?m|im|i\s+am)\b", core, re.IGNORECASE):
        return True  # "but now im doubting myself": the doubt the exchange left
    return not (_USER_NAMED.search(core) or MY_SOMEONE_EN.search(core) or _MY_SOMEONE_ZH.search(core))


#: The user named in a clause: I / me / my / we or 我 / 咱 / 俺.
_USER_NAMED = re.compile(r"\b(?:i|i'm|im|i've|ive|i'd|me|my|mine|we|we're|our|us)\b|我|咱|俺", re.IGNORECASE)


def _reported_asks(parts: list[Clause], found: list[ClauseKind]) -> None:
    """Read the reported questions of a turn (:func:`_reported_ask`) and the clauses about their
    asker right around them (:func:`_about_the_asker`) as ``request``: the question is someone
    else's, asked through the user, and forms nothing (the user's own facts elsewhere in the turn
    still form). Changes ``found`` in place; linear in the clauses."""
    for i in range(len(parts)):
        if found[i] not in ("disclosure", "other", "question") or not _reported_ask(parts, found, i):
            continue
        found[i] = "request"
        j = i - 1
        while j >= 0 and found[j] in ("disclosure", "other") and _about_the_asker(parts, j) and not _MY_ANSWER_TO_IT.match(
                core_zh(core_en(parts[j].text))):
            found[j] = "request"
            j -= 1
        j = i + 1
        while j < len(parts) and (found[j] in ("question", "request")
                                  or (found[j] in ("disclosure", "other") and _about_the_asker(parts, j))):
            found[j] = "request" if found[j] != "question" else "question"
            j += 1


#: A request for a text to be written ("帮我写条朋友圈", "写个群公告", "给她写几句送别的话"): 写 / 发 / 编 / 拟 /
#: 起草 with a measure word or a kind of text after it.
_WRITE_ASK_ZH = re.compile(r"(?:写|发|编|拟|起草|回)(?:[一两几]?[个条段封篇份句首]|一下|点)|(?:朋友圈|公告|通知|邮件|文案|祝福|贺卡|"
                           r"告别信|感谢信|短信|微信|消息|致辞|发言稿|段子)")
#: What the text asked for is to say (就说 / 说 / 内容是 / 庆祝 / 祝 / 感谢 / 通知 + its content): the
#: content of the requested text, its complement (Li & Thompson 1981, ch. 21 on sentential objects
#: of verbs of saying), the words to be written, not a statement made to the assistant.
_TEXT_CONTENT_ZH = re.compile(r"^(?:就|内容|大概|主要|意思)?(?:是)?(?:说|讲)(?!人话|话|实话)|^(?:庆祝|祝贺|祝|感谢|谢谢|通知|提醒|告诉)")
#: A clause led by "it's" / "it is" (the thing asked for: "Could you make it a touch shorter,
#: it's only a little card"): its "it" is the object of the request before it.
_IT_IS_EN = re.compile(r"^(?:it'?s|it\s+is|its)\b", re.IGNORECASE)


def _part_of_the_request(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` comes right after a request in its sentence and says only what the thing asked
    for is or must say: the content of a text the request asks to be written (:data:`_WRITE_ASK_ZH`,
    :data:`_TEXT_CONTENT_ZH`: "帮我写个群公告，说晚上九点以后不回消息", "帮我写条朋友圈 庆祝搬新屋"), or a clause
    led by "it's" whose "it" is the thing asked for ("make it a touch shorter, it's only a little
    card"). Not when it names the user (我 / I / my) or someone of theirs: "帮我写个朋友圈，说我考上研究生了"
    tells the user's news."""
    before = parts[i - 1]
    if before.sentence != parts[i].sentence or kinds[i - 1] != "request":
        return False
    core = core_zh(core_en(parts[i].text))
    if _USER_NAMED.search(core) or MY_SOMEONE_EN.search(core) or _MY_SOMEONE_ZH.search(core) or NAMED_PERSON.search(core):
        return False
    if _CJK.search(core):
        return bool(_TEXT_CONTENT_ZH.match(core)) and bool(_WRITE_ASK_ZH.search(before.text))
    return bool(_IT_IS_EN.match(core))


#: A clause that is only a name ("Mia", "Dr Okafor"): one or two capitalised words.
_NAME_ONLY_EN = re.compile(r"(?:(?:Dr|Mr|Mrs|Ms)\.?\s+)?[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?")


def _appositive_name(parts: list[Clause], i: int) -> bool:
    """``parts[i]`` is a bare name set off by commas inside its sentence, with a clause
    of the same sentence on each side ("took on a second shooter, Mia, so I can say yes to
    30"): an appositive naming the noun phrase before it (Quirk et al. 1985, ch. 17 on
    apposition), part of that statement, not a greeting or vocative, which stand at the
    edge of a sentence ("thanks, Mia", "Mia, quick question"). Not a small-talk word
    ("Hi", "Thanks")."""
    text = parts[i].text.strip()
    if not _NAME_ONLY_EN.fullmatch(text) or any(w.lower().rstrip(".") in SMALL_TALK_EN for w in text.split()):
        return False
    before, after = parts[i - 1], parts[i + 1]
    return before.sentence == parts[i].sentence == after.sentence and before.sep.strip() == "," == parts[i].sep.strip()


def clause_kinds(parts: list[Clause], promote: Collection[int] = ()) -> tuple[ClauseKind, ...]:
    """The kind of each of a turn's clauses (:func:`clause_kind`, then what the clauses around it say: a
    leave-taking as the turn's last clause and a 的 phrase after an ask (:data:`~gateway.memorization.asks.LEAVE_ZH`,
    :data:`~gateway.memorization.asks.SPEC_ZH`), talk about the app (:data:`~gateway.memorization.asks.ABOUT_THE_APP`),
    a state a bare question right after it asks about (:func:`_state_asked`), a bare verb phrase inside a
    topic chain about the speaker (:func:`_in_topic_chain`), a name in apposition inside a
    statement (:func:`_appositive_name`), a "when I ..." clause before an ask (:func:`_when_i_before_ask`), the
    topic or a constraint of an English ask (:func:`_part_of_ask_en`) and a supposition or an acquaintance's thing
    that sets up an ask, a ``request`` (:func:`_asked_for_someone_else`), with what it goes on to suppose before the ask
    (:func:`_goes_on_supposing`); a supposition that asks nothing is ``other`` (:func:`is_supposed`)). ``promote``: indices of clauses read as
    disclosures whatever the rules
    say. Linear in the clauses' length."""
    found: list[ClauseKind] = []
    opening = True  # nothing but small talk or talk about the conversation so far in the turn
    last = max((i for i, c in enumerate(parts) if not is_small_talk(c.text)), default=-1)
    for i, c in enumerate(parts):
        after = i > 0 and parts[i - 1].sentence == c.sentence and found[-1] == "other" and _third_person_statement(parts[i - 1].text)
        kind = "disclosure" if i in promote else clause_kind(c, i == 0, after, opening)
        if kind != "meta" and i not in promote and _CJK.search(c.text):
            core = core_zh(c.text)
            if i == last and LEAVE_ZH.match(core):
                kind = "meta"  # 我先去做饭了: leave-taking closes the turn
            elif kind == "disclosure" and i > 0 and found[-1] in ("request", "question") and SPEC_ZH.match(core):
                kind = "other"  # 有啥护腰推荐 骑车能戴的: what the thing asked for must do
        found.append(kind)
        opening = opening and found[-1] in ("small_talk", "meta")
    for i, c in enumerate(parts):  # "my granddaughter set this app up for me": the conversation's medium
        if found[i] in ("disclosure", "other") and i not in promote and ABOUT_THE_APP.search(c.text):
            found[i] = "meta"
    for i in range(len(parts) - 1):  # 最近膝盖有点疼，要不要紧: the passing state is what is asked about
        if found[i] in ("disclosure", "other") and i not in promote and _state_asked(parts, found, i):
            found[i] = "question"
    for i in range(1, len(parts) - 1):  # "took on a second shooter, Mia, so ...": the name renames the noun before it
        if found[i] == "small_talk" and found[i - 1] == "disclosure" and i not in promote and _appositive_name(parts, i):
            found[i] = "disclosure"
    for i in range(len(parts) - 1):  # "when i drive home on the A64 after a night, how do i ...": the user's routine
        if found[i] == "question" and i not in promote and _when_i_before_ask(parts, found, i):
            found[i] = "disclosure"
    for i in range(len(parts)):  # "tulips and watering cans, what colours go together": the ask's topic
        if found[i] == "other" and i not in promote and _part_of_ask_en(parts, found, i):
            found[i] = "request"
    for i in range(1, len(parts) - 1):  # 我在南山做硬件的，写扫地机的固件，白天还得...: the speaker's topic chain goes on
        if found[i] == "request" and i not in promote and _in_topic_chain(parts, found, i):
            found[i] = "disclosure"
    for i in range(1, len(parts)):  # "帮我写个群公告，说晚上九点以后不回消息": what the text asked for is to say
        if found[i] in ("disclosure", "other") and i not in promote and _part_of_the_request(parts, found, i):
            found[i] = "request"
    _reported_asks(parts, found)  # "我同事问 …", "my buddy asked if u can run two delivery apps at once": someone else's question
    for i in range(len(parts)):  # "if I had to teach online again, ...", "my mate's tenant stopped paying rent, what should he do"
        if found[i] in ("disclosure", "other") and i not in promote and _asked_for_someone_else(parts, found, i):
            found[i] = "request"
    for i in range(len(parts)):  # 要是明年调去上海的话工资能涨不少: supposed, not told ("如果不忙我每天都跑步", a habit, stays)
        if found[i] == "disclosure" and i not in promote and is_supposed(parts[i].text) and not HABITUAL.search(parts[i].text):
            found[i] = "other"
    for i in range(1, len(parts)):  # 假如搬到婆婆家附近，通勤一个多小时，孕晚期扛得住吗: what the supposition entails
        if found[i] == "disclosure" and i not in promote and _goes_on_supposing(parts, found, i):
            found[i] = "request"
    return tuple(found)


def is_supposed(text: str) -> bool:
    """``text`` (a clause) is led by a supposition (:data:`_SUPPOSED_LEAD`: "if i moved to
    berlin instead", 假如搬到婆婆家附近): what it says has not happened, so it is no fact, also
    when no question follows it. Linear in ``len(text)``."""
    return bool(_SUPPOSED_LEAD.match(core_zh(core_en(text.strip()))))


def _goes_on_supposing(parts: list[Clause], kinds: list[ClauseKind], i: int) -> bool:
    """Clause ``i`` continues a supposition that sets up an ask: the clauses before it in its
    sentence are requests back to one led by a supposition (:func:`is_supposed`, made a
    ``request`` by :func:`_asked_for_someone_else`), it names no user (no I / my / 我 / 咱 /
    俺: :data:`_USER_NAMED`) and the turn asks after it. "假如搬到婆婆家附近，通勤一个多小时，
    孕晚期扛得住吗": the hour's commute is what the move would bring (the consequent of the
    condition, Quirk et al. 1985, 15.33 on conditional clauses), not the user's commute today;
    "假如搬到婆婆家附近，我现在通勤才二十分钟，…" names the user and stays."""
    if _USER_NAMED.search(parts[i].text) or not any(k in ("question", "request") for k in kinds[i + 1:]):
        return False
    j = i - 1
    while j >= 0 and kinds[j] == "request" and parts[j].sentence == parts[i].sentence:
        if is_supposed(parts[j].text):
            return True
        j -= 1
    return False
