"""bench/formation_clf.py, the clause classifier's training data: every read split of
bench/assistant but the later asks splits, never a blind one (files are picked by name before any is opened)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import bench.formation_clf as study
from bench.assistant.dataset import SPLITS as ALL_SPLITS
from gateway.memorization.clause_classifier import WEIGHTS

BLIND = ("heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout12", "heldout13", "heldout14")
#: Read splits written after the shipped weights: the study does not read them (yet).
LATER = ("asks", "asks2")


@pytest.mark.parametrize("name", ["en-01-dana.json", "zh-11-x.json", "en-h2-01-rosa.json", "zh-h5-07-x.json",
                                  "en-u-04-x.json", "zh-h11-08-x.json"])
def test_a_read_splits_file_name_is_read(name: str):
    assert study.READ_FILES.match(name)


@pytest.mark.parametrize("name", ["en-h6-01-x.json", "zh-h9-07-x.json", "en-h10-01-reggie.json", "en-h12-01-x.json",
                                  "zh-h13-02-x.json", "zh-h14-03-x.json", "en-h20-01-x.json", "en-h1-01-x.json",
                                  "en-h11-01-x.json.bak", "en-q-01-x.json", "zh-q2-08-x.json"])
def test_a_blind_or_later_splits_file_name_is_not_read(name: str):
    assert not study.READ_FILES.match(name)


def test_every_read_split_is_loaded_and_no_blind_file_is_opened(monkeypatch: pytest.MonkeyPatch):
    opened: list[str] = []
    real = study.load_users

    def spy(paths):
        paths = list(paths)
        opened.extend(p.name for p in paths)
        return real(paths)

    monkeypatch.setattr(study, "load_users", spy)
    users = study.allowed_users()
    assert set(study.SPLITS) == set(ALL_SPLITS) - set(BLIND) - set(LATER)
    assert {u.split for u in users} == set(study.SPLITS)  # updates and heldout11 included
    assert {(u.split, u.lang) for u in users} >= {("updates", "zh"), ("heldout11", "zh")}
    assert opened and not [n for n in opened
                           if any(f"-h{k}-" in n for k in (*range(6, 11), 12, 13, 14)) or re.search(r"-q2?-", n)]


def test_the_shipped_weights_were_trained_on_every_read_split():
    doc = json.loads(Path(WEIGHTS).read_text(encoding="utf-8"))
    assert doc["splits"] == list(study.SPLITS)
    assert {lang for models in doc["models"].values() for lang in models} == {"en"}  # no Chinese model ships
