"""Per-partition keyword postings in Redis for the vectorset backend's BM25 ranking.

One sorted set per (partition, term) (:meth:`KeySpace.postings`): member = record id,
score = the BM25 term-frequency weight (:func:`ranking.bm25_term_weight`). Everything
stays under the user's hash tag, so tenancy is by key here too.

A query is scored inside Redis by read-only Lua (:data:`BM25_FUNCTION`, run with
``EVALSHA``): for each partition it reads the partition size (ZCARD of its listing), each
term's document frequency (ZCARD) and its best :data:`POSTINGS_PER_TERM` postings, sums
``idf * weight`` per record (idf as :func:`ranking.bm25_idf`) and returns only the best
``count`` ids, each with its BM25 score (the store's convex fusion normalises it,
:func:`ranking.convex_scores`). Before, the postings (~1,600 per 4-term query at 100k memories) travelled
to Python and were summed there, the largest cost of a hybrid search at that size. Ties
go to the larger id (the newer record, ids start with their creation time). The vector
set backend runs it in the same script as its vector queries (one command:
:meth:`KeywordIndex.search_keys` gives the keys); :meth:`KeywordIndex.search` runs it
alone (:data:`BM25`). Scripts are loaded again when a server lost them
(:mod:`gateway.memory.scripts`).
"""

from __future__ import annotations

import functools
from collections.abc import Sequence

import redis.asyncio as aredis

import gateway.memory.scripts as scripts
from gateway.memory.keys import KeySpace, Partition
from gateway.memory.ranking import bm25_term_weight
from gateway.memory.records import MemoryRecord, indexed_text
from gateway.memory.scripts import Script, Writes
from gateway.memory.tokenize import index_terms, term_frequencies

__all__ = ['BM25', 'BM25_FUNCTION', 'MAX_QUERY_TERMS', 'POSTINGS_PER_TERM', 'KeywordIndex', 'search_reply']

MAX_QUERY_TERMS = 32
POSTINGS_PER_TERM = 1000

#: ``bm25_terms(keys, base, nterms, cap)``: one partition's reads: ``keys[base]`` is its
#: listing key and ``keys[base + 1 .. base + nterms]`` its postings key of each term; per
#: term with postings, ``{idf, rows}`` (``rows``: its best ``cap`` postings, flat ``id,
#: weight``). ``bm25_top(parts, count)``: the best ``count`` ids over those reads (a list of
#: ``bm25_terms`` results, summed in order) with their BM25 scores, flat: ``id, score, id,
#: score, ...`` (scores as decimal strings, ``%.17g``: Redis would cut a Lua number to an
#: integer). ``bm25(keys, first, last, nterms, count, cap)``: both, for the partitions whose
#: ``base`` runs from ``first`` to ``last`` in steps of ``nterms + 1``. Shared by
#: :data:`BM25` and the vector set backend's scripts (which read a partition once for
#: several searches: the same reads give the same scores).
BM25_FUNCTION = """
local function bm25_terms(keys, base, nterms, cap)
  local total = redis.call('ZCARD', keys[base])
  local out = {}
  for t = 1, nterms do
    local key = keys[base + t]
    local df = redis.call('ZCARD', key)
    if df > 0 then
      local idf = math.log(1 + (math.max(total - df, 0) + 0.5) / (df + 0.5))
      out[#out + 1] = {idf, redis.call('ZRANGE', key, 0, cap - 1, 'REV', 'WITHSCORES')}
    end
  end
  return out
end

local function bm25_top(parts, count)
  local scores, ids, nids = {}, {}, 0
  for p = 1, #parts do
    local terms = parts[p]
    for t = 1, #terms do
      local idf, rows = terms[t][1], terms[t][2]
      -- postings of short records often share one weight: its score string (interned,
      -- so compared by pointer) is converted once per run of equal weights
      local weight, gain = nil, 0
      for j = 1, #rows, 2 do
        local id, w = rows[j], rows[j + 1]
        if w ~= weight then
          weight, gain = w, idf * tonumber(w)
        end
        local old = scores[id]
        if old == nil then
          nids = nids + 1
          ids[nids] = id
          scores[id] = gain
        else
          scores[id] = old + gain
        end
      end
    end
  end
  -- the best count, by insertion into a sorted array (a full sort of every id cost 2x)
  local out, n, worst, worst_id = {}, 0, 0, nil
  for i = 1, nids do
    local id = ids[i]
    local s = scores[id]
    if n < count or s > worst or (s == worst and id > worst_id) then
      local k = (n < count) and n + 1 or n
      while k > 1 do
        local prev = out[k - 1]
        local sp = scores[prev]
        if sp > s or (sp == s and prev > id) then break end
        out[k] = prev
        k = k - 1
      end
      out[k] = id
      if n < count then n = n + 1 end
      worst_id = out[n]
      worst = scores[worst_id]
    end
  end
  -- id, score pairs; the score as a string: a Lua number in a reply is cut to an integer
  local reply = {}
  for i = 1, n do
    reply[2 * i - 1] = out[i]
    reply[2 * i] = string.format('%.17g', scores[out[i]])
  end
  return reply
end

local function bm25(keys, first, last, nterms, count, cap)
  local parts = {}
  for base = first, last, nterms + 1 do parts[#parts + 1] = bm25_terms(keys, base, nterms, cap) end
  return bm25_top(parts, count)
end
"""

#: KEYS: for each partition its listing key then its postings key of each term.
#: ARGV: number of terms, count, postings read per term. Reply: up to ``count`` ids, each
#: followed by its score (:func:`search_reply`).
BM25 = Script("bm25", "#!lua flags=no-writes\n" + BM25_FUNCTION + """
return bm25(KEYS, 1, #KEYS, tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]))
""")


def query_terms(text: str) -> list[str]:
    """Unique index terms of ``text`` (stemmed tokens, :func:`tokenize.index_terms`) in
    order, at most :data:`MAX_QUERY_TERMS`; the last 256 texts' terms are remembered (a
    request's searches share one query text)."""
    return list(_query_terms(text))


@functools.lru_cache(maxsize=256)
def _query_terms(text: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(index_terms(text)))[:MAX_QUERY_TERMS]

class KeywordIndex:
    """See module docstring."""

    def __init__(self, client: aredis.Redis, keys: KeySpace):
        self._client = client
        self._keys = keys

    def queue_put(self, pipe: Writes, record: MemoryRecord) -> None:
        counts = term_frequencies(indexed_text(record), record.keywords)
        length = sum(counts.values())
        part = Partition.of(record)
        keys = []
        for term, tf in counts.items():
            keys.append(self._keys.postings(part, term))
            pipe.zadd(keys[-1], {record.id: bm25_term_weight(tf, length)})
        if keys:
            pipe.sadd(self._keys.registry(record.user_id), *keys)

    def queue_remove(self, pipe: Writes, record: MemoryRecord) -> None:
        part = Partition.of(record)
        for term in term_frequencies(indexed_text(record), record.keywords):
            pipe.zrem(self._keys.postings(part, term), record.id)

    async def rebuild(self, part: Partition, records: Sequence[MemoryRecord]) -> None:
        """Replace the partition's postings with those of ``records`` (``memgate memories
        reembed``: postings written with other terms, e.g. before terms were stemmed, go).
        The old keys are found in the user's registry, not by SCAN."""
        prefix = self._keys.postings(part, "")
        members = await self._client.smembers(self._keys.registry(part.user_id))
        old = [k.decode() if isinstance(k, bytes) else k for k in members]
        old = [k for k in old if k.startswith(prefix)]
        for start in range(0, len(old), 1000):
            chunk = old[start : start + 1000]
            pipe = self._client.pipeline(transaction=False)
            pipe.delete(*chunk)
            pipe.srem(self._keys.registry(part.user_id), *chunk)
            await pipe.execute()
        for start in range(0, len(records), 1000):
            pipe = self._client.pipeline(transaction=False)
            for record in records[start : start + 1000]:
                self.queue_put(pipe, record)
            await pipe.execute()

    def search_keys(self, parts: Sequence[Partition], text: str) -> tuple[list[str], int]:
        """``(keys, number of terms)`` of the BM25 ranking of ``text`` over ``parts``
        (:data:`BM25_FUNCTION`'s layout); ``([], 0)`` when ``text`` has no terms."""
        terms = query_terms(text)
        if not terms or not parts:
            return [], 0
        keys = []
        for part in parts:
            keys.append(self._keys.listing(part))
            keys.extend(self._keys.postings(part, term) for term in terms)
        return keys, len(terms)

    async def search(self, parts: Sequence[Partition], text: str, count: int) -> list[tuple[str, float]]:
        """``(record id, BM25 score)`` of the records of ``parts`` best matching ``text``,
        at most ``count``, best first, one round trip."""
        keys, nterms = self.search_keys(parts, text)
        if not nterms:
            return []
        return search_reply(await scripts.run(self._client, BM25, keys, (nterms, count, POSTINGS_PER_TERM)))  # type: ignore[arg-type]


def search_reply(reply: Sequence[bytes | str]) -> list[tuple[str, float]]:
    """The BM25 script's reply (``id, score, ...``; bytes or str, the same flat array in
    RESP2 and RESP3) -> ``(record id, BM25 score)``, best first.

    >>> search_reply([b"m2", b"1.5", "m1", "0.25"])
    [('m2', 1.5), ('m1', 0.25)]
    """
    ids = [m.decode() if isinstance(m, bytes) else m for m in reply[0::2]]
    return [(doc_id, float(score)) for doc_id, score in zip(ids, reply[1::2], strict=True)]
