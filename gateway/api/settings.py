"""The caller's memory settings over HTTP: ``GET | PUT /v1/memory/settings``
(:mod:`gateway.settings.memory_settings`, :class:`~gateway.settings.memory_settings.SettingsView`;
PUT takes a :class:`~gateway.settings.memory_settings.SettingsPatch`). Any user's settings,
for admin keys: :mod:`gateway.api.admin.users`."""

from __future__ import annotations

from litestar import Controller, get, put
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import JSONBody

from gateway.api.guards import api_state, json_body_guard, provide_principal, setting_fallbacks
from gateway.api.responses import errors
from gateway.runtime.principal import Principal
from gateway.settings.memory_settings import SettingsPatch, SettingsView

__all__ = ["MemorySettingsController"]


class MemorySettingsController(Controller):
    """The caller's memory settings (:mod:`gateway.settings.memory_settings`): the key's user and friend,
    or the end user a service key names with ``X-Memgate-User`` / ``X-Memgate-Friend``.
    Effective values include the key's own overrides (``memgate keys create --set``)."""

    path = "/v1/memory/settings"
    guards = [json_body_guard]
    security = [{"bearer": []}]
    dependencies = {"principal": Provide(provide_principal)}

    @get("/", summary="The caller's memory settings", responses=errors())
    async def get_settings(self, state: State, principal: NamedDependency[Principal]) -> SettingsView:
        return await api_state(state).settings.view(
            principal.user_id, principal.friend_id, principal.settings, setting_fallbacks(state, principal))

    @put("/", summary="Change the caller's memory settings (null: back to the default)", responses=errors(403))
    async def put_settings(
        self, state: State, principal: NamedDependency[Principal], data: JSONBody[SettingsPatch]
    ) -> SettingsView:
        return await api_state(state).settings.update(
            principal.user_id, principal.friend_id, data.changes(), principal.settings, setting_fallbacks(state, principal)
        )
