"""The memory: config section: frozen, strict, documented."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, ValidationError

from gateway.memory.config import EmbeddingConfig, MemoryConfig


def test_defaults_follow_the_issue():
    config = MemoryConfig()
    assert (config.redis_url, config.backend, config.quantization, config.key_prefix) == (None, "auto", "q8", "mg")
    assert config.embedding.model_name == "all-MiniLM-L6-v2" and config.embedding.threads == 1
    assert EmbeddingConfig(provider="openai").model_name == "text-embedding-3-small"


def test_typos_and_bad_values_stop_start_up():
    with pytest.raises(ValidationError):
        MemoryConfig(backnd="auto")
    with pytest.raises(ValidationError):
        MemoryConfig(embedding={"provider": "local", "treads": 2})
    with pytest.raises(ValidationError):
        MemoryConfig(key_prefix="mg:{x}")
    with pytest.raises(ValidationError):
        MemoryConfig().model_copy().__class__(backend="faiss")


def test_config_is_frozen():
    with pytest.raises(ValidationError):
        MemoryConfig().max_text_chars = 5


@pytest.mark.parametrize("model", [MemoryConfig, EmbeddingConfig])
def test_every_field_is_described(model: type[BaseModel]):
    assert all(field.description for field in model.model_fields.values())
