"""Lorebook REST API, scoped like the memory API
(:mod:`gateway.api.memories`): the caller's key names the role (``friend_id``) and user.

- ``POST /v1/lorebooks`` (body: SillyTavern World Info JSON: a world file, a Character Card
  V2/V3 JSON or its ``character_book``, :mod:`gateway.lorebook.upload`; PNG cards through
  the CLI, ``memgate lorebook import``):
  201 with :class:`ImportReport` (the lorebook ``id`` and the fields it ignored). Query:
  ``scope`` ``user`` (default: the caller's own book for its role) or ``role`` (every
  user of the role: admin or service keys only, 403 otherwise), ``id`` (to replace a
  book; default a new ``lb_...`` id), ``name``.
- ``GET /v1/lorebooks/{id}?scope=``: the book as a SillyTavern world file (404 if the
  caller's scope has no such book).
- ``GET /v1/lorebooks?scope=``: the scope's books (id, name, entry count).
- ``DELETE /v1/lorebooks/{id}?scope=``: 204, or 404.
- ``PUT /v1/lorebooks/{id}/entries/{entry_id}?scope=`` (body: one entry, seed 001's
  camelCase field names, :class:`~gateway.lorebook.model.LoreEntry` without ``id``: the
  path's ``entry_id`` is its id): create or replace the entry, 200 with the entry; 404
  without the book.
- ``DELETE /v1/lorebooks/{id}/entries/{entry_id}?scope=``: 204, or 404.

Writes to ``scope=role`` need an admin or service key (403 otherwise); reads of it too
only name the caller's role. Entry edits are read-modify-write (last writer wins).

Errors use the OpenAI envelope: a body that is not one of those shapes is 400 naming the
field at fault; so is a book over the size limits or with a regex key RE2 cannot run
(:func:`gateway.lorebook.model.book_problem`, checked before anything is written). An
import takes the caller's bulk slot (:mod:`gateway.runtime.fair_share`: one at a time per user).
"""

from __future__ import annotations

import asyncio
import re
import uuid
from typing import Annotated, Any, Literal

from litestar import Controller, delete, get, post, put
from litestar.datastructures import State
from litestar.di import NamedDependency, Provide
from litestar.openapi.datastructures import ResponseSpec
from litestar.params import FromPath, JSONBody, QueryParameter

from gateway.api.guards import json_body_guard, provide_principal, require_admin_or_service
from gateway.api.responses import errors
from gateway.lorebook.model import Lorebook, LoreEntry, book_problem, entry_problem
from gateway.lorebook.repository import LorebookRepository
from gateway.lorebook.sillytavern import Imported, LorebookFormatError, export_world_info, import_lorebook
from gateway.lorebook.upload import BookSummary, CardIn, EntryBody, ImportReport, LorebookUpload
from gateway.runtime.errors import InvalidRequest, NotFound, UnprocessableInput
from gateway.runtime.principal import Principal

__all__ = ["BookSummary", "ImportReport", "LorebooksController"]

BOOK_ID = r"^[A-Za-z0-9_.-]{1,100}$"
LorebookScope = Literal["user", "role"]


async def provide_lorebooks(state: State) -> Any:
    repository: LorebookRepository = state.lorebooks
    return repository


def _owner(principal: Principal, scope: LorebookScope) -> str | None:
    if scope == "user":
        return principal.user_id
    require_admin_or_service(principal, "scope=role (every user of the role)", param="scope")
    return None


async def _imported(data: LorebookUpload) -> Imported:
    """The upload mapped and checked (:func:`_check_book`); a book of more than
    :data:`INLINE_ENTRIES` entries is mapped in a worker thread (linear, but pure Python)."""
    def run() -> Imported:
        try:
            imported = import_lorebook(data.root.model_dump(exclude_unset=True))
        except LorebookFormatError as exc:
            raise UnprocessableInput(f"not a lorebook: {exc}", param="body") from None
        _check_book(zip(imported.places, imported.entries, strict=True))
        return imported

    root = data.root
    entries = root.data.character_book.entries if isinstance(root, CardIn) else root.entries
    return await asyncio.to_thread(run) if len(entries) > INLINE_ENTRIES else run()


#: Lorebook imports with more entries are mapped off the event loop.
INLINE_ENTRIES = 200


def _check_book(entries: Any) -> None:
    """400 naming the field when a book breaks a size or regex limit
    (:func:`gateway.lorebook.model.book_problem`); checked before anything is written."""
    problem = book_problem(entries)
    if problem is not None:
        raise InvalidRequest(problem[1], param=problem[0])


class LorebooksController(Controller):
    """The caller's lorebooks (module docstring)."""

    path = "/v1/lorebooks"
    guards = [json_body_guard]
    security = [{"bearer": []}]
    dependencies = {"principal": Provide(provide_principal), "lorebooks": Provide(provide_lorebooks)}

    @post("/", summary="Import a SillyTavern World Info lorebook", status_code=201, responses=errors(403, 413, 422))
    async def import_book(
        self,
        state: State,
        data: JSONBody[LorebookUpload],
        principal: NamedDependency[Principal],
        lorebooks: NamedDependency[Any],
        book_scope: Annotated[LorebookScope, QueryParameter(name="scope")] = "user",
        book_id: Annotated[str | None, QueryParameter(name="id", pattern=BOOK_ID)] = None,
        name: Annotated[str | None, QueryParameter(max_length=200)] = None,
    ) -> ImportReport:
        owner = _owner(principal, book_scope)
        async with state.memory_api.bulk.slot(principal.user_id):  # one bulk call per user at a time
            imported = await _imported(data)
        book = Lorebook(
            id=book_id or "lb_" + uuid.uuid4().hex[:16], name=name or imported.name,
            friend_id=principal.friend_id, user_id=owner, entries=tuple(imported.entries),
        )
        await lorebooks.put(book)
        return ImportReport(
            id=book.id, name=book.name, friend_id=book.friend_id, user_id=owner,
            entries=len(book.entries), ignored=imported.ignored, notes=imported.notes,
        )

    @get("/{book_id:str}", summary="Export a lorebook as a SillyTavern world file", responses=errors(404))
    async def export_book(
        self,
        principal: NamedDependency[Principal],
        lorebooks: NamedDependency[Any],
        book_id: FromPath[str],
        book_scope: Annotated[LorebookScope, QueryParameter(name="scope")] = "user",
    ) -> dict[str, Any]:
        owner = principal.user_id if book_scope == "user" else None
        book = await lorebooks.get(principal.friend_id, owner, book_id) if re.match(BOOK_ID, book_id) else None
        if book is None:
            raise NotFound(f"no lorebook {book_id!r} in scope {book_scope}", param="id")
        return export_world_info(book)

    @get("/", summary="List the caller's lorebooks in a scope", responses=errors())
    async def list_books(
        self,
        principal: NamedDependency[Principal],
        lorebooks: NamedDependency[Any],
        book_scope: Annotated[LorebookScope, QueryParameter(name="scope")] = "user",
    ) -> list[BookSummary]:
        owner = principal.user_id if book_scope == "user" else None
        return [BookSummary(id=b.id, name=b.name, friend_id=b.friend_id, user_id=b.user_id, entries=len(b.entries))
                for b in await lorebooks.in_scope(principal.friend_id, owner)]

    @delete("/{book_id:str}", summary="Delete a lorebook", status_code=204, responses=errors(403, 404))
    async def delete_book(
        self,
        principal: NamedDependency[Principal],
        lorebooks: NamedDependency[Any],
        book_id: FromPath[str],
        book_scope: Annotated[LorebookScope, QueryParameter(name="scope")] = "user",
    ) -> None:
        owner = _owner(principal, book_scope)
        if not (re.match(BOOK_ID, book_id) and await lorebooks.delete(principal.friend_id, owner, book_id)):
            raise NotFound(f"no lorebook {book_id!r} in scope {book_scope}", param="id")

    @put("/{book_id:str}/entries/{entry_id:str}", summary="Create or replace one entry of a lorebook",
         responses={**errors(403, 404), 200: ResponseSpec(
             data_container=LoreEntry, description="The entry as stored (camelCase fields)", generate_examples=False)})
    async def put_entry(
        self,
        data: JSONBody[EntryBody],
        principal: NamedDependency[Principal],
        lorebooks: NamedDependency[Any],
        book_id: FromPath[str],
        entry_id: FromPath[str],
        book_scope: Annotated[LorebookScope, QueryParameter(name="scope")] = "user",
    ) -> dict[str, Any]:
        owner = _owner(principal, book_scope)
        entry = LoreEntry.model_validate({**data.model_dump(exclude={"id"}), "id": entry_id})
        problem = entry_problem(entry, "")
        if problem is not None:
            raise InvalidRequest(problem[1], param=problem[0])

        def check(book: Lorebook) -> None:
            _check_book((e.id if e.id == entry_id else f"entries.{e.id}", e) for e in book.entries)

        book = (await lorebooks.put_entry(principal.friend_id, owner, book_id, entry, check)
                if re.match(BOOK_ID, book_id) else None)
        if book is None:
            raise NotFound(f"no lorebook {book_id!r} in scope {book_scope}", param="id")
        return entry.model_dump(mode="json", by_alias=True)

    @delete("/{book_id:str}/entries/{entry_id:str}", summary="Delete one entry of a lorebook", status_code=204,
            responses=errors(403, 404))
    async def delete_entry(
        self,
        principal: NamedDependency[Principal],
        lorebooks: NamedDependency[Any],
        book_id: FromPath[str],
        entry_id: FromPath[str],
        book_scope: Annotated[LorebookScope, QueryParameter(name="scope")] = "user",
    ) -> None:
        owner = _owner(principal, book_scope)
        if not (re.match(BOOK_ID, book_id) and await lorebooks.delete_entry(principal.friend_id, owner, book_id, entry_id)):
            raise NotFound(f"no entry {entry_id!r} in lorebook {book_id!r} ({book_scope})", param="entry_id")
