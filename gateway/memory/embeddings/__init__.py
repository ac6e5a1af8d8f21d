"""Embedding providers (``memory.embedding``): local sentence-transformers or an
OpenAI-compatible API, behind the :class:`Embedder` protocol, with a Redis cache."""

from __future__ import annotations

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings.base import Embedder, embed_one, normalize_rows
from gateway.memory.embeddings.cache import CachedEmbedder


async def load_embedder(
    config: EmbeddingConfig, upstream_base_url: str | None = None, upstream_api_key: str | None = None
) -> Embedder:
    """The configured provider, ready to embed (the local model is loaded here).

    Raises:
        ValueError: openai provider without ``base_url`` and without an upstream URL;
            unknown local model.
        gateway.errors.MemoryUnavailable: the embeddings API probe failed.
    """
    if config.provider == "local":
        from gateway.memory.embeddings.local import LocalEmbedder

        return await LocalEmbedder.load(config)
    from gateway.memory.embeddings.openai_api import OpenAIEmbedder

    base_url = config.base_url or upstream_base_url
    if not base_url:
        raise ValueError("memory.embedding.provider=openai needs base_url or an upstream base_url")
    return await OpenAIEmbedder.open(config, base_url, config.api_key or upstream_api_key)


__all__ = ["CachedEmbedder", "Embedder", "embed_one", "load_embedder", "normalize_rows"]
