"""``vectorset`` backend: Redis 8 native vector sets (Redis docs, "Vector sets").

One vector set per partition (:meth:`KeySpace.vector_set`): element = record id, vector
added with ``VADD ... FP32 <blob> <id> Q8|BIN|NOQUANT SETATTR <json>`` (attributes from
:func:`filters.vector_attributes`), searched with ``VSIM ... WITHSCORES COUNT n EF e
FILTER <expr>``; VSIM scores are ``(1 + cos) / 2`` and are converted back to cosine.
Keyword ranking: :class:`~gateway.memory.keyword_index.KeywordIndex`.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence

import numpy as np
import redis.asyncio as aredis
from redis.asyncio.client import Pipeline

import gateway.memory.scripts as scripts
from gateway.memory.backend import Prefetched
from gateway.memory.codec import PACK_FUNCTION
from gateway.memory.filters import SearchFilter, vector_attributes, vectorset_filter
from gateway.memory.keys import KeySpace, Partition
from gateway.memory.keyword_index import BM25_FUNCTION, POSTINGS_PER_TERM, KeywordIndex, search_reply
from gateway.memory.ranking import clamp01, cosine_from_vsim
from gateway.memory.records import MemoryRecord, indexed_text
from gateway.memory.scripts import Script, Writes

__all__ = ['EMBEDDINGS', 'LIVE_ONLY', 'QUANTIZATION_FLAGS', 'RANK', 'REBUILD_BATCH', 'SEARCH', 'VectorSetBackend']

QUANTIZATION_FLAGS = {"q8": "Q8", "bin": "BIN", "noquant": "NOQUANT"}
REBUILD_BATCH = 1000


LIVE_ONLY = vectorset_filter(SearchFilter())

#: Both rankings of a search in one command. KEYS: the vector set of each partition, then
#: the BM25 keys (:meth:`KeywordIndex.search_keys`; none without a keyword ranking).
#: ARGV: number of partitions, number of terms (0: no keyword ranking), count, postings
#: per term, then the VSIM arguments after the key. Reply: each VSIM reply, then the BM25
#: ids and scores when asked (:func:`~gateway.memory.keyword_index.search_reply`).
RANK = Script("vectorset-rank", "#!lua flags=no-writes\n" + BM25_FUNCTION + """
local nparts, nterms = tonumber(ARGV[1]), tonumber(ARGV[2])
local vsim = {}
for i = 5, #ARGV do vsim[#vsim + 1] = ARGV[i] end
local out = {}
for i = 1, nparts do out[i] = redis.call('VSIM', KEYS[i], unpack(vsim)) end
if nterms > 0 then
  out[nparts + 1] = bm25(KEYS, nparts + 1, #KEYS, nterms, tonumber(ARGV[3]), tonumber(ARGV[4]))
end
return out
""")


#: The stored vector of each id: KEYS the vector set of each partition; ARGV ``raw`` (1:
#: ``VEMB ... RAW``, 0: plain ``VEMB``) then the ids. Reply: per id the ``VEMB`` reply of
#: the first set holding it, ``false`` (nil) when none does.
EMBEDDINGS = Script("vectorset-embeddings", """#!lua flags=no-writes
local raw, out = ARGV[1] == '1', {}
for i = 2, #ARGV do
  local found = false
  for k = 1, #KEYS do
    local reply
    if raw then reply = redis.call('VEMB', KEYS[k], ARGV[i], 'RAW') else reply = redis.call('VEMB', KEYS[k], ARGV[i]) end
    if reply then found = reply break end
  end
  out[i - 1] = found
end
return out
""")


#: Several searches of one user in one command, with their candidates' records: the
#: rankings of :data:`RANK` for each search, each partition's BM25 reads done once for all
#: of them, then the record hash of every candidate a search may keep and the stored
#: vector of its keyword-only ones. KEYS: each partition's vector set, and with a keyword
#: ranking its BM25 keys (:meth:`KeywordIndex.search_keys`' layout). ARGV[1]: JSON
#: ``{"prefix": record key prefix, "raw": 1 (VEMB RAW) | 0, "nterms", "cap", "parts":
#: [{"vs": key index, "bm": key index of its listing (0: none)}], "searches": [{"parts":
#: [part index], "vsim": VSIM arguments after the vector, "attribs": WITHATTRIBS given,
#: "count", "floor": lowest VSIM score whose record is read}]}``; ARGV[2]: the query
#: vector (FP32 bytes). Reply: ``{rankings, records, vectors}``: each search's :data:`RANK`
#: reply; ``id, HGETALL reply packed`` pairs (:data:`~gateway.memory.codec.PACK_FUNCTION`); ``id, VEMB reply or nil`` pairs (the first of the
#: search's sets that holds the id).
#:
#: Which records: every VSIM row at or above both ``floor`` (the search's threshold, as a
#: VSIM score, a hair lower) and the ``count``-th best live row's score (the vector ranking
#: keeps the best ``count`` live rows: the liveness test is :func:`_is_live`'s), and every
#: BM25 hit. Which vectors: the BM25 hits not strictly above that ``count``-th score (those
#: may be keyword-only). A superset of what the store reads after ranking
#: (:meth:`VectorSetBackend.rank_and_read`); what it lacks the store reads in one more trip.
#: The record keys are built in the script from ``prefix`` (the ids are known only there):
#: they carry the user's hash tag like every key given, so they are in the same slot on a
#: Redis Cluster (tests/memory/test_contract.py runs there).
SEARCH = Script("vectorset-search", "#!lua flags=no-writes\n" + BM25_FUNCTION + PACK_FUNCTION + """
local spec = cjson.decode(ARGV[1])
local blob, parts, nterms, cap = ARGV[2], spec.parts, spec.nterms, spec.cap
local function is_live(a)
  if not a or a == '' then return true end
  if string.find(a, '"live": 1}', -10, true) then return true end
  local ok, v = pcall(cjson.decode, a)
  if not ok or type(v) ~= 'table' then return true end
  return v.live == nil or v.live == 1
end
local reads = {}
local rankings, want, wanted, vemb, vembs = {}, {}, {}, {}, {}
local function add(id)
  if not want[id] then want[id] = true wanted[#wanted + 1] = id end
end
for s = 1, #spec.searches do
  local search = spec.searches[s]
  local reply, rows, scores = {}, {}, {}
  local step = search.attribs and 3 or 2
  for i = 1, #search.parts do
    local r = redis.call('VSIM', KEYS[parts[search.parts[i]].vs], 'FP32', blob, unpack(search.vsim))
    reply[i] = r
    for j = 1, #r, step do
      local score = tonumber(r[j + 1])
      if score ~= nil and (step == 2 or is_live(r[j + 2])) then
        rows[#rows + 1] = r[j]
        scores[#scores + 1] = score
      end
    end
  end
  local boundary = -math.huge
  if #scores > search.count then
    local sorted = {}
    for k = 1, #scores do sorted[k] = scores[k] end
    table.sort(sorted, function(a, b) return a > b end)
    boundary = sorted[search.count]
  end
  local lowest = math.max(boundary, search.floor)
  local strict = {}
  for k = 1, #rows do
    if scores[k] > boundary then strict[rows[k]] = true end
    if scores[k] >= lowest then add(rows[k]) end
  end
  if nterms > 0 and parts[search.parts[1]].bm > 0 then
    local sets = {}
    for i = 1, #search.parts do
      local p = search.parts[i]
      if reads[p] == nil then reads[p] = bm25_terms(KEYS, parts[p].bm, nterms, cap) end
      sets[i] = reads[p]
    end
    local top = bm25_top(sets, search.count)
    reply[#search.parts + 1] = top
    for j = 1, #top, 2 do
      local id = top[j]
      add(id)
      if not strict[id] and vemb[id] == nil then
        local found = false
        for i = 1, #search.parts do
          local key = KEYS[parts[search.parts[i]].vs]
          if spec.raw == 1 then found = redis.call('VEMB', key, id, 'RAW') else found = redis.call('VEMB', key, id) end
          if found then break end
        end
        vemb[id] = found
        vembs[#vembs + 1] = id
        vembs[#vembs + 1] = found
      end
    end
  end
  rankings[s] = reply
end
local records = {}
for i = 1, #wanted do
  records[2 * i - 1] = wanted[i]
  records[2 * i] = pack(redis.call('HGETALL', spec.prefix .. wanted[i]))
end
return {rankings, records, vembs}
""")


def _rows(reply: object, with_attribs: bool = False) -> list[tuple[str, float, object]]:
    """VSIM WITHSCORES [WITHATTRIBS] reply (redis-py dict, or a flat RESP2 list) ->
    ``[(id, vsim score, attributes or None)]``."""
    if isinstance(reply, dict):
        items = [(k, *(v if with_attribs else (v, None))) for k, v in reply.items()]
    else:
        flat, step = list(reply or []), 3 if with_attribs else 2  # type: ignore[call-overload]  # RESP2 flat list
        items = [(*flat[i : i + 2], flat[i + 2] if with_attribs else None) for i in range(0, len(flat), step)]
    return [(k.decode() if isinstance(k, bytes) else str(k), float(s), a) for k, s, a in items]




def _text(value: object) -> str:
    """A reply's bulk string as str (replies may be bytes)."""
    return value.decode() if isinstance(value, bytes) else str(value)


def _is_live(attributes: object) -> bool:
    """False for a retired record (attributes ``"live": 0``); missing attributes: live.

    Attributes written by :func:`~gateway.memory.filters.vector_attributes` end with
    ``"live": 1}`` exactly when live (``json.dumps`` of a dict whose last key is ``live``),
    checked without parsing: a search reads ~40 of them. Anything else is parsed."""
    if not attributes:
        return True
    if isinstance(attributes, bytes) and attributes.endswith(b'"live": 1}'):
        return True
    if isinstance(attributes, str) and attributes.endswith('"live": 1}'):
        return True
    return json.loads(attributes).get("live", 1) == 1  # type: ignore[arg-type]  # bytes or str


def _stored_vector(reply: object, raw: bool) -> np.ndarray | None:
    """``VEMB`` reply -> the stored vector up to a positive scale (enough for a cosine).
    ``RAW`` replies are ``[type, bytes, l2 norm, (range)]``; ``int8`` values are the
    vector scaled by ``127 / range`` (Redis docs, "VEMB"), ``f32`` the vector itself."""
    if not reply:
        return None
    if not raw:
        return np.asarray(reply, dtype=np.float32)
    kind, data = reply[0], reply[1]  # type: ignore[index]
    kind = kind.decode() if isinstance(kind, bytes) else str(kind)
    dtype = {"int8": np.int8, "f32": np.float32}.get(kind)
    if dtype is None:
        raise ValueError(f"VEMB RAW: unexpected quantization {kind!r}")
    return np.frombuffer(data, dtype=dtype).astype(np.float32)


def _best(hits: list[tuple[str, float]], count: int) -> list[tuple[str, float]]:
    """Top ``count`` by VSIM score, converted to cosine."""
    hits.sort(key=lambda pair: -pair[1])
    return [(doc_id, cosine_from_vsim(score)) for doc_id, score in hits[:count]]


class VectorSetBackend:
    """See module docstring."""

    name = "vectorset"

    def __init__(self, client: aredis.Redis, keys: KeySpace, quantization: str, ef: int, nothread: bool = True):
        self._client = client
        self._keys = keys
        self._quant = QUANTIZATION_FLAGS[quantization]
        #: 2: keyword terms are stemmed (:func:`gateway.memory.tokenize.index_terms`); a
        #: store built with version 1 is refused at start-up until ``memgate memories
        #: reembed`` rebuilds its postings (:meth:`rebuild_partition`).
        self.index_version = f"vectorset-2-{quantization}"
        self._ef = ef
        self._nothread = ["NOTHREAD"] if nothread else []
        self._keywords = KeywordIndex(client, keys)

    async def prepare(self, dimensions: int) -> None:
        """Nothing to create: vector sets appear with their first VADD."""

    def _queue_vadd(self, pipe: Writes, key: str, record: MemoryRecord, vector: np.ndarray) -> None:
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        pipe.execute_command(
            "VADD", key, "FP32", blob, record.id, self._quant, "SETATTR", vector_attributes(record)
        )

    def queue_put(
        self, pipe: Writes, record: MemoryRecord, vector: np.ndarray | None, old: MemoryRecord | None
    ) -> None:
        key = self._keys.vector_set(Partition.of(record))
        if vector is None:
            pipe.execute_command("VSETATTR", key, record.id, vector_attributes(record))
        else:
            self._queue_vadd(pipe, key, record, vector)
        if old is not None and (indexed_text(old), old.keywords) == (indexed_text(record), record.keywords):
            return  # same terms: postings stay as they are
        if old is not None:
            self._keywords.queue_remove(pipe, old)
        self._keywords.queue_put(pipe, record)

    def queue_remove(self, pipe: Writes, record: MemoryRecord) -> None:
        pipe.execute_command("VREM", self._keys.vector_set(Partition.of(record)), record.id)
        self._keywords.queue_remove(pipe, record)

    async def vector_search(
        self, parts: Sequence[Partition], vector: np.ndarray, count: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        """See :meth:`rank` (vector ranking only)."""
        hits, _ = await self.rank(parts, vector, None, count, flt)
        return hits

    async def rank(
        self, parts: Sequence[Partition], vector: np.ndarray, text: str | None, count: int, flt: SearchFilter
    ) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
        """Both rankings in one command (:data:`RANK`): VSIM of each partition and, with
        ``text``, the keyword index's BM25 ``(id, score)``.

        Default searches (only retired records excluded) skip ``FILTER``, which about
        doubles VSIM time: they ask ``WITHATTRIBS`` and drop retired hits here, and fall
        back to ``FILTER`` (a second round trip) only when a full reply lost hits that
        way."""
        keys, args, finish = self._rank_call(parts, vector, text, count, flt)
        return await finish(await scripts.run(self._client, RANK, keys, args))

    def queue_rank(
        self, pipe: Pipeline, parts: Sequence[Partition], vector: np.ndarray, text: str | None, count: int,
        flt: SearchFilter,
    ) -> Callable[[object], Awaitable[tuple[list[tuple[str, float]], list[tuple[str, float]]]]]:
        """:meth:`rank` queued on ``pipe`` (its :data:`RANK` call, so several searches share
        one round trip); returns the coroutine function that turns that call's reply into
        :meth:`rank`'s result (with the same fallback round trip)."""
        keys, args, finish = self._rank_call(parts, vector, text, count, flt)
        RANK.queue(pipe, keys, args)
        return finish

    def _rank_call(
        self, parts: Sequence[Partition], vector: np.ndarray, text: str | None, count: int, flt: SearchFilter
    ) -> tuple[list[str], list, Callable[[object], Awaitable[tuple[list[tuple[str, float]], list[tuple[str, float]]]]]]:
        """The :data:`RANK` keys and arguments of :meth:`rank`, and its reply's reader."""
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        expression = vectorset_filter(flt)
        live_only = expression == LIVE_ONLY
        extra = ["WITHATTRIBS"] if live_only else (["FILTER", expression] if expression else [])
        bm25_keys, nterms = self._keywords.search_keys(parts, text) if text is not None else ([], 0)
        vsim = ["FP32", blob, *self._vsim_options(count, extra)]
        keys = [self._keys.vector_set(part) for part in parts] + bm25_keys

        async def finish(replies: object) -> tuple[list[tuple[str, float]], list[tuple[str, float]]]:
            assert isinstance(replies, list)
            keyword_hits = search_reply(replies[len(parts)]) if nterms else []
            if not live_only:
                return _best([(d, s) for r in replies[: len(parts)] for d, s, _ in _rows(r)], count), keyword_hits
            dropped = False
            hits = []
            for reply in replies[: len(parts)]:
                rows = _rows(reply, with_attribs=True)
                live = [(d, s) for d, s, attrs in rows if _is_live(attrs)]
                dropped |= len(rows) == count and len(live) < len(rows)
                hits += live
            if dropped:
                pipe = self._client.pipeline(transaction=False)
                self._queue_vsim(pipe, parts, blob, count, ["FILTER", expression])
                hits = [(d, s) for r in await pipe.execute() for d, s, _ in _rows(r)]
            return _best(hits, count), keyword_hits

        return keys, [len(parts), nterms, count, POSTINGS_PER_TERM, *vsim], finish

    async def rank_and_read(
        self, user_id: str, searches: Sequence[tuple[Sequence[Partition], int, SearchFilter, float]],
        vector: np.ndarray, text: str | None,
    ) -> Prefetched:
        """Each search's :meth:`rank` (``searches``: its partitions, count, filter and
        cosine threshold) and the candidates' records and stored vectors, in one command
        (:data:`SEARCH`; module :mod:`gateway.memory.scripts` says why commands cost). The
        rankings are :meth:`rank`'s, with its fallback round trip."""
        finishers: list = []
        table: dict[str, tuple[int, dict[str, int]]] = {}
        keys: list[str] = []
        searches_arg: list[dict] = []
        terms = 0
        for parts, count, flt, threshold in searches:
            call_keys, args, finish = self._rank_call(parts, vector, text, count, flt)
            finishers.append(finish)
            nterms = int(args[1])
            indexes = []
            for i, part_key in enumerate(call_keys[: len(parts)]):
                if part_key not in table:
                    entry = {"vs": len(keys) + 1, "bm": 0}
                    keys.append(part_key)
                    if nterms:
                        at = len(parts) + i * (nterms + 1)
                        entry["bm"] = len(keys) + 1
                        keys.extend(call_keys[at : at + nterms + 1])
                    table[part_key] = (len(table) + 1, entry)
                indexes.append(table[part_key][0])
            options = list(args[6:])  # after the partition and term counts, count, cap, "FP32", blob
            searches_arg.append({
                "parts": indexes, "vsim": options, "attribs": "WITHATTRIBS" in options, "count": count,
                "floor": (threshold + 1.0) / 2.0 - 1e-9 if threshold > 0 else -2.0,
            })
            terms = nterms
        spec = {
            "prefix": self._keys.record(user_id, ""), "raw": 0 if self._quant == "BIN" else 1,
            "nterms": terms, "cap": POSTINGS_PER_TERM, "parts": [entry for _, entry in table.values()],
            "searches": searches_arg,
        }
        blob = np.asarray(vector, dtype=np.float32).tobytes()
        reply = await scripts.run(self._client, SEARCH, keys, [json.dumps(spec), blob])
        assert isinstance(reply, list)
        rankings, records, vectors = reply
        ranked = [await finish(one) for finish, one in zip(finishers, rankings, strict=True)]
        return Prefetched(
            ranked,
            {_text(records[i]): records[i + 1] for i in range(0, len(records), 2)},
            {_text(vectors[i]): vectors[i + 1] for i in range(0, len(vectors), 2)},
            self.stored_similarities,
        )

    def stored_similarities(self, ids: Sequence[str], stored: Sequence[object], query: np.ndarray) -> dict[str, float]:
        """Cosine to ``query`` of each id's stored vector (``stored``: its ``VEMB`` reply,
        RAW but for BIN sets; None when absent), one product for every candidate; ids
        without a vector are left out."""
        raw = self._quant != "BIN"
        found, rows = [], []
        for doc_id, reply in zip(ids, stored, strict=True):
            emb = _stored_vector(reply, raw)
            if emb is not None:
                found.append(doc_id)
                rows.append(emb)
        if not rows:
            return {}
        matrix = np.stack(rows)
        norms = np.linalg.norm(matrix, axis=1)
        cosines = (matrix @ np.asarray(query, dtype=np.float32)) / np.where(norms > 0, norms, 1.0)
        return {doc_id: clamp01(float(c)) for doc_id, c in zip(found, cosines, strict=True)}

    def _vsim_options(self, count: int, extra: list) -> list:
        """VSIM's arguments after the query vector (scores, count, EF, NOTHREAD, ``extra``)."""
        return ["WITHSCORES", "COUNT", count, "EF", max(self._ef, count), *self._nothread, *extra]

    def _queue_vsim(self, pipe: Pipeline, parts: Sequence[Partition], blob: bytes, count: int, extra: list) -> None:
        args = self._vsim_options(count, extra)
        for part in parts:
            pipe.execute_command("VSIM", self._keys.vector_set(part), "FP32", blob, *args)

    async def keyword_search(
        self, parts: Sequence[Partition], text: str, count: int, flt: SearchFilter
    ) -> list[tuple[str, float]]:
        return await self._keywords.search(parts, text, count)

    def queue_similarities(
        self, pipe: Pipeline, parts: Sequence[Partition], ids: Sequence[str], vector: np.ndarray
    ) -> Callable[[Sequence[object]], dict[str, float]]:
        """One :data:`EMBEDDINGS` call: ``VEMB ... RAW`` of each id in the first partition's
        set that has it (the quantized bytes: 384 int8 instead of 384 doubles as text) for
        Q8 and NOQUANT sets, plain ``VEMB`` (dequantized) for BIN ones. One command
        instead of one per id and partition: each command costs the client more than the
        server (:mod:`gateway.memory.scripts`)."""
        raw = self._quant != "BIN"
        if not ids:
            return lambda replies: {}
        EMBEDDINGS.queue(pipe, [self._keys.vector_set(part) for part in parts], [1 if raw else 0, *ids])
        return lambda replies: self.stored_similarities(ids, replies[0], vector)  # type: ignore[arg-type]

    async def reset_index(self, dimensions: int) -> None:
        """Nothing global: each partition's set is rebuilt by :meth:`rebuild_partition`."""

    async def rebuild_partition(
        self, part: Partition, items: Sequence[tuple[MemoryRecord, np.ndarray]]
    ) -> None:
        """Build the new set under a temporary key, then RENAME it over the old one, so
        searches see the old set until the new one is complete; then rebuild the
        partition's keyword postings (:meth:`KeywordIndex.rebuild`)."""
        key = self._keys.vector_set(part)
        tmp = f"{key}:rebuild"
        await self._client.delete(tmp)
        for start in range(0, len(items), REBUILD_BATCH):
            pipe = self._client.pipeline(transaction=False)
            for record, vector in items[start : start + REBUILD_BATCH]:
                self._queue_vadd(pipe, tmp, record, vector)
            await pipe.execute()
        if items:
            await self._client.rename(tmp, key)
        else:
            await self._client.delete(key)
        await self._keywords.rebuild(part, [record for record, _ in items])
