"""Which bench/assistant files a study may open: one allow-list of read splits
(bench.assistant.dataset.READ_TAGS), files picked by name before any is opened, used by
bench/formation_clf.py (the clause classifier's training data: the read splits written before
the shipped weights), bench/embed_determinism.py, bench/static_e5.py and bench/embed_passes.py."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import bench.assistant.dataset as dataset
import bench.embed_determinism as determinism
import bench.embed_passes as passes
import bench.formation_clf as study
import bench.static_e5 as static_e5
from gateway.memorization.clause_classifier import WEIGHTS

BLIND = ("heldout6", "heldout7", "heldout8", "heldout9", "heldout10", "heldout12", "heldout15", "heldout16", "heldout17", "heldout18", "asks2")
#: Read splits written after the shipped weights: the classifier study does not read them (yet).
LATER = ("heldout13", "heldout14", "asks", "train1", "train2", "train3", "train4")
#: A blind split's file name: -h6- .. -h10-, -h12-, -h15- and later, -q2-.
BLIND_NAME = re.compile(r"-(?:h(?:[6-9]|10|12|1[5-9]|[2-9]\d)|q2)-")


def _spy_on_loads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Wrap ``dataset.load_users`` to record the name of every file it opens; returns the list."""
    opened: list[str] = []
    real = dataset.load_users

    def spy(paths):
        paths = list(paths)
        opened.extend(p.name for p in paths)
        return real(paths)

    monkeypatch.setattr(dataset, "load_users", spy)
    return opened


@pytest.mark.parametrize("name", ["en-01-dana.json", "zh-11-x.json", "en-h2-01-rosa.json", "zh-h5-07-x.json",
                                  "en-u-04-x.json", "zh-h11-08-x.json", "zh-h13-02-x.json", "zh-h14-02-x.json", "en-q-01-x.json"])
def test_a_read_splits_file_name_is_read(name: str):
    assert dataset.READ_FILES.match(name)


@pytest.mark.parametrize("name", ["en-h6-01-x.json", "zh-h9-07-x.json", "en-h10-01-reggie.json", "en-h12-01-x.json",
                                  "zh-h15-03-x.json", "en-h16-02-x.json", "zh-h16-05-x.json", "zh-h17-03-x.json",
                                  "en-h20-01-x.json", "en-h1-01-x.json", "en-h11-01-x.json.bak", "zh-q2-08-x.json",
                                  "en-qq-01-x.json", "en-h13x-01-x.json"])
def test_a_blind_splits_file_name_is_not_read(name: str):
    assert not dataset.READ_FILES.match(name)


def test_the_read_splits_are_every_split_but_the_blind_ones():
    assert set(dataset.READ_SPLITS) == set(dataset.SPLITS) - set(BLIND)
    with pytest.raises(ValueError, match="heldout12"):
        dataset.read_files(["dev", "heldout12"])


def test_every_read_split_is_loaded_and_no_blind_file_is_opened(monkeypatch: pytest.MonkeyPatch):
    opened = _spy_on_loads(monkeypatch)
    users = dataset.read_users()
    assert {u.split for u in users} == set(dataset.READ_SPLITS)
    assert opened and not [n for n in opened if BLIND_NAME.search(n)]
    opened.clear()
    users = study.allowed_users()
    assert set(study.SPLITS) == set(dataset.READ_SPLITS) - set(LATER)
    assert {u.split for u in users} == set(study.SPLITS)  # updates and heldout11 included
    assert {(u.split, u.lang) for u in users} >= {("updates", "zh"), ("heldout11", "zh")}
    assert opened and not [n for n in opened if BLIND_NAME.search(n) or re.search(r"-(?:h1[34]|q|t[1-3])-", n)]


def test_the_embedding_studies_open_read_split_files_only(monkeypatch: pytest.MonkeyPatch):
    opened: list[str] = []
    real = Path.read_text

    def spy(self: Path, *args, **kwargs):
        if self.parent == dataset.DATA_DIR:
            opened.append(self.name)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(Path, "read_text", spy)
    static_e5.agreement_texts()
    assert {n for n in opened} == {p.name for p in dataset.read_paths()}
    opened.clear()
    passes.views("zh")
    assert {n for n in opened} == {p.name for p in dataset.read_paths(lang="zh")}
    opened.clear()
    determinism.assistant_texts("en", calibration=False)
    determinism.assistant_texts("en", calibration=True)
    assert opened and not [n for n in opened if BLIND_NAME.search(n) or re.search(r"-(?:h1[34]|q|t[1-3])-", n)]
    assert any("-u-" in n for n in opened) and any("-h11-" in n for n in opened)


def test_the_shipped_weights_were_trained_on_every_read_split_of_the_study():
    doc = json.loads(Path(WEIGHTS).read_text(encoding="utf-8"))
    assert doc["splits"] == list(study.SPLITS)
    assert {lang for models in doc["models"].values() for lang in models} == {"en"}  # no Chinese model ships


def test_the_gate_studies_read_named_read_splits_only(monkeypatch: pytest.MonkeyPatch):
    import bench.profile_clf as profile_study
    from gateway.memorization.profile_classifier import WEIGHTS as PROFILE_WEIGHTS

    assert profile_study.splits_of is study.splits_of  # one reading of --splits for both studies
    assert profile_study.splits_of("older") == study.SPLITS
    assert profile_study.splits_of("read") == dataset.READ_SPLITS
    assert profile_study.splits_of("heldout13,asks") == ("heldout13", "asks")
    for blind in BLIND:
        with pytest.raises(ValueError, match=blind):
            profile_study.splits_of(f"dev,{blind}")
    # the shipped profile weights were fitted on the default (older) splits
    doc = json.loads(Path(PROFILE_WEIGHTS).read_text(encoding="utf-8"))
    assert doc["splits"] == list(profile_study.splits_of("older"))
    opened = _spy_on_loads(monkeypatch)
    users = dataset.read_users(profile_study.splits_of("heldout13,asks"))
    assert {u.split for u in users} == {"heldout13", "asks"}
    assert opened and all(re.search(r"-(?:h1[34]|q)-", n) for n in opened)
    # the clause study loads the users of the splits it is given, and only theirs
    assert {u.split for u in study.allowed_users(("train4",))} == {"train4"}
