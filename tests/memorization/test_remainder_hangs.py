"""What a change leaves of an older memory (gateway.memorization.split.remainder): a clause whose
additive adverb after its subject presupposes the changed clause, or whose bare workplace
relation bridges to the changed job, goes with the change; a clause of its own stays."""

from __future__ import annotations

import pytest

from gateway.memorization.split import remainder


@pytest.mark.parametrize(("text", "changed"), [
    ("我想报北师大读心理学，我爸也特别支持我学心理", "北师大"),  # 也: "as I want to", the changed wish
    ("我在苏州园区做外贸跟单，天天对接客户，领导天天催报表", "外贸"),  # the old job's 领导
    ("I work nights at the Riverside depot, my boss keeps moving my shifts", "Riverside"),
    ("I want to study nursing at Leeds, my mum also thinks nursing suits me", "Leeds"),
])
def test_a_clause_that_presupposes_or_bridges_to_the_changed_one_goes_with_it(text: str, changed: str):
    assert remainder(text, lambda c: changed in c) is None


@pytest.mark.parametrize(("text", "changed", "rest"), [
    ("我想报北师大读心理学，我爸特别支持我学心理", "北师大", "我爸特别支持我学心理"),  # no additive: the dad's own
    ("我在苏州园区做外贸跟单，老婆在上海当老师", "外贸", "老婆在上海当老师"),  # a person of the user's, no job bridge
    ("I work nights at the Riverside depot, my wife runs marathons", "Riverside", "my wife runs marathons"),
])
def test_a_clause_with_a_subject_of_its_own_stays(text: str, changed: str, rest: str):
    assert remainder(text, lambda c: changed in c) == rest
