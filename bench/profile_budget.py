"""``python -m bench profile-budget``: the assistant bench (:mod:`bench.assistant.run`) for
long-lived users, whose profile is past ``auto_recall.profile_tokens`` (400 cl100k tokens)
or past the profile search's pool of 15 candidates.

Each user of the chosen read splits (:func:`bench.assistant.dataset.read_users`: read splits
only, picked by file name) gets ``--extra`` self-disclosures of OTHER read-split users of the
same language prepended as earlier conversations (sessions of ``--per-session`` turns): the
donors' ``fact`` turns (the user's own words and the donor's scripted reply, one fact each),
taken in a fixed pseudo-random order seeded by the user id, skipping a donor turn that holds
every key of one of the user's own facts (so a donor never answers a probe). The user's own
sessions and probes follow unchanged, so the report's fact recall is the recall of the
original probes' facts, with a profile weeks older; the donors' facts are never needed by a
probe (memory lines and the junk share count them as lines, not as junk).
"""

from __future__ import annotations

import random
from dataclasses import replace
from pathlib import Path

import click

from bench.assistant.dataset import READ_SPLITS, Session, Turn, User, read_users
from bench.assistant.run import DEFAULT_CONFIG, FRIEND


def donor_turns(user: User, donors: list[User]) -> list[Turn]:
    """The ``fact`` turns of ``donors`` other than ``user`` in its language, each with one
    fact, none holding all the keys of one of ``user``'s facts, shuffled by ``user.user``."""
    keys = [tuple(k.lower() for k in f.key) for f in user.facts.values()]
    pool = []
    for donor in donors:
        if donor.user == user.user or donor.lang != user.lang:
            continue
        for turn in donor.turns:
            text = turn.user.lower()
            if turn.kind == "fact" and len(turn.facts) == 1 and not any(all(k in text for k in ks) for ks in keys):
                pool.append(turn)
    random.Random(user.user).shuffle(pool)
    return pool


def long_lived(user: User, donors: list[User], extra: int, per_session: int) -> User:
    """``user`` with ``extra`` donor turns (:func:`donor_turns`) as earlier sessions; the
    donor turns and facts renamed ``x<n>-...`` so ids stay unique."""
    picked = donor_turns(user, donors)[:extra]
    sessions: list[Session] = []
    facts = dict(user.facts)
    for start in range(0, len(picked), per_session):
        number = start // per_session
        turns = []
        for i, turn in enumerate(picked[start:start + per_session]):
            n = start + i
            fact = replace(turn.facts[0], id=f"x{n}-{turn.facts[0].id}")
            facts[fact.id] = fact
            turns.append(replace(turn, id=f"x{n}-{turn.id}", session=f"x{number}", facts=(fact,)))
        sessions.append(Session(f"x{number}", user.sessions[0].date if user.sessions else "", tuple(turns)))
    return replace(user, sessions=(*sessions, *user.sessions), facts=facts)


@click.command("profile-budget")
@click.option("--split", "splits", multiple=True, type=click.Choice(READ_SPLITS), default=("heldout14",),
              show_default=True, help="Read splits whose users are replayed (repeatable).")
@click.option("--extra", type=click.IntRange(0, 200), default=24, show_default=True,
              help="Donor self-disclosures prepended per user.")
@click.option("--per-session", type=click.IntRange(1, 50), default=6, show_default=True,
              help="Donor turns per prepended conversation.")
@click.option("--config", "config_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=DEFAULT_CONFIG, show_default=True, help="gateway.yaml to run.")
@click.option("--concurrency", type=click.IntRange(1, 64), default=4, show_default=True)
@click.option("--json-out", type=click.Path(dir_okay=False), default=None, help="Write the whole result as JSON.")
def command(splits: tuple[str, ...], extra: int, per_session: int, config_path: Path, concurrency: int,
            json_out: str | None) -> None:
    """Replay read-split users with older profiles from other users' disclosures, then probe."""
    from bench.assistant.run import main

    donors = read_users(READ_SPLITS)
    users = [long_lived(u, donors, extra, per_session) for u in donors if u.split in splits]
    if not users:
        raise click.UsageError("no user in --split")
    main(users, json_out, config_path, None, concurrency, FRIEND)
