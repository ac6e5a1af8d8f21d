"""Supersede slots (step 5 of :mod:`gateway.memorization.disclosure`): which attribute of
the user a statement states, and which older statement in the same slot it leaves standing.

**Slot** (:func:`slot_of`): a statement about where the user lives, their work,
studies, diet, relationship status, vehicle or commute, work shift, a child's school or a
pregnancy has a slot (and is durable, whatever its date); a later statement in the
same slot supersedes the earlier (:mod:`gateway.memorization.neardup`): the same
attribute with a new value needs no change word ("we ended up buying a Mazda" after
"my Honda Civic..."). Each slot's vocabulary is the attribute's own words (a job
title, "internship", "promoted", 升主管, 全职妈妈; a home "in <Place>", a home bought
somewhere, 在三亚买了套房; car makes; "bike to work", 通勤, 现在坐地铁; "switched
schools", 转学, 考取; "seeing someone", "we split up"; 导师, 研二), and whose
statement it is is read per clause (:func:`slot_of`: "our drummer moved to Calgary"
is no move of the user's). Two memories' slots compare with :func:`same_slot`.

**What a newer statement in the slot leaves standing**: an older memory that holds a
fact the newer does not change (:func:`keeps_other_fact`: "I got promoted" keeps the
employer; a new job keeps the city) and what was said about the partner beside a
relationship that goes on (:func:`keeps_partner`).

A statement that something ended ("I stopped running", "我不喝咖啡了":
:func:`gateway.memorization.changes.ended_of`), or that a habit switched within its class
("switched to green tea", "现在改游泳了": :data:`gateway.memorization.changes.SWITCH_CLASSES`),
is durable too, whatever its date, and supersedes the older memory about the ended thing
(:mod:`gateway.memorization.changes`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from gateway.memorization.changes import ended_of, terms
from gateway.memorization.clauses import FIRST_PERSON_ZH, about_someone, core_en, core_zh
from gateway.memorization.lexicon import (
    ADMIN_PLACE_ZH,
    ADVISOR_EN,
    CAR_MAKES_EN,
    CAR_MAKES_ZH,
    GRADE_EN,
    HOMEMAKER_EN,
    HOMEMAKER_ZH,
    KIN_BARE_ZH,
    LANGUAGE_NAMES,
    MONTH_ABBR_EN,
    MONTH_NAMES,
    OCCUPATIONS_EN,
    OCCUPATIONS_ZH,
    OUT_OF_WORK_EN,
    PEOPLE_EN,
    PROMOTED_EN,
    PROMOTED_ZH,
    SHIFT_ASSIGNED_EN,
    SHIFT_ASSIGNED_ZH,
    SHIFTS_EN,
    SHIFTS_ZH,
    VEHICLES_EN,
    WEEKDAY_ABBR_EN,
    WEEKDAY_NAMES,
    WORK_LEFT_ZH,
)
from gateway.memorization.lexicon import PEOPLE_ZH as _PEOPLE_ZH
from gateway.runtime.text import HAN_RE as _CJK

#: Slots whose newer statement replaces the older (same subject, the user or "we"),
#: the first that matches wins (work before residence: "a sound engineer at a studio in
#: Collingwood" is about work):
#: where the user lives, their work (employer or occupation), what they study, their
#: diet, their relationship status, the vehicle they drive, a pregnancy (from trying to
#: conceive to the birth) and the shift they work (nights, days, 夜班: the work schedule
#: is its own attribute, seed 002 §3.2). Each pattern
#: names the slot's own words only, so "I work night shifts" fills ``shift``, not
#: ``work``, and cannot retire "I work at Acme".
#: The commute is a slot of the user's only as how they get to work: 通勤 after a word of purpose
#: (主要 / 用来 / 用于 / 拿来 通勤: what a thing asked about is for, "有啥推荐，主要通勤+周末带娃")
#: names a use, not the user's commute; and 现在 + a means of travel is the current means only as
#: the predicate ("现在骑车上班", "现在坐地铁"), not as the topic a comment follows (Li & Thompson
#: 1981, ch. 4 on topic and comment: "现在骑车还是有点发怵", a feeling about riding; 还是 / 也 / 就
#: after it open a comment on it).
_FEARED_ZH = r"(?:发怵|犯怵|怕|害怕|紧张|不敢|心慌|慌)"
_OCCUPATIONS = OCCUPATIONS_EN
#: Chinese job titles for the work slot after 我是 / 当 / 做 ("我是一名护士", "当上销售经理",
#: "在车企做销售"): the title says the job, like :data:`_OCCUPATIONS` in English.
_OCCUPATIONS_ZH = OCCUPATIONS_ZH
#: A child's school stage (the class, the school level, an entrance exam passed): "女儿上初二",
#: "朵朵考上市一中了", "my son starts high school". A statement about someone else of the
#: user's ("my son", 我女儿), or a Chinese one with no subject (the child named: "朵朵上高一了"),
#: that says one fills the ``school`` slot (:func:`slot_of`); the user's own ("我考上研究生了")
#: is not theirs. 初一 / 初三 after 年 / 月 are days, 高一点 is "a bit higher".
_SCHOOL = re.compile(r"[上读]了?(?:小学|初中|高中|大学|幼儿园|托班)|(?<![年月最起提])[初高][一二三](?![十百点些倍截头])|"
                     r"[一二三四五六]年级|考上|考进|考取|考起|升(?:初中|高中|大学|入)|小升初|转学|"
                     r"\b(?:switched|changed|transferred|moved)\s+schools\b|\bnew\s+school\b|\b(?:primary|secondary|grade)\s+school\b|"
                     r"\bat\s+(?:[\w']+\s+){1,3}(?:primary|elementary|academy)\b|"
                     r"\b(?:kindergarten|preschool|pre-k|daycare|elementary|middle\s+school|high\s+school|junior\s+high|"
                     + GRADE_EN + r"|freshman|sophomore|got\s+into)\b"
                     r"|\b(?:in|into|started|starts|starting|start|moved\s+up\s+to)\s+(?:reception|nursery|year\s+\d{1,2}|sixth\s+form)\b",
                     re.IGNORECASE)
#: A class the user teaches ("带五年级一个班", "教初二数学", "学校让我接三年级": 接 a class is to
#: take over teaching it, not 接三年级的女儿, picking a child up; "I teach 5th grade"): the teacher's
#: work, no child's school stage; :func:`slot_of` reads the school stage without it.
_TAUGHT_CLASS = re.compile(r"(?:带|教)(?:了|着)?(?:[一两二三四五六]个)?(?:[一二三四五六]年级|[初高][一二三])"
                           r"|接了?(?:[一二三四五六]年级|[初高][一二三])(?!的)"
                           r"|\bteach(?:es|ing)?\s+(?:\w+\s+)?(?:" + GRADE_EN + r"|year\s+\d{1,2})",
                           re.IGNORECASE)
#: A school named as an institution ("转学去了实验小学", "在二小上学", "at Oakwood Primary",
#: "changed schools"), not a stage ("上小学", "四年级", "5th grade"): read by
#: :func:`keeps_other_fact` (a new grade keeps the school).
_SCHOOL_NAMED = re.compile(r"转学|(?<![上读升进考念初高])(?:[\u4e00-\u9fff]{1,5}(?:小学|中学|学校|幼儿园|附小|附中)|[一二三四五六七八九十]{1,2}[小中])"
                           r"|\b(?:switched|changed|transferred|moved)\s+schools\b|\bnew\s+school\b"
                           r"|\b(?:at|to)\s+(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+){0,2}\s+(?i:primary|elementary|academy|school|high)\b",
                           re.IGNORECASE)
#: Whose school stage it is, when the sentence says: son / daughter / grandchild (the
#: ``school`` slot's key: "school:daughter"); a name or "孩子" leaves it unkeyed, and an
#: unkeyed school slot meets any keyed one (:func:`same_slot`).
_SCHOOL_WHO = (("daughter", re.compile(r"女儿|闺女|\b(?:daughter|girl)\b", re.IGNORECASE)),
               ("son", re.compile(r"儿子|\b(?:son|boy)\b", re.IGNORECASE)),
               ("granddaughter", re.compile(r"孙女|\bgranddaughter\b", re.IGNORECASE)),
               ("grandson", re.compile(r"孙子|\bgrandson\b", re.IGNORECASE)))
#: Two characters before 人 that name no place: "我们年轻人", "我们打工人" are no locals.
#: "我们成都人" / "我们东北人" (we <place> people: the locals, where the speaker lives) fill
#: the residence slot.
_NOT_PLACE_ZH = (r"年轻|老年|中年|成年|外地|本地|当地|普通|打工|上班|工薪|有钱|没钱|这些|那些|这种|那种|两个|三个|几个|"
                 r"一家|家里|自己|大家|女的|男的|读书|病|老|大|小|男|女|穷|好|坏|一|两|几")
#: A switch of the user's own shift said with a verb of moving ("I got switched to nights",
#: "moved onto the day shift"; someone else putting the user on one: SHIFT_ASSIGNED_EN): a
#: shift, not a move of home (the residence pattern skips "moved to <shift>") nor a
#: transfer of job (:data:`_TRANSFER`).
_SHIFT_SWITCHED_EN = (r"\b(?:switched|swapped|moved|transferred)\s+(?:back\s+)?(?:on|onto|to|over\s+to)\s+(?:the\s+)?"
                      + SHIFTS_EN + r"\b")
#: What 住 is followed by when it tells no home (Chinese): a stay of a few nights or weeks
#: (住两周, 住几天, 住一晚, 住两宿 (宿, a night, northern colloquial: 住一宿), 住一个多月: a duration phrase after the verb bounds the event, a visit; Li &
#: Thompson 1981, 10.2 on duration phrases) or the floor of the home (住六楼, 住顶楼: where in
#: the building, not where the user lives, so no move), with or without 了 (住了两周). Likewise
#: 回老家 fills the slot only with a verb of settling after it (a move: 回老家发展, 回老家定居了,
#: 回老家工作了, 回老家住 with no stay after it; 搬回老家 by 搬回), not alone (春节回老家了,
#: 回老家了两天: going home is a trip unless it says what the user settles there to do), nor
#: as a trip with a purpose (周末回老家看我妈), and 开了一家店 only when it is not 新开
#: (楼下新开了一家店: a shop opened, no business of the user's).
_STAY_ZH = (r"(?:[一两几\d二三四五六七八九十半]+|个把)(?:个)?多?(?:晚|夜|宿|宵|天|日|周|星期|礼拜|月)(?!了)|"
            r"(?:在)?(?:[\d一二三四五六七八九十]+|顶|高|低|底)(?:楼|层)")
#: Verbs that take 住 as their resultative complement ("firmly, in place": 记住, 抓住, 忍住,
#: Cantonese 睇住 "keep an eye on", 揸住 "hold"; Li & Thompson 1981, 3.2 on resultative verb
#: compounds, 住 among the phase complements): 住 after one of them tells no home ("铺头交畀
#: 老公阿强睇住": the husband minds the shop).
_HOLD_V_ZH = r"[记抓忍顶撑挡拦捉揸睇看盯守稳按压握接留困堵卡绑拴锁夹咬憋扣勒捂罩镇吓拖缠护管框]"
#: A group joined for leisure, not work ("joined an indoor league thursday nights", "joined a
#: running club", "joined the gym"): "joined" fills ``work`` only with an employer or a team at
#: work; a league, club or class is a pastime (the object names what kind of group it is).
_LEISURE_GROUP_EN = (r"(?:league|leagues|club|clubs|gym|choir|orchestra|class|classes|course|society|meetup|parkrun|"
                     r"book\s+club|waitlist|waiting\s+list|discord|forum|subreddit|community\s+garden|allotment)\b")
#: The slots and the words that fill them. A break-up said the short way fills
#: ``relationship`` as 分手 does: 跟阿杰分了, 我们分了, Cantonese 同阿杰分咗手 / 我哋分咗, not a share
#: ("我们分了三组": a word follows 分了). A live-in helper (住家保姆, 住家阿姨) is no home of the user's.
_SLOTS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("work", re.compile(
        r"\b(?:work|working|works)\s+(?:\w+\s+){0,2}(?:at|for|as)\b|\bjob\s+(?:at|as)\b|\bjoined\b(?!\s+(?:(?:a|an|the|my|our|his|her|their)\s+)?(?:[\w'-]+\s+){0,2}?" + _LEISURE_GROUP_EN + r")|"
        r"\b(?:left|quit)\s+(?:my\s+job|my\s+position|the\s+company|(?-i:[A-Z])\w+)|\blaid\s+off\b|\bnew\s+job\b|"
        r"\b(?:left|quit)\s+(?:my|the|that)\s+(?:\w+\s+){0,2}(?:job|position|gig)\b|"
        r"\b(?:took|accepted|got|landed|started)\s+(?:a|an|the)\s+(?:\w+\s+){0,2}(?:job|position|role|offer)\b|\bnew\s+(?:role|position)\b|"
        r"转行|自由职业|创业|拿到了?\S{0,6}offer|offer拿到|(?:去|到)\S{2,6}报到|\bwent\s+freelance\b|\bfreelancing\b|\bself-employed\b|\b(?:got|landed|started|starting|doing|my|an?)\s+(?:\w+\s+){0,3}internship\b|\b(?:got\s+)?promoted\b|"
        + PROMOTED_EN + r"|\b" + HOMEMAKER_EN + r"\b|" + PROMOTED_ZH + r"|"
        r"\bstarted\s+(?:at|working)\b|\b" + OUT_OF_WORK_EN + r"\b|"
        r"\b(?:i|we)\s+(?:run|own|opened|started)\s+(?:a|an|my|our)\s+(?:\w+\s+){0,2}(?:business|shop|store|bakery|"
        r"restaurant|cafe|café|bar|salon|studio|company|startup|clinic|practice|farm|agency)\b|"
        r"(?<!新)开了(?:一)?家|(?<!新)开(?:了)?(?:一)?(?:家|个)\S{0,6}(?:店|馆|公司|餐厅|工作室)|"
        r"\b(?:i'm|i\s+am)\s+(?:now\s+)?(?:an?\s+)?(?:\w+\s+)?" + _OCCUPATIONS + r"\b|"
        r"^(?:\w+\s+){0,2}?as\s+an?\s+(?:[\w-]+\s+)?" + _OCCUPATIONS + r"\b|"
        r"(?<![现正实好存])在\S{0,12}(?:工作|上班|公司|单位|集团|医院|银行|工厂)|" + WORK_LEFT_ZH + r"|跳槽|入职(?!体检|手续|培训|材料|资料)|换了?(?:份|个)?工作|新工作|"
        r"辞(?:了|掉)(?:工作|职)?|升职|升任|转正|当上|(?:找|换)(?:到)?了?(?:一)?(?:份|个)\S{0,10}工作|"
        r"我是做\S{1,8}?的|(?:我(?:现在|目前|如今)?是|我当|我做|当了?|做了?)(?:一名|一个|个)?\S{0,8}?" + _OCCUPATIONS_ZH + r"(?!\S{0,2}(?:朋友|同学|家|说))",
        re.IGNORECASE)),
    ("residence", re.compile(
        r"\b(?:live|living|lives|moved|moving|relocated|relocating|based)\s+(?!up\b|forward\b|back\s+to\s+(?:the\s+)?\d)"
        r"(?:\w+\s+)?(?:in|into|to|at|near|by)\b(?!\s+(?:" + MONTH_ABBR_EN + "|" + WEEKDAY_ABBR_EN + r")\w*\s*\d)"
        r"(?!\s+(?:the\s+)?" + SHIFTS_EN + r"\b)"
        r"|\b(?:our|my)\s+(?:new\s+|own\s+)?(?:place|home|apartment|flat|house|studio)\s+(?:is\s+)?(?:in|near)\b"
        r"|\b(?:apartment|flat|house|studio|condo|bungalow|cottage)\s+(?:in|near)\s+(?-i:[A-Z])|\bclosed\s+on\s+a\s+(?:house|home|condo|flat)\b"
        r"|\b(?:got|get|getting|picked\s+up|collected)\s+(?:the\s+)?keys\s+to\s+(?:the\s+|our\s+|my\s+)?(?:new\s+)?"
        r"(?:place|house|home|flat|apartment|bungalow|cottage|condo|townhouse)\b"
        r"|\b(?:our|my)\s+(?:new\s+|own\s+)?(?:place|home|apartment|flat|house|studio|condo|townhouse)\b[^.!?;]{0,40}?\b(?:in|near)\s+(?-i:[A-Z])"
        r"|\bbought\s+(?:a|an|our|my)\s+(?:\w+\s+)?(?:house|home|condo|flat|apartment|place)\s+(?:in|near)\b"
        r"|在\S{1,8}?买了?(?:个|套|一套|一个|间)?\S{0,3}房|在\S{1,6}养老|回(?:到)?老家(?:发展|定居|生活|工作|养老|住(?!了?" + _STAY_ZH + r"))|搬回|安家|落户|\bsettled\s+in\b"
        r"|宿舍|合租|租了?(?:个|一个|一间|一套)?(?:房|单间|公寓)|\b(?:dorm|dorms|dormitory|halls\s+of\s+residence)\b"
        r"|\b(?:i'm|i\s+am|we're|we\s+are)\s+in\s+(?-i:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?)\s*(?:$|[,.!]|and\b)"
        r"|(?<!" + _HOLD_V_ZH + r")住(?!院|宿|酒店|家(?:保姆|阿姨|育儿嫂|护工|月嫂)|了?(?:一晚|" + _STAY_ZH + r"))|搬(?:到|去|家|来)|定居|现居|(?:租|住)的(?:房子|房|地方|公寓)在"
        r"|我们(?!" + _NOT_PLACE_ZH + r")[\u4e00-\u9fff]{2}人(?!家|员|士|物|类|口|群|民|生|工)",
        re.IGNORECASE)),
    ("study", re.compile(r"\b(?:student|studying|majoring|major\s+in|degree\s+in|enrolled|phd\s+in|sophomore|freshman|undergrad|"
                         r"[\w-]+\s+major(?=\s+(?:at|in|from)\b|\s*[,.;!?]|\s*$)|"
                         r"master'?s\s+in|(?:switched|changed|dropped|taking|doing|my)\s+(?:\w+\s+)?courses?|courses?\s+(?:in|at)|"
                         + ADVISOR_EN + r"|thesis\s+(?:topic|is\s+on))\b"
                         r"|读(?:研|博|大学|本科|大[一二三四]|高[一二三]|初[一二三])|专业|在读|上大学|转专业|考上|考研(?!公寓|资料|书|群|机构|宿舍|自习室)|研究生"
                         r"|(?:(?<![\u4e00-\u9fff])|(?<=[我读是]))(?:研|博)[一二三四五](?![\u4e00-\u9fff]{0,1}[点些])|导师|研究方向|课题",
                         re.IGNORECASE)),
    ("diet", re.compile(r"\b(?:vegetarian|vegan|pescatarian|plant-based|keto|carnivore)\b|"
                        r"\beat(?:ing|s)?\s+(?:meat|fish|chicken|pork|beef)\b|"
                        r"素食|吃素|吃肉|不吃肉|开荤|吃(?:鱼|鸡|猪|牛|羊)|鸡肉|猪肉|牛肉", re.IGNORECASE)),
    ("relationship", re.compile(r"\b(?:married|divorced|single|engaged|fianc[ée]e?|separated|widowed|broke\s+up|"
                                r"dating|together\s+(?:for\s+)?\d+\s+years)\b|\bmy\s+(?:girlfriend|boyfriend)\b|"
                                r"\b(?:we|i)\s+(?:\w+\s+)?split\s+up\b|\b(?:we're|we\s+are|and\s+i\s+are)\s+(?:done|over|through|finished)\b|\bsplit\s+up\s+with\b|\b(?:the|our|my)\s+relationship(?:'s|\s+is)\s+over\b|"
                                r"\b(?:i'm|i\s+am|i've\s+been)\s+seeing\s+someone\b|\bmy\s+new\s+(?:partner|boyfriend|girlfriend)\b|"
                                r"结婚|离婚|单身|订婚|分手|分咗手|恋爱(?![类题片剧综游脑])|脱单|男朋友|女朋友|领证|复合"
                                r"|(?:(?:跟|和|同)[\u4e00-\u9fff]{1,4}?|(?:我们|我俩|咱俩|咱们|俺俩|我哋)(?:已经|终于)?)分(?:了|咗|开了)(?![\u4e00-\u9fff\d])",
                                re.IGNORECASE)),
    ("vehicle", re.compile(r"\b(?:my|our)\s+(?:\w+\s+){0,2}" + VEHICLES_EN + r"\b"
                           r"|\b(?:i|we)\s+(?:drive|ride)\s+(?:a|an)\b"
                           r"|\b(?:went\s+with|ended\s+up\s+(?:with|buying|getting|going\s+with))\s+(?:a|an|the)\s+(?:new\s+|used\s+)?(?:\w+\s+)?"
                           r"(?:" + VEHICLES_EN + "|" + CAR_MAKES_EN + r")\b|\b(?:got|bought|leased)\s+(?:a|an)\s+(?:new\s+|used\s+)?"
                           r"(?:\w+\s+)?" + VEHICLES_EN + r"\b"
                           r"|\b(?:my|our)\s+(?:\w+\s+){0,2}" + CAR_MAKES_EN + r"\b"
                           r"|\b(?:commute|commuting|get\s+to\s+work|ride\s+to\s+work|drive\s+to\s+work|bike\s+to\s+work|"
                           r"walk\s+to\s+work|(?:take|catch)\s+the\s+(?:bus|train|subway|metro|tube|tram)\s+to\s+work)\b"
                           r"|(?:我|我们|我家)的?(?:那|这)?辆|车换了|换了?(?:辆|台)?车|开的是|电动车|新车|卖了?车|车卖了"
                           r"|" + CAR_MAKES_ZH + r"(?!股)"
                           r"|(?<!主要)(?<!用来)(?<!用于)(?<!拿来)通勤|(?:开车|骑车|坐地铁|坐公交|挤地铁|打车)(?:上下班|上班)"
                           r"|现在\S{0,4}?(?:共享单车|地铁|公交|骑车|步行|打车)(?!还是|还|都|也|就|有点|有些|[^，,。！!？?]{0,4}?" + _FEARED_ZH + ")",
                           re.IGNORECASE)),
    ("pregnancy", re.compile(r"\b(?:pregnant|expecting\s+(?:a|our|twins)|due\s+in|was\s+born|were\s+born|gave\s+birth|"
                             r"trying\s+(?:to\s+conceive|for\s+a\s+baby)|ttc|ivf|"
                             r"(?:she|he|baby|they)(?:'s|'re|\s+is|\s+are)\s+here)\b|怀孕|怀上|备孕|试管|预产期|出生|生了|宝宝出生", re.IGNORECASE)),
    ("shift", re.compile(r"\b(?:work(?:ing|s)?\s+(?:nights|days|evenings|overnights|the\s+night\s+shift|the\s+day\s+shift)|"
                         r"(?:night|day|evening|early|late|graveyard|overnight|swing)\s+(?:shifts?|rotation)|graveyard|"
                         r"on\s+(?:nights|days|earlies|lates)|(?:nights|days)\s+(?:now|starting)|\d{1,2}\s*[ap]m?\s*-\s*\d{1,2}\s*[ap]m?\b(?=\s+(?:days|nights|shifts?)))\b"
                         r"|" + SHIFT_ASSIGNED_EN + r"|" + _SHIFT_SWITCHED_EN + r"|" + SHIFTS_ZH, re.IGNORECASE)),
)
#: A relationship going on (engaged, married, 领证, 结婚, 订婚), not ending: it retires
#: what was said about the partner only when it names the partner again
#: (:func:`keeps_partner`), so a change of status never loses who the partner is.
_PROGRESSION = re.compile(r"\b(?:engaged|married|marrying|wedding|proposed|fianc[ée]e?)\b|领证|结婚|订婚|求婚|婚礼",
                          re.IGNORECASE)
_ENDED_RELATIONSHIP = re.compile(r"\b(?:divorc\w*|separated|broke\s+up|split\s+up|single|over|ex|seeing\s+someone)\b"
                                 r"|离婚|分手|单身|前任|前夫|前妻", re.IGNORECASE)
_NAME_EN = re.compile(r"(?<!^)(?<![.!?]\s)\b(?-i:[A-Z][a-z]+)\b")
_NAME_ZH = re.compile(_PEOPLE_ZH + r"(?:叫)?(?P<n>[\u4e00-\u9fff]{2})")


def keeps_partner(new: str, older: str) -> bool:
    """``older`` (about someone of the user's: "我男朋友阿杰是个游戏迷") stays live beside a
    newer ``relationship`` statement ``new`` that says the relationship goes on
    (:data:`_PROGRESSION`: "我们十月份领证") without naming the partner again: retiring
    it would lose who the partner is. A statement that ends a relationship, or that
    names the partner ("I proposed to Zoe"), retires it as any slot statement does."""
    if not _PROGRESSION.search(new) or _ENDED_RELATIONSHIP.search(new):
        return False
    names = {m.group() for m in _NAME_EN.finditer(older) if m.group() not in ("I", "My", "Our")}
    names |= {m.group("n") for m in _NAME_ZH.finditer(older)}
    return bool(names) and not any(name in new for name in names)


#: A place the user is at, named in a statement: English "in / near / from / outside
#: <Capitalised word>" (not a month, a weekday or a language: "in April", "in Spanish"),
#: a Chinese place before what the user does there ("我在武汉读大三", "在深圳一家电商公司
#: 做后端": 在 + two or three characters + a verb or a measure word; not 在 + a verb,
#: the progressive "在备孕"), a destination ("去深圳报到", "moving to Seattle"), a name with
#: an administrative suffix (高新区, 郑州市, 南山区) or "<place>这边 / 那边" (郑州这边), and a
#: commute's route (:data:`_ROUTE`). Read by :func:`keeps_other_fact`.
_PLACE = re.compile(
    r"\b(?:in|near|from|outside)\s+(?!(?-i:" + "|".join((*MONTH_NAMES, *WEEKDAY_NAMES, "Christmas", "Easter", *LANGUAGE_NAMES))
    + r")\b)(?-i:[A-Z][a-z]+)"
    r"|在(?!一|这|那|哪|家|读|做|学|想|上班|上学|上课|外|线|网|公司|学校|医院|单位|附近|本地|当地|老家)"
    r"(?P<zh>[\u4e00-\u9fff]{2,3}?)(?=一家|一所|的|读|上学|上班|工作|做|当|开|住|买|租|打工|生活|这边|那边)"
    r"|" + ADMIN_PLACE_ZH + r"|[\u4e00-\u9fff]{2}(?:这边|那边)"
    r"|(?:去|来|回|调到|派到|\bbase\s*)(?!一|这|那|哪|家|公司|学校|医院|单位)[\u4e00-\u9fff]{2,3}?(?=报到|上班|工作|发展|读书|上学|定居|生活)"
    r"|\bbase\s*[\u4e00-\u9fff]{2,3}|(?:搬到|搬去|换到|迁到|落户)(?!一|这|那|哪)[\u4e00-\u9fff]{2,3}"
    r"|\b(?:to|into)\s+(?-i:[A-Z][a-z]+)(?=\s*(?:$|[,.;!]|for\b|next\b|this\b|in\s+(?-i:[A-Z])))",
    re.IGNORECASE)
#: Where a statement says the user lives (not moves: a move is a change), the place word
#: after the verb of residing ("based in bath", "live near Leeds", 住在滨江, 住滨江): read by
#: :func:`keeps_other_fact` to tell a home said again from a new one.
_HOME_AT = re.compile(r"\b(?:live|living|lives|lived|based|settled|staying)\s+(?:\w+\s+)?(?:in|at|near|outside)\s+"
                      r"(?!(?:a|an|the|my|our|this|that)\b)(?P<en>[\w'-]+)"
                      r"|住(?:在)?(?!院|宿|酒店|了|的|着|不|得|过)(?P<zh>[\u4e00-\u9fff]{2})", re.IGNORECASE)


def _home_at(text: str) -> str:
    """The place :data:`_HOME_AT` finds in ``text``, case-folded, or ""."""
    found = _HOME_AT.search(text)
    return (found.group("en") or found.group("zh") or "").casefold() if found else ""


#: A commute's route, "from <A> to <B>" / "A到B" in a statement about the commute: where
#: the user lives and works, which a new way to get there does not change.
_ROUTE = re.compile(r"(?:\bfrom\s+(?-i:[A-Z])\w+\s+to\s+(?-i:[A-Z])|[\u4e00-\u9fff]{2}到[\u4e00-\u9fff]{2})", re.IGNORECASE)
_COMMUTE = re.compile(r"\bcommut\w*|通勤|上下班", re.IGNORECASE)
#: A promotion: a new title at the same employer ("got promoted", "they made me team
#: lead", 升组长, 当上主管, 转正): it changes the title, not where the user works.
_PROMOTION = re.compile(r"\bpromoted\b|" + PROMOTED_EN + "|" + PROMOTED_ZH + r"|升职|当上|转正", re.IGNORECASE)
#: A new workplace named in a work statement ("在西门子医疗入职了", "跳槽到字节了", "joined
#: Siemens"): an older "在博世做销售" names its workplace in the same frame, so the place
#: rule of :func:`keeps_other_fact` (which cannot tell a company from a city) keeps nothing.
#: Not "一家 / 这家 ..." (a workplace not named: the city of the older statement stays).
_NEW_WORKPLACE = re.compile(r"在(?!一|这|那|家)[\u4e00-\u9fffA-Za-z]{2,8}?(?:入职|报到)|(?:入职了|跳槽到|跳到|加入了?)(?!一|这|那)[\u4e00-\u9fffA-Za-z]{2,8}"
                            r"|\b(?:joined|started\s+at)\s+(?-i:[A-Z])", re.IGNORECASE)
#: A place said as the city around the workplace ("在深圳一家电商公司", "at Acme in Leeds"),
#: not as the workplace itself: a new workplace named does not replace it.
_CITY_OF_WORK = re.compile(r"在[\u4e00-\u9fff]{2,3}?(?:一家|一所|的一家|这边|那边)|\b(?:in|near)\s+(?-i:[A-Z])", re.IGNORECASE)
#: An occupation named, English or Chinese (:data:`_OCCUPATIONS`, :data:`_OCCUPATIONS_ZH`, a
#: trade said with 的: "开出租的"), read by :func:`keeps_other_fact`.
_OCCUPATION_ANY = re.compile(r"\b" + _OCCUPATIONS + r"s?\b|" + _OCCUPATIONS_ZH
                             + r"|(?:跑|干|开|卖|送|修)[\u4e00-\u9fff]{1,4}?的(?![\u4e00-\u9fff])", re.IGNORECASE)
#: The unit or place of work a shift is worked in ("work nights in ICU", "on the labour ward",
#: "nights in A&E", 在急诊科上夜班, 在ICU): where the user works, an attribute apart from the
#: schedule (seed 002 §3.2), which a new shift leaves (:func:`keeps_other_fact`).
_WORK_UNIT = re.compile(r"\b(?:in|on|at)\s+(?:the\s+)?(?:[\w&-]+\s+)?(?:icu|nicu|picu|hdu|ccu|ward|unit|(?-i:ER|ED|A&E))\b"
                        r"|[\u4e00-\u9fff]{1,4}(?<![本专学理文工])科(?![技学目研普幻])|ICU|急诊|病房", re.IGNORECASE)
#: Work that ended or changed in kind (quit, laid off, retired, a career change, 辞职, 转行):
#: the occupation of an older statement does not hold beside it.
_WORK_ENDED = re.compile(r"\b(?:quit|left|resigned|laid\s+off|fired|let\s+go|retiring|" + OUT_OF_WORK_EN + "|"
                         r"career\s+change|changed\s+careers?|stay-at-home|stay\s+at\s+home|" + HOMEMAKER_EN + r")\b"
                         r"|" + WORK_LEFT_ZH + r"|辞了|转行|改行|" + HOMEMAKER_ZH, re.IGNORECASE)
#: A university or school named in a study statement ("at Edinburgh", "at King's College",
#: "在华科读研", "浙大", "北邮"): read by :func:`keeps_other_fact`.
_INSTITUTION = re.compile(r"\b(?:at|from)\s+(?-i:[A-Z])[\w'-]+|\b(?:university|college)\s+of\b|\b\w+\s+(?:university|college)\b"
                          r"|[\u4e00-\u9fff]{1,6}大学|[\u4e00-\u9fff]{1,4}学院|华科|浙大|北大|清华|复旦|交大|北邮|同济|武大|南大|中大|川大|厦大|人大|北航|哈工大",
                          re.IGNORECASE)
#: A study left or finished ("dropped out", "graduated", 毕业, 退学, 不读了): the university
#: of an older statement does not hold beside it.
_LEFT_STUDY = re.compile(r"\b(?:dropped\s+out|graduated|transferred|withdrew|left\s+(?:uni|university|college|school))\b"
                         r"|毕业|退学|不读了|转学|考上|考进", re.IGNORECASE)
#: Retirement from work, said as a state or an event ("I'm retired", "since I retired", 退休了).
_RETIRED = re.compile(r"\bretired\b|\bretirement\b|退休", re.IGNORECASE)
#: Back to work after retiring ("came out of retirement", "went back to work", 返聘, 退休后又): a change.
_UNRETIRED = re.compile(r"\bout\s+of\s+retirement\b|\bback\s+to\s+work\b|\bunretired?\b|返聘|又(?:出来)?(?:上班|工作)",
                        re.IGNORECASE)
#: The move itself, not where to ("搬家全靠我一个人", "the move was brutal", "moving day"):
#: a residence statement saying only this names no new home.
_THE_MOVE = re.compile(r"搬家|\b(?:the|our|my)\s+move\b|\bmoving\s+(?:day|boxes|house|truck|van)\b|\bunpacking\b", re.IGNORECASE)


#: A vehicle named: a make, a kind of vehicle, or 车 as a noun (not 车程 / 车站 / 车位, a distance or a place).
_VEHICLE_NAMED = re.compile(r"\b(?:" + VEHICLES_EN + "|" + CAR_MAKES_EN + r")\b|" + CAR_MAKES_ZH + r"|车(?!程|站|位|库|费|票|厢)",
                            re.IGNORECASE)
#: A means of travel to work ("开车", "骑车", "坐地铁", "公交", "走路", "drive", "bike", "the bus"): a commute
#: that names one tells how the user travels, which may replace the car.
_MEANS = re.compile(r"开车|骑车|骑行|地铁|公交|打车|走路|步行|单车|电动车|摩托|\b(?:drive|driving|bike|biking|cycle|cycling|walk|walking|"
                    r"bus|train|subway|metro|tube|tram|ferry)\b", re.IGNORECASE)


def keeps_other_fact(new: str, new_slots: tuple[str, ...], older: str) -> bool:
    """``older`` (a live memory in the same slot as the newer statement ``new``, whose
    slots are ``new_slots``) still holds a fact ``new`` does not change, so ``new`` does
    not retire it (one memory can hold two facts; a change of one attribute keeps the
    other: the slot is one attribute, seed 002 §3.2 lists home, work, family... as
    separate attributes):

    - ``older`` names where the user is (:data:`_PLACE` in a clause not about someone
      else of the user's: :func:`about_someone`; or a commute's route:
      :data:`_ROUTE`) and ``new`` neither fills ``residence`` nor names a place: "我在深圳
      一家电商公司做后端" stays beside "我跳槽了，现在在一家游戏公司做服务端" (the job
      changed, the city did not), unless ``new`` names its new workplace (:data:`_NEW_WORKPLACE`)
      and ``older`` names no city around its own (:data:`_CITY_OF_WORK`: "在博世做销售");
      "I live in Lisbon" is retired by "we relocated to Berlin";
    - ``new`` is a promotion (:data:`_PROMOTION`) and ``older`` a work statement that is
      no promotion: the employer stays;
    - ``older`` says the user retired and ``new`` says it again ("our first proper holiday
      since I retired" after "I'm a retired primary teacher": :data:`_RETIRED`), not that they
      went back to work (:data:`_UNRETIRED`): nothing changed;
    - ``new`` states a child's grade or stage and names no school, and ``older`` names the
      school (:data:`_SCHOOL_NAMED`: "四年级了" keeps "转学去了实验小学"): the school stays;
    - ``new`` says who the advisor is now and nothing else of the studies (:func:`_advisor_only`),
      and ``older`` states the programme (degree, year, major) besides: the programme stays;
    - ``new`` is a study statement naming no university (:data:`_INSTITUTION`: "switched
      courses, doing history now") and not a leaving (:data:`_LEFT_STUDY`), and ``older``
      names one ("a law student at Edinburgh"): the university stays;
    - ``new`` is a work statement naming no occupation (:data:`_OCCUPATION_ANY`: a new
      employer, a transfer) and no end of work (:data:`_WORK_ENDED`), and ``older`` names
      the occupation and no retirement ("I'm a data scientist at a fintech startup", "在西安做医疗器械销售"):
      the occupation stays;
    - ``new`` changes the shift only and ``older`` states the job ("我开出租的，白班") or the unit it
      is worked in (:data:`_WORK_UNIT`: "i work nights in ICU"): the job stays;
    - ``new`` fills ``vehicle`` only by the commute, naming no vehicle and no means of travel
      (:data:`_VEHICLE_NAMED`, :data:`_MEANS`: "搬亦庄了以后去西二旗通勤太远了" after "旧车卖了换了理想L7"):
      how long the commute is says nothing of the car, which stays;
    - ``new`` fills ``residence`` only by talking about the move itself
      (:data:`_THE_MOVE`: "搬家全靠我一个人"): it names no new home;
    - ``new`` states the home ``older`` states, the same place (:data:`_HOME_AT`: "since im
      based in bath" after "based in bath but most of my couples book barns in the
      cotswolds"): the value is said again, nothing changed, as with retirement above.

    Linear in the texts' length."""
    if "residence" in new_slots and not _PLACE.search(new) and "residence" not in slots_of(_THE_MOVE.sub(" ", new)):
        return True
    if "residence" in new_slots and (home := _home_at(new)) and home == _home_at(older):
        return True
    if "work" in new_slots and _PROMOTION.search(new) and not _PROMOTION.search(older):
        return True
    if "work" in new_slots and _RETIRED.search(older) and _RETIRED.search(new) and not _UNRETIRED.search(new):
        return True
    if any(n.startswith("school") for n in new_slots) and _SCHOOL_NAMED.search(older) and not _SCHOOL_NAMED.search(new):
        return True
    if "study" in new_slots and _advisor_only(new) and "study" in slots_of(_ADVISOR.sub(" ", older)):
        return True
    if "study" in new_slots and _INSTITUTION.search(older) and not _INSTITUTION.search(new) and not _LEFT_STUDY.search(new):
        return True
    if "work" in new_slots and _OCCUPATION_ANY.search(older) and not _OCCUPATION_ANY.search(new) and \
            not _WORK_ENDED.search(new) and not _RETIRED.search(older):
        return True
    if "shift" in new_slots and "work" not in new_slots and ("work" in slots_of(older) or _OCCUPATION_ANY.search(older)
                                                              or _WORK_UNIT.search(older)):
        return True
    if "vehicle" in new_slots and _VEHICLE_NAMED.search(older) and not _VEHICLE_NAMED.search(new) and not _MEANS.search(new):
        return True
    if "residence" in new_slots or _PLACE.search(new) or \
            ("work" in new_slots and _NEW_WORKPLACE.search(new) and not _CITY_OF_WORK.search(older)):
        return False
    own = [piece for piece in _SLOT_PIECE.split(older) if piece.strip() and not about_someone(piece)]
    return any(_PLACE.search(piece) for piece in own) or bool(_COMMUTE.search(older) and _ROUTE.search(older))


#: Words a slot is said with that name no value of it (the verbs of living, moving and working,
#: the kind of place, workplace or vehicle, the frame of studies or a school stage; 搬, 住, 工作,
#: 公司, 车, 上班, 读, 方向),
#: Chinese time words and adverbs (现在, 以后, 刚), laughter (哈哈), the people of the user's (女朋友, 闺女, 孙子: whose value it
#: is, not the value) and Cantonese function characters (嘅 咗 喺 系 唔 佢 啲 冇: the grammar
#: :data:`gateway.memorization.changes.FUNCTION_ZH` leaves out): :func:`says_again`
#: blanks them before it reads a value term, so "we moved to Denver" and "since I'm in Denver"
#: share Denver, not "move" or "live", and 在杭州一家公司 and 换了家公司 share nothing.
_CUE_EN = re.compile(r"\b(?:live[sd]?|living|based|settled|mov(?:e|ed|es|ing)|relocat\w*|home|house|place|apartment|flat|condo|"
                     r"city|town|area|neighbou?rhood|work(?:s|ed|ing)?|jobs?|company|office|employer|role|position|team|"
                     r"boss|career|shifts?|cars?|vehicles?|drive|drives|driving|commut\w*|school|class|grade|stud(?:y|ies|ying)|"
                     r"student|course|degree|major(?:ing)?|thesis|research|diet|eat(?:s|ing)?|partner|relationship)\b", re.IGNORECASE)
_CUE_ZH = re.compile(r"搬家|搬|迁|住|定居|安家|落户|房子|小区|工作|上班|下班|公司|单位|入职|岗位|职位|行业|同事|"
                     r"车子|车|辆|台|开|通勤|学校|上学|读|年级|专业|方向|研究|课题|导师|论文|做|当|在|"
                     r"现在|如今|目前|最近|今年|去年|今天|每天|平时|[今呢这上下]个?月|时候|[以之然]后|后来|刚|才|又|"
                     r"[哈呵嘿嘻]{2,}|" + _PEOPLE_ZH + "|" + KIN_BARE_ZH + r"|朋友|同学|"
                     r"[嘅咗喺系唔佢啲冇咁咩嘢]")
#: The places and names an English statement gives its value by: a capitalised word inside the
#: sentence (not "I", a month, a weekday or a language), the word after "in / at / near /
#: outside" (a lower-case place: "based in bath"), a number, and the slot's own value words (an
#: occupation, a car make, a shift, a diet, a school grade; not the kind of vehicle).
_VALUE_EN = re.compile(
    r"(?<=[a-z,;:'\"]\s)(?!(?-i:I|I'm|I've|I'd|I'll)\b|(?:" + "|".join((*MONTH_NAMES, *WEEKDAY_NAMES, *LANGUAGE_NAMES)) + r")\b)"
    r"(?-i:[A-Z][\w'-]+)"
    r"|\b(?:in|at|near|outside)\s+(?!(?:a|an|the|my|our|this|that|some|least|all|home|work|school)\b)[a-z][\w'-]{2,}"
    r"|\d+|\b(?:" + OCCUPATIONS_EN + "|" + CAR_MAKES_EN + "|" + SHIFTS_EN + "|" + GRADE_EN +
    r"|vegetarian|vegan|pescatarian|plant-based|keto|carnivore)\b", re.IGNORECASE)
#: A newer statement that says the value changed, whatever it shares with the older: where it
#: came from ("moved from Denver to Boston", 从上海搬到杭州, 以前 / 之前 / 原来; "moved out of",
#: 搬出宿舍: the place named is the one left), a step up (考上, 升, "promoted"), a new one of
#: the slot's things ("new job", "new place", 新工作, 新家, 新车), or a switch (换, 跳槽, 辞职,
#: 转行, "switched", "traded", "quit"): the value it names is another.
_CHANGE_SAID = re.compile(r"\bfrom\b|从|以前|之前|原来|原先|\bused\s+to\b|\bformer(?:ly)?\b|\bno\s+longer\b"
                          r"|\b(?:moved|moving|move)\s+(?:out|away)\b|搬(?:出|离|走)|考上|考进|考取|升(?!级版)|\bpromoted\b|\bgot\s+into\b"
                          r"|\bnew\s+(?:\w+\s+)?(?:job|role|position|gig|employer|company|place|home|house|apartment|flat|city|"
                          r"town|car|truck|ride|school|boss|team|shift)\b|新(?:工作|岗位|公司|单位|家|房|住处|城市|车|学校|老板)"
                          r"|\b(?:switch\w*|swapp?\w*|trad(?:ed|ing)|chang(?:ed|ing)|replac\w*|upgrad\w*|quit|resign\w*|fired|laid\s+off|"
                          r"sold|left)\b|换|跳槽|辞|离职|转行|改行|卖|退", re.IGNORECASE)
#: A move or a transfer with where it takes the user ("moved to Boston", "got transferred to
#: Leeds", "joined Acme", 搬到杭州, 调去重庆, 入职了华为): the words right after the verb (at most
#: four, or five characters: the destination's noun phrase, "到儿子家住电梯房了" names 儿子家) are
#: the new value, which :func:`says_again` requires the older statement to hold.
_MOVE_TO = re.compile(r"\b(?:mov(?:e|ed|ing)|relocat(?:e|ed|ing)|transferred|joined|started\s+at|settled)\b"
                      r"(?P<en>(?:\s+[^\s,.;!?]+){1,4})"
                      r"|(?:搬|迁|调|派|入职|加入)(?P<zh>[^，。；！？,.;!?\s]{1,5})", re.IGNORECASE)


def _values(text: str, school: bool = False) -> frozenset[str]:
    """The value terms of a statement ``text`` (:func:`says_again`): its cue words blanked
    (:data:`_CUE_EN`, :data:`_CUE_ZH`), the content terms
    (:func:`gateway.memorization.changes.terms`) of its English value words (:data:`_VALUE_EN`)
    and of its Chinese (each content bigram, not a lone character; a Latin word in a Chinese
    text: "UI"); for a ``school`` statement only the stages, grades and schools it names
    (:data:`_SCHOOL_VALUE`: the child named is whose school it is, not its value)."""
    if school:
        return frozenset(m.group().casefold() for m in _SCHOOL_VALUE.finditer(text))
    english = " ".join(m.group() for m in _VALUE_EN.finditer(text))
    out = set(terms(_CUE_EN.sub(" ", english)))
    if _CJK.search(text):
        out |= {t for t in terms(_CUE_EN.sub(" ", _CUE_ZH.sub(" ", text))) if len(t) > 1}
    return frozenset(out)


#: A child's school stage, grade or school named (:data:`_SCHOOL`, :data:`_SCHOOL_NAMED` less the
#: verbs): the value of the ``school`` slot.
_SCHOOL_VALUE = re.compile(r"小学|初中|高中|大学|幼儿园|托班|[初高][一二三](?![十百点些倍截头])|[一二三四五六]年级"
                           r"|(?<![上读升进考念初高])[\u4e00-\u9fff]{1,5}?(?<![上读升进考念在])(?:小学|中学|附小|附中)|[一二三四五六七八九十]{1,2}[小中](?![学])"
                           r"|\b(?:kindergarten|preschool|pre-k|daycare|elementary|middle\s+school|high\s+school|junior\s+high|"
                           + GRADE_EN + r"|freshman|sophomore)\b"
                           r"|\b(?-i:[A-Z])[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+){0,2}\s+(?:primary|elementary|academy|school|high)\b",
                           re.IGNORECASE)
#: Slots whose value is a status the slot's own words say (dating, engaged, married, 分手;
#: trying, pregnant, born): a name said again there is the partner or the baby
#: (:func:`keeps_partner`), not the value, so :func:`says_again` reads no repeat in them.
_STATUS_SLOTS = ("relationship", "pregnancy")


#: Words that set a statement against what held before (now, these days, again, any more,
#: 现在, 如今, 又, 重新, 开始): a statement of a slot that names no value but one of these says a
#: change ("I'm freelancing now", "I eat meat again", 现在在家带娃), not a mention.
_CONTRAST = re.compile(r"\b(?:now|these\s+days|nowadays|any\s?more|again|currently|at\s+the\s+moment|back\s+to|"
                       r"start(?:ed|ing)?|began|begun|instead)\b|现在|如今|目前|又|再|重新|开始|回到|改", re.IGNORECASE)
#: Slots whose statements name their value by what they are about, not by a name or a place:
#: a diet is what is eaten ("I eat meat", 吃肉), so a diet statement with no diet word is no
#: mention of the older one.
_VALUED_SLOTS = ("diet",)


#: The school level a grade belongs to (小学 for 一..六年级, 初中 for 初一..初三, 高中 for 高一..高三;
#: elementary / middle / high school for US grades 1-5 / 6-8 / 9-12): a level said after a grade
#: of it names the same stage less precisely ("仔仔升咗一年级" then "啱啱读小学嘅细路"), not a new one.
_LEVEL_OF_ZH = (("小学", re.compile(r"[一二三四五六]年级")), ("初中", re.compile(r"初[一二三]")), ("高中", re.compile(r"高[一二三]")))
_LEVEL_OF_EN = (("elementary", re.compile(r"\b(?:[1-5](?:st|nd|rd|th)|first|second|third|fourth|fifth)\s+grade\b", re.IGNORECASE)),
                ("middle school", re.compile(r"\b(?:[6-8]th|sixth|seventh|eighth)\s+grade\b", re.IGNORECASE)),
                ("high school", re.compile(r"\b(?:9th|1[0-2]th|ninth|tenth|eleventh|twelfth)\s+grade\b", re.IGNORECASE)))
#: A school stage left ("毕业", "graduated"): a level said with it is the stage ended, a change.
_STAGE_LEFT = re.compile(r"毕业|\bgraduat\w*", re.IGNORECASE)


def _levels(values: frozenset[str]) -> frozenset[str]:
    """``values`` (school values, :data:`_SCHOOL_VALUE`) with the level of each grade added
    (:data:`_LEVEL_OF_ZH`, :data:`_LEVEL_OF_EN`), case-folded."""
    out = set(values)
    for value in values:
        for level, grade in (*_LEVEL_OF_ZH, *_LEVEL_OF_EN):
            if grade.fullmatch(value):
                out.add(level)
    return frozenset(out)


def says_again(new: str, new_slots: tuple[str, ...], older: str) -> bool:
    """``new`` (filling ``new_slots``) says again the value an older statement ``older`` of
    the same slot gave, so it retires nothing: the slot is one attribute with one value
    (seed 002 §3.2), and a statement that names the same value is a repeat, not a change
    ("since I'm in Denver" after "we moved to Denver three weeks ago", "我那台比亚迪充电挺方便的"
    after "换了台比亚迪汉", "急诊科…我自己夜班都顶唔顺" after "我系急诊科护士 夜班…"). The value
    is what the slot holds: the place of a home; the employer, occupation, unit or city of
    work; the make of a vehicle; the diet, the shift, the university or major; a child's stage,
    grade or school (:data:`_SCHOOL_VALUE`). True when

    - the two share a value term (:func:`_values`): a name, a place, a brand, a number, an
      occupation, a shift or a diet word, or a Chinese content bigram, not a word the slot is
      said with ("live", "work", 搬, 住, 工作, 公司: :data:`_CUE_EN`, :data:`_CUE_ZH`), and
    - ``new`` says no change: no ending (:func:`gateway.memorization.changes.ended_of`), no
      former value, step up, new thing or switch (:data:`_CHANGE_SAID`), and no move whose
      destination ``older`` does not hold (:data:`_MOVE_TO`: "moved to Boston" after "I live
      in Denver"; "moved to Denver" after "we're moving to Denver" says it again), and
    - the slot is not a status (:data:`_STATUS_SLOTS`).

    A newer statement that names no value at all ("I've just come off three nights on the
    labour ward" after "I'm a midwife on the labour ward at St Mary's": the slot's cue words
    only) and says no change is a mention of the slot, not a new value, so it retires nothing
    either, unless it sets itself against before (:data:`_CONTRAST`: "now", "again", 现在, 又:
    "I'm freelancing now") or its slot names its value by what it is about (:data:`_VALUED_SLOTS`:
    "I eat meat" after "I'm vegetarian").

    Limits: the value is read as words, not understood: a brand said again with another model
    ("比亚迪海豹" after "比亚迪汉", without 换) or another district of the same city is read as
    the same value; a change said with none of the cues ("I'm in Boston now" after "I live in
    Boston and work in Denver", shared Boston) keeps the older, and so does a change that
    names no value and no contrast ("I work from home" after "I work at Acme"); a repeat that
    names the value in other words ("the Mile High City" after "we live in Denver") retires as
    before. Linear in the texts' length."""
    if not new_slots or any(slot in _STATUS_SLOTS for slot in new_slots) or ended_of(new) or _CHANGE_SAID.search(new):
        return False
    school = all(slot.startswith("school") for slot in new_slots)
    mine = _values(older, school)
    said = _values(new, school)
    if not said and (_CONTRAST.search(new) or any(slot in _VALUED_SLOTS for slot in new_slots)):
        return False  # "I eat meat again", "I'm freelancing now": said against before, or a diet named by what is eaten
    if school and said and not said & mine and not _STAGE_LEFT.search(new) and \
            (said <= _levels(mine) - mine or mine <= _levels(said) - said):
        return True  # a level said after a grade of it, or the reverse: the same stage, named less or more precisely
    if said and not said & mine:
        return False
    for move in _MOVE_TO.finditer(new):
        if not _values(move.group("en") or move.group("zh") or "") & mine:
            return False
    return True


#: Slots a sentence about someone else of the user's can still fill: "my girlfriend
#: Zoe..." says the user is in a relationship; "she was born on May 3rd" ends a pregnancy.
_SHARED_SLOTS = ("relationship", "pregnancy")


def slot_of(text: str) -> str | None:
    """The supersede slot a durable statement fills (``residence``, ``work``, ``study``,
    ``diet``, ``relationship``, ``vehicle``, ``pregnancy``, ``shift``), or None. Read clause by clause
    (:data:`_SLOT_PIECE`), the first slot found wins; a clause led by "my
    <someone>" / 我<家人> or a pronoun (or, with no subject of its own, following such a
    clause) is about that person, unless the user is the object ("they made me
    manager": :data:`_ME_OBJECT`): it fills only
    :data:`_SHARED_SLOTS`, or ``school`` / ``school:<son|daughter|grandson|granddaughter>``
    when it says a child's school stage (:data:`_SCHOOL`: "我女儿上初二" -> ``school:daughter``,
    "朵朵考上一中了" -> ``school``; compare two slots with :func:`same_slot`)."""
    someone = about_someone(text)
    if _SCHOOL.search(_TAUGHT_CLASS.sub(" ", text)) and (someone or (bool(_CJK.search(text)) and not FIRST_PERSON_ZH.search(core_zh(text)))):
        who = [key for key, pattern in _SCHOOL_WHO if pattern.search(text)]
        return f"school:{who[0]}" if len(who) == 1 else "school"
    found = slots_of(text, first=True)
    return found[0] if found else None


@lru_cache(maxsize=4096)
def slots_of(text: str, first: bool = False) -> tuple[str, ...]:
    """Every slot of :data:`_SLOTS` a statement fills, in order (:func:`slot_of` reads the
    first; ``first``: stop there). A transfer by the employer to a place
    (:data:`_TRANSFER`: "公司把我调到重庆了", "I got transferred to Denver") fills
    ``work`` and ``residence``: it changes where the user works and lives; one to a
    department ("调去门诊") neither (the occupation and the home stay). Linear in ``len(text)``;
    cached (a pure function of the text, asked for the same clause and memory several
    times while a turn is analysed)."""
    out: list[str] = []
    led = False  # the clause before was led by someone of the user's
    for piece in _SLOT_PIECE.split(text):
        piece = _to_come_masked(_attributive_masked(_ORG_MOVE.sub(" ", piece)))
        core = core_zh(core_en(piece))
        if not core:
            continue
        own = _OWN_SUBJECT.match(core)
        if _REPORTED.match(core):
            led = True  # "隔篱铺嘅老板话下个月搬去佛山": what someone else says is theirs
        elif own:
            led = about_someone(piece) and not _EXPLETIVE.match(core) and not _ME_OBJECT.search(piece)
        mine = not led  # a clause with no subject of its own has the one before ("my sister got a job, now works at Globex")
        if _FORMER.search(piece):
            continue  # "I used to live in Paris": a former value, no current one
        for name, pattern in _SLOTS:
            if (mine or name in _SHARED_SLOTS) and name not in out and pattern.search(piece):
                if name == "study" and _advisor_only(piece) and not _ADVISOR_NAMED.search(piece):
                    continue  # "my supervisor gave me till June": the advisor is mentioned, not said
                out.append(name)
                if first:
                    return tuple(out)
        if mine:
            transfer = _TRANSFER.search(piece)
            if transfer:
                if not (transfer.group("unit") or transfer.group("dept")):  # to a department: the job and home stay
                    out.extend(n for n in ("work", "residence") if n not in out)
    return tuple(out)


#: A slot word premodifying another noun inside a noun phrase ("adopted a retired racing
#: greyhound", "the stairs in my student room", "made a vegan lasagne", "give me a plant-based
#: version"): an attributive
#: adjective or noun adjunct describes the head noun (Quirk et al. 1985 on attributive
#: adjectives and on nouns as premodifiers), not the subject, so it fills no slot of the
#: user's. Not after a copula or "as", where the noun phrase is the subject's complement
#: ("I'm a retired nurse", "work as a student nurse": :data:`_COPULA_EN`).
_ATTRIBUTIVE_EN = re.compile(r"\b(?P<lead>[\w']+)\s+(?:a|an|the|my|our|his|her|their|this|that|some)\s+(?:[\w-]+\s+){0,2}?"
                             r"(?:retired|student|vegan|vegetarian|pescatarian|plant-based|keto)\s+(?!(?:at|in|of|from|to|and|or|but|now|here|with|for|"
                             r"since|until|lol|tbh|too|though|anymore|again)\b)(?=[a-z])", re.IGNORECASE)
_COPULA_EN = frozenset(("am", "i'm", "im", "is", "are", "was", "were", "be", "been", "being", "as", "become", "became",
                        "becoming", "she's", "he's", "we're", "they're", "you're"))


def _attributive_masked(piece: str) -> str:
    """``piece`` with the slot words that only premodify a noun blanked (:data:`_ATTRIBUTIVE_EN`). Linear."""
    def blank(m: re.Match[str]) -> str:
        lead = m.group("lead")
        return m.group() if lead.lower() in _COPULA_EN else lead + " " * (len(m.group()) - len(lead))

    return _ATTRIBUTIVE_EN.sub(blank, piece)


#: A move of the place the user works or studies at, not of their home ("学院搬到东校区以后",
#: "the office moved to Leeds"): the organisation is the subject of the verb of moving, so
#: the sentence names no home of the user's; :func:`slots_of` reads the clause without it.
_ORG_MOVE = re.compile(r"(?:学院|学校|校区|公司|单位|办公室|部门|工厂|门店|总部|工作室|实验室|研究所|科室|医院|店里|店)"
                       r"(?:也|已经|都|又|整体|整个)?(?:搬|迁)(?:到|去|来|走)了?(?:[\u4e00-\u9fff]{1,6}?(?:以后|之后|后|了))?"
                       r"|\b(?:the|our|my)\s+(?:office|company|firm|school|lab|department|team|shop|store|clinic|campus|college|"
                       r"faculty|headquarters|hq|studio|practice)\s+(?:has\s+|is\s+|just\s+)?(?:moved|relocated|moving|relocating)"
                       r"(?:\s+(?:to|into)\s+(?:the\s+)?[\w'-]+(?:\s+(?-i:[A-Z])[\w'-]+)?)?", re.IGNORECASE)
#: The advisor, a study attribute of its own (seed 002 §3.2 lists attributes apart): who
#: supervises the user's degree, apart from the programme (degree, year, major,
#: university) a statement may say beside it.
_ADVISOR = re.compile(r"\b" + ADVISOR_EN + r"\b|导师", re.IGNORECASE)
#: A statement that says who the advisor is or that they changed ("my supervisor is Dr
#: Okafor", "switched supervisors", "换导师了", "新导师做推荐系统", "转到王老师名下"): only
#: such an advisor statement fills ``study`` (:func:`slots_of`); a mention ("my
#: supervisor gave me till June", "导师让我改论文") states no value of the slot.
_ADVISOR_NAMED = re.compile(r"\b(?:advisor|adviser|supervisor)\s+(?:is|was|will\s+be|now\s+is)\b|\bnew\s+(?:advisor|adviser|supervisor)\b"
                            r"|\b(?:switched|changed|swapped)\s+(?:my\s+)?(?:advisors?|advisers?|supervisors?)\b"
                            r"|换了?(?:个|一个)?导师|新导师|导师(?:是|叫|换)|名下", re.IGNORECASE)


_STUDY = dict(_SLOTS)["study"]


def _advisor_only(text: str) -> bool:
    """``text`` fills ``study`` by an advisor word alone (:data:`_ADVISOR`): without it, no
    study word is left. Linear in ``len(text)``."""
    return bool(_ADVISOR.search(text)) and not _STUDY.search(_ADVISOR.sub(" ", text))


#: A state to come, in a temporal clause with future reference ("once we're married", "when
#: we get married", "after I start at Acme", 等我们结婚了, 等搬到杭州以后): English puts the
#: future of such a clause in the present tense (Quirk et al. 1985, 4.27 and 15.25 on temporal
#: clauses), and the clause is not asserted, so it names no current value. A past verb in it
#: ("since we got married", "after we moved to Denver", "when I was laid off") asserts what
#: happened, as before; a participle after a present copula or "get" ("once we're married",
#: "when we get engaged") is the state to come. "when" counts only before we / I + a copula or
#: "get" / "become" (a habitual "when my shift ends" asserts a habit). :func:`slots_of` blanks
#: such a clause, to the next punctuation.
_TO_COME_EN = re.compile(r"\b(?:once|after|before|until|till|as\s+soon\s+as|when(?=\s+(?:we|i)(?:'re|'m|\s+(?:are|am|get|become)\b)))"
                         r"\s+[^,.;!?]*", re.IGNORECASE)
_PAST_EN = re.compile(r"\b(?:was|were|got|had|did|went|came|left|became|began|took|made|found|gave)\b"
                      r"|(?<!\bare\s)(?<!'re\s)(?<!\bam\s)(?<!'m\s)(?<!\bis\s)(?<!'s\s)(?<!\bbe\s)(?<!\bget\s)(?<!\bgets\s)"
                      r"\b\w+ed\b", re.IGNORECASE)
_TO_COME_ZH = re.compile(r"等(?:我|我们|咱|咱们|俺|俺们|他|她|他们)?[^，。！？,.!?；;]{1,12}?(?:了|以后|之后|后)")


def _to_come_masked(piece: str) -> str:
    """``piece`` with its temporal clauses of a state to come blanked (:data:`_TO_COME_EN`
    with no past verb, :data:`_TO_COME_ZH`). Linear."""
    def blank(m: re.Match[str]) -> str:
        return m.group() if _PAST_EN.search(m.group()) else " " * len(m.group())

    return _TO_COME_ZH.sub(lambda m: " " * len(m.group()), _TO_COME_EN.sub(blank, piece))


#: A former state ("used to live in Paris", "I used to be a nurse"): "used to" says it
#: held once and no longer does (Quirk et al. 1985, 4.23), so it names no current value of
#: a slot and retires none.
_FORMER = re.compile(r"\bused\s+to\b", re.IGNORECASE)
#: A transfer by the employer (Chinese 调到 / 调去 / 派到, a rotation 轮岗轮到 / 轮转到, English "transferred to"),
#: ``unit`` / ``dept``: to a unit of the organisation (科 部 门诊 组 岗 处 室 中心 分行 ...: a
#: department, not a place) or to a shift (调到夜班, "transferred to nights": the schedule
#: changes, the job and the home stay).
_TRANSFER = re.compile(r"(?:调|派|外派|调动|轮岗轮?|轮转)(?:到|去|往)(?:了)?(?P<unit>\S{0,6}?(?:科|部|门诊|组|岗|处|室|中心|分行|支行|病房|车间|项目)"
                       r"|上?" + SHIFTS_ZH + r")?"
                       r"|\b(?:got\s+|been\s+|was\s+)?transferred\s+to\b(?P<dept>\s+(?:the\s+)?\w+\s+(?:team|department|dept|unit|ward|desk)"
                       r"|\s+(?:the\s+)?" + SHIFTS_EN + r"\b)?",
                       re.IGNORECASE)


#: Where :func:`slot_of` cuts a statement into clauses, each with its own subject ("our
#: drummer moved to Calgary" is not the user's move; in "Well, it's done — our new condo
#: is near our daughter in Portland" the home is).
_SLOT_PIECE = re.compile(r"[,.;:!?，。；：！？\n]+|\s+[—–-]{1,2}\s+|—")
#: A clause that names its own subject: the user, someone of the user's (a bare Chinese
#: person word too: :data:`gateway.memorization.clauses._KIN_LED_ZH`), a pronoun or a name.
_OWN_SUBJECT = re.compile(r"(?:i|i'm|im|i've|i'd|we|we're|we've|my|our|me|he|she|they|he's|she's|they're|his|her|their|"
                          r"it|it's)\b|(?-i:[A-Z][a-z]+)\s|我|咱|俺|他|她|它|" + _PEOPLE_ZH, re.IGNORECASE)
#: A clause that reports what someone else says (a role, a relation or a name, bare or in a
#: possessive noun phrase, + 话 / 说 / 讲 / says / said / told me: "隔篱铺嘅老板话下个月搬去佛山",
#: "房东说要卖房", "my neighbour says she's moving to Leeds"): reported speech is the reporter's
#: proposition (Quirk et al. 1985, 14.31 on reporting clauses), so a move or a job it tells is
#: theirs, not the user's; :func:`slots_of` reads it as led by someone else.
#: Not when what is reported has the user as its subject ("老板说我下个月调去佛山", "my boss
#: said i'm moving to days").
_REPORTED = re.compile(r"(?!我|咱|俺|你|您)(?:[\u4e00-\u9fff]{1,6}?(?:嘅|的))?[\u4e00-\u9fff]{0,3}?"
                       r"(?:" + _PEOPLE_ZH + r"|老细|同事|朋友|邻居|房东|医生|大夫|老师|经理|客人|街坊|师傅|店主|东家|老乡|同学|亲戚|"
                       r"阿[\u4e00-\u9fff])[\u4e00-\u9fff]{0,2}?(?:话|说|讲|講)(?!话|说|我|咱|俺)"
                       r"|(?:(?:the|my|our|a|his|her|their)\s+)?(?:[\w'-]+\s+){0,2}?(?:boss|landlord|landlady|neighbou?rs?|doctor|"
                       r"owner|friend|mate|buddy|colleague|coworker|manager|teacher|client|customer|" + PEOPLE_EN + r")"
                       r"\s+(?:says|said|told\s+me|reckons|thinks)\b(?!\s+(?:that\s+)?(?:i|i'm|im|we|we're|my|our)\b)", re.IGNORECASE)
#: The user as the object of what someone did to their work or home ("they made me
#: finance manager", "公司把我调到重庆了") or the shift they were put on ("they've put me on
#: lates", "领导排我上夜班": SHIFT_ASSIGNED_EN / _ZH): the slot is still the user's.
_ME_OBJECT = re.compile(r"\b(?:made|hired|promoted|fired|moved|transferred|offered|gave|let)\s+me\b|把我|"
                        + SHIFT_ASSIGNED_EN + "|" + SHIFT_ASSIGNED_ZH, re.IGNORECASE)
#: "it's" / "it" with no one behind it ("Well, it's done"): no person leads the clause.
_EXPLETIVE = re.compile(r"(?:it|it's|its)\b", re.IGNORECASE)


def same_slot(a: str | None, b: str | None) -> bool:
    """Two memories' slots (:func:`slot_of`) are one: equal, or both ``school`` and one of
    them not keyed by whose school it is ("朵朵考上一中了" and "我女儿上初二")."""
    if not a or not b:
        return False
    if a == b:
        return True
    base_a, _, who_a = a.partition(":")
    base_b, _, who_b = b.partition(":")
    return base_a == base_b == "school" and not (who_a and who_b)
