"""Life topics of a text by cue lexicons (English and Chinese), sans-IO.

:func:`topics_of` names the topics of the user's life a request or a memory is about:
the same lexicon reads both sides, so "I have a vet appointment tomorrow" (``pets``) meets
"my cat Pepper has been throwing up" (``pets``) although an embedder scores the pair low,
and "小宝宝晚上老哭咋办" (``kids``) meets "外孙刚满月" (``kids``) although an English-only
embedder ranks Chinese by chance. :mod:`plugins.auto_recall` uses it to choose which
lasting facts reach the prompt (seed 002 §3.2: the profile holds the user's basic
attributes and likes; a request rarely names the attribute it needs).

The topics are the kinds of user information seed 000 P3 and seed 002 §5 call the
profile (family, partner, children, pets, health, diet, home, work, studies, getting
around, travel, pastimes, money, occasions), the same kinds verbatim formation keeps
(:mod:`gateway.memorization.disclosure`); a request word that needs one of them without
naming it maps to it ("nearby", "附近", "what should I wear" need where the user lives;
"vet" the pet; "meds" the user's health; a condition that limits what the user eats,
an allergy, diabetes, 痛风, is diet as well as health: "what should I order at brunch?"
needs "I'm prediabetic"; likewise a physical activity, hiking, lifting, 爬山, 跑步, is health as
well as a pastime: "is it ok to start lifting again?" needs the bad shoulder). Cues come as
word classes, not single words: family roles ("the boys", 老大, 二宝, 小朋友) are kids; a household
("family", 一家三口, 全家) is kids and partner; body parts, medical tests and sleep hours (shoulder, MRI, 核磁,
胃, 熬夜) are health; education levels (bachelor's, diploma, 本科, 大专, 自考) are studies; work status
(复工, 产假, 退休, 打工), workplace units (部门, 科室, 学工, 教务), occupations and trades (barista, electrician, 辅导员, 广告)
and a business the user runs (民宿, 接单, 客户) are work, a guesthouse (民宿, 客栈) home as well; school
administration and student life (certifications, 奖学金, 学分, 挂科, 军训) are studies; a route (routes, 路线)
starts where the user is: home and travel; a cot or crib is a baby's (kids); "animals" and breeds (collie, greyhound, 边牧, 萨摩耶) are pets; letting
property (rentals, tenants, 租客) is home and money. English
cues match whole words or two-word phrases, any case (a cue ending in ``*`` any word it starts; a hyphen reads as a space:
"road-trip" is "road trip"); Chinese cues match anywhere in a run of Chinese characters
(Chinese has no spaces). A text may have several topics or none ("thanks!", "爱你").

Cost: one pass over the words and the Chinese characters, with a few dictionary look-ups
where a cue can start (:func:`topics_of`), so linear in the text's length; texts are cut
to :data:`MAX_CHARS` first. About 0.02-0.06 ms for a memory of a sentence or two.
"""

from __future__ import annotations

import functools
import re

__all__ = ["MAX_CHARS", "TOPICS", "names_of", "topics_of", "words_of"]

#: Longest text read (characters): a request's topics are in its first lines, a memory
#: is a sentence or two.
MAX_CHARS = 1000

_EN: dict[str, str] = {
    "partner": "family wife husband partner spouse boyfriend girlfriend bf gf fiance fiancee fiancé fiancée hubby married "
               "marriage wedding anniversary divorce* dating date-night breakup broke-up ex",
    "kids": "cot cots crib cribs bassinet family boy boys girl girls kid kids kiddo child children son sons daughter daughters baby babies toddler* twins infant newborn teen "
            "teenager* preschool* pre-k kindergarten daycare nursery stroller diaper* nappy nappies nanny babysit* "
            "grandkid* grandchild* grandson* granddaughter* parenting playdate",
    "family": "mom mum mother mama dad father papa parents brother brothers sister sisters sibling* grandma grandmother "
              "grandpa grandfather grandparents in-law in-laws aunt uncle cousin* nephew niece family relatives",
    "pets": "collie greyhound* spaniel* whippet* lurcher* staffie* bulldog* pug schnauzer* sheepdog* labradoodle* cockapoo* chihuahua* rottweiler* dalmatian* doberman* pomeranian* shih-tzu maine-coon ragdoll siamese gerbil* ferret* tortoise* goldfish animal animals critters pup pups pooch moggy pet pets dog dogs doggo puppy puppies cat cats kitty kitten* vet vets veterinar* beagle corgi labrador "
            "retriever terrier poodle husky dachshund hamster rabbit bunny parrot budgie guinea-pig aquarium kibble litter leash "
            "neuter* spay*",
    "health": "running jog jogging gym workout* exercise yoga pilates swim swimming hike hiking climbing lifting marathon mri x-ray xray scan scans ultrasound bloodwork biopsy shoulder* neck wrist* ankle* elbow* stomach tooth teeth doctor doctors gp dentist hospital clinic nurse meds medication* medicine* pill pills prescription* "
              "diagnos* allerg* asthma* diabet* prediabet* insulin metformin blood-pressure cholesterol surgery surgeon "
              "operation injur* pain knee knees back-pain hip fracture sprain* physio* therapy therapist anxiety "
              "depression migraine* headache* symptom* sick ill illness flu cough fever vaccine* checkup "
              "check-up pregnan* prenatal trimester ob-gyn thyroid celiac coeliac gluten lactose sleep "
              "insomnia tired exhausted wiped health healthy eyesight glasses contacts smoke smoking smoker cigarette* vape vaping",
    "diet": "eat eating eats food foods meal meals cook cooking recipe* dinner lunch breakfast brunch snack* diet "
            "vegetarian vegan veggie pescatarian keto halal kosher gluten dairy lactose allerg* peanut* nut nuts "
            "shellfish seafood meat fish pork beef chicken egg eggs restaurant* takeout takeaway grocer* menu bake "
            "baking cake drink drinks drinking coffee tea alcohol beer wine sugar sweets spicy coriander cilantro curry "
            "diabet* prediabet* celiac coeliac blood-sugar",
    "home": "route routes rental rentals tenant* property properties lettings home house apartment flat condo live lives living moved move moving neighborhood neighbourhood city town "
            "suburb* nearby near-me local locally area rent renting landlord roommate* flatmate* housemate* "
            "weather wear outfit places spots outing outings housewarming around-here close-by in-town",
    "work": "linkedin certif* barista roaster receptionist chef bartender waiter waitress mechanic electrician plumber carpenter work works working job jobs boss manager colleague* coworker* co-worker co-workers office shift shifts career "
            "promotion raise salary paycheck interview* resume cv company firm client clients meeting* hire "
            "hiring intern* maternity paternity research researcher postdoc onboarding employer employee* coworking business startup freelanc* retire* quit "
            "resign* fired laid-off workplace hr",
    "study": "certif* bachelor* masters ged diploma high-school community-college study studies studying student students school class classes course courses exam exams test tests "
             "degree university uni college major phd thesis dissertation lab homework revision revise learn "
             "learning semester gcse grad tutor* lecture* grades",
    "getting_around": "car cars drive driving driver license licence commute commuting bus buses train subway metro "
                      "tube bike cycling minivan van truck suv parking traffic road-trip scooter boat lorry motorbike motorcycle "
                      "ferry tram",
    "travel": "route routes trip trips travel traveling travelling vacation holiday holidays flight flights fly flying hotel "
              "visit visiting abroad passport pack packing itinerary beach camping road-trip getaway",
    "pastimes": "lifting weights hobby hobbies running race races marathon jog jogging gym workout* exercise yoga pilates "
                "swim swimming hike hiking fishing photography camera guitar piano paint painting watercolor* watercolour* draw drawing pottery ceramics clay knit* garden* reading novel* "
                "book books game games gaming dance dancing climbing tennis soccer football basketball golf "
                "weekend weekends music song band choir sing singing singer concert instrument ukulele drum drums violin fiddle banjo "
                "league bowling",
    "money": "rental rentals tenant* property properties money budget budgeting save saving savings debt loan loans mortgage rent salary invest* bills "
             "expensive cheap afford pension tax taxes expense* accountant bookkeeping invoice* income refund",
    "occasions": "birthday birthdays christmas gift gifts presents celebrate celebration "
                 "anniversary thanksgiving graduation",
}

_ZH: dict[str, str] = {
    "partner": "一家人 一家三口 一家四口 一家五口 全家 老公 老婆 丈夫 妻子 爱人 对象 男朋友 女朋友 男友 女友 未婚夫 未婚妻 结婚 婚礼 纪念日 离婚 分手 约会 "
               "老伴 媳妇 另一半",
    "kids": "小朋友 小家伙 老大 老二 大宝 二宝 俩娃 一家人 一家三口 一家四口 一家五口 全家 孩子 娃 儿子 女儿 闺女 宝宝 小孩 宝贝 幼儿园 托班 小学 上学 孙子 孙女 外孙 带娃 奶粉 尿布 纸尿裤 早教 "
            "育儿 满月 二胎 学区",
    "family": "爸 妈 父母 父亲 母亲 哥哥 姐姐 弟弟 妹妹 爷爷 奶奶 外公 外婆 姥姥 姥爷 婆婆 公公 岳父 岳母 丈母娘 "
              "家人 亲戚 老人 家里人 兄弟姐妹",
    "pets": "边牧 拉布拉多 萨摩耶 博美 比熊 阿拉斯加 德牧 法斗 雪纳瑞 银渐层 狸花 加菲 暹罗 龙猫 宠物 狗 猫 柯基 英短 美短 金毛 泰迪 哈士奇 布偶 柴犬 仓鼠 兔子 鹦鹉 鱼缸 兽医 猫粮 狗粮 遛 铲屎 绝育 驱虫 疫苗",
    "health": "熬夜 作息 早睡 晚睡 通宵 跑步 健身 运动 锻炼 瑜伽 游泳 爬山 马拉松 全马 半马 核磁 拍片 超声 胃镜 化验 肩 颈 胃 牙 医生 医院 看病 药 过敏 哮喘 糖尿病 血糖 血压 胆固醇 手术 疼 痛 腰 膝盖 失眠 睡眠 睡不着 怀孕 孕 "
              "产检 甲减 甲亢 甲状腺 体检 生病 感冒 发烧 咳嗽 症状 头晕 脱发 掉头发 怕冷 冰凉 乏力 身体 健康 "
              "痛风 腰间盘 复查 挂号 中医 吃药 保健 近视 眼镜 隐形 烟 戒烟 抽烟",
    "diet": "吃 饭 菜 做饭 食谱 菜谱 零食 早餐 早饭 午饭 午餐 晚饭 晚餐 饮食 素食 吃素 忌口 过敏 花生 海鲜 辣 "
            "甜 奶茶 咖啡 喝 酒 餐厅 外卖 食堂 口味 营养 减肥 控糖 糖尿病 血糖 痛风 乳糖",
    "home": "民宿 客栈 路线 租客 房产 家 住在 住的 住处 居住 住哪 搬 房子 租房 房租 房东 小区 附近 周边 本地 城市 这边 天气 穿什么 穿啥 室友 去哪 好去处 "
            "哪里玩 哪儿玩 逛 一楼 楼下",
    "work": "民宿 客栈 生意 做生意 经营 接单 客户 行业 广告 辅导员 护士 程序员 设计师 会计 律师 厨师 工程师 销售 客服 学工 教务 部门 科室 车间 打工 复工 返岗 上岗 产假 待业 失业 退休 工作 上班 下班 老板 领导 同事 公司 单位 加班 夜班 白班 倒班 值班 排班 面试 简历 工资 薪水 涨薪 加薪 入职 离职 辞职 跳槽 "
            "实习 招聘 招人 职场 项目 出差 报到 外企 国企 央企 事业单位 编制 滴滴 外卖员 美团 出租 收银 厂 开店 店里 看店 门店",
    "study": "奖学金 助学金 学分 选课 绩点 挂科 学工 教务 学院 校区 军训 辅导员 班主任 本科 专升本 大专 专科 自考 成考 高中 初中 中专 学历 读博 学习 自学 考试 考研 复习 备考 改考 考上 考公 考证 大学 专业 学校 课 上课 论文 作业 读书 留学 日语 英语 研究生 博士 "
             "硕士 导师 毕业 培训 研究",
    "getting_around": "车 开车 地铁 公交 通勤 驾照 骑 自行车 电动车 电瓶车 停车 堵车 自驾 打车",
    "travel": "路线 旅游 旅行 出去玩 机票 飞机 酒店 出国 签证 行李 假期 放假 度假 自驾游 景点 攻略 出差",
    "pastimes": "爱好 跑步 健身 运动 锻炼 瑜伽 游泳 爬山 钓鱼 摄影 拍照 吉他 钢琴 画画 跳舞 广场舞 太极 马拉松 "
                "打球 篮球 足球 羽毛球 乒乓 周末 看书 小说 游戏 全马 半马 比赛 训练",
    "money": "租客 房产 钱 存钱 理财 贷款 房贷 工资 预算 花销 社保 五险一金 省钱 退休金 买房",
    "occasions": "生日 礼物 过年 春节 纪念日 升学宴 婚礼 圣诞 中秋 送什么 送啥",
}

#: Every topic name, in a fixed order.
TOPICS: tuple[str, ...] = tuple(_EN)

#: A word: a run of Latin letters and digits, so "kid's" is "kid" and "s", and a word typed
#: inside Chinese is one ("在外企做HR" has "hr").
_WORD = re.compile(r"[a-z0-9\u00c0-\u024f]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


def _index(lexicon: dict[str, str]) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]], tuple[int, ...]]:
    """``(exact, prefix, prefix lengths)`` of a lexicon: each cue (lower case, a hyphen
    read as a space) to the topics naming it; a cue ending in ``*`` is a prefix."""
    exact: dict[str, set[str]] = {}
    prefix: dict[str, set[str]] = {}
    for topic, words in lexicon.items():
        for word in words.split():
            key = word.rstrip("*").replace("-", " ").lower()
            (prefix if word.endswith("*") else exact).setdefault(key, set()).add(topic)
    lengths = tuple(sorted({len(k) for k in prefix}))
    return ({k: frozenset(v) for k, v in exact.items()}, {k: frozenset(v) for k, v in prefix.items()}, lengths)


_EN_EXACT, _EN_PREFIX, _EN_LENGTHS = _index(_EN)
_ZH_EXACT = _index(_ZH)[0]
_ZH_LENGTHS = tuple(sorted({len(k) for k in _ZH_EXACT}))
#: Look-ups are tried only where a cue can start: the first word of a two-word English
#: cue, the first four letters of an English prefix cue (none is shorter), the first
#: character of a Chinese cue.
_EN_FIRSTS = frozenset(k.split()[0] for k in _EN_EXACT if " " in k)
_HEAD = min(_EN_LENGTHS)
_EN_HEADS = frozenset(k[:_HEAD] for k in _EN_PREFIX)
_ZH_HEADS = frozenset(k[0] for k in _ZH_EXACT)


def topics_of(text: str) -> frozenset[str]:
    """The topics (names of :data:`TOPICS`) whose cues occur in ``text`` (its first
    :data:`MAX_CHARS` characters): English cues as whole words or two-word phrases
    (any case; a ``*`` cue as the start of a word), Chinese cues anywhere in a run of
    Chinese characters. Linear: a few dictionary look-ups per word and per character.

    >>> sorted(topics_of("I have a vet appointment tomorrow"))
    ['pets']
    >>> sorted(topics_of("小宝宝晚上老哭咋办"))
    ['kids']
    >>> topics_of("thanks!")
    frozenset()

    The last 4,096 distinct heads' topics are remembered: recall asks again for the same
    memories' topics request after request.
    """
    return _topics_of_head(text[:MAX_CHARS])


def _plural_cue(word: str) -> frozenset[str]:
    """The topics of ``word`` read as an English plural of an exact cue ("mortgages" ->
    "mortgage", "babies" -> "baby", "lunches" -> "lunch"); empty when it is none."""
    if len(word) < 4 or not word.endswith("s") or word.endswith("ss"):
        return frozenset()
    if word.endswith("ies"):
        return _EN_EXACT.get(word[:-3] + "y", frozenset())
    found = _EN_EXACT.get(word[:-1], frozenset())
    if not found and word.endswith("es"):
        found = _EN_EXACT.get(word[:-2], frozenset())
    return found


@functools.lru_cache(maxsize=4096)
def _topics_of_head(text: str) -> frozenset[str]:
    head = text.lower()
    found: set[str] = set()
    words = _WORD.findall(head)
    for i, word in enumerate(words):
        found.update(_EN_EXACT.get(word, ()) or _plural_cue(word))
        if word in _EN_FIRSTS and i + 1 < len(words):
            found.update(_EN_EXACT.get(f"{word} {words[i + 1]}", ()))
        if word[:_HEAD] in _EN_HEADS:
            for length in _EN_LENGTHS:
                if length > len(word):
                    break
                found.update(_EN_PREFIX.get(word[:length], ()))
    for run in _CJK_RUN.findall(head):
        for i, char in enumerate(run):
            if char not in _ZH_HEADS:
                continue
            for length in _ZH_LENGTHS:
                if i + length > len(run):
                    break
                found.update(_ZH_EXACT.get(run[i:i + length], ()))
    return frozenset(found)


#: Capitalised words that are no one's name: days and months (English capitalises them).
_CALENDAR = frozenset(
    "monday tuesday wednesday thursday friday saturday sunday january february march april may june july "
    "august september october november december".split())
_LATIN_WORD = re.compile(r"[A-Za-z\u00c0-\u024f]+")
#: What may end a sentence or open a quote or an answer before a word ("How old is Pixel? — ten weeks").
_OPENERS = frozenset(".!?:;\"'([\u2014\u2013-\u201c\u2018\u3002\uff01\uff1f")


def names_of(text: str) -> frozenset[str]:
    """The proper names the user typed in ``text`` (its first :data:`MAX_CHARS`
    characters), lower case: words of Latin letters, at least three, written with a
    capital and the rest small, not where a sentence, a quote or an answer starts, and no
    day or month name ("How old is Pixel? — ten weeks" and "my son Theo turned 2" name
    ``pixel`` and ``theo``; "We moved" and "MRI back" none). A name written in lower case
    only ("the didsbury sale") is not found. Linear in the text; memoised by head (a
    recalled memory's text recurs from request to request).

    >>> sorted(names_of("Also we just adopted a beagle puppy, his name is Pixel. We love him"))
    ['pixel']
    """
    return _names_of_head(text[:MAX_CHARS])


@functools.lru_cache(maxsize=4096)
def _names_of_head(head: str) -> frozenset[str]:
    out = set()
    for match in _LATIN_WORD.finditer(head):
        word = match.group(0)
        if len(word) < 3 or not word[0].isupper() or not word[1:].islower():
            continue
        at = match.start() - 1  # the last character before the word that is not white space
        while at >= 0 and head[at].isspace():
            at -= 1
        if at < 0 or head[at] in _OPENERS:
            continue
        low = word.lower()
        if low not in _CALENDAR:
            out.add(low)
    return frozenset(out)


def words_of(text: str) -> frozenset[str]:
    """The words of Latin letters of ``text`` (its first :data:`MAX_CHARS` characters),
    lower case, what :func:`names_of` is looked up in ("pixel keeps chewing" has ``pixel``).
    Memoised by head, as :func:`names_of`."""
    return _words_of_head(text[:MAX_CHARS])


@functools.lru_cache(maxsize=4096)
def _words_of_head(head: str) -> frozenset[str]:
    return frozenset(w.lower() for w in _LATIN_WORD.findall(head))
