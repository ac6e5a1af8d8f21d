"""Durations in config name their unit (issue 8 item 7): every numeric field whose name or
description speaks of time ends with ``_ms`` or ``_s``."""

from __future__ import annotations

import re
from collections.abc import Iterator

from pydantic import BaseModel

from gateway.app import default_registry
from gateway.config import GatewayConfig

TIME_WORDS = re.compile(r"\b(seconds?|milliseconds?|timeout|ttl|deadline|budget|delay|interval between|cool-?down|idle time)\b", re.I)


def fields(model: type[BaseModel], path: str) -> Iterator[tuple[str, str, object]]:
    for name, info in model.model_fields.items():
        annotation = info.annotation
        yield f"{path}.{name}", info.description or "", annotation
        for candidate in getattr(annotation, "__args__", ()) or (annotation,):
            if isinstance(candidate, type) and issubclass(candidate, BaseModel):
                yield from fields(candidate, f"{path}.{name}")


def test_every_duration_key_ends_with_its_unit():
    models: list[tuple[type[BaseModel], str]] = [(GatewayConfig, "gateway")]
    models += [(cls.Config, f"plugins.{name}") for name, cls in default_registry().items()]
    offenders = []
    for model, root in models:
        for path, description, annotation in fields(model, root):
            numeric = annotation in (int, float, int | None, float | None)
            if numeric and TIME_WORDS.search(path.rsplit(".", 1)[1].replace("_", " ") + " " + description):
                if not path.endswith(("_ms", "_s")):
                    offenders.append(path)
    assert offenders == []
