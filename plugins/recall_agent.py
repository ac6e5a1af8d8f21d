"""The recall agent of seed 002 §3.1 (stage one): a few rounds of planned memory searches
before the main model call.

Each round searches the caller's profile (``profile_topk``) and events (``event_topk``)
for each planned query, keeping hits whose strength is at least ``similarity_threshold``
(the best per memory). A hit's strength (:attr:`gateway.chain.sdk.ScoredMemory.strength`)
is its calibrated ``relevance`` (P(related), :mod:`gateway.memory.calibration`) when the
store has a calibration, else its cosine: seed 002's 0.5 then means "as likely related as
not" with any embedder (a 0.5 cosine floor kept every Chinese memory under
multilingual-e5). Between rounds the memory model
(:class:`gateway.chain.sdk.MemoryModel`, structured JSON output) sees the user's
message and what was found, and answers :class:`Plan` ``{"queries": [...], "done":
bool}``; ``done`` or no new query ends the agent, and so does the round limit (seed 002
§6.5). Round one uses the user message itself as the only query when ``first_round_direct``
(saves one model call, ~0.5-1 s, on every request; the model then only refines).

The agent's reasoning is recorded in ``Found.steps`` (one entry per round: the queries
searched, what they found, then the planner's answer), which ``recall_report`` shows
clients whose ``show_thinking`` setting is on (seed 002 §5.2 "显示思维链").

Failure is never fatal: a memory-model error stops planning and a store failure stops
searching; what was found so far is kept in the :class:`Found` passed in (so a caller
that times the agent out still has it) and the reason is in ``Found.notes``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gateway.chain.sdk import (
    GuardedRecall,
    MemgateError,
    MemoryModel,
    ModelOutputError,
    RecallSkipped,
    ScoredMemory,
    Tenant,
)

__all__ = ['MAX_QUERIES_PER_ROUND', 'PLANNER_PROMPT', 'AgentSettings', 'Found', 'Plan', 'RecallAgent', 'describe_found', 'next_queries', 'planner_messages']

MAX_QUERIES_PER_ROUND = 3

PLANNER_PROMPT = (
    "You plan searches of a user's long-term memory for an assistant that is about to answer "
    "the user's latest message. The memory holds profile facts (who the user is, preferences) "
    "and event gists (what happened in past conversations). Given the message and what was "
    "found so far, answer with JSON {\"queries\": [...], \"done\": true|false}: up to 3 new, "
    "short search queries for missing information that would change the answer, in the "
    "user's language; done=true when what was found is enough or nothing else is worth "
    "searching."
)


class Plan(BaseModel):
    """The memory model's answer in one round."""

    model_config = ConfigDict(extra="ignore")

    queries: list[str] = Field(default_factory=list, description="New search queries.")
    done: bool = Field(False, description="True: stop searching.")


@dataclass(frozen=True)
class AgentSettings:
    """Seed 002 §5.1 settings (defaults there: rounds 3, topk 5/5, threshold 0.5)."""

    rounds: int = 3
    profile_topk: int = 5
    event_topk: int = 5
    similarity_threshold: float = 0.5
    first_round_direct: bool = True


@dataclass
class Found:
    """What the agent found so far (filled in place as it goes)."""

    profiles: dict[str, ScoredMemory] = field(default_factory=dict)
    events: dict[str, ScoredMemory] = field(default_factory=dict)
    queries: list[str] = field(default_factory=list)
    rounds: int = 0
    notes: list[str] = field(default_factory=list)
    steps: list[dict[str, Any]] = field(default_factory=list)

    def add(self, hits: list[ScoredMemory], into: dict[str, ScoredMemory], floor: float = 0.0) -> None:
        """Keep each hit of at least ``floor`` strength (:attr:`ScoredMemory.strength`), the strongest per memory."""
        for hit in hits:
            if hit.strength < floor:
                continue
            old = into.get(hit.record.id)
            if old is None or hit.strength > old.strength:
                into[hit.record.id] = hit

    def best(self, which: str, k: int) -> tuple[ScoredMemory, ...]:
        pool = self.profiles if which == "profiles" else self.events
        return tuple(sorted(pool.values(), key=lambda h: -h.strength)[:k])


def describe_found(found: Found) -> str:
    """The found memories as lines for the planner prompt."""
    lines = [f"- [profile] {h.record.text}" for h in found.profiles.values()]
    lines += [f"- [event {h.record.occurred_at.date().isoformat()}] {h.record.text}" for h in found.events.values()]
    return "\n".join(lines) or "(nothing yet)"


def planner_messages(user_text: str, found: Found) -> list[dict[str, Any]]:
    searched = "; ".join(found.queries) or "(none)"
    user = f"Latest user message:\n{user_text}\n\nSearched so far: {searched}\nFound so far:\n{describe_found(found)}"
    return [{"role": "system", "content": PLANNER_PROMPT}, {"role": "user", "content": user}]


def next_queries(plan: Plan, found: Found) -> list[str]:
    """The plan's new, non-empty queries (at most :data:`MAX_QUERIES_PER_ROUND`)."""
    fresh = [q.strip() for q in plan.queries if q.strip() and q.strip() not in found.queries]
    return list(dict.fromkeys(fresh))[:MAX_QUERIES_PER_ROUND]


class RecallAgent:
    """See module docstring."""

    def __init__(self, memory: GuardedRecall, model: MemoryModel | None, settings: AgentSettings) -> None:
        self.memory = memory
        self.model = model
        self.settings = settings

    async def plan(self, user_text: str, found: Found) -> list[str] | None:
        """New queries, [] when the model says done, None when it failed (noted)."""
        if self.model is None:
            found.steps.append({"plan": "no memory model: one round only"})
            return []
        try:
            plan = await self.model.complete_json(planner_messages(user_text, found), Plan, "recall_plan")
        except (ModelOutputError, MemgateError, TimeoutError) as exc:
            found.notes.append(f"model_error:{type(exc).__name__}")
            found.steps.append({"plan": f"model error ({type(exc).__name__}): stop"})
            return None
        chosen = [] if plan.done else next_queries(plan, found)
        found.steps.append({"plan": {"queries": list(plan.queries), "done": plan.done}, "next_queries": chosen})
        return chosen

    async def search(self, tenant: Tenant, query: str, found: Found, settings: AgentSettings | None = None) -> None:
        s = settings or self.settings
        found.queries.append(query)
        # The store's threshold is a cosine floor; the cut is on strength, applied here.
        floor = s.similarity_threshold
        found.add(await self.memory.search(tenant, query, s.profile_topk, 0.0, ["profile"]), found.profiles, floor)
        if tenant.friend_id is not None:
            found.add(await self.memory.search(tenant, query, s.event_topk, 0.0, ["event"]), found.events, floor)

    async def run(
        self, tenant: Tenant, user_text: str, query: str, found: Found, settings: AgentSettings | None = None
    ) -> Found:
        """Search up to ``rounds`` rounds, filling ``found``; returns it. ``settings``:
        this call's (the caller's memory settings), else the agent's own."""
        s = settings or self.settings
        queries = [query] if s.first_round_direct else (await self.plan(user_text, found) or [query])
        for round_number in range(1, s.rounds + 1):
            before = (len(found.profiles), len(found.events))
            try:
                for q in queries:
                    await self.search(tenant, q, found, s)
            except RecallSkipped as skipped:
                found.notes.append(skipped.reason)
                found.steps.append({"round": round_number, "queries": list(queries), "stopped": skipped.reason})
                return found
            found.rounds = round_number
            found.steps.append({
                "round": round_number, "queries": list(queries),
                "new_profiles": len(found.profiles) - before[0], "new_events": len(found.events) - before[1],
            })
            if round_number == s.rounds:
                found.steps.append({"plan": f"round limit ({s.rounds}) reached: stop"})
                break
            queries = await self.plan(user_text, found) or []
            if not queries:
                break
        return found
