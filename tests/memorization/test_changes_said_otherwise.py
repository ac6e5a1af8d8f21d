"""More ways a change is said without a slot word (gateway.memorization.changes,
gateway.memorization.disclosure.slot_of): a death said as a loss, a substitution
("instead of"), a switch to another instrument or exercise, new keys to a home; and the
look-alikes that end nothing (a lost match, lost keys, a one-off substitution)."""

from __future__ import annotations

import pytest

from gateway.memorization.changes import ended_of, is_about
from gateway.memorization.disclosure import slot_of
from gateway.memory.records import Tenant
from tests.memorization.conftest import memorize_config
from tests.memorization.test_workers import enqueue, fresh_store

ALICE = Tenant("alice", "tutor")


@pytest.mark.parametrize(("new", "older"), [
    ("And after we lost Smudge in June we said no more pets.", "My cat Smudge sleeps on the radiator shelf, he's eleven."),
    ("We lost our old dog last week.", "Our old dog needs his pills with breakfast."),
    ("I do Thursdays in the charity shop these days instead of the reading group.",
     "I help out at the library every Tuesday with the reading group."),
    ("Poppy's swapped over to the violin now.", "My granddaughter Poppy has started piano lessons."),
    ("球拍都收起来了，现在改成每天早上跑五公里。", "平时每周打两次羽毛球"),
])
def test_a_change_said_otherwise_names_what_ended(new: str, older: str):
    assert any(is_about(e, older) for e in ended_of(new))


@pytest.mark.parametrize(("new", "older"), [
    ("we lost the match on saturday", "I play football every saturday"),
    ("I lost my keys again", "I keep my keys on a hook by the door"),
    ("I had tea instead of coffee this morning", "I drink coffee every morning"),
    ("I'm on decaf instead of coffee for now", "I drink coffee every morning"),
    ("Poppy's swapped over to the violin now.", "My grandson Alfie has piano lessons."),  # someone else's lessons
    ("We lost Smudge in June.", "My cat Tiger sleeps on the radiator shelf."),  # another pet
    ("现在改成每天早上跑五公里。", "现在搬到前滩了"),  # 现在 is when, not what ended
])
def test_a_look_alike_ends_nothing_about_the_older_memory(new: str, older: str):
    assert not any(is_about(e, older) for e in ended_of(new))


def test_new_keys_to_a_home_fill_the_residence_slot_a_friends_flat_does_not():
    assert slot_of("we've finally got the keys to the bungalow in Whitby!") == "residence"
    assert slot_of("got the keys to the new place") == "residence"
    assert slot_of("I got the keys to my friend's flat to water her plants") is None


async def test_a_loss_retires_the_memory_about_the_pet_and_a_second_pet_retires_nothing(env):
    config = memorize_config("verbatim")
    store = await fresh_store(env)
    for text in ("My cat Smudge sleeps on the radiator shelf.", "We have a dog named Rex.",
                 "We got a second dog, a beagle called Milo.", "We lost Smudge in June, the house is so quiet."):
        await enqueue(env, config, text)
        await env.drain(config, store)
    retired = [r.text for r in (await store.list(ALICE)).items if r.retired]
    assert retired == ["My cat Smudge sleeps on the radiator shelf."]
