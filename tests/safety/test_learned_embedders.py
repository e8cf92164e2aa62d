"""safety.learned.embedders: the texts of callers screened at the same time share one model call,
each caller gets its own rows, and a text the model cannot encode fails its own caller only."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import pytest

from safety.learned import embedders


class FakeModel:
    """Rows of (length, 1, 0) per text; the first call waits for `gate`; a text in `bad` fails."""

    def __init__(self, bad: str = "") -> None:
        self.calls: list[list[str]] = []
        self.gate = threading.Event()
        self.bad = bad

    def __call__(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        if len(self.calls) == 1:
            assert self.gate.wait(10)
        if self.bad in texts:
            raise RuntimeError("the model cannot encode this text")
        return np.array([[float(len(t)), 1.0, 0.0] for t in texts], dtype=np.float32)


@pytest.fixture
def fake(monkeypatch) -> Callable[[str], FakeModel]:
    def install(bad: str = "") -> FakeModel:
        model = FakeModel(bad)
        monkeypatch.setattr(embedders, "_models", {"use": model})
        monkeypatch.setattr(embedders, "_cache", {name: OrderedDict() for name in embedders.NAMES})
        monkeypatch.setattr(embedders, "_queue", [])
        return model

    return install


def _until(condition: Callable[[], bool]) -> None:
    deadline = time.monotonic() + 10
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.001)


def _callers(texts: list[list[str]]) -> tuple[list[threading.Thread], dict[int, object]]:
    results: dict[int, object] = {}

    def call(i: int) -> None:
        try:
            results[i] = embedders.encode("use", texts[i])
        except Exception as exc:
            results[i] = exc

    return [threading.Thread(target=call, args=(i,)) for i in range(len(texts))], results


def test_callers_waiting_for_the_model_share_its_next_call(fake):
    model = fake()
    texts = [["first"], ["a", "bb"], ["ccc"], ["dddd", "a"]]
    threads, results = _callers(texts)
    threads[0].start()
    _until(lambda: len(model.calls) == 1)  # the first caller is in the model
    for thread in threads[1:]:
        thread.start()
    _until(lambda: len(embedders._queue) == 3)  # the three others wait, queued
    model.gate.set()
    for thread in threads:
        thread.join(10)
    assert len(model.calls) == 2, model.calls
    assert sorted(model.calls[1]) == ["a", "bb", "ccc", "dddd"]  # "a" once for both callers
    for i, asked in enumerate(texts):
        rows = results[i]
        assert isinstance(rows, np.ndarray) and rows.shape == (len(asked), 3)
        expected = np.array([[len(t), 1.0, 0.0] for t in asked]) / np.sqrt(
            np.array([[len(t) ** 2 + 1.0] for t in asked])
        )
        assert np.allclose(rows, expected)
    assert embedders._queue == []


def test_a_text_the_model_cannot_encode_fails_its_own_caller_only(fake):
    model = fake(bad="broken")
    texts = [["first"], ["fine"], ["broken"], ["also fine"]]
    threads, results = _callers(texts)
    threads[0].start()
    _until(lambda: len(model.calls) == 1)
    for thread in threads[1:]:
        thread.start()
    _until(lambda: len(embedders._queue) == 3)
    model.gate.set()
    for thread in threads:
        thread.join(10)
    assert isinstance(results[2], RuntimeError)
    for i in (0, 1, 3):
        assert isinstance(results[i], np.ndarray) and results[i].shape == (1, 3)
    # The shared call failed, then each caller's texts alone.
    assert len(model.calls) == 5 and sorted(map(tuple, model.calls[2:])) == [("also fine",), ("broken",), ("fine",)]
    assert embedders._queue == []


def test_a_caller_alone_is_encoded_at_once_and_kept(fake):
    model = fake()
    model.gate.set()
    first = embedders.encode("use", ["hello", "world"])
    again = embedders.encode("use", ["world", "hello", "new"])
    assert model.calls == [["hello", "world"], ["new"]]
    assert np.array_equal(again[:2], first[::-1])


def test_the_encoders_rows_among_others_differ_from_alone_by_rounding_only():
    texts = ["I can't do this anymore", "je comprends pas les fractions", "lol this essay kms", "ok 👍", "help"]
    alone = np.stack([embedders._normalised(embedders._model("use")([t]))[0] for t in texts])
    together = embedders._normalised(embedders._model("use")(texts))
    assert np.abs(alone - together).max() < 1e-6
