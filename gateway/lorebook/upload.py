"""The JSON shapes ``POST /v1/lorebooks`` accepts, as pydantic models: they document the
body in the OpenAPI schema and bound every field the importer maps
(:mod:`gateway.lorebook.sillytavern`), so a body that validates here imports. Unknown
fields are allowed (they are reported as ignored). Field names and value ranges are
SillyTavern's (``newWorldInfoEntryDefinition`` in ``public/scripts/world-info.js``) and
the character-card spec v2/v3's ``character_book``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Discriminator, Field, RootModel, Tag

from gateway.lorebook.model import MAX_ENTRIES, MAX_KEY_CHARS, MAX_KEYS_PER_ENTRY, LoreEntry

__all__ = ["BookSummary", "CardIn", "CharacterBookIn", "EntryBody", "ImportReport", "LorebookUpload", "WorldFileIn"]


def _exactly(*types: type) -> Any:
    """A before-validator that refuses values of other JSON types (litestar validates
    request bodies in lax mode, which would turn ``0`` into ``False``)."""

    def check(value: Any) -> Any:
        if types == (int,) and isinstance(value, float) and value.is_integer():
            return int(value)  # JSON Schema: 2.0 is an integer
        if not isinstance(value, types) or (bool not in types and isinstance(value, bool)):
            raise ValueError(f"expected {' or '.join(t.__name__ for t in types)}")
        return value

    return BeforeValidator(check)


Bool = Annotated[bool, _exactly(bool)]
Int = Annotated[int, _exactly(int)]
Float = Annotated[float, _exactly(int, float)]

Key = Annotated[str, Field(max_length=MAX_KEY_CHARS)]
#: One entry's key list (primary or secondary; :func:`~gateway.lorebook.model.book_problem`
#: also bounds the two together and the book's totals).
Keys = Annotated[list[Key], Field(max_length=MAX_KEYS_PER_ENTRY)]
Text = Annotated[str, Field(max_length=100_000)]
Id = Int | Annotated[str, Field(min_length=1, max_length=200)]
Count = Annotated[int, Field(ge=0, le=1_000_000), _exactly(int)]


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)


class MemgateFieldsIn(_Open):
    """Seed 001 fields this gateway exports in an entry's ``memgate`` object."""

    type: Literal["episodic", "semantic", "trait", "goal"] | None = None
    trigger_type: Literal["keyword", "semantic", "temporal", "emotional"] | None = None
    relevance_weight: Annotated[float, Field(ge=0, le=1e6), _exactly(int, float)] | None = None
    emotional_weight: Annotated[float, Field(ge=0, le=1e6), _exactly(int, float)] | None = None
    time_decay_factor: Annotated[float, Field(ge=0, le=1e6), _exactly(int, float)] | None = None
    related_topics: list[Key] | None = None
    emotional_context: list[Key] | None = None
    dates: list[Annotated[str, Field(pattern=r"^(\d{4}-)?\d{2}-\d{2}$")]] | None = None
    timestamp: Int | None = None


class _Settings(_Open):
    probability: Annotated[int, Field(ge=0, le=100), _exactly(int)] | None = None
    useProbability: Bool | None = None
    depth: Annotated[int, Field(ge=0, le=10_000), _exactly(int)] | None = None
    selectiveLogic: Annotated[int, Field(ge=0, le=3), _exactly(int)] | None = None
    role: Annotated[int, Field(ge=0, le=2), _exactly(int)] | None = None
    sticky: Count | None = None
    cooldown: Count | None = None
    delay: Count | None = None
    memgate: MemgateFieldsIn | None = None


class WorldEntryIn(_Settings):
    """One entry of a SillyTavern world file."""

    uid: Id | None = None
    key: Keys = []
    keysecondary: Keys = []
    comment: Text | None = None
    content: Text = ""
    constant: Bool | None = None
    order: Int | None = None
    position: Annotated[int, Field(ge=0, le=7), _exactly(int)] | None = None
    disable: Bool | None = None
    excludeRecursion: Bool | None = None
    preventRecursion: Bool | None = None
    delayUntilRecursion: Bool | Count | None = None
    group: Key | None = None
    groupOverride: Bool | None = None
    groupWeight: Count | None = None
    scanDepth: Annotated[int, Field(ge=0, le=1000), _exactly(int)] | None = None
    caseSensitive: Bool | None = None
    matchWholeWords: Bool | None = None


class WorldFileIn(_Open):
    """A SillyTavern world file: ``{"entries": {"<uid>": entry}}``."""

    entries: Annotated[dict[Annotated[str, Field(max_length=200)], WorldEntryIn], Field(max_length=MAX_ENTRIES)]
    name: Key | None = None


class CardExtensionsIn(_Settings):
    """SillyTavern's settings under a character-book entry's ``extensions``."""

    position: Annotated[int, Field(ge=0, le=7), _exactly(int)] | None = None
    exclude_recursion: Bool | None = None
    prevent_recursion: Bool | None = None
    delay_until_recursion: Bool | Count | None = None
    group: Key | None = None
    group_override: Bool | None = None
    group_weight: Count | None = None
    scan_depth: Annotated[int, Field(ge=0, le=1000), _exactly(int)] | None = None
    case_sensitive: Bool | None = None
    match_whole_words: Bool | None = None


class CardEntryIn(_Open):
    """One ``character_book`` entry (character-card spec v2/v3)."""

    id: Id | None = None
    keys: Keys = []
    secondary_keys: Keys = []
    content: Text = ""
    comment: Text | None = None
    name: Key | None = None
    constant: Bool | None = None
    insertion_order: Int | None = None
    enabled: Bool | None = None
    case_sensitive: Bool | None = None
    use_regex: Bool | None = None
    position: Literal["before_char", "after_char"] | None = None
    extensions: CardExtensionsIn | None = None


class CharacterBookIn(_Open):
    """A ``character_book``: ``{"entries": [entry, ...]}``."""

    entries: Annotated[list[CardEntryIn], Field(max_length=MAX_ENTRIES)]
    name: Key | None = None


class CardDataIn(_Open):
    character_book: CharacterBookIn
    name: Key | None = None


class CardIn(_Open):
    """A Character Card V2/V3 JSON with a ``character_book``."""

    spec: Literal["chara_card_v2", "chara_card_v3"]
    data: CardDataIn


def _shape(value: Any) -> str:
    if isinstance(value, dict):
        if "spec" in value:
            return "card"
        return "book" if isinstance(value.get("entries"), list) else "world"
    return {"CardIn": "card", "CharacterBookIn": "book"}.get(type(value).__name__, "world")


class LorebookUpload(RootModel[Annotated[
    Annotated[CardIn, Tag("card")] | Annotated[CharacterBookIn, Tag("book")] | Annotated[WorldFileIn, Tag("world")],
    Discriminator(_shape),
]]):
    """A world file, a Character Card V2/V3 JSON (``spec`` set), or a bare
    ``character_book`` (``entries`` a list)."""


class ImportReport(BaseModel):
    """What ``POST /v1/lorebooks`` stored: the book's ``id``, its scope, how many
    entries, and the input fields it ignored (``field -> entries``) with notes."""

    id: str
    name: str
    friend_id: str
    user_id: str | None
    entries: int
    ignored: dict[str, int]
    notes: list[str]


class EntryBody(LoreEntry):
    """An entry as ``PUT .../entries/{entry_id}`` takes it: every field of
    :class:`~gateway.lorebook.model.LoreEntry` but ``id``, which is the path's."""

    id: str | None = Field(None, exclude=True, json_schema_extra={"readOnly": True})  # type: ignore[assignment]  # the path gives it


class BookSummary(BaseModel):
    """One book of ``GET /v1/lorebooks``."""

    id: str
    name: str
    friend_id: str
    user_id: str | None
    entries: int
