"""``memgate memories ...``: the memory API from the command line (issue 3 item 7).

Works on the store directly (same Redis and key prefix as the gateway's config), so it
works whether or not a gateway runs. Records are printed as JSON, one per line, on stdout;
messages go to stderr. ``--friend`` defaults to the friend of the user's key in
``gateway.yaml`` (:func:`default_friend`). The embedding model is loaded only by commands
that embed (add, search, import, reembed).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import click

from gateway.cli_support import composed, load, redis_for, redis_url_for
from gateway.config import GatewayConfig

__all__ = ['Action', 'default_friend', 'register']

Action = Callable[[Any, Any], Awaitable[Any]]  # (store, redis) -> result


def _fail(exc: Exception) -> click.ClickException:
    message = getattr(exc, "message", None) or str(exc)
    return click.ClickException(message)


def default_friend(config: GatewayConfig, user: str, friend: str | None) -> str:
    """``friend`` when given, else the ``friend_id`` of the ``gateway.yaml`` key(s) of
    ``user`` (the dev key's ``assistant`` for its user) when they all name one friend.

    Raises:
        click.UsageError: no ``--friend`` and no single friend to default to.
    """
    if friend is not None:
        return friend
    friends = sorted({c.friend_id for c in config.clients if c.user_id == user})
    if len(friends) == 1:
        return friends[0]
    why = f"the config keys of {user!r} name friends {friends}" if friends else f"no config key has user_id {user!r}"
    raise click.UsageError(f"--friend is required ({why})")


def _run(config: GatewayConfig | str, action: Action, *, check_model: bool = True, lazy: bool = True) -> Any:
    """Run ``action(store, redis)`` on the config's store; the embedding model is loaded
    only if the action embeds (``lazy``, :class:`gateway.memory.factory.LazyEmbedder`)."""
    from gateway.memory.factory import open_store

    if isinstance(config, str):
        config = load(config)
    memory, upstream = config.memory, config.upstream

    async def go(url: str) -> Any:
        async with redis_for(url, config.memory.cluster) as client:
            async with open_store(
                client, memory, upstream_base_url=upstream.base_url, upstream_api_key=upstream.api_key,
                check_model=check_model, lazy_embedder=lazy,
            ) as store:
                return await action(store, client)

    with redis_url_for(config) as url:
        try:
            return asyncio.run(go(url))
        except Exception as exc:  # the CLI boundary: one readable line, exit 1
            raise _fail(exc) from None


def _tenant(user: str, friend: str | None) -> Any:
    from gateway.errors import InvalidRequest
    from gateway.memory.records import Tenant

    try:
        return Tenant(user, friend)
    except InvalidRequest as exc:
        raise _fail(exc) from None


def register(main: click.Group, config_option: Callable[[Any], Any]) -> None:
    """Add the ``memories`` group to the ``memgate`` CLI."""

    @main.group()
    def memories() -> None:
        """Read and manage stored memories."""

    def tenant_options(f: Any) -> Any:
        f = click.option(
            "--friend", default=None,
            help="friend_id. Default: the friend of USER's key in gateway.yaml (the dev key's for its user); "
            "required otherwise.",
        )(f)
        return click.option("--user", required=True, help="user_id.")(f)

    @memories.command("list")
    @config_option
    @tenant_options
    @click.option("--limit", default=50, show_default=True)
    def list_(config_path: str, user: str, friend: str | None, limit: int) -> None:
        """Visible memories of (user, friend), newest first."""
        config = load(config_path)
        tenant = _tenant(user, default_friend(config, user, friend))
        page = _run(config, lambda s, _: s.list(tenant, limit=limit))
        for record in page.items:
            click.echo(record.model_dump_json())

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("query")
    @click.option("--top-k", default=5, show_default=True)
    @click.option("--threshold", default=0.0, show_default=True)
    def search(config_path: str, user: str, friend: str | None, query: str, top_k: int, threshold: float) -> None:
        """Search (user, friend)'s memories; prints score and record."""
        config = load(config_path)
        tenant = _tenant(user, default_friend(config, user, friend))
        hits = _run(config, lambda s, _: s.search(tenant, query, top_k=top_k, threshold=threshold))
        for hit in hits:
            click.echo(hit.model_dump_json())

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("text")
    @click.option("--scope", type=click.Choice(["profile", "event"]), default="event", show_default=True)
    @click.option("--type", "type_", default="semantic", show_default=True,
                  type=click.Choice(["episodic", "semantic", "trait", "goal", "preference", "inference"]))
    def add(config_path: str, user: str, friend: str | None, text: str, scope: str, type_: str) -> None:
        """Store one memory."""
        from gateway.memory.records import NewMemory

        config = load(config_path)
        tenant = _tenant(user, default_friend(config, user, friend))
        new = NewMemory(scope=scope, type=type_, text=text)
        click.echo(_run(config, lambda s, _: s.add(tenant, new)).model_dump_json())

    @memories.command()
    @config_option
    @tenant_options
    @click.argument("memory_id")
    def delete(config_path: str, user: str, friend: str | None, memory_id: str) -> None:
        """Erase one memory."""
        config = load(config_path)
        tenant = _tenant(user, default_friend(config, user, friend))
        _run(config, lambda s, _: s.delete(tenant, memory_id))
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
            async with composed(config, url, lazy_embedder=True) as gateway:
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
        count = _run(config_path, lambda s, _: s.reembed(), check_model=False, lazy=False)
        click.echo(f"re-embedded {count} records")

