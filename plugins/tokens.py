"""Token counting for the plugins: the gateway's one counter
(:mod:`gateway.runtime.tokens`: offline tiktoken encodings, OpenAI's cookbook overheads,
a bounded cache of counts), re-exported from the SDK under the names plugins import."""

from __future__ import annotations

from gateway.chain.sdk import (
    FALLBACK_ENCODING,
    MODELS_REMEMBERED,
    REPLY_PRIMING,
    TokenCounter,
    is_offline,
    utf8_upper_bound,
)

__all__ = ["FALLBACK_ENCODING", "MODELS_REMEMBERED", "REPLY_PRIMING", "TokenCounter", "is_offline", "utf8_upper_bound"]
