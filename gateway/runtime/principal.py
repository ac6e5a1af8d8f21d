"""Who is calling: the principal a client key resolves to."""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gateway.runtime.config import PluginOverride

__all__ = ['Principal']


@dataclass(frozen=True, slots=True)
class Principal:
    """A resolved client key.

    Attributes:
        key_id: non-secret name of the key (logs, telemetry, ``memgate keys list``).
        user_id: whose memories are read and written.
        friend_id: the persona/bot; event memories are isolated per (user_id, friend_id)
            (seed 002 §3.2).
        admin: may manage keys and act on any user.
        service: may name the end user per request (and only such a key).
        allowed_models: model-name globs (fnmatch) the key may call.
        plugins: per-key plugin overrides by plugin name.
        group: a group key (a service key for group chats): each request acts as the
            speaker of its last user message (:mod:`gateway.speakers.group`).
        namespace: set on a group key's principal once it acts as a speaker: the
            namespace (the key's user) its speakers live in; None otherwise.
        settings: per-key memory settings overrides (:mod:`gateway.settings.memory_settings`; between
            ``settings.defaults`` and the user's stored values).
        shared_ids: upstream resource ids this key may name in a Responses create besides
            ``upstream.responses_shared_ids``, by kind (``containers``, ``vector_stores``,
            ``prompts``, ``files``): the key config's own ``responses_shared_ids``.
    """

    key_id: str
    user_id: str
    friend_id: str = "default"
    admin: bool = False
    service: bool = False
    allowed_models: tuple[str, ...] = ("*",)
    plugins: Mapping[str, PluginOverride] = field(default_factory=dict)
    group: bool = False
    namespace: str | None = None
    settings: Mapping[str, Any] = field(default_factory=dict)
    shared_ids: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def may_use(self, model: str) -> bool:
        """True if ``model`` matches one of :attr:`allowed_models`."""
        return any(fnmatch.fnmatchcase(model, glob) for glob in self.allowed_models)

    def acting_as(self, user_id: str | None, friend_id: str | None) -> Principal:
        """The same key acting for another end user (service keys only; the caller
        validates the ids). None keeps the key's own id."""
        return replace(
            self,
            user_id=self.user_id if user_id is None else user_id,
            friend_id=self.friend_id if friend_id is None else friend_id,
        )
