"""The memory model: an OpenAI-compatible chat model the gateway calls for itself.

Used by the recall agent (``tool_splice``, seed 002) and by memorization (``memorize``
extract mode, seeds 000/003). "Configurable; default the upstream": a
:class:`ModelConfig` names a model and optionally another base URL and key; without
them the gateway's upstream (routed by model name) is used.

Structured output: :meth:`ModelClient.complete_json` asks for
``response_format: {"type": "json_schema", ...}`` (OpenAI Structured Outputs) when
``structured_outputs`` is on, else ``{"type": "json_object"}``. A server that rejects a
format (llama-cpp-python's server answers 500 to ``json_schema``) is detected: when a call
fails with 400, 422, 500 or 501, the same call is made in the next formats of the ladder
json_schema -> json_object_schema (``{"type": "json_object", "schema": ...}``, the
Anyscale-style form llama-cpp-python's server turns into a grammar, so a small local model
can only answer the schema) -> json_object -> prompt-only JSON (no ``response_format``,
the schema's keys named in the system message); the first that answers (validly, unless the rejection named the
format) is kept for the rest of the client's life (one client per memory-model upstream and model). If every format
fails, or a lower one answers but not validly while the rejection did not name the
format (llama-cpp-python's does: "response_format"), the error was not about the format:
the first rejection is raised and the format stays.

The reply is validated with a pydantic model. A malformed reply (not JSON, or not the
schema) gets at most ``repair_attempts`` (default 1) more calls that show the model its
answer and the error; still malformed raises :class:`ModelOutputError`, which the worker
dead-letters without further retries (at temperature 0 the same prompt gives the same
answer). Every call carries ``max_tokens`` so a small model cannot generate up to its
context limit and hold a server slot; ``max_items`` adds ``maxItems`` to array fields of
the JSON schema.
"""

from __future__ import annotations

import json
import logging
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gateway.proxy.upstream import Upstream, UpstreamPool, forward_headers, open_stream
from gateway.runtime.config import UpstreamTarget
from gateway.runtime.errors import UpstreamError

T = TypeVar("T", bound=BaseModel)
log = logging.getLogger("memgate.model")


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
        description="Start with response_format json_schema (OpenAI Structured Outputs); "
        "False: start with json_object. Either way a server that rejects the format is "
        "detected and the client falls back (json_object with the schema as `schema`, "
        "then json_object, then prompt-only JSON).",
    )
    timeout_s: float = Field(30.0, gt=0, description="Seconds for one memory-model call.")
    temperature: float = Field(0.0, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int = Field(
        1024, ge=16, le=65_536,
        description="Cap on each reply's length, sent with every call (a small local "
        "model without it can generate to its context limit and hold a server slot); 1,024 "
        "tokens fits an extraction of 12 facts with room to spare.",
    )
    max_tokens_field: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens",
        description="Request field carrying max_tokens: OpenAI's reasoning models accept only "
        "max_completion_tokens; llama.cpp, vLLM and older OpenAI models read max_tokens.",
    )
    repair_attempts: int = Field(
        1, ge=0, le=3,
        description="Extra calls after an invalid JSON answer, each showing the model its answer "
        "and the validation error; then ModelOutputError (dead letter, never a blind retry).",
    )


class ModelOutputError(ValueError):
    """The model answered, but not with what was asked (bad JSON or schema mismatch)."""


def rejected(status: int, raw: bytes) -> UpstreamError:
    """The :class:`UpstreamError` for an error status of the memory model's server, with
    that status in ``upstream_status`` (``UpstreamError.status`` is the gateway's own 502)
    and ``names_format``: the error body names ``response_format`` or ``json_schema``
    (llama-cpp-python: 500 "Input should be 'text' or 'json_object'" at
    ``body.response_format.type``)."""
    error = UpstreamError(f"memory model answered {status}: {raw[:300]!r}")
    error.upstream_status = status  # type: ignore[attr-defined]
    error.names_format = b"response_format" in raw or b"json_schema" in raw  # type: ignore[attr-defined]
    return error


#: Statuses with which servers reject a response_format they do not support: OpenAI-style
#: 400/422, llama-cpp-python's server 500 (an exception in its schema-to-grammar step), 501.
FORMAT_REJECTION_STATUSES = frozenset({400, 422, 500, 501})
LADDER = ("json_schema", "json_object_schema", "json_object", "prompt")


def schema_with_limits(schema: type[BaseModel], max_items: dict[str, int] | None) -> dict[str, Any]:
    """``schema``'s JSON schema with ``maxItems`` on the named top-level array fields."""
    json_schema = schema.model_json_schema()
    for field, limit in (max_items or {}).items():
        prop = json_schema.get("properties", {}).get(field)
        if isinstance(prop, dict) and prop.get("type") == "array":
            prop["maxItems"] = int(limit)
    return json_schema


def format_request(mode: str, messages: list[dict[str, Any]], json_schema: dict[str, Any],
                   name: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``(messages, params)`` of a JSON call in ``mode`` (see :data:`LADDER`).

    ``json_schema``: the schema goes in ``response_format``. ``json_object_schema``,
    ``json_object`` and ``prompt``: the system message names the answer and its keys
    (``Answer with only a JSON object (<name>) with the keys "a", "b".``), not the whole
    schema: SmolLM2-135M shown the schema copied it back until ``max_tokens`` (``make
    e2e-local``); the prompts themselves show an example answer. ``json_object`` also sets
    ``response_format``; ``json_object_schema`` sets it with the schema as ``schema``
    (llama-cpp-python's server constrains the reply to it with a grammar).
    """
    if mode == "json_schema":
        return messages, {"response_format": {"type": "json_schema", "json_schema": {
            "name": name, "schema": json_schema, "strict": False}}}
    hint = keys_hint(name, json_schema)
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        stated = [{**messages[0], "content": messages[0]["content"] + "\n" + hint}, *messages[1:]]
    else:
        stated = [{"role": "system", "content": hint}, *messages]
    if mode == "json_object_schema":
        return stated, {"response_format": {"type": "json_object", "schema": json_schema}}
    return stated, ({"response_format": {"type": "json_object"}} if mode == "json_object" else {})


def keys_hint(name: str, json_schema: dict[str, Any]) -> str:
    """``Answer with only a JSON object (<name>) with the keys "a", "b".``"""
    keys = ", ".join(f'"{key}"' for key in json_schema.get("properties", {}))
    return f"Answer with only a JSON object ({name}) with the keys {keys}."


def repair_prompt(error: str, json_schema: dict[str, Any]) -> str:
    """The follow-up message of a repair attempt: the error and the expected keys."""
    keys = ", ".join(f'"{key}"' for key in json_schema.get("properties", {}))
    return ("That answer could not be used: " + error[:600] + f"\nAnswer again with only one valid JSON "
            f"object with the keys {keys}, no other text.")


class ModelClient:
    """Calls one chat model; owns a connection pool only when ``base_url`` is its own."""

    def __init__(self, config: ModelConfig, upstreams: UpstreamPool | None) -> None:
        self.config = config
        self._mode = "json_schema" if config.structured_outputs else "json_object"
        self._owned: Upstream | None = None
        if config.base_url:
            target = UpstreamTarget(base_url=config.base_url, api_key=config.api_key, total_timeout_s=config.timeout_s)
            self.upstream = self._owned = Upstream(target)
        elif upstreams is not None:
            self.upstream = upstreams.for_model(config.model)
        else:
            raise ValueError("a memory model needs base_url or the gateway's upstreams")

    async def complete(self, messages: list[dict[str, Any]], **params: Any) -> dict[str, Any]:
        """A non-stream chat completion body; ``max_tokens`` from the config unless
        ``params`` set it.

        Raises:
            UpstreamError: 4xx/5xx status (then with ``upstream_status``), bad JSON or
                transport failure.
            UpstreamTimeout: past ``timeout_s``.
        """
        body = {"model": self.config.model, "messages": messages, "temperature": self.config.temperature,
                self.config.max_tokens_field: self.config.max_tokens, **params, "stream": False}
        headers = forward_headers({"content-type": "application/json"}, self.upstream)
        async with open_stream(
            self.upstream, "POST", "/chat/completions", json.dumps(body).encode(), headers, timeout=self.config.timeout_s
        ) as resp:
            raw = await resp.aread()
        if resp.status_code >= 400:
            raise rejected(resp.status_code, raw)
        try:
            return json.loads(raw)
        except ValueError:
            raise UpstreamError("memory model answered with invalid JSON") from None

    @property
    def json_mode(self) -> str:
        """The structured-output format in use: ``json_schema``, ``json_object_schema``,
        ``json_object`` or ``prompt`` (module docstring: it only moves down the ladder)."""
        return self._mode

    async def complete_json(self, messages: list[dict[str, Any]], schema: type[T], name: str,
                            max_items: dict[str, int] | None = None) -> T:
        """The reply's content parsed into ``schema``; ``max_items`` sets ``maxItems`` on
        those top-level array fields of the JSON schema (extra items are the caller's to
        drop: a server without schema support may still send them).

        Raises:
            ModelOutputError: content missing, not JSON, or not matching ``schema``, after
                ``repair_attempts`` repair calls.
            UpstreamError / UpstreamTimeout: as :meth:`complete`.
        """
        json_schema = schema_with_limits(schema, max_items)
        attempt_messages = list(messages)
        for attempt in range(self.config.repair_attempts + 1):
            content, result = await self._call_json(attempt_messages, json_schema, name, schema)
            if not isinstance(result, ModelOutputError):
                return result
            if attempt == self.config.repair_attempts:
                raise result
            attempt_messages = [*messages, {"role": "assistant", "content": str(content or "")[:4000]},
                                {"role": "user", "content": repair_prompt(str(result), json_schema)}]
        raise AssertionError("unreachable")

    async def _call_json(self, messages: list[dict[str, Any]], json_schema: dict[str, Any], name: str,
                         schema: type[T]) -> tuple[Any, T | ModelOutputError]:
        """One call in the current format: ``(content, parsed answer or its error)``.

        On a format rejection the same call is made in the next formats down the ladder;
        the first that answers becomes the current format if the rejection named the
        format (``names_format``) or the answer is valid. Otherwise (a bare 500, then an
        unusable answer) nothing is proven about the format: the server may simply be
        failing, so the first rejection is raised and the format stays."""
        first: UpstreamError | None = None
        for mode in LADDER[LADDER.index(self._mode):]:
            stated, params = format_request(mode, messages, json_schema, name)
            try:
                body = await self.complete(stated, **params)
            except UpstreamError as exc:
                if getattr(exc, "upstream_status", None) not in FORMAT_REJECTION_STATUSES:
                    raise
                first = first or exc
                continue
            try:
                content = body["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                content = None
            try:
                if content is None:
                    raise ModelOutputError("memory model reply has no message content")
                parsed: T | ModelOutputError = parse_json_reply(content, schema)
            except ModelOutputError as bad:
                if first is not None and not getattr(first, "names_format", False):
                    raise first from None  # proves nothing about the format
                parsed = bad
            if first is not None:
                log.warning("memory model %s rejected response_format %s (%s); using %s from now on",
                            self.config.model, self._mode, getattr(first, "upstream_status", "?"), mode)
                self._mode = mode
            return content, parsed
        assert first is not None
        raise first

    async def aclose(self) -> None:
        if self._owned is not None:
            await self._owned.aclose()


def parse_json_reply(content: Any, schema: type[T]) -> T:
    """Validate a model's JSON text (optionally inside a ```json fence) into ``schema``.

    Raw control characters inside strings (a literal newline in a fact: JSON forbids them,
    but llama-cpp-python's schema grammar lets a small model write them, seen with
    Gemma 3 270M) are read as the characters they are (``json.loads(strict=False)``)
    rather than failing the whole answer.

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
        error = exc
    if any(e.get("type") == "json_invalid" and "control character" in str(e.get("msg")) for e in error.errors()):
        try:
            return schema.model_validate(json.loads(text, strict=False))
        except ValidationError as exc:
            error = exc
        except ValueError:
            pass
    raise ModelOutputError(f"model output does not match {schema.__name__}: {error.errors()[:3]}") from None
