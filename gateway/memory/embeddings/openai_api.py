"""Embeddings from any OpenAI-compatible ``POST {base_url}/embeddings`` (OpenAI API
reference, "Create embeddings"): ``{"model", "input": [...], "encoding_format": "float"}``
plus ``dimensions`` when configured; the reply's ``data[i].embedding`` in ``index`` order.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np

from gateway.memory.config import EmbeddingConfig
from gateway.memory.embeddings.base import normalize_rows
from gateway.runtime.errors import MemoryUnavailable

__all__ = ['KNOWN_DIMENSIONS', 'OpenAIEmbedder', 'parse_embeddings', 'request_body']

#: Native sizes of OpenAI's models, so start-up needs no probe request for them.
KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


def request_body(model: str, texts: Sequence[str], dimensions: int | None) -> dict[str, Any]:
    """JSON body of one embeddings request (pure)."""
    body: dict[str, Any] = {"model": model, "input": list(texts), "encoding_format": "float"}
    if dimensions is not None:
        body["dimensions"] = dimensions
    return body


def parse_embeddings(payload: dict[str, Any], count: int) -> np.ndarray:
    """Rows of ``payload["data"]`` ordered by ``index``, normalized.

    Raises:
        MemoryUnavailable: the reply does not hold ``count`` embeddings of one size.
    """
    try:
        items = sorted(payload["data"], key=lambda item: item["index"])
        matrix = np.asarray([item["embedding"] for item in items], dtype=np.float32)
    except (KeyError, TypeError, ValueError) as exc:
        raise MemoryUnavailable(f"embeddings API reply is malformed: {exc!r}") from exc
    if matrix.ndim != 2 or len(matrix) != count:
        raise MemoryUnavailable(f"embeddings API returned {len(matrix)} vectors for {count} texts")
    return normalize_rows(matrix)


class OpenAIEmbedder:
    """See module docstring. Build with :meth:`open`; close with :meth:`aclose`."""

    def __init__(self, config: EmbeddingConfig, client: httpx.AsyncClient, dimensions: int):
        self.model = config.model_name
        self.dimensions = dimensions
        self._config = config
        self._client = client

    @classmethod
    async def open(
        cls, config: EmbeddingConfig, base_url: str, api_key: str | None,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> OpenAIEmbedder:
        """Create the HTTP client (``transport``: tests' ``httpx.MockTransport``); one probe
        request when the vector size is unknown.

        Raises:
            MemoryUnavailable: the probe failed.
        """
        headers = {"authorization": f"Bearer {api_key}"} if api_key else {}
        client = httpx.AsyncClient(
            base_url=base_url.rstrip("/") + "/", headers=headers,
            timeout=config.timeout_s, transport=transport,
        )
        dims = config.dimensions or KNOWN_DIMENSIONS.get(config.model_name, 0)
        embedder = cls(config, client, dims)
        if not dims:
            try:
                embedder.dimensions = (await embedder._post(["dimension probe"])).shape[1]
            except BaseException:
                await client.aclose()
                raise
        return embedder

    async def _post(self, texts: Sequence[str]) -> np.ndarray:
        body = request_body(self.model, texts, self._config.dimensions)
        try:
            response = await self._client.post("embeddings", json=body)
            response.raise_for_status()
            return parse_embeddings(response.json(), len(texts))
        except (httpx.HTTPError, ValueError) as exc:
            raise MemoryUnavailable(f"embeddings API failed: {exc!r}") from exc

    async def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """See :class:`~gateway.memory.embeddings.base.Embedder`; ``batch_size`` per request."""
        size = self._config.batch_size
        parts = [await self._post(texts[i : i + size]) for i in range(0, len(texts), size)]
        if not parts:
            return np.zeros((0, self.dimensions), dtype=np.float32)
        return np.concatenate(parts)

    async def aclose(self) -> None:
        await self._client.aclose()
