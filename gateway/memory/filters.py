"""What a search may return besides tenancy: scopes, types, a time range, retired or not.

Sans-IO. :func:`vectorset_filter` renders the vector set ``FILTER`` expression (Redis docs,
"Vector sets: filtered search"); it is built only from our own enum values and numbers,
never from user text, so it needs no escaping. :meth:`SearchFilter.matches` is the same
rule in Python, applied again to every hit (defence in depth, and for keyword hits).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from gateway.memory.records import MemoryRecord, MemoryType, Scope
from gateway.runtime.errors import UnprocessableInput

__all__ = ['SearchFilter', 'vector_attributes', 'vectorset_filter']


def _enum_set(values: Iterable[str] | None, enum: type, param: str) -> frozenset | None:
    if values is None:
        return None
    if isinstance(values, str):
        values = [values]
    try:
        return frozenset(enum(v) for v in values)
    except ValueError:
        allowed = ", ".join(e.value for e in enum)  # type: ignore[attr-defined]  # enum: a StrEnum class
        raise UnprocessableInput(f"unknown {param} in {list(values)!r}; allowed: {allowed}", param=param) from None


def _aware(value: datetime | None, param: str) -> datetime | None:
    if value is not None and value.tzinfo is None:
        raise UnprocessableInput(f"{param} must carry a time zone", param=param)
    return value


@dataclass(frozen=True, slots=True)
class SearchFilter:
    """Restrictions of one search; ``None`` means no restriction.

    ``occurred_after`` is inclusive and ``occurred_before`` exclusive (a half-open range).
    """

    scopes: frozenset[Scope] | None = None
    types: frozenset[MemoryType] | None = None
    occurred_after: datetime | None = None
    occurred_before: datetime | None = None
    include_retired: bool = False

    @classmethod
    def build(
        cls,
        scopes: Iterable[str] | None = None,
        types: Iterable[str] | None = None,
        occurred_after: datetime | None = None,
        occurred_before: datetime | None = None,
        include_retired: bool = False,
    ) -> SearchFilter:
        """Validate caller input.

        Raises:
            UnprocessableInput: unknown scope or type, or a naive datetime (422).
        """
        return cls(
            scopes=_enum_set(scopes, Scope, "scopes"),
            types=_enum_set(types, MemoryType, "types"),
            occurred_after=_aware(occurred_after, "occurred_after"),
            occurred_before=_aware(occurred_before, "occurred_before"),
            include_retired=include_retired,
        )

    def matches(self, record: MemoryRecord) -> bool:
        """True when ``record`` passes every restriction."""
        if record.retired and not self.include_retired:
            return False
        if self.scopes is not None and record.scope not in self.scopes:
            return False
        if self.types is not None and record.type not in self.types:
            return False
        if self.occurred_after is not None and record.occurred_at < self.occurred_after:
            return False
        return self.occurred_before is None or record.occurred_at < self.occurred_before


def vector_attributes(record: MemoryRecord) -> str:
    """The JSON attributes VADD/VSETATTR stores on a record's vector set element."""
    live = 0 if record.retired else 1
    return json.dumps({"type": record.type.value, "t": record.occurred_at.timestamp(), "live": live})


def vectorset_filter(flt: SearchFilter) -> str | None:
    """``FILTER`` expression for VSIM over :func:`vector_attributes`, or None for no filter.

    >>> vectorset_filter(SearchFilter(types=frozenset({MemoryType.GOAL})))
    '.live == 1 and .type in ["goal"]'
    """
    clauses = [] if flt.include_retired else [".live == 1"]
    if flt.types:
        names = ",".join(json.dumps(t.value) for t in sorted(flt.types))
        clauses.append(f".type in [{names}]")
    if flt.occurred_after is not None:
        clauses.append(f".t >= {flt.occurred_after.timestamp()!r}")
    if flt.occurred_before is not None:
        clauses.append(f".t < {flt.occurred_before.timestamp()!r}")
    return " and ".join(clauses) or None
