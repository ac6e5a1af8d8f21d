"""The memory model: an OpenAI-compatible chat model the gateway calls for itself.

Used by the recall agent (``tool_splice``, seed 002) and by memorization (``memorize``
extract mode, seeds 000/003). "Configurable; default the upstream": a
:class:`ModelConfig` names a model and optionally another base URL and key; without
them the gateway's upstream (routed by model name) is used.

Structured output: :meth:`ModelClient.complete_json` asks for
``response_format: {"type": "json_schema", ...}`` (OpenAI Structured Outputs) when
``structured_outputs`` is on, else ``{"type": "json_object"}``, and validates the reply
with a pydantic model; a malformed reply raises :class:`ModelOutputError`, which callers
retry or dead-letter.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.config import UpstreamTarget
from gateway.proxy.upstream import Upstream, UpstreamCaller, UpstreamPool, forward_headers

T = TypeVar("T", bound=BaseModel)


class ModelConfig(BaseModel):
    """Which model the gateway uses for its own calls."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    model: str = Field("gpt-4o-mini", description="Model name sent upstream.")
    base_url: str | None = Field(
        None, description="Another OpenAI-compatible base URL; None: the gateway's upstream."
    )
    api_key: str | None = Field(None, description="Key for base_url; None: the upstream's.")
    structured_outputs: bool = Field(
        True,
        description="Ask for response_format json_schema (OpenAI Structured Outputs); "
        "False: json_object, for upstreams without schema support.",
    )
    timeout_s: float = Field(30.0, gt=0, description="Seconds for one memory-model call.")
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature.")


class ModelOutputError(ValueError):
    """The model answered, but not with what was asked (bad JSON or schema mismatch)."""


class ModelClient:
    """Calls one chat model; owns a connection pool only when ``base_url`` is its own."""

    def __init__(self, config: ModelConfig, upstreams: UpstreamPool | None) -> None:
        self.config = config
        self._owned: Upstream | None = None
        if config.base_url:
            target = UpstreamTarget(base_url=config.base_url, api_key=config.api_key, total_timeout=config.timeout_s)
            self.upstream = self._owned = Upstream(target)
        elif upstreams is not None:
            self.upstream = upstreams.for_model(config.model)
        else:
            raise ValueError("a memory model needs base_url or the gateway's upstreams")

    async def complete(self, messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
        """A non-stream chat completion body.

        Raises:
            UpstreamError: non-2xx status, bad JSON or transport failure.
            UpstreamTimeout: past ``timeout_s``.
        """
        body = {"model": self.config.model, "messages": messages, "temperature": self.config.temperature, **params, "stream": False}
        caller = UpstreamCaller(self.upstream, forward_headers({"content-type": "application/json"}, self.upstream))
        return await caller.complete(body, timeout=self.config.timeout_s)

    async def complete_json(self, messages: list[dict[str, Any]], schema: type[T], name: str) -> T:
        """The reply's content parsed into ``schema``.

        Raises:
            ModelOutputError: content missing, not JSON, or not matching ``schema``.
            UpstreamError / UpstreamTimeout: as :meth:`complete`.
        """
        if self.config.structured_outputs:
            fmt = {"type": "json_schema", "json_schema": {"name": name, "schema": schema.model_json_schema(), "strict": False}}
        else:
            fmt = {"type": "json_object"}
        body = await self.complete(messages, response_format=fmt)
        try:
            content = body["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ModelOutputError("memory model reply has no message content") from None
        return parse_json_reply(content, schema)

    async def aclose(self) -> None:
        if self._owned is not None:
            await self._owned.aclose()


def parse_json_reply(content: Any, schema: type[T]) -> T:
    """Validate a model's JSON text (optionally inside a ```json fence) into ``schema``.

    Raises:
        ModelOutputError: not JSON or not matching the schema.
    """
    if not isinstance(content, str):
        raise ModelOutputError("model content is not text")
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("\n") + 1:] if "\n" in text else text
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        raise ModelOutputError(f"model output does not match {schema.__name__}: {exc.errors()[:3]}") from None
