"""tutor.collector: a process's garbage collector once it has warmed up (the served process's
log line is checked by tests.conftest.Serve.check)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from tutor import collector


@pytest.fixture
def restored_collector() -> Iterator[None]:
    threshold = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*threshold)


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def test_settle_freezes_what_the_process_holds_and_collects_the_young_less_often(restored_collector, caplog):
    held = Node()  # alive through settle(): frozen with the rest
    _, middle, old = gc.get_threshold()
    with caplog.at_level("INFO", logger="tutor.startup"):
        collector.settle()
    assert gc.get_freeze_count() > 10_000
    assert not any(held is obj for obj in gc.get_objects())  # frozen objects are walked no more
    assert gc.get_threshold() == (collector.YOUNG_THRESHOLD, middle, old)
    assert "garbage collector:" in caplog.text


def test_cycles_made_after_settle_are_still_collected(restored_collector):
    collector.settle()
    first, second = Node(), Node()
    first.other, second.other = second, first
    gone = weakref.ref(first)
    del first, second
    assert gone() is not None  # a cycle: its reference counts never reach zero
    gc.collect()
    assert gone() is None


def test_settle_twice_is_harmless(restored_collector):
    collector.settle()
    frozen = gc.get_freeze_count()
    collector.settle()
    assert gc.get_freeze_count() >= frozen
    assert gc.get_threshold()[0] == collector.YOUNG_THRESHOLD


def test_a_celery_pool_process_settles_after_its_warm_up(restored_collector, monkeypatch):
    from tutor import celery, startup

    calls: list[str] = []
    monkeypatch.setattr(startup, "warm_up", lambda **kwargs: calls.append("warm_up"))
    monkeypatch.setattr(collector, "settle", lambda: calls.append("settle"))
    celery._warm_up_pool_process()
    assert calls == ["warm_up", "settle"]
