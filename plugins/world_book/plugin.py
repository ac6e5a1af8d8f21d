"""``world_book`` (seed 001): SillyTavern-compatible world-book triggers for role memory.

Per request: the caller's books (the role's, ``principal.friend_id``, and the user's own
for that role; :class:`~gateway.chain.sdk.Lorebooks`) are compiled once per book
version and cached (``cache_size`` scopes, least recently used evicted; compiling runs
off the event loop); the engine (:mod:`plugins.world_book.engine`) activates entries
against the chat's user and assistant messages; activated entries are injected by their
``position``:

- ``after_char`` / ``system``: one system section right after the client's first system
  message (the character definition), through ``call.injection``: the client's system
  prefix stays byte-identical (prompt caching);
- ``before_char``: one system message right before the client's first system message
  (this position changes the prefix by design);
- ``depth``: one message per (depth, role) inserted ``depth`` messages from the end (0:
  after the last message), moved earlier when it would fall between an assistant
  ``tool_calls`` message and its ``tool`` results (a tool-call pair is never split).

Each injected text is ``template`` with ``{{memories}}`` replaced by the entries'
contents, SillyTavern's macros (``{{user}}``, ``{{char}}``, ``{{time}}``...) replaced in both
first (:mod:`plugins.world_book.macros`: the names from the messages' ``name`` fields, else
the caller's user id and the key's friend id) (ascending priority, one per line; with ``separate_by_type`` under one heading
per type, seed 001 ``separateByType``). ``max_total_tokens`` (seed 001 ``maxTotalLength``,
SillyTavern's budget) caps the summed tokens of the activated contents (SDK
``count_tokens``, ``cl100k_base``).

**Semantic triggers** (seed 001 ``triggerType`` semantic; SillyTavern's "vectorized"
entries): the last ``scan_depth`` messages (their last ``semantic_query_chars``
characters) are embedded through :meth:`gateway.chain.sdk.Services.embed` and compared with each
semantic entry's content; the ``semantic_max_entries`` most similar at or above
``semantic_threshold`` activate (engine rule 11). Entry vectors are embedded once per
compiled book (so once per book version), 64 per call, in a task that outlives a slow
first request; the gateway's embedding cache keeps them in Redis by content hash, so a
new book version or a restart re-embeds only changed contents. With the embedder down or
slower than ``semantic_timeout_ms`` the other triggers still work and
``x-memgate-degraded`` names ``world_book:semantic_unavailable`` / ``semantic_timeout``.

The conversation (timed effects' scope) is the ``x-memgate-conversation-id`` header,
else the request's ``metadata.conversation_id``, else a hash of the system messages and
the first user message (:func:`gateway.chain.sdk.conversation_id`, shared with memorization).
Its sticky / cooldown state is kept in Redis for a week after its last request.
``random_seed`` makes probability and group draws reproducible per (conversation, chat
length); unset, they use the system's randomness.

Untrusted books: regex keys run on RE2 (linear time, :func:`gateway.chain.sdk.parse_regex_key`);
a request whose regex work (regex keys x scanned characters) is over ``max_scan_work``,
or whose books hold more than ``max_entries`` entries, goes on without world-book entries
(``x-memgate-degraded`` ``world_book:scan_budget`` / ``too_large``); an activation of more
than :data:`INLINE_SCAN_WORK` character-passes runs in a thread (at most
``scans_per_user`` per user, ``scans_total`` in all: :class:`gateway.chain.sdk.FairShare`) and
fails open past ``scan_timeout_ms`` (``world_book:scan_timeout``). Only that request is
affected.

Costs per request: two Redis round trips (versions, timed state) plus one write when a
timed effect changes; activation linear in the scanned text and the candidate entries
(``python -m bench worldbook``); with semantic entries, one query embedding (its Redis
cache lookup, and the model when missed) and one matrix-vector product.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import random
import time
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any, ClassVar, Literal

import numpy as np
import tiktoken
from pydantic import Field

from gateway.chain.sdk import (
    ENTRY_TYPES,
    FALLBACK_ENCODING,
    CallContext,
    ChatRequest,
    FairShare,
    MemoryUnavailable,
    PluginConfig,
    Services,
    SystemPart,
    conversation_id,
    count_tokens,
    message_text,
)
from plugins.world_book.emotions import EMOTION_WORDS
from plugins.world_book.engine import Activated, Activation, CompiledBook, EngineSettings, activate
from plugins.world_book.macros import MacroContext, context_for, substitute

__all__ = ["WORLD_BOOK_ORDER", "WorldBook", "WorldBookConfig", "insertion_index", "render_memories"]

#: Place of the world-book section in the injected system text (after personalization
#: 10 and the memory context 20).
WORLD_BOOK_ORDER = 30
CHAT_ROLES = ("user", "assistant")
#: Semantic entries embedded per call to the embedder (a book's first embedding).
EMBED_CHUNK = 64
#: Semantic entries compared with the query on the event loop; more go to a thread
#: (measured: 0.1 ms at 1,000 rows of 384 floats, 5 ms at 10,000).
INLINE_ROWS = 2048
#: Activations up to this many character-passes (scanned characters x (1 + regex keys))
#: run on the event loop (well under a millisecond); larger ones in a thread.
INLINE_SCAN_WORK = 200_000
DEFAULT_HEADINGS = {"episodic": "Episodes", "semantic": "World", "trait": "Traits", "goal": "Goals"}


class WorldBookConfig(PluginConfig):
    scan_depth: int = Field(2, ge=0, le=1000, description="Messages scanned for keys (SillyTavern default 2).")
    case_sensitive: bool = Field(False, description="Default for entries without caseSensitive.")
    match_whole_words: bool = Field(True, description="Default for entries without matchWholeWords.")
    max_recursion: int = Field(3, ge=0, le=20, description="Recursion passes after the first (0: none).")
    max_total_tokens: int = Field(1024, ge=1, description="Most tokens of activated entry contents (seed maxTotalLength).")
    relevance_threshold: float = Field(0.0, ge=0, description="Entries below this relevance are dropped (seed).")
    max_per_type: dict[Literal["episodic", "semantic", "trait", "goal"], int] = Field(
        default_factory=dict, description="Most entries per type (seed maxMemoriesPerType); unset: no cap."
    )
    template: str = Field("{{memories}}", description="Injected text; {{memories}} is replaced by the entries.")
    separate_by_type: bool = Field(False, description="One heading per type (seed separateByType).")
    headings: dict[str, str] = Field(default_factory=lambda: dict(DEFAULT_HEADINGS), description="Heading per type.")
    random_seed: int | None = Field(None, description="Seed of probability/group draws; unset: system randomness.")
    emotion_words: dict[str, list[str]] = Field(
        default_factory=dict, description="Extra emotion cue words per category (added to the built-in lexicon)."
    )
    cache_size: int = Field(1000, ge=1, description="Most (role, user) scopes whose compiled books are cached.")
    semantic_threshold: float = Field(
        0.25, ge=-1, le=1, description="Cosine similarity a semantic entry needs (SillyTavern Vector Storage "
        "score_threshold default 0.25).")
    semantic_max_entries: int = Field(
        5, ge=0, description="Most entries activated by similarity per request (SillyTavern max_entries, 5).")
    semantic_timeout_ms: float = Field(
        250.0, gt=0, description="Longest wait for the embeddings of one request; past it, or with the "
        "embedder down, semantic triggers are skipped (x-memgate-degraded) and the others still work.")
    semantic_query_chars: int = Field(
        2000, ge=1, description="The scan window's last characters embedded as the query.")
    max_scan_work: int = Field(
        20_000_000, ge=1, description="Most regex work of one request: the caller's regex keys x the "
        "characters scanned. Over it the request goes on without world-book entries (fail open; "
        "x-memgate-degraded world_book:scan_budget).")
    max_entries: int = Field(
        20_000, ge=1, description="Most entries of the caller's books together (the role's and the "
        "user's own); over it the request goes on without world-book entries (world_book:too_large).")
    scan_timeout_ms: float = Field(
        250.0, gt=0, description="Longest wait for an activation run off the event loop (a scan of more "
        "than 200,000 character-passes); past it the request goes on without world-book entries "
        "(world_book:scan_timeout).")
    scans_per_user: int = Field(
        2, ge=1, description="Activations of one user run off the event loop at once (more wait for a slot).")
    scans_total: int = Field(
        4, ge=1, description="Activations of all users run off the event loop at once.")


def render_memories(
    entries: Sequence[Activated], template: str, by_type: bool, headings: dict[str, str],
    macros: MacroContext | None = None,
) -> str:
    """``template`` with ``{{memories}}`` replaced (module docstring); with ``macros``,
    SillyTavern's macros in the template and in each entry's content are replaced first
    (:mod:`plugins.world_book.macros`)."""
    def text(value: str) -> str:
        return value if macros is None else substitute(value, macros)

    if by_type:
        blocks = []
        for kind in ENTRY_TYPES:
            texts = [text(a.entry.content) for a in entries if a.entry.type == kind]
            if texts:
                blocks.append(f"## {headings.get(kind, kind)}\n" + "\n".join(texts))
        body = "\n\n".join(blocks)
    else:
        body = "\n".join(text(a.entry.content) for a in entries)
    return text(template).replace("{{memories}}", body)


def insertion_index(messages: Sequence[dict[str, Any]], depth: int) -> int:
    """Where a message ``depth`` messages from the end goes (0: at the end), moved before
    any ``tool`` result it would separate from its assistant ``tool_calls`` message."""
    at = max(0, len(messages) - depth)
    while 0 < at < len(messages) and messages[at].get("role") == "tool":
        at -= 1
    return at


class WorldBook:
    """See module docstring."""

    name: ClassVar[str] = "world_book"
    Config = WorldBookConfig
    runs_after: ClassVar[tuple[str, ...]] = ()
    runs_before: ClassVar[tuple[str, ...]] = ("token_budget",)

    def __init__(self, config: WorldBookConfig, services: Services) -> None:
        if services.lorebooks is None:
            raise ValueError("world_book needs Redis (memory: section)")
        self.config = config
        self.repository = services.lorebooks
        words = {k: tuple(v) for k, v in EMOTION_WORDS.items()}
        for category, extra in config.emotion_words.items():
            words[category] = (*words.get(category, ()), *extra)
        self.settings = EngineSettings(
            scan_depth=config.scan_depth, case_sensitive=config.case_sensitive,
            match_whole_words=config.match_whole_words, max_recursion=config.max_recursion,
            budget_tokens=config.max_total_tokens, relevance_threshold=config.relevance_threshold,
            max_per_type={str(k): v for k, v in config.max_per_type.items()}, emotion_words=words,
            semantic_threshold=config.semantic_threshold, semantic_max_entries=config.semantic_max_entries,
        )
        self.services = services
        # entry vectors per compiled book (so per book version): embedding in progress or done
        self._vectors: weakref.WeakKeyDictionary[CompiledBook, asyncio.Task[np.ndarray]] = weakref.WeakKeyDictionary()
        # the same semantic contents (a role's book seen by each of its users) share one matrix
        self._by_contents: weakref.WeakValueDictionary[str, asyncio.Task[np.ndarray]] = weakref.WeakValueDictionary()
        self.encoding = tiktoken.get_encoding(FALLBACK_ENCODING)
        self._books: OrderedDict[tuple[str, str], tuple[tuple[int, int], CompiledBook]] = OrderedDict()
        self._scans = FairShare(config.scans_per_user, max(config.scans_total, config.scans_per_user))

    def warm(self) -> None:
        """:class:`~gateway.chain.sdk.Warmup`: one token count with the plugin's encoding."""
        count_tokens(self.encoding, "What did I say about the weekend?")

    async def forget_user(self, user_id: str) -> None:
        """:class:`~gateway.chain.sdk.Forgetter`: compiled books of the user are dropped from the
        cache (the gateway erases the user's books and timers, :meth:`Gateway.forget_user`)."""
        for scope in [s for s in self._books if s[1] == user_id]:
            del self._books[scope]

    async def compiled(self, friend_id: str, user_id: str) -> CompiledBook | None:
        """The caller's books compiled (cached per version, module docstring); None when
        they hold more than ``max_entries`` entries together (not compiled)."""
        scope = (friend_id, user_id)
        versions = await self.repository.versions(friend_id, user_id)
        hit = self._books.get(scope)
        if hit is not None and hit[0] == versions:
            self._books.move_to_end(scope)
            return hit[1]
        books = await self.repository.books(friend_id, user_id)
        entries = [e for b in books for e in b.entries]
        if len(entries) > self.config.max_entries:
            return None
        book = await asyncio.to_thread(CompiledBook, entries, self.settings)
        self._books[scope] = (versions, book)
        self._books.move_to_end(scope)
        while len(self._books) > self.config.cache_size:
            self._books.popitem(last=False)
        return book

    async def rewrite_request(self, call: CallContext, request: ChatRequest) -> ChatRequest:
        friend, user = call.principal.friend_id, call.principal.user_id
        book = await self.compiled(friend, user)
        if book is None:
            call.degrade(self.name, "too_large")
            return request
        if not book.entries:
            return request
        chat = [m for m in request.messages if m.get("role") in CHAT_ROLES]
        conversation = conversation_id(request, dict(call.headers))
        clock = len(chat)
        texts = [message_text(m) for m in chat]
        deepest = max(self.config.scan_depth, book.deepest)
        scanned = sum(len(t) for t in texts[max(0, len(texts) - deepest):]) if deepest else 0
        work = scanned * (1 + len(book.regexes))  # an automaton pass plus one pass per regex key
        if scanned * len(book.regexes) > self.config.max_scan_work:
            call.degrade(self.name, "scan_budget")
            return request
        similarity = await self._similarity(call, book, texts) if book.semantic else None
        timed = await self.repository.timed_state(friend, user, conversation)
        seed = self.config.random_seed
        rng = random.Random(f"{seed}:{conversation}:{clock}") if seed is not None else random.Random()
        now = datetime.now(UTC)
        run = functools.partial(
            activate, book, texts, clock=clock, timed=timed, rng=rng,
            count_tokens=functools.partial(count_tokens, self.encoding), today=now.date(),
            now_ms=int(time.time() * 1000), similarity=similarity,
        )
        if work <= INLINE_SCAN_WORK:
            result = run()
        else:  # linear (RE2, automata) but long: off the loop, a bounded share per user, a deadline
            task = asyncio.ensure_future(self._scan_off_loop(user, run))
            try:
                result = await asyncio.wait_for(asyncio.shield(task), self.config.scan_timeout_ms / 1000)
            except TimeoutError:  # the scan finishes in its thread, holding the user's slot till then
                task.add_done_callback(_seen)
                call.degrade(self.name, "scan_timeout")
                return request
        if result.timed or result.expired:
            await self.repository.save_timed_state(friend, user, conversation, result.timed, result.expired)
        call.annotations[self.name] = {
            "conversation": conversation,
            "activated": [{"id": a.entry.id, "reason": a.reason} for a in result.entries],
            "overflow": result.overflow,
        }
        if not result.entries:
            return request
        macros = context_for(request.messages, user, friend, now, rng, request.model)
        return self._inject(call, request, result.entries, macros)

    async def _scan_off_loop(self, user: str, run: Callable[[], Activation]) -> Activation:
        """``run`` in a worker thread once one of ``user``'s scan slots is free (held until
        the thread is done, even when the request stopped waiting)."""
        async with self._scans.slot(user):
            return await asyncio.to_thread(run)

    def _entry_vectors(self, book: CompiledBook) -> asyncio.Task[np.ndarray]:
        """The vectors of ``book``'s semantic entries (rows in :attr:`CompiledBook.semantic`
        order), embedded once per compiled book in a task of their own (a slow first
        embedding outlives the request that started it; a failed one is retried by the
        next request)."""
        task = self._vectors.get(book)
        if task is None or _failed(task):
            contents = [book.entries[i].content for i in book.semantic]
            digest = hashlib.sha256("\x00".join(contents).encode("utf-8", "surrogatepass")).hexdigest()
            task = self._by_contents.get(digest)
            if task is None or _failed(task):
                task = asyncio.ensure_future(self._embed_chunked(contents))
                task.add_done_callback(_retrieve)
                self._by_contents[digest] = task
            self._vectors[book] = task
        return task

    async def _embed_chunked(self, texts: Sequence[str]) -> np.ndarray:
        chunks = [await self.services.embed(texts[at:at + EMBED_CHUNK]) for at in range(0, len(texts), EMBED_CHUNK)]
        return np.concatenate(chunks) if chunks else np.zeros((0, 1), dtype=np.float32)

    async def _similarity(self, call: CallContext, book: CompiledBook, texts: Sequence[str]) -> dict[int, float] | None:
        """Cosine similarity of the scan window (the last ``scan_depth`` messages, their
        last ``semantic_query_chars`` characters) to the semantic entries at or above
        ``semantic_threshold``: ``entry index -> similarity``. None, noted in
        ``x-memgate-degraded`` (``world_book:semantic_timeout`` / ``semantic_unavailable``),
        when the embeddings take longer than ``semantic_timeout_ms`` or the embedder is
        down: the other triggers still work."""
        depth = self.config.scan_depth
        query = "\n".join(texts[max(0, len(texts) - depth):])[-self.config.semantic_query_chars:] if depth else ""
        if not query.strip() or not self.config.semantic_max_entries:
            return None
        entries = self._entry_vectors(book)
        try:
            async with asyncio.timeout(self.config.semantic_timeout_ms / 1000):
                query_vector = (await self.services.embed([query]))[0]
                vectors = await asyncio.shield(entries)
        except TimeoutError:
            call.degrade(self.name, "semantic_timeout")
            return None
        except MemoryUnavailable:
            call.degrade(self.name, "semantic_unavailable")
            return None
        if len(vectors) > INLINE_ROWS:  # ~5 ms at 10,000 rows: off the event loop
            above, scores = await asyncio.to_thread(_above, vectors, query_vector, self.config.semantic_threshold)
        else:
            above, scores = _above(vectors, query_vector, self.config.semantic_threshold)
        return {book.semantic[j]: float(scores[j]) for j in above}

    def _text(self, entries: Sequence[Activated], macros: MacroContext | None = None) -> str:
        return render_memories(entries, self.config.template, self.config.separate_by_type, self.config.headings, macros)

    def _inject(
        self, call: CallContext, request: ChatRequest, activated: Sequence[Activated], macros: MacroContext | None = None,
    ) -> ChatRequest:
        after = [a for a in activated if a.entry.position in ("after_char", "system")]
        before = [a for a in activated if a.entry.position == "before_char"]
        at_depth: dict[tuple[int, str], list[Activated]] = {}
        for a in activated:
            if a.entry.position == "depth":
                at_depth.setdefault((a.entry.depth, a.entry.role), []).append(a)
        if after:
            call.injection = call.injection.with_system(
                SystemPart(self.name, WORLD_BOOK_ORDER, render=functools.partial(_fixed, self._text(after, macros)))
            )
        if not (before or at_depth):
            return request
        messages = list(request.messages)
        inserts: list[tuple[int, int, dict[str, Any]]] = []
        for n, ((depth, role), group) in enumerate(sorted(at_depth.items(), key=lambda kv: -kv[0][0])):
            inserts.append((insertion_index(messages, depth), n, {"role": role, "content": self._text(group, macros)}))
        if before:
            first = next((i for i, m in enumerate(messages) if m.get("role") in ("system", "developer")), 0)
            inserts.append((first, -1, {"role": "system", "content": self._text(before, macros)}))
        for at, _, message in sorted(inserts, key=lambda t: (-t[0], -t[1])):
            messages.insert(at, message)
        return request.model_copy(update={"messages": messages})


def _fixed(text: str, _: object) -> str:
    return text


def _above(vectors: np.ndarray, query: np.ndarray, threshold: float) -> tuple[np.ndarray, np.ndarray]:
    """Row indices of ``vectors`` whose cosine with ``query`` is at least ``threshold``
    (unit rows: the dot product), and every row's cosine."""
    scores = vectors @ query
    return np.flatnonzero(scores >= threshold), scores


def _seen(task: asyncio.Future[Activation]) -> None:
    """Mark an abandoned scan's error (if any) as retrieved."""
    if not task.cancelled():
        task.exception()


def _failed(task: asyncio.Task[np.ndarray]) -> bool:
    return task.done() and (task.cancelled() or task.exception() is not None)


def _retrieve(task: asyncio.Task[np.ndarray]) -> None:
    """Mark a failed embedding task's error as seen (the next request retries it)."""
    if not task.cancelled():
        task.exception()
