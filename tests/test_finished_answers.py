"""What a process keeps of finished games' answers: one computation for concurrent asks, in
a worker thread, bounded by size."""

from __future__ import annotations

import asyncio
import threading

import pytest

from referee.service.finished import FinishedAnswers


def test_concurrent_asks_share_one_computation_off_the_event_loop():
    calls: list[int] = []

    async def main() -> None:
        answers = FinishedAnswers()
        loop_thread = threading.get_ident()
        release = threading.Event()

        def compute() -> tuple[str, int]:
            assert threading.get_ident() != loop_thread
            calls.append(1)
            release.wait(5)
            return "answer", 6

        asks = [asyncio.ensure_future(answers.get(("report", "g"), compute)) for _ in range(3)]
        await asyncio.sleep(0.05)  # the loop runs on while it computes
        assert not any(ask.done() for ask in asks)
        release.set()
        assert await asyncio.gather(*asks) == ["answer"] * 3
        assert answers.kept(("report", "g")) == "answer"

    asyncio.run(main())
    assert len(calls) == 1


def test_the_least_recently_used_answers_go_first_past_the_bound_and_failures_are_not_kept():
    async def main() -> None:
        answers = FinishedAnswers(max_bytes=10)
        await answers.get(("a", "1"), lambda: ("one", 4))
        await answers.get(("a", "2"), lambda: ("two", 4))
        assert answers.kept(("a", "1")) == "one"  # now the most recently used
        await answers.get(("a", "3"), lambda: ("three", 4))
        assert answers.kept(("a", "2")) is None
        assert answers.kept(("a", "1")) == "one" and answers.kept(("a", "3")) == "three"
        await answers.get(("a", "big"), lambda: ("too big", 11))
        assert answers.kept(("a", "big")) is None and answers.kept(("a", "3")) == "three"

        def refused() -> tuple[str, int]:
            raise ValueError("not over")

        with pytest.raises(ValueError, match="not over"):
            await answers.get(("a", "4"), refused)
        assert answers.kept(("a", "4")) is None
        assert await answers.get(("a", "4"), lambda: ("four", 1)) == "four"

    asyncio.run(main())
