"""Admin keys only (403 otherwise): one user's memories and settings, by user id.

- ``GET /v1/admin/users/{user_id}/export``: the user's memories as JSONL.
- ``POST /v1/admin/users/{user_id}/import``: JSONL body (:func:`parse_jsonl`); records
  keep ids and times.
- ``POST /v1/admin/users/{user_id}/forget``: erases every memory of the user and discards
  what their pending memorization jobs would write (:func:`gateway.chain.forget.forget_user`).
- ``GET | PUT /v1/admin/users/{user_id}/settings?friend_id=F``: any user's memory settings.

``user_id`` is best sent percent-encoded (``urllib.parse.quote(user_id, safe="")``); it
may contain ``/``. The console's other admin routes: :mod:`gateway.api.admin.console_api`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Annotated, Any

from litestar import Controller, Request, get, post, put
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.params import FromPath, JSONBody, QueryParameter
from litestar.response import Response, Stream
from pydantic import BaseModel, Field

from gateway.api.guards import admin_guard, api_state, json_body_guard, provide_store, setting_fallbacks
from gateway.api.responses import errors
from gateway.memory.maintenance import record_to_jsonl, records_from_jsonl
from gateway.memory.records import MemoryRecord, check_tenant_id
from gateway.runtime.errors import InvalidRequest, MethodNotAllowed, NotFound
from gateway.runtime.json_input import decode_utf8
from gateway.settings.memory_settings import SettingsPatch, SettingsView

__all__ = ["AdminUsersController", "ForgetResult", "ImportResult", "admin_target", "parse_jsonl"]


class ImportResult(BaseModel):
    imported: int = Field(description="Records stored.")


class ForgetResult(BaseModel):
    user_id: str
    deleted: int = Field(description="Memory records erased.")


#: The admin actions and the methods each answers (others: 405 with ``Allow``).
ADMIN_ACTIONS: dict[str, tuple[str, ...]] = {
    "export": ("GET",), "import": ("POST",), "forget": ("POST",), "settings": ("GET", "PUT"),
}


def admin_target(path: str, actions: tuple[str, ...], method: str = "GET") -> tuple[str, str]:
    """``(user_id, action)`` from the part of an admin path after ``/v1/admin/users``.

    The id is everything between ``/v1/admin/users/`` and the last ``/`` (the action is
    always the last segment), so ids containing ``/`` work whether the client sends them
    percent-encoded (``urllib.parse.quote(user_id, safe="")``, decoded by the HTTP server
    before routing) or raw.

    ``actions``: the actions the calling handler serves; ``method``: the request's method.

    Raises:
        MethodNotAllowed: the action exists for another method (405 with ``Allow``).
        NotFound: the last segment is no admin action (404).
        InvalidRequest: the id fails :func:`gateway.memory.records.check_tenant_id` (400).
    """
    user_id, _, action = path.removeprefix("/").rpartition("/")
    if action not in actions and action in ADMIN_ACTIONS:
        raise MethodNotAllowed(method, ADMIN_ACTIONS[action])
    if action not in actions:
        raise NotFound(f"no admin route {path!r}: use /v1/admin/users/{{user_id}}/" + "|".join(actions))
    return check_tenant_id(user_id, "user_id"), action


FriendQuery = Annotated[str | None, QueryParameter(
    min_length=1, max_length=256, description="The friend (persona) whose settings are meant (required).")]


class AdminUsersController(Controller):
    """Admin keys only: export, import, forget any user; read and change any user's memory
    settings (``settings?friend_id=F``: the yaml defaults and the stored values; a key's
    own overrides are not part of this view, as a user may use several keys).

    Routes are ``/v1/admin/users/{user_id}/export|import|forget|settings``; ``user_id`` may
    contain ``/`` (one ``:path`` parameter per method, split by :func:`admin_target`).
    """

    path = "/v1/admin/users"
    guards = [admin_guard, json_body_guard]
    security = [{"bearer": []}]
    dependencies = {"store": Provide(provide_store)}

    @get("/{target:path}", summary="GET {user_id}/export: a user's memories as JSONL (user_id percent-encoded); "
         "GET {user_id}/settings?friend_id=F: a user's memory settings (SettingsView JSON)",
         responses=errors(403, 404), media_type="application/x-ndjson",
         description="export: one MemoryRecord JSON per line. settings: a SettingsView (application/json).")
    async def export_user(
        self, state: State, store: NamedDependency[Any], target: FromPath[str], friend_id: FriendQuery = None
    ) -> Response[Any]:
        user_id, action = admin_target(target, ("export", "settings"), "GET")
        if action == "settings":  # JSON, a SettingsView (one handler per method and path)
            view = await api_state(state).settings.view(user_id, _friend(friend_id), {}, setting_fallbacks(state, None))
            return Response(view.model_dump(mode="json"), media_type="application/json")
        records = store.export_user(user_id)

        async def lines() -> AsyncIterator[bytes]:
            async for record in records:
                yield record_to_jsonl(record).encode()

        return Stream(lines(), media_type="application/x-ndjson")

    @post(
        "/{target:path}", status_code=200, responses=errors(403, 404, 422),
        summary="POST {user_id}/import (JSONL body) or {user_id}/forget (erase everything of the user)",
        description="import: JSON Lines, one MemoryRecord per line (what export writes); records keep "
        "their ids and times; an empty body imports nothing. forget: erases every memory of the user "
        "and discards what their pending memorization jobs would write.",
    )
    async def import_or_forget(
        self, request: Request[Any, Any, Any], state: State, store: NamedDependency[Any], target: FromPath[str]
    ) -> ImportResult | ForgetResult:
        user_id, action = admin_target(target, ("import", "forget"), "POST")
        if action == "forget":
            return ForgetResult(user_id=user_id, deleted=await api_state(state).forget_user(user_id))
        async with api_state(state).bulk.slot(user_id):
            records = parse_jsonl(await request.body(), user_id)
            return ImportResult(imported=await store.import_records(records))

    @put("/{target:path}", summary="PUT {user_id}/settings?friend_id=F: change a user's memory settings",
         responses=errors(403, 404), description="Body: SettingsPatch (null: back to the default); "
         "answers the SettingsView.")
    async def put_user_settings(
        self, state: State, target: FromPath[str], data: JSONBody[SettingsPatch], friend_id: FriendQuery = None
    ) -> SettingsView:
        user_id, _ = admin_target(target, ("settings",), "PUT")
        return await api_state(state).settings.update(
            user_id, _friend(friend_id), data.changes(), {}, setting_fallbacks(state, None))


def _friend(friend_id: str | None) -> str:
    """The required ``friend_id`` query parameter of the admin settings routes.

    Raises:
        InvalidRequest: absent or breaking the id rules (400, ``param`` friend_id).
    """
    if friend_id is None:
        raise InvalidRequest("friend_id: query parameter required (the friend whose settings are meant)",
                             param="friend_id")
    return check_tenant_id(friend_id, "friend_id")


def parse_jsonl(body: bytes, user_id: str | None = None) -> list[MemoryRecord]:
    """Records from a JSONL body (:func:`gateway.memory.maintenance.records_from_jsonl`).

    Raises:
        InvalidRequest: the body is not UTF-8 (400).
        UnprocessableInput: a line is not a valid record (its line number is named), or
            ``user_id`` is given and a record belongs to another user.
    """
    return list(records_from_jsonl(decode_utf8(body).splitlines(), user_id))
