"""Input checks at the store boundary, sans-IO; each raises an error of gateway.runtime.errors."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from gateway.memory.records import NewMemory, Scope, Tenant
from gateway.runtime.errors import PayloadTooLarge, UnprocessableInput

__all__ = ['check_new_memory', 'check_range', 'check_text', 'check_vector']


def check_text(text: str, max_chars: int, param: str = "text") -> str:
    """``text`` if non-blank and at most ``max_chars`` characters.

    Raises:
        PayloadTooLarge: longer than ``max_chars`` (413).
        UnprocessableInput: empty or whitespace only (422).
    """
    if len(text) > max_chars:
        raise PayloadTooLarge(f"{param} has {len(text)} characters; the limit is {max_chars}", param=param)
    if not text.strip():
        raise UnprocessableInput(f"{param} must not be blank", param=param)
    return text


def check_new_memory(tenant: Tenant, memory: NewMemory, max_chars: int) -> NewMemory:
    """``memory`` if ``tenant`` may store it (events need a friend) and its text fits.

    Raises:
        UnprocessableInput: event scope without ``tenant.friend_id`` (422).
        PayloadTooLarge: see :func:`check_text`.
    """
    if not isinstance(memory, NewMemory):
        raise UnprocessableInput(f"expected a NewMemory, got {type(memory).__name__}", param="memories")
    if memory.scope is Scope.EVENT and tenant.friend_id is None:
        raise UnprocessableInput("an event memory needs a friend_id", param="scope")
    check_text(memory.text, max_chars)
    if memory.context is not None:
        check_text(memory.context, max_chars, param="context")
    if memory.context_after is not None:
        check_text(memory.context_after, max_chars, param="context_after")
    return memory


def check_vector(vector: Sequence[float] | np.ndarray, dimensions: int) -> np.ndarray:
    """``vector`` as float32 of shape ``(dimensions,)``, scaled to unit length.

    Raises:
        UnprocessableInput: wrong size, non-finite values or the zero vector (422).
    """
    try:
        array = np.asarray(vector, dtype=np.float32)
    except (TypeError, ValueError):
        raise UnprocessableInput("vector must be a list of numbers", param="vector") from None
    if array.shape != (dimensions,):
        raise UnprocessableInput(f"vector has shape {array.shape}; expected ({dimensions},)", param="vector")
    norm = float(np.linalg.norm(array))
    if not np.isfinite(array).all() or norm == 0.0:
        raise UnprocessableInput("vector must be finite and non-zero", param="vector")
    return array / norm


def check_range(value: float, low: float, high: float, param: str) -> float:
    """``value`` if ``low <= value <= high``; else UnprocessableInput (422)."""
    if not low <= value <= high:
        raise UnprocessableInput(f"{param}={value!r} is outside [{low}, {high}]", param=param)
    return value
