"""SillyTavern's macros in lore (plugins/world_book/macros.py), checked against the
behaviour its documentation ("Macros") describes: case-insensitive names, unknown macros
left as written, {{trim}} removing the newlines around it, random / roll drawing from the
given generator."""

import random
from datetime import UTC, datetime

from plugins.world_book.macros import MacroContext, context_for, names_from_request, substitute

NOW = datetime(2026, 11, 26, 21, 5, tzinfo=UTC)


def ctx(**kw):
    return MacroContext(**{"user": "Kai", "char": "Luna", "now": NOW, "rng": random.Random(7), **kw})


def test_names_times_text_macros_and_unknown_ones():
    text = ("{{user}}/{{USER}}/<USER> meets {{char}}/<BOT>/<CHAR>/{{group}}/{{charIfNotGroup}} at {{time}} on "
            "{{weekday}}, {{date}} ({{isodate}} {{isotime}}).{{newline}}{{// a note}}{{noop}}{{unknown}} {{memories}}")
    assert substitute(text, ctx()) == (
        "Kai/Kai/Kai meets Luna/Luna/Luna/Luna/Luna at 9:05 PM on Thursday, November 26, 2026 (2026-11-26 21:05).\n"
        "{{unknown}} {{memories}}")
    assert substitute("a\n\n{{trim}}\nb", ctx()) == "ab"
    assert substitute("{{user}}", ctx(user="{{char}}")) == "{{char}}"  # one pass: a value is not expanded again


def test_chat_macros_come_from_the_messages():
    messages = [{"role": "system", "content": "sys"}, {"role": "user", "name": "ann", "content": "first"},
                {"role": "assistant", "name": "Luna", "content": "reply"}, {"role": "user", "content": "second"}]
    c = context_for(messages, "u1", "f1", NOW, random.Random(1), model="gpt-4o")
    assert (c.user, c.char) == ("ann", "Luna")
    assert substitute("{{input}}|{{lastUserMessage}}|{{lastCharMessage}}|{{lastMessage}}|{{model}}", c) == (
        "second|second|reply|second|gpt-4o")
    assert names_from_request([{"role": "user", "content": "x"}], "alice", "tutor") == ("alice", "tutor")


def test_random_and_roll_draw_from_the_generator_and_bad_dice_stay():
    picks = {substitute("{{random:a, b,c}}", ctx(rng=random.Random(seed))) for seed in range(40)}
    assert picks == {"a", "b", "c"}
    assert {substitute("{{random::x,1::y,2}}", ctx(rng=random.Random(s))) for s in range(40)} == {"x,1", "y,2"}
    assert substitute("{{roll:2d6+3}}", ctx()) == substitute("{{roll:2d6+3}}", ctx())  # same seed, same draw
    rolls = {int(substitute("{{roll:2d6+3}}", ctx(rng=random.Random(s)))) for s in range(200)}
    assert min(rolls) >= 5 and max(rolls) <= 15 and len(rolls) > 6
    assert 1 <= int(substitute("{{roll:20}}", ctx())) <= 20
    for bad in ("{{roll:1000d6}}", "{{roll:d0}}", "{{roll:abc}}"):
        assert substitute(bad, ctx()) == bad
