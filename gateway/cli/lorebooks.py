"""``memgate lorebook import|export|list|delete|put-entry``: lorebooks from the command line.
Works on Redis directly (same URL and key prefix as the gateway's
config), so it works whether or not a gateway runs.

- ``memgate lorebook import FILE --friend F [--user U] [--id ID] [--name N]``: a world
  file, Character Card V2/V3 JSON or PNG (:mod:`gateway.lorebook.sillytavern`); without
  ``--user`` the book applies to every user of role F. The name defaults to the card's
  book name, else the file's stem (a SillyTavern world file is named by its file). Prints the import report (JSON:
  id, entries, ignored fields, notes) on stdout.
- ``memgate lorebook export ID --friend F [--user U] [--out FILE]``: the book as a
  SillyTavern world file (stdout by default).
- ``memgate lorebook list --friend F [--user U]``: the scope's books, a JSON line each
  (none: a line on stderr says so).
- ``memgate lorebook delete ID --friend F [--user U] [--entry ENTRY_ID]``: a book, or one
  entry of it.
- ``memgate lorebook put-entry ID ENTRY_JSON --friend F [--user U]``: create or replace
  one entry (seed 001 camelCase fields, :class:`~gateway.lorebook.model.LoreEntry`).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click

from gateway.cli.support import load, redis_for, redis_url_for
from gateway.lorebook.model import Lorebook, LoreEntry
from gateway.lorebook.repository import LorebookRepository
from gateway.lorebook.sillytavern import LorebookFormatError, export_world_info, import_lorebook, parse_upload

__all__ = ["register"]


def _run(config_path: str, action: Callable[[LorebookRepository], Awaitable[Any]]) -> Any:
    config = load(config_path)

    async def go(url: str) -> Any:
        async with redis_for(url, config.memory.cluster) as client:
            return await action(LorebookRepository(client, config.memory.key_prefix))

    with redis_url_for(config) as url:
        try:
            return asyncio.run(go(url))
        except Exception as exc:  # the CLI boundary: one readable line, exit 1
            raise click.ClickException(getattr(exc, "message", None) or str(exc)) from None


def register(main: click.Group, config_option: Callable[[Any], Any]) -> None:
    """Add the ``lorebook`` group to the ``memgate`` CLI."""

    @main.group()
    def lorebook() -> None:
        """Import and export SillyTavern World Info lorebooks."""

    @lorebook.command("import")
    @config_option
    @click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
    @click.option("--friend", required=True, help="friend_id: the role the book belongs to.")
    @click.option("--user", default=None, help="user_id: only this user sees it. Default: every user of the role.")
    @click.option("--id", "book_id", default=None, help="Book id (replaces a book of that id). Default: a new id.")
    @click.option("--name", default=None, help="Book name. Default: the card's book name, else the file's name without its extension.")
    def import_(config_path: str, file: Path, friend: str, user: str | None, book_id: str | None, name: str | None) -> None:
        """Import FILE (world file, Character Card V2/V3 JSON or PNG); prints the report."""
        try:
            imported = import_lorebook(parse_upload(file.read_bytes()))
            book = Lorebook(
                id=book_id or "lb_" + uuid.uuid4().hex[:16], name=name or imported.name or file.stem, friend_id=friend,
                user_id=user, entries=tuple(imported.entries),
            )
        except (LorebookFormatError, ValueError) as exc:
            raise click.ClickException(f"{file}: not a lorebook: {exc}") from None
        _run(config_path, lambda repo: repo.put(book))
        click.echo(json.dumps({
            "id": book.id, "name": book.name, "friend_id": friend, "user_id": user,
            "entries": len(book.entries), "ignored": imported.ignored, "notes": imported.notes,
        }, ensure_ascii=False))

    @lorebook.command("export")
    @config_option
    @click.argument("book_id")
    @click.option("--friend", required=True, help="friend_id: the role the book belongs to.")
    @click.option("--user", default=None, help="user_id of a user's own book. Default: the role-wide book.")
    @click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None, help="Output file (default stdout).")
    def export(config_path: str, book_id: str, friend: str, user: str | None, out: Path | None) -> None:
        """Print book BOOK_ID as a SillyTavern world file."""
        book = _run(config_path, lambda repo: repo.get(friend, user, book_id))
        if book is None:
            raise click.ClickException(f"no lorebook {book_id!r} for friend {friend!r}" + (f", user {user!r}" if user else ""))
        text = json.dumps(export_world_info(book), ensure_ascii=False, indent=2)
        if out is None:
            click.echo(text)
        else:
            out.write_text(text + "\n", encoding="utf-8")

    @lorebook.command("list")
    @config_option
    @click.option("--friend", required=True, help="friend_id: the role.")
    @click.option("--user", default=None, help="user_id: that user's own books. Default: the role-wide books.")
    def list_(config_path: str, friend: str, user: str | None) -> None:
        """One JSON line per book of the scope: id, name, entries (none: nothing on stdout,
        a line on stderr saying so and how to import one)."""
        books = _run(config_path, lambda repo: repo.in_scope(friend, user))
        for book in books:
            click.echo(json.dumps({"id": book.id, "name": book.name, "entries": len(book.entries)}, ensure_ascii=False))
        if not books:
            scope = f"of user {user!r} for friend {friend!r}" if user else f"for friend {friend!r} (role-wide)"
            click.echo(f"no lorebooks {scope}; import one with: memgate lorebook import FILE --friend {friend}"
                       + (f" --user {user}" if user else ""), err=True)

    @lorebook.command("delete")
    @config_option
    @click.argument("book_id")
    @click.option("--friend", required=True, help="friend_id: the role.")
    @click.option("--user", default=None, help="user_id of a user's own book. Default: the role-wide book.")
    @click.option("--entry", "entry_id", default=None, help="Delete only this entry of the book.")
    def delete(config_path: str, book_id: str, friend: str, user: str | None, entry_id: str | None) -> None:
        """Delete book BOOK_ID, or one entry of it (--entry)."""
        if entry_id is None:
            found = _run(config_path, lambda repo: repo.delete(friend, user, book_id))
        else:
            found = _run(config_path, lambda repo: repo.delete_entry(friend, user, book_id, entry_id))
        if not found:
            what = f"entry {entry_id!r} of lorebook" if entry_id else "lorebook"
            raise click.ClickException(f"no {what} {book_id!r} for friend {friend!r}" + (f", user {user!r}" if user else ""))

    @lorebook.command("put-entry")
    @config_option
    @click.argument("book_id")
    @click.argument("entry_json")
    @click.option("--friend", required=True, help="friend_id: the role.")
    @click.option("--user", default=None, help="user_id of a user's own book. Default: the role-wide book.")
    def put_entry(config_path: str, book_id: str, entry_json: str, friend: str, user: str | None) -> None:
        """Create or replace one entry (ENTRY_JSON: seed 001 camelCase fields, with its id)."""
        try:
            entry = LoreEntry.model_validate_json(entry_json)
        except ValueError as exc:
            raise click.ClickException(f"not an entry: {exc}") from None
        if _run(config_path, lambda repo: repo.put_entry(friend, user, book_id, entry)) is None:
            raise click.ClickException(f"no lorebook {book_id!r} for friend {friend!r}" + (f", user {user!r}" if user else ""))
        click.echo(entry.model_dump_json(by_alias=True))
