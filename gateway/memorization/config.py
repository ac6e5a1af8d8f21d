"""Configuration of memorization (the ``memorize`` plugin's ``config:``).

One frozen model per concern (queue, worker, redaction, gists, inference), all with
``extra="forbid"`` and a description on every field (architecture.md, "Config"). The same
:class:`MemorizeConfig` configures the request-path enqueue (plugin), the workers inside
``memgate serve`` and the ``memgate worker`` processes, so they agree on key names.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from gateway.proxy.model_client import ModelConfig


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class QueueConfig(_Frozen):
    """Redis keys and retention of the job queue (Redis Streams + consumer group)."""

    key_prefix: str = Field(
        "mgq", pattern=r"^[A-Za-z0-9_.-]{1,32}$",
        description="First segment of every memorization key (stream, dedupe sets, epochs).",
    )
    group: str = Field("memorize", min_length=1, description="Consumer group name on every shard's stream.")
    shards: int = Field(
        1, ge=1, le=1024,
        description="Job streams the queue is sharded into; a user's jobs always go to "
        "the same shard (a stable hash of the user id), every worker reads every shard. On Redis "
        "Cluster a few per primary spread the queue's load; 1 on a single node. Change it only "
        "with the queue drained: jobs left on a shard >= the new count are not read.",
    )
    seen_ttl_s: int = Field(
        30 * 24 * 3600, ge=60,
        description="TTL of a tenant's set of memorized turn hashes, refreshed on every "
        "enqueue; a turn resent after this idle time is memorized again (reconcile makes it a NOOP).",
    )
    claim_stale_s: float = Field(
        300.0, gt=0,
        description="A job whose turns were claimed (added to the seen set) but that no worker "
        "has taken this long after is queued again by the user's next enqueue: its gateway died "
        "between the claim and the XADD. A long backlog can make a duplicate, which "
        "the job's done marker turns into a no-op.",
    )
    done_ttl_s: int = Field(
        7 * 24 * 3600, ge=60,
        description="How long a job's done marker and stored plan are kept (replay protection).",
    )
    max_candidate_turns: int = Field(
        64, ge=2, le=10_000,
        description="Only the last N messages of a request are hashed on the request path "
        "(bounds enqueue cost for long histories; older ones were seen by earlier requests).",
    )
    buffer_max_jobs: int = Field(
        10_000, ge=0, le=1_000_000,
        description="Jobs kept in process while Redis cannot take them (down, pool exhausted), "
        "retried in order with backoff; past it the oldest is shed and counted "
        "(memgate_memorize_shed_total). 0: no buffer (an enqueue that fails is shed).",
    )
    buffer_retry_max_s: float = Field(
        2.0, gt=0, description="Longest wait between two attempts to flush the buffer (backoff from 50 ms).",
    )


class WorkerConfig(_Frozen):
    """How workers read, retry, reclaim and dead-letter jobs."""

    in_serve: int = Field(
        1, ge=0, le=64, description="Workers run inside `memgate serve`; 0: only `memgate worker` processes."
    )
    block_ms: int = Field(1000, ge=1, description="XREADGROUP BLOCK time when the stream is empty.")
    batch: int = Field(32, ge=1, le=1000, description="Entries read per XREADGROUP / XAUTOCLAIM.")
    concurrency: int = Field(
        16, ge=1, le=1000,
        description="Jobs of one read batch a worker handles at once (jobs of one conversation "
        "stay sequential, in stream order). Concurrent jobs' texts share the embedder's "
        "micro-batches and their Redis round trips overlap; 1: one job at a time.",
    )
    yield_max_lag_s: float = Field(
        2.0, ge=0,
        description="An in-serve worker pauses (yield_pause_ms at a time) while the gateway's memory "
        "searches queue for admission (the request path is saturated), as long as the oldest job it "
        "read is younger than this; then it works regardless, so the lag stays bounded. 0: never pauses.",
    )
    yield_pause_ms: int = Field(20, ge=1, le=1000, description="One pause of a yielding in-serve worker.")
    claim_min_idle_ms: int = Field(
        60_000, ge=1,
        description="XAUTOCLAIM min-idle-time: a job delivered but not acked for this long "
        "belongs to a dead or stuck worker and is taken over.",
    )
    claim_every_s: float = Field(5.0, gt=0, description="How often a worker runs XAUTOCLAIM.")
    max_attempts: int = Field(
        5, ge=1, le=100,
        description="Failed attempts (or deliveries to workers that died) before a job goes "
        "to the dead-letter stream with its last error.",
    )
    backoff_base_s: float = Field(2.0, gt=0, description="Retry delay after attempt n: base * 2**(n-1), capped.")
    backoff_max_s: float = Field(300.0, gt=0, description="Longest retry delay.")
    job_timeout_s: float = Field(
        120.0, gt=0,
        description="Budget of one job (seconds). A job that overruns it is dead-lettered at once "
        "with the reason (it would overrun again and hold the worker each time); "
        "120 s is four memory-model calls at their 30 s default timeout.",
    )
    max_deliveries: int = Field(
        3, ge=1, le=100,
        description="Deliveries (XPENDING delivery count) after which a job that was never "
        "acked is dead-lettered instead of handled again: a job that kills or wedges its worker "
        "(and so survives a restart un-acked) is tried this many times, not forever.",
    )


class RedactionRule(_Frozen):
    """One extra redaction pattern."""

    name: str = Field(..., min_length=1, description="Label used in the placeholder, e.g. `[ssn]`.")
    pattern: str = Field(..., min_length=1, description="Python regular expression.")


class RedactionConfig(_Frozen):
    """What is removed before anything is stored or sent to the memory model."""

    enabled: bool = Field(True, description="Off: texts are stored as they were said.")
    builtin: tuple[Literal["api_key", "email", "phone", "card"], ...] = Field(
        ("api_key", "email", "phone", "card"),
        description="Built-in detectors: api_key (sk-..., ghp_..., AKIA..., Bearer tokens), "
        "email, phone (E.164 and common national forms), card (13-19 digits, Luhn-checked).",
    )
    extra: tuple[RedactionRule, ...] = Field((), description="Further patterns, applied before the built-ins (more specific first).")
    max_chars: int = Field(
        32_000, ge=100, le=10_000_000,
        description="Longest text kept per turn (characters): the request path enqueues at most "
        "this much of each message and the worker cuts every turn to it before redaction, so "
        "redaction and the memory model see bounded input (32,000 characters is ~8k "
        "tokens, four times what a verbatim memory keeps). Applies with redaction off too.",
    )


class GistConfig(_Frozen):
    """Event gists (seed 002): one dated summary per (user, friend) conversation session."""

    enabled: bool = Field(
        True, description="extract mode: keep a rolling gist per conversation (no extra model "
        "call: the extraction answer carries it). verbatim mode makes no gists.",
    )
    max_chars: int = Field(600, ge=50, description="Longest gist text kept.")


class InferenceConfig(_Frozen):
    """Memory inference (seed 000 P4): conclusions drawn from several memories."""

    enabled: bool = Field(False, description="Off by default (seed 000: inferenceEnabled false).")
    interval: int = Field(10, ge=1, description="Run after every N new conversations per tenant (seed 000: 10).")
    min_confidence: float = Field(0.6, ge=0, le=1, description="Conclusions below this confidence are dropped.")
    max_memories: int = Field(60, ge=2, le=1000, description="Newest live memories shown to the model.")


class MemorizeConfig(_Frozen):
    """``plugins: - {name: memorize, config: {...}}``."""

    mode: Literal["verbatim", "extract"] = Field(
        "verbatim",
        description="verbatim: each new user turn is stored as it is, no model (small talk "
        "skipped, stated preferences and facts as profile memories, the rest as episodic "
        "events); extract: the memory model decides, extracts atomic facts and reconciles them "
        "with existing memories (seed 003; mem0, Chhikara et al. 2025).",
    )
    verbatim_formation: Literal["auto", "disclosure", "turn"] = Field(
        "auto", description="verbatim mode: disclosure: a turn forms a memory of the clauses in which "
        "the speaker tells something about themselves, their people, health, diet, home, work, plans or "
        "likes, in their words (requests, questions, small talk form none; "
        "gateway.memorization.disclosure); lasting facts are profile memories, the rest episodic events. "
        "turn: the whole turn is the memory (small talk skipped and profile cues as below). auto: "
        "disclosure when only the user's turns are stored (a person asking an assistant: most of what "
        "they say are requests), turn when verbatim_roles stores the assistant's turns too (a "
        "conversation between people, a transcript or a LoCoMo replay: every turn may be what a later "
        "question needs; README 'What a chat turns into').",
    )
    @property
    def formation(self) -> Literal["disclosure", "turn"]:
        """``verbatim_formation`` with ``auto`` resolved (see its description)."""
        if self.verbatim_formation != "auto":
            return self.verbatim_formation
        return "turn" if "assistant" in self.verbatim_roles else "disclosure"

    verbatim_clause_classifier: bool | Literal["auto"] = Field(
        "auto", description="verbatim mode, disclosure formation: an English clause the rules drop (a "
        "statement of kind other, in no memory) is scored by a logistic regression on its sentence vector "
        "and kept as a disclosure above the model's threshold (gateway.memorization.clause_classifier). "
        "auto: with the sentence vector when weights exist for the store's embedder (onnx/local MiniLM, "
        "multilingual-e5-small), else with the structural features alone (verbatim_clause_features); true: "
        "the same, but start-up fails without weights for the features asked; false: off. Blind assistant chats (held-out 4, 6, 7, "
        "8, English): fact recall 102 -> 111 of 140 probes. English weights only, fitted on the eight read splits "
        "of bench/assistant written before them (dev .. heldout5, updates, heldout11); Chinese clauses are not scored (a Chinese model formed fewer facts than it added junk "
        "clauses on held-out splits: README 'A learned clause classifier'). Costs one embedding call per job batch "
        "for the dropped clauses.",
    )
    verbatim_clause_features: Literal["vector", "structural"] = Field(
        "vector", description="verbatim_clause_classifier's inputs: vector, the clause's sentence vector (the "
        "store's embedder; one embedding call per job batch) and ten structural features; structural, the ten "
        "structural features alone (no embedding: any embedder, the same result whatever the batch).",
    )
    verbatim_profile_classifier: bool | Literal["auto"] = Field(
        "auto", description="verbatim mode, disclosure formation: each profile memory a user turn forms is "
        "scored by a logistic regression on its sentence vector and structural features; one scoring below "
        "its language's threshold (not read as a lasting fact) is filed as an episodic event instead, still "
        "recalled by relevance (gateway.memorization.profile_classifier; README 'A learned profile gate'). "
        "auto: on when weights exist for the store's embedder (the script provider's parts: MiniLM for "
        "English, multilingual-e5-small for Chinese), else off; true: start-up fails without them; false: off. "
        "The vectors come from the job batch's one embedding call.",
    )
    verbatim_roles: tuple[Literal["user", "assistant"], ...] = Field(
        ("user",), description="verbatim mode: whose turns are stored (the LoCoMo replay stores both)."
    )
    verbatim_skip_small_talk: bool = Field(
        True, description="verbatim mode: greetings, thanks, acknowledgements and sign-offs (zh + en) "
        "are not stored (gateway.memorization.salience; the plan's decision counts them); a user's bare "
        "yes to a fact-checking question is stored with the question instead.",
    )
    verbatim_profile: bool = Field(
        True, description="verbatim mode: a user turn stating a lasting preference or fact about the "
        "user is stored as a profile memory (seen by every friend, seed 002), typed preference or "
        "semantic (gateway.memorization.salience); the rest are episodic events of the friend.",
    )
    verbatim_context_after: bool = Field(
        True, description="verbatim mode: each memory keeps the start of the message after its turn "
        "(capture.CONTEXT_AFTER_CHARS, usually the reply) as context_after, embedded as a second view "
        "(gateway.memory.records.embedded_views). LoCoMo dev by ingest: R@10 81.4 -> 82.0, R@25 87.6 -> "
        "88.5; it embeds about twice the text per memory (`python -m bench memorize`: 224 -> 86 verbatim "
        "jobs/s per worker), so a write-heavy deployment may turn it off.",
    )
    verbatim_merge_duplicates: Literal["off", "profile", "all"] = Field(
        "profile", description="verbatim mode: a memory near-identical to one the user already has (same "
        "scope and type; an event only the same day) is merged into it, keeping both sources, instead of "
        "being stored again (gateway.memorization.neardup). profile: profile memories are compared with "
        "the store (one search each; a fact repeated to several friends), events only within their job; "
        "all: events too (one search per memory; README: what it cost on the LoCoMo replay); off: nothing "
        "merged.",
    )
    ingest_extract: bool = Field(
        False, description="Conversation ingest (POST /v1/memories with `messages`) may ask `mode: extract` "
        "(memory-model calls on the operator's upstream key) although `mode` is verbatim; else that is a 403 "
        "naming `mode`. Per key: clients[].plugins.memorize.config.ingest_extract. With `mode: extract` every "
        "ingest extracts anyway.",
    )
    model: ModelConfig = Field(default_factory=ModelConfig, description="extract mode: the memory model.")
    queue: QueueConfig = Field(default_factory=QueueConfig, description="Job queue keys and retention.")
    worker: WorkerConfig = Field(default_factory=WorkerConfig, description="Workers and retries.")
    redaction: RedactionConfig = Field(default_factory=RedactionConfig, description="Privacy redaction.")
    gists: GistConfig = Field(default_factory=GistConfig, description="Event gists per conversation.")
    inference: InferenceConfig = Field(default_factory=InferenceConfig, description="Memory inference (P4).")
    max_facts: int = Field(12, ge=1, le=100, description="extract mode: facts kept per job.")
    reconcile_top_k: int = Field(5, ge=1, le=20, description="Nearest existing memories shown per fact (mem0: 5).")
    honour_header: bool = Field(
        True, description="A request header `x-memgate-memorize: off` skips memorization of that call."
    )
