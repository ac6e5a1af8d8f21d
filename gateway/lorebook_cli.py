"""``memgate lorebook import|export``: SillyTavern World Info from the command line
(issue 12, item 4). Works on Redis directly (same URL and key prefix as the gateway's
config), so it works whether or not a gateway runs.

- ``memgate lorebook import FILE --friend F [--user U] [--id ID] [--name N]``: a world
  file, Character Card V2/V3 JSON or PNG (:mod:`gateway.lorebook.sillytavern`); without
  ``--user`` the book applies to every user of role F. Prints the import report (JSON:
  id, entries, ignored fields, notes) on stdout.
- ``memgate lorebook export ID --friend F [--user U] [--out FILE]``: the book as a
  SillyTavern world file (stdout by default).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import click

from gateway.cli_support import load, redis_for, redis_url_for
from gateway.lorebook.model import Lorebook
from gateway.lorebook.repository import LorebookRepository
from gateway.lorebook.sillytavern import LorebookFormatError, export_world_info, import_lorebook, parse_upload

__all__ = ["register"]


def _run(config_path: str, action: Callable[[LorebookRepository], Awaitable[Any]]) -> Any:
    config = load(config_path)

    async def go(url: str) -> Any:
        async with redis_for(url) as client:
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
    @click.option("--name", default=None, help="Book name. Default: the file's.")
    def import_(config_path: str, file: Path, friend: str, user: str | None, book_id: str | None, name: str | None) -> None:
        """Import FILE (world file, Character Card V2/V3 JSON or PNG); prints the report."""
        try:
            imported = import_lorebook(parse_upload(file.read_bytes()))
            book = Lorebook(
                id=book_id or "lb_" + uuid.uuid4().hex[:16], name=name or imported.name, friend_id=friend,
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
