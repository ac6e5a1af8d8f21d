"""The word lists the verbatim formation rules share: one table per word class, zh + en.

The rules of :mod:`gateway.memorization.disclosure` (and of the modules its steps live in:
:mod:`~gateway.memorization.clauses`, :mod:`~gateway.memorization.asks`, :mod:`~gateway.memorization.kinds`,
:mod:`~gateway.memorization.scope`, :mod:`~gateway.memorization.slots`), :mod:`gateway.memorization.changes`
and :mod:`gateway.memorization.salience` read the same classes of words (the user's
people and pets, occupations, conditions of health, the end of work, plans, weekdays and
months...). Each class is spelled here once, as a regular-expression fragment (an
alternation in a non-capturing group, ``(?:a|b|...)``, to be embedded in a pattern that
sets its own flags and word boundaries) or as a tuple of words; the rules build their
patterns from these. A class a rule needs only part of is a named subset defined here,
beside its class, with the reason it is narrower.

Every fragment is a closed list with no nested quantifiers: patterns built from them stay
linear in the text.
"""

from __future__ import annotations

__all__ = [
    "ADVISOR_EN", "ASK_HEALTH_EN", "ASSOCIATES_ZH", "BOATS_EN", "CAR_MAKES_EN", "CAR_MAKES_ZH", "CHRONIC_EN",
    "CHRONIC_ZH", "COMPARATIVES_AFTER_MAKE_EN", "COMPARATIVES_EN", "COMPLAINTS_EN", "COMPLAINTS_ZH", "FEELINGS_EN",
    "FEELINGS_TOLD_EN", "FREQUENCY_EN", "FREQUENCY_ZH", "FUTURE_TRIP_ZH", "GRADE_EN", "HOMEMAKER_EN", "HOMEMAKER_ZH",
    "KIN_BARE_EN", "KIN_BARE_ZH", "KIN_CLOSE_EN", "LANGUAGE_NAMES", "LASTING_THINGS_EN", "MOMENT_STATES_EN",
    "MOMENT_STATES_ZH", "MONTH_ABBR_EN", "MONTH_NAMES", "OCCUPATIONS_EN", "OCCUPATIONS_ZH", "OUT_OF_WORK_EN",
    "PAST_TIME_ZH", "PEOPLE_EN", "PEOPLE_ZH", "PETS_EN", "PET_BREEDS_EN", "PET_BREEDS_ZH", "PLAN_CUES", "PROMOTED_EN",
    "PROMOTED_ZH", "RUN_ON_PEOPLE_EN", "SHIFTS_EN", "SHIFTS_ZH", "SHIFT_ASSIGNED_EN", "SHIFT_ASSIGNED_ZH",
    "SIBLING_ZH", "TAKEN_ON_EN", "TAKEN_ON_ZH", "THE_HOUSEHOLD_EN", "TITLES_EN", "TITLES_ZH", "TRUCK_MAKES_EN",
    "VEHICLES_EN", "WEEKDAY_ABBR_EN", "WEEKDAY_EN", "WEEKDAY_NAMES", "WEEKDAY_ZH", "WORK_LEFT_ZH", "alternation",
]


def alternation(words: tuple[str, ...] | list[str]) -> str:
    """``words`` (regular-expression fragments) as one non-capturing alternation, in order."""
    return "(?:" + "|".join(words) + ")"


# --- people and pets -------------------------------------------------------------------

#: Pets (English): the animals a household keeps, named as "my <pet>" ("my dog", "our
#: guinea pig") or as a loss ("we lost our cat"). Seed 002 §3.2 counts pets among the
#: user's people.
PETS_EN = (r"(?:dog|cat|puppy|kitten|pet|hamster|rabbit|bunny|bird|parrot|budgie|horse|tortoise|guinea\s+pig|fish)")
#: Close kin (English): spouse or partner, children, parents, siblings, grandparents. The
#: people whose name ("my wife's name is...") and whose death ("we lost our dad") a rule
#: reads; the wider circle of :data:`PEOPLE_EN` (friends, colleagues, the boss) is no kin.
KIN_CLOSE_EN = (r"(?:wife|husband|partner|boyfriend|girlfriend|son|daughter|kids?|children|mom|mum|mother|dad|father|"
                r"brother|sister|grandma|grandpa|granny|nan)")
#: Someone of the user's (English): kin, the household, friends, people at work or in a
#: band, and pets (:data:`PETS_EN`), as named after "my / our" ("my husband", "our
#: drummer", "my dog").
PEOPLE_EN = (r"(?:wife|husband|partner|spouse|fianc[ée]e?|boyfriend|girlfriend|son|daughter|kids?|children|child|baby|"
             r"toddler|twins?|mom|mum|mother|dad|father|parents?|brother|sister|siblings?|grandma|grandmother|"
             r"grandpa|grandfather|grandparents?|grandsons?|granddaughters?|grandkids?|grandchild(?:ren)?|in-laws|"
             r"aunt|uncle|cousin|nephew|niece|family|roommate|flatmate|boss|boy|girl|eldest|oldest|youngest|"
             r"friends?|bestie|colleagues?|co-?workers?|classmates?|bandmates?|teammates?|neighbou?rs?|landlord|"
             r"drummer|bassist|guitarist|singer|"
             + PETS_EN + r")")
#: Kin terms used bare as names of the speaker's own relative ("Mom got diagnosed...",
#: "Grandpa's 90 on Friday": Dahl & Koptjevskaja-Tamm 2001 on kin terms as proper names),
#: and the household said with "the" ("the kids", "the wife").
KIN_BARE_EN = r"(?:mom|mum|mommy|mummy|mama|momma|dad|daddy|papa|grandma|grandpa|granny|gran|nana|grandad|granddad|hubby)"
THE_HOUSEHOLD_EN = r"(?:kids|grandkids|children|grandchildren|twins|baby|little\s+ones?|wife|hubby|missus|in-laws)"
#: People after whom a run-on sentence goes on with a pronoun and no comma ("a present for
#: my mum shes turning 50"): one word each (each is a fixed-width look-behind).
RUN_ON_PEOPLE_EN = ("mum", "mom", "mother", "dad", "father", "wife", "husband", "partner", "son", "daughter", "kid", "kids",
                    "boy", "girl", "twins", "sister", "brother", "grandma", "grandpa", "baby", "toddler", "dog", "cat", "puppy")
#: Someone of the user's (Chinese): kin, partner, children, the household, people at work,
#: pets; read after 我 / 我的 / 我家 or leading a clause (Chinese drops the possessor of
#: kin when the speaker's own is meant, Li & Thompson 1981, 4.2.1); with the partner words of chat
#: (男票 / 女票, and gf / bf / npy as whole Latin words: "gf是日本人").
PEOPLE_ZH = (r"(?:老婆|老公|妻子|丈夫|爱人|太太|先生|对象|男朋友|女朋友|未婚夫|未婚妻|儿子|女儿|孩子|小孩|宝宝|娃|双胞胎|妈妈|"
             r"闺女|媳妇|老伴|孙子|孙女|外孙女?|儿媳|女婿|公公|婆婆|岳父|岳母|老爸|老妈|男友|女友|伴侣|"
             r"爸爸|妈|爸|父母|爸妈|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外公|外婆|姥姥|姥爷|家人|室友|老板|领导|猫|狗|狗狗|猫咪|宠物|男票|女票|"
             r"(?<![A-Za-z])(?:gf|bf|npy)(?![A-Za-z]))")
#: People the user knows outside the household (Chinese): at work, in study, friends and
#: neighbours. Read only as the head noun of a 的 phrase led by 我 ("我以前带的徒弟", "我的
#: 同事": :data:`gateway.memorization.clauses.MY_OWN_PERSON_ZH`); bare, most of them start
#: other words (朋友圈, 学生证, 同学会), so they lead no clause as :data:`PEOPLE_ZH` does.
ASSOCIATES_ZH = (r"(?:同事|同学|朋友|好友|哥们|闺蜜|徒弟|师傅|师父|学生|邻居|客户|上司|下属|队友|网友|房东|租客|病人|患者|"
                 r"合伙人|搭档|前同事|老同学)")
#: A sibling said with one character after 我 ("我弟刚搬去深圳了", "我姐在读博"): colloquial
#: Chinese drops the reduplication (弟弟, 姐姐) after a possessor; alone, without 我, the
#: character is no person (哥们, 小姐, 空姐), so it is read only after 我.
SIBLING_ZH = r"(?:哥|姐|弟|妹)"
#: Kin terms (Chinese) that, bare and leading a clause, name the speaker's own relative
#: ("妈糖尿病...", "老婆乳糖不耐受...": Li & Thompson 1981, 4.2 on the definite bare kin
#: term in topic position), the one-character siblings among them. Generic people (孩子,
#: 宝宝, 老人) are not: "孩子过敏怎么办" may ask about children at large.
KIN_BARE_ZH = (r"(?:老婆|老公|媳妇|爱人|老伴|闺女|儿子|女儿|妈妈|爸爸|老妈|老爸|妈|爸|爸妈|哥哥|姐姐|弟弟|妹妹|哥|姐|弟|妹|"
               r"爷爷|奶奶|外公|外婆|姥姥|姥爷|公公|婆婆|岳父|岳母|丈母娘|老丈人|大宝|二宝)")

# --- work -------------------------------------------------------------------------------

#: Occupations (English), the job titles a work statement names ("I'm a nurse", "as a
#: product manager"): the title says the job.
OCCUPATIONS_EN = (r"(?:barista|nurse|teacher|engineer|developer|programmer|designer|lawyer|doctor|dentist|manager|"
                  r"accountant|chef|cook|waiter|waitress|cashier|pharmacist|architect|electrician|plumber|mechanic|"
                  r"driver|pilot|scientist|researcher|postdoc|professor|lecturer|consultant|analyst|writer|journalist|"
                  r"editor|photographer|artist|musician|paramedic|firefighter|officer|soldier|farmer|librarian|"
                  r"therapist|social\s+worker|freelancer|contractor|intern|product\s+manager|data\s+scientist)")
#: Staying home to keep house or raise children, said as a role ("stay-at-home mom",
#: "homemaker", 全职妈妈, 家庭主妇, 宝妈): an occupation that is also the end of paid work.
HOMEMAKER_EN = r"(?:(?:stay-at-home|stay\s+at\s+home|full-time|full\s+time)\s+(?:mom|mum|dad|parent|mother|father)|homemaker)"
HOMEMAKER_ZH = r"(?:全职(?:妈妈|太太|爸爸)|家庭主妇|宝妈)"
#: Occupations (Chinese) after 我是 / 当 / 做 ("我是一名护士", "当上销售经理", "在车企做销售"),
#: with the homemaker (:data:`HOMEMAKER_ZH`).
OCCUPATIONS_ZH = (r"(?:老师|教师|医生|护士|程序员|工程师|设计师|会计|律师|销售|经理|总监|主管|司机|厨师|店长|业务员|客服|"
                  r"后端|前端|全栈|运维|测试|算法|" + HOMEMAKER_ZH + r"|"
                  r"公务员|文员|编辑|记者|主播|运营|产品经理|架构师|研究员|教授|保安|保洁|快递员|外卖员|药剂师|警察)")
#: Titles a promotion gives (English: "they made me team lead"; Chinese: 升组长, 升任主管).
TITLES_EN = r"(?:head|lead|manager|director|chief|partner|supervisor)"
TITLES_ZH = r"(?:组长|经理|主管|总监|主任|队长|店长|主编|合伙人|负责人)"
#: A promotion said with its title: "made (me) (the) <title>", 升(职/任/了)(为/成) + title.
PROMOTED_EN = r"\bmade\s+(?:me\s+)?(?:the\s+|a\s+)?(?:\w+\s+)?" + TITLES_EN + r"\b"
PROMOTED_ZH = r"升(?:职|任|了)?(?:为|成)?了?\S{0,4}?" + TITLES_ZH

#: Out of paid work, said as a state ("retired", "unemployed", "between jobs").
OUT_OF_WORK_EN = r"(?:retired|unemployed|between\s+jobs)"
#: Work left or lost (Chinese): resigned, left, laid off, unemployed, retired (辞职, 离职,
#: 被裁, 裁员, 失业, 退休).
WORK_LEFT_ZH = r"(?:辞职|离职|被裁|裁员|失业|退休)"
#: Work shifts (English) as the rota names them, after "on" / "to" ("on lates", "switched
#: to nights", "onto the night shift"): the shift slot's values.
SHIFTS_EN = (r"(?:nights|days|evenings|overnights|earlies|lates|graveyard|"
             r"(?:night|day|evening|early|late|graveyard|overnight|swing)\s+shifts?)")
#: Work shifts (Chinese): 夜班, 白班, 倒班, 三班倒, 早班, 晚班, 大夜, 小夜 (not 中班, which is
#: also a kindergarten class).
SHIFTS_ZH = r"(?:夜班|白班|倒班|三班倒|早班|晚班|大夜|小夜)"
#: Someone at work putting the user on a shift ("they've put me on lates", "switched me to
#: nights", "领导排我上夜班", "安排我去上晚班"): the user is the object, the shift is the user's.
SHIFT_ASSIGNED_EN = (r"\b(?:put|stuck|scheduled|rostered|switched|swapped|moved|transferred)\s+me\s+(?:back\s+)?"
                     r"(?:on|onto|to|over\s+to)\s+(?:the\s+)?" + SHIFTS_EN + r"\b")
SHIFT_ASSIGNED_ZH = r"(?:排|安排|让|叫|调)我(?:去|来)?(?:上|值|倒)?" + SHIFTS_ZH

# --- study ------------------------------------------------------------------------------

#: The user's degree advisor ("my supervisor", "new PhD advisor"); 导师 in Chinese.
ADVISOR_EN = r"(?:my|new)\s+(?:phd\s+|thesis\s+)?(?:advisor|adviser|supervisor)"
#: A school grade in English ("5th grade", "second grade", "grade 3").
GRADE_EN = (r"(?:(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth|"
            r"\d{1,2}(?:st|nd|rd|th))\s+grade|grade\s+\d{1,2})")

# --- health -----------------------------------------------------------------------------

#: Diagnosed or chronic conditions (seed 002 §3.2 counts health among the user's basic
#: attributes): allergies, intolerances, diabetes, high blood pressure, gout, a pregnancy,
#: regular medication. English stems take ``\w*`` after them; the fragment sits between
#: word boundaries.
CHRONIC_EN = (r"(?:allerg\w*|intoleran\w*|celiac|coeliac|(?:pre)?diabet\w*|asthma\w*|epilep\w*|arthritis|gout|"
              r"blood\s+pressure|cholesterol|ibs|crohn'?s|eczema|anemi\w*|anaemi\w*|pregnan\w*|medication)")
CHRONIC_ZH = r"(?:过敏|不耐受|糖尿病|血糖|血压|血脂|胆固醇|痛风|哮喘|湿疹|鼻炎|贫血|怀孕|吃药|服药)"
#: Complaints of the body that limit the user without being diagnosed conditions: bad
#: knees, back pain, migraines, insomnia; 膝盖, 腰椎, any -炎 (an inflammation: 腱鞘炎).
COMPLAINTS_EN = (r"(?:migraines?|insomnia|(?:bad|weak|sore|injured|dodgy)\s+(?:knees?|back|hips?|shoulders?|ankles?|wrists?)|"
                 r"plantar\s+fasciitis|back\s+pain|knee\s+pain|herniated|sciatica)")
COMPLAINTS_ZH = r"(?:高血压|[\u4e00-\u9fff]{1,3}炎(?!热)|失眠|腰椎|颈椎|膝盖|关节|胃病|胃不好|怀上)"

#: Conditions and medical devices an English ask names as the user's own after "my" or
#: "with" ("with my tinnitus", "my insulin pump", "can I use a table saw with a pacemaker"):
#: read only by :func:`gateway.memorization.kinds._attributive`, not by the health topic.
ASK_HEALTH_EN = (r"(?:tinnitus|pacemaker|insulin\s+pump|(?:continuous\s+)?glucose\s+monitor|cgm|hearing\s+aids?|cpap|"
                 r"inhaler|stoma|colostomy|prosthe\w+|wheelchair|adhd|autism|psoriasis|endometriosis|pcos|"
                 r"fibromyalgia|lupus|crohn'?s|colitis|hypothyroidism|thyroid\s+condition|heart\s+condition)")

#: Breeds and kinds of pet beyond :data:`PETS_EN` / the pets of :data:`PEOPLE_ZH` ("my beagle",
#: "my cockatiel", 我家柯基): the kind of one lasting pet of the user's, read after "my" / 我家 in
#: an ask by :func:`gateway.memorization.kinds._attributive`. Words that also name other things
#: ("lab", "boxer", "shepherd", "persian") are left out.
PET_BREEDS_EN = (r"(?:beagle|corgi|labrador|labradoodle|goldendoodle|cockapoo|cavapoo|golden\s+retriever|retriever|poodle|"
                 r"spaniel|dachshund|sausage\s+dog|pug|frenchie|french\s+bulldog|bulldog|husky|border\s+collie|collie|"
                 r"terrier|staffy|greyhound|whippet|lurcher|shih\s+tzu|chihuahua|german\s+shepherd|rottweiler|schnauzer|"
                 r"tabby|ragdoll|siamese|maine\s+coon|sphynx|cockatiel|parakeet|lovebird|gecko|bearded\s+dragon|ferret|"
                 r"chinchilla|hedgehog|axolotl|corn\s+snake|ball\s+python|tortoise|hamster|gerbil|guinea\s+pigs?)")
PET_BREEDS_ZH = (r"(?:布偶|柯基|金毛|泰迪|英短|美短|蓝猫|橘猫|狸花|暹罗|哈士奇|二哈|柴犬|边牧|拉布拉多|萨摩耶?|博美|比熊|法斗|"
                 r"雪纳瑞|德牧|柯尔鸭|仓鼠|金丝熊|鹦鹉|玄凤|虎皮|乌龟|龙猫|守宫|刺猬|豚鼠)")

#: Things whose owner has them for good, read after "my" / "our" inside an English ask by
#: :func:`gateway.memorization.kinds._attributive` ("my allotment", "my cello", "my food truck",
#: "my thesis", "my patients"): a home, a vehicle, an instrument, a business, the people one's
#: work is for, a course of study. Not things of the moment (my code, my essay, my order).
LASTING_THINGS_EN = (r"(?:allotment|garden|greenhouse|sailboat|boat|narrowboat|canal\s+boat|rv|camper(?:van)?|motorhome|caravan|"
                     r"motorbike|motorcycle|e-?bike|piano|keyboard|guitar|cello|violin|viola|ukulele|drum\s+kit|drums|"
                     r"saxophone|trumpet|clarinet|flute|shop|café|cafe|salon|bakery|restaurant|food\s+truck|etsy\s+shop|"
                     r"small\s+business|startup|bnb|airbnb|rental\s+propert(?:y|ies)|tenants|students|pupils|patients|"
                     r"clients|caseload|ward|thesis|dissertation|phd|apprenticeship|residency|allotment\s+plot|beehives?|"
                     r"hens|chickens|flock|vineyard|orchard|smallholding|farm)")

# --- feelings ---------------------------------------------------------------------------

#: Passing feelings (English): how the speaker feels right now ("exhausted", "stressed",
#: "hungry"): a moment, no lasting fact.
FEELINGS_EN = (r"(?:tired|exhausted|stressed|bored|hungry|sleepy|nervous|excited|overwhelmed|upset|annoyed|frustrated|"
               r"worried|sad|happy|grumpy|hungover)")
#: Feelings a narrative's evaluation says about what was just told ("I'm so relieved", "I'm
#: gutted": Labov 1972, ch. 9), beyond :data:`FEELINGS_EN`; some of them ("scared",
#: "anxious") also name a lasting fear, so they are no passing moment.
FEELINGS_TOLD_EN = r"(?:thrilled|relieved|anxious|scared|terrified|burnt\s+out|burned\s+out|gutted|stoked)"
#: States of the moment beyond :data:`FEELINGS_EN` ("wide awake again", "knackered", "so
#: relieved", "dreading it"): stage-level predicates, true of the speaker for a while
#: (Carlson 1977, ch. 2); not "anxious" / "scared", which also name a lasting fear.
MOMENT_STATES_EN = (r"(?:(?:wide\s+)?awake|knackered|shattered|wiped(?:\s+out)?|drained|burnt\s+out|burned\s+out|stressed\s+out|"
                    r"thrilled|stoked|pumped|relieved|gutted|fed\s+up|freaking\s+out|panicking|human\s+again|over\s+the\s+moon|"
                    r"on\s+edge|starving|lonely|proud|dreading|losing\s+my\s+mind|going\s+crazy|sick\s+of)")
#: States of the moment (Chinese): feelings and tiredness of now (七上八下, 压力山大, 累瘫了,
#: 好慌, 发愁, 不想说话, 闹心, 心塞, and the loanword "emo" = low), as :data:`MOMENT_STATES_EN`.
MOMENT_STATES_ZH = (r"(?:七上八下|忐忑|心慌|慌得|好慌|很慌|有点慌|慌死|压力(?:好|很|太|特别|超|山)?大|累瘫|累趴|累死|累坏|好累|很累|太累|"
                    r"心累|累了|头大|崩溃|崩了|破防|想哭|难受|开心|高兴|激动|感动|难过|郁闷|烦死|好烦|心烦|紧张|无聊|兴奋|担心|饿了|"
                    r"好饿|好困|困死|愁人|发愁|好愁|急死|气死|无语|绝望|裂开|麻了|不想说话|懒得说话|闹心|心塞|累到爆|累爆了|烦躁|抓狂|"
                    r"(?<![A-Za-z])emo(?![A-Za-z]))")

# --- things -----------------------------------------------------------------------------

#: Vehicles (English) a vehicle or commute statement names.
VEHICLES_EN = r"(?:car|truck|van|suv|motorcycle|motorbike|scooter|e-?bike)"
#: Car makes and models (English) named as the user's car ("my Honda", "ended up with a Mazda").
CAR_MAKES_EN = (r"(?:honda|toyota|ford|chevy|chevrolet|nissan|mazda|subaru|hyundai|kia|volkswagen|vw|bmw|audi|mercedes|"
                r"tesla|volvo|jeep|prius|civic|corolla|camry|accord|jetta|golf)")
#: Truck makes and trucker's names for them (English: "I run a peterbilt 579", "traded the ol
#: pete in for a kenworth"): what a trucker drives, read as the vehicle a statement is about
#: (:data:`gateway.memorization.neardup.LINK_TOPICS`), not as a car slot statement.
TRUCK_MAKES_EN = (r"(?:peterbilt|(?-i:(?:ol'?|the|my)\s+pete)|kenworth|freightliner|mack\s+truck|western\s+star|navistar|"
                  r"cascadia|semi|big\s+rig|tractor[-\s]trailer|18[-\s]wheeler)")
#: Boats by kind (English: "saving to get my own boat", "closed on a 38ft dragger"): a boat
#: the user owns or works on, one thing whatever its kind is called.
BOATS_EN = (r"(?:boat|dragger|trawler|skiff|dory|dinghy|sailboat|yacht|vessel|longliner|lobster\s+boat|"
            r"gillnetter|seiner|tug|barge|catamaran|houseboat|narrowboat|canal\s+boat)")
#: Car makes (Chinese) named in a vehicle statement ("开的是比亚迪", "我们换了辆特斯拉"); the
#: vehicle slot reads them anywhere in the clause except before 股 (a share: "比亚迪股价").
CAR_MAKES_ZH = r"(?:比亚迪|特斯拉|丰田|本田|大众|宝马|奔驰|奥迪|理想|蔚来|小鹏)"
#: Comparatives that revise the reply just given ("shorter", "more formal", "less spicy"),
#: read with or without "make it" before them ("make it shorter", "shorter and with more
#: emojis").
COMPARATIVES_EN = ("shorter", "longer", "simpler", "easier", "cheaper", "funnier", "quicker", "faster", "healthier", "spicier",
                   "lighter", "smaller", "bigger", "warmer", "friendlier", "briefer", "punchier", "more\\s+\\w+", "less\\s+\\w+")
#: Comparatives that revise the reply only after "make it / keep it" ("make it nicer"): a
#: clause led by them alone more often describes a thing ("softer ...", "sweeter ...").
COMPARATIVES_AFTER_MAKE_EN = ("nicer", "sweeter", "softer")
#: A Chinese place named with its administrative suffix (白云区, 杭州市, 昆山县; not 市长 / 区委 / 县政府:
#: the office, not the place).
ADMIN_PLACE_ZH = r"[\u4e00-\u9fff]{1,4}(?:市|省|区|县|镇)(?![长委政])"
#: Languages (capitalised: a name after "in" is a language, no place; lower-cased they
#: name the language an answer is asked in).
LANGUAGE_NAMES = ("English", "Spanish", "French", "German", "Chinese", "Japanese", "Korean", "Italian", "Portuguese", "Russian",
                  "Arabic", "Hindi", "Mandarin", "Cantonese")

# --- time -------------------------------------------------------------------------------

MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
               "November", "December")
WEEKDAY_NAMES = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
#: A weekday (English, any case with ``re.IGNORECASE``): "monday" ... "sunday".
WEEKDAY_EN = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
#: Three-letter abbreviations of the months and weekdays ("jan", "mon"), to be followed by
#: ``\w*`` where the full name may follow.
MONTH_ABBR_EN = r"(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)"
WEEKDAY_ABBR_EN = r"(?:mon|tue|wed|thu|fri|sat|sun)"
#: A weekday (Chinese): 周一 ... 周日 / 周末, 星期一 ... 星期天, 礼拜一 ... 礼拜天.
WEEKDAY_ZH = r"(?:周[一二三四五六日末]|星期[一二三四五六日天]|礼拜[一二三四五六日天])"
#: A day or part of one that has passed or is under way (Chinese), named as when something
#: happened (昨天, 前几天, 今早, 上周末, 上个月, 去年, 周三): an event's time.
PAST_TIME_ZH = (r"(?:昨天|前天|前两天|前几天|今天|今早|早上|上午|中午|下午|晚上|昨晚|刚才|上周末?|上个?星期|上个?礼拜|上个?月|去年|前年|"
                r"这周|这个月|今年|" + WEEKDAY_ZH + ")")
#: A trip or move planned for a coming time, with no subject ("下个月去新加坡开会", "月底回
#: 老家"): Chinese has no tense; a future time word before a bare verb of motion states a
#: scheduled event (Li & Thompson 1981, 6.1 on time words and aspect).
FUTURE_TRIP_ZH = (r"(?:下个?月|下周末?|下个?星期|下个?礼拜|明年|明天|后天|月底|年底|月初|过两天|过几天|这周末|暑假|寒假)"
                  r"[\u4e00-\u9fff]{0,3}?(?:要|准备|打算|得)?(?:去|回|飞|搬)(?![了过])")
#: A plan of the user's ("We're going to Japan in April", "signed up for", "getting
#: married", 打算, 报了十月份的全马, a trip of :data:`FUTURE_TRIP_ZH`): it holds until it happens.
PLAN_CUES = (r"\b(?:i'm|i\s+am|we're|we\s+are)\s+(?:going|flying|heading|travel(?:l)?ing|moving|getting)\s+(?:to|married)\b"
             r"|\b(?:planning|plan)\s+(?:to|a|on)\b|\bsigned\s+up\s+for\b|\bregistered\s+for\b|\btraining\s+for\b"
             r"|\bbooked\s+(?:a|our|my|the)\b|打算|计划|准备(?!好)|报了|报名|要去|" + FUTURE_TRIP_ZH)

# --- lasting changes and habits (the scope rules of :mod:`gateway.memorization.scope`) ---

#: Something the user now has, or a post they now hold, taken on (English): an acquisition
#: ("traded the old car in for a minivan", "closed on a boat", "signed the lease on a flat",
#: "picked out a hamster"), a transfer ("transferred to the ICU", "got my transfer through")
#: or a takeover ("Dr Okafor is taking me over"). Like "bought" or "moved", the verb tells
#: that a lasting state began (an inchoative, Vendler 1957 on achievements): what the user
#: owns, where they work, who supervises them holds after the day it happened.
TAKEN_ON_EN = (r"(?:traded\s+(?:\w+\s+){0,3}in|trading\s+(?:\w+\s+){0,3}in\s+for|traded\s+up|"
               r"closed\s+on\s+(?:a|an|the|our|my)\s+(?!(?:\w+day|weekend|holiday|night|morning|evening)\b)|"
               r"signed\s+(?:the|a|our|my)\s+(?:new\s+)?(?:lease|contract|mortgage)|"
               r"(?:got|picked\s+out|picked\s+up|brought\s+home|took\s+in|rescued|adopting)\s+(?:a|an|our|my)\s+(?:new\s+)?"
               r"(?:(?!hot\b)\w+\s+)?" + PETS_EN + r"s?|"
               r"transferred\s+(?:up\s+|over\s+|back\s+|across\s+)?(?:to|into)|(?:got|was|been|getting)\s+transferred|"
               r"got\s+(?:my|the|a)\s+transfer|transfer\s+(?:came|went)\s+through|"
               r"(?:taking|took|taken|take)\s+(?:me|us|him|her)\s+over|(?:taking|took|taken)\s+over\s+as|"
               r"turn(?:s|ed|ing)\s+\d{1,3}(?!\s*(?:degrees|%|percent|min|mins|minutes|hours|hrs|times|pages|miles|km|k\b|am\b|pm\b)))")
#: The same in Chinese: took delivery of a car (提车), a transfer (被 / 我 调到, 调去, 调岗, 转岗;
#: not 空调调到26度, a setting),
#: a takeover (接手, 接管), a business opened (开业, 开张), a child enrolled (插班, 进了 / 上了 +
#: a school), an animal taken in (捡了只, 领养, 收养; 只 / 条 are the classifiers of animals).
TAKEN_ON_ZH = (r"(?:提车|提了车|(?:被|我|他|她)调(?:到|去|回)(?![\d一二三四五六七八九十两零几])|调岗|转岗|接手|接管|(?<!新)开业|(?<!新)开张|插班|"
               r"(?:进|上)了\S{0,10}?(?:幼儿园|小学|初中|中学|高中|学校|大学)|捡了(?:一)?(?:只|条)|领养|收养)")
#: How often something is done, as a habit: "twice a day", "3x a week", "once a month", "two
#: times per week", a rate ("30 miles per week") (a frequency adverbial makes a sentence habitual, a state of the subject,
#: not an event: Carlson 1977, ch. 2; Comrie 1976, 1.2.1 on habituals), and "<span of
#: time> at a time" (an interval that recurs: "ten days at a time"; not "two at a time").
FREQUENCY_EN = (r"(?:(?:once|twice|thrice|(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten)\s*(?:x|times))\s+"
                r"(?:a|an|per|each|every)\s+(?:day|week|month|year|night|morning|evening|fortnight)|"
                r"\d+x\s+(?:a\s+)?(?:day|week|month)|\d+\s+days?\s+a\s+week|per\s+(?:day|week|month|year|night|shift)|"
                r"(?:\d+|a\s+few|two|three|four|five|six|seven|ten)\s+(?:min|mins|minutes|hours?|hrs|days?|nights?|weeks?|months?)"
                r"\s+at\s+a\s+time)")
#: The same in Chinese: 一天两次, 每周三次, 一周练五次, 一个月一回, 一天三顿.
FREQUENCY_ZH = (r"(?:[一每](?:天|日|周|星期|礼拜|个?月|年)\S{0,2}?[一二两三四五六七八九十几\d]+(?:次|回|顿|趟|遍)|"
                r"[一二两三四五六七八九十几\d]+(?:天|日|周|个?月)一次)")
