"""``memgate memories ...``: the memory API from the command line (issue 3 item 7).

Works on the store directly (same Redis and key prefix as the gateway's config), so it
works whether or not a gateway runs. Records are printed as JSON, one per line.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import click

from gateway.cli_support import composed, load, redis_for, redis_url_for
from gateway.config import GatewayConfig

Action = Callable[[Any, Any], Awaitable[Any]]  # (store, redis) -> result


def _fail(exc: Exception) -> click.ClickException:
    message = getattr(exc, "message", None) or str(exc)
    return click.ClickException(message)


def _run(config_path: str, action: Action, *, check_model: bool = True) -> Any:
    from gateway.memory.factory import open_store

    config: GatewayConfig = load(config_path)

    async def go(url: str) -> Any:
        async with redis_for(url) as client:
            async with open_store(
                client, config.memory, upstream_base_url=config.upstream.base_url,
                upstream_api_key=config.upstream.api_key, check_model=check_model,
            ) as store:
                return await action(store, client)

    with redis_url_for(config) as url:
        try:
            return asyncio.run(go(url))
        except Exception as exc:  # the CLI boundary: one readable line, exit 1
            raise _fail(exc) from None


def _tenant(user: str, friend: str | None) -> Any:
    from gateway.memory.records import Tenant

    return Tenant(user, friend)


def register(main: click.Group, config_option: Callable[[Any], Any]) -> None:
    """Add the ``memories`` group to the ``memgate`` CLI."""

    @main.group()
    def memories() -> None:
        """Read and manage stored memories."""

    def tenant_options(f: Any) -> Any:
        f = click.option("--friend", default="default", show_default=True, help="friend_id.")(f)
        return click.option("--user", required=True, help="user_id.")(f)

    @memories.command("list")
    @config_option
    @tenant_options
    @click.option("--limit", default=50, show_default=True)
    def list_(config_path: str, user: str, friend: str, limit: int) -> None:
        """Visible memories of (user, friend), newest first."""
        page = _run(config_path, lambda s, _: s.list(_tenant(user, friend), limit=limit))
        for record in page.items:
            click.echo(record.model_dump_json())

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("query")
    @click.option("--top-k", default=5, show_default=True)
    @click.option("--threshold", default=0.0, show_default=True)
    def search(config_path: str, user: str, friend: str, query: str, top_k: int, threshold: float) -> None:
        """Search (user, friend)'s memories; prints score and record."""
        hits = _run(config_path, lambda s, _: s.search(_tenant(user, friend), query, top_k=top_k, threshold=threshold))
        for hit in hits:
            click.echo(hit.model_dump_json())

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("text")
    @click.option("--scope", type=click.Choice(["profile", "event"]), default="event", show_default=True)
    @click.option("--type", "type_", default="semantic", show_default=True,
                  type=click.Choice(["episodic", "semantic", "trait", "goal", "preference", "inference"]))
    def add(config_path: str, user: str, friend: str, text: str, scope: str, type_: str) -> None:
        """Store one memory."""
        from gateway.memory.records import NewMemory

        new = NewMemory(scope=scope, type=type_, text=text)
        click.echo(_run(config_path, lambda s, _: s.add(_tenant(user, friend), new)).model_dump_json())

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("memory_id")
    def delete(config_path: str, user: str, friend: str, memory_id: str) -> None:
        """Erase one memory."""
        _run(config_path, lambda s, _: s.delete(_tenant(user, friend), memory_id))
        click.echo(f"deleted {memory_id}")

    @memories.command()
    @config_option
    @click.option("--user", required=True, help="user_id.")
    @click.option("--out", type=click.File("w"), default="-", help="JSONL file (default stdout).")
    def export(config_path: str, user: str, out: Any) -> None:
        """Every memory of a user (all friends) as JSONL."""

        async def action(store: Any, _: Any) -> int:
            count = 0
            async for record in store.export_user(user):
                out.write(record.model_dump_json() + "\n")
                count += 1
            return count

        count = _run(config_path, action)
        click.echo(f"exported {count} records", err=True)

    @memories.command("import")
    @config_option
    @click.argument("path", type=click.File("rb"))
    def import_(config_path: str, path: Any) -> None:
        """Store records from JSONL (ids and times kept, re-embedded)."""
        from gateway.memory_api import parse_jsonl

        records = parse_jsonl(path.read())
        click.echo(f"imported {_run(config_path, lambda s, _: s.import_records(records))} records")

    @memories.command()
    @config_option
    @click.option("--user", required=True, help="user_id.")
    @click.confirmation_option(prompt="Erase every memory of this user?")
    def forget(config_path: str, user: str) -> None:
        """Erase every memory of a user and discard their pending memorization jobs."""
        config = load(config_path)

        async def go(url: str) -> int:
            async with composed(config, url) as gateway:
                return await gateway.forget_user(user)

        with redis_url_for(config) as url:
            try:
                deleted = asyncio.run(go(url))
            except Exception as exc:  # the CLI boundary: one readable line, exit 1
                raise _fail(exc) from None
        click.echo(f"forgot {user}: {deleted} records erased")

    @memories.command()
    @config_option
    def reembed(config_path: str) -> None:
        """Re-embed every memory with the configured embedding model (after a change)."""
        count = _run(config_path, lambda s, _: s.reembed(), check_model=False)
        click.echo(f"re-embedded {count} records")

