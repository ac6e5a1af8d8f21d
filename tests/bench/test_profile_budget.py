"""bench profile-budget: read-split users with other users' disclosures as earlier sessions."""

from __future__ import annotations

from bench.assistant.dataset import read_users
from bench.profile_budget import long_lived


def test_long_lived_prepends_other_same_language_users_fact_turns_and_keeps_the_user_whole():
    donors = read_users(("dev", "updates"))
    user = next(u for u in donors if u.lang == "zh")
    grown = long_lived(user, donors, 10, 4)
    extra = [s for s in grown.sessions if s.id.startswith("x")]
    assert [len(s.turns) for s in extra] == [4, 4, 2]  # sessions of --per-session, first
    assert grown.sessions[len(extra):] == user.sessions and grown.probes == user.probes
    own = {t.user for t in user.turns}
    keys = [[k.lower() for k in f.key] for f in user.facts.values()]
    for turn in (t for s in extra for t in s.turns):
        assert turn.kind == "fact" and turn.user not in own and len(turn.facts) == 1
        assert any(turn.user == t.user for d in donors if d.lang == "zh" and d.user != user.user for t in d.turns)
        assert not any(all(k in turn.user.lower() for k in ks) for ks in keys)  # never answers a probe
        assert grown.facts[turn.facts[0].id] == turn.facts[0]
    assert long_lived(user, donors, 10, 4) == grown  # the same donors on every run
