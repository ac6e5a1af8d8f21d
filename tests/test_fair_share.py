"""Fair share of bulk work (:mod:`gateway.runtime.fair_share`): one tenant's many bulk calls wait
behind each other, not in front of another tenant's call."""

from __future__ import annotations

import asyncio

import pytest

from gateway.runtime.fair_share import FairShare


async def test_one_tenants_calls_queue_behind_each_other_and_another_tenant_goes_first() -> None:
    share = FairShare(per_tenant=1, total=2)
    order: list[str] = []
    release = asyncio.Event()

    async def work(tenant: str, name: str) -> None:
        async with share.slot(tenant):
            order.append(name)
            await release.wait()

    a = [asyncio.ensure_future(work("a", f"a{i}")) for i in range(3)]
    for _ in range(10):
        await asyncio.sleep(0)
    assert order == ["a0"] and share.in_use("a") == 3  # a1, a2 wait for a's slot, holding no overall slot
    b = asyncio.ensure_future(work("b", "b0"))
    for _ in range(10):
        await asyncio.sleep(0)
    assert order == ["a0", "b0"]  # b is not behind a's queue
    release.set()
    await asyncio.wait_for(asyncio.gather(*a, b), 5)
    assert order == ["a0", "b0", "a1", "a2"] and share.in_use("a") == 0


async def test_the_overall_bound_holds_across_tenants() -> None:
    share = FairShare(per_tenant=2, total=3)
    running = 0
    most = 0

    async def work(tenant: str) -> None:
        nonlocal running, most
        async with share.slot(tenant):
            running += 1
            most = max(most, running)
            for _ in range(5):
                await asyncio.sleep(0)
            running -= 1

    await asyncio.wait_for(asyncio.gather(*(work(f"t{i % 4}") for i in range(20))), 5)
    assert most == 3


def test_bad_bounds_are_refused() -> None:
    with pytest.raises(ValueError):
        FairShare(per_tenant=2, total=1)
