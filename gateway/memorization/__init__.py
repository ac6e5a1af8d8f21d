"""Memorization: finished chat exchanges become long-term memories.

Request path (a chain plugin, through the SDK's memorization capability): capture the new turns
(:mod:`.capture`, :mod:`.dedupe`) and enqueue one job (:mod:`.queue`, Redis Streams).
Workers (:mod:`.worker`, :mod:`.runtime`): redact (:mod:`.redact`), plan
(:mod:`.verbatim` or :mod:`.extract` with :mod:`.facts`, :mod:`.dates`, :mod:`.prompts`;
:mod:`.inference`), store the plan once and apply it replay-safely (:mod:`.plan`,
:mod:`.apply`), honour forgets (:mod:`.forget`), observe (:mod:`.observe`).
"""
