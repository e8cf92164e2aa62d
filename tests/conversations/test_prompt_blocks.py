"""The prompt's blocks (llm.prompt_blocks): the registry the apps fill, the one allocator, and the
slow calls of a prompt (the query's embedding, the compression summary) kept off the
database-step threads."""

from __future__ import annotations

import logging
import threading
from fractions import Fraction
from typing import Any
from unittest import mock

import pytest

from conversations import context
from conversations.models import ContextCheckpoint
from conversations.turn import drive, prompt, window
from llm import prompt_blocks
from llm.prompt_blocks import BaseBlock, Give, Need, Part, PromptTurn
from memory.search import embeddings
from tests.conversations.test_compression import chat
from tests.conversations.test_turn import start


class Sized(BaseBlock):
    """A block whose content is `size` tokens, cut to its budget if it may shrink."""

    def __init__(self, name: str, position: int, need: Need, give: Give, size: int) -> None:
        self.name, self.position, self._need, self.give, self.size = name, position, need, give, size
        self.budgets: list[int] = []

    def need(self, turn: PromptTurn) -> Need:
        return self._need

    def build(self, turn: PromptTurn, budget: int) -> Part:
        self.budgets.append(budget)
        tokens = self.size if self.give is Give.KEEP else min(self.size, budget)
        return Part([{"role": "system", "content": self.name}], tokens, left_out=int(tokens < self.size))


def turn(available: int) -> PromptTurn:
    return PromptTurn(student_id=1, conversation_id=1, message="hi", language="en", available=available)


def test_the_apps_register_their_blocks_in_prompt_order():
    names = [block.name for block in prompt_blocks.registered()]
    assert names == ["system", "student_card", "memories", "learning_record", "images", "history"]


def test_each_block_gets_its_share_of_what_the_window_leaves(settings):
    settings.LEARNING_RECORD_TOKEN_BUDGET = 10_000
    blocks = {block.name: block for block in prompt_blocks.registered()}
    wanted = {name: block.need(turn(1_200)).wanted(1_200) for name, block in blocks.items()}
    assert wanted == {
        "system": 0,
        "student_card": 300,
        "memories": 400,
        "learning_record": 300,
        "images": 300,
        "history": 0,
    }
    settings.LEARNING_RECORD_TOKEN_BUDGET = 100
    assert blocks["learning_record"].need(turn(1_200)).wanted(1_200) == 100
    assert blocks["history"].need(turn(1_200)).remainder


def test_the_allocator_cuts_drops_and_keeps_and_logs_it(caplog):
    keep = Sized("rules", 0, Need(share=Fraction(1, 2)), Give.KEEP, 600)
    shrink = Sized("notes", 10, Need(share=Fraction(1, 2)), Give.SHRINK, 900)
    drop = Sized("pictures", 20, Need(share=Fraction(1, 4)), Give.DROP, 100)
    rest = Sized("history", 30, Need(remainder=True), Give.SHRINK, 0)
    with caplog.at_level(logging.INFO, logger="llm.prompt_blocks"):
        allocation = prompt_blocks.allocate([keep, shrink, drop, rest], turn(1_000))
    # KEEP takes what it wants; SHRINK what is left of its share; DROP, short of its share, nothing.
    assert keep.budgets == [500] and shrink.budgets == [400] and drop.budgets == []
    assert allocation.parts["rules"].tokens == 600 and allocation.parts["notes"].tokens == 400
    assert allocation.parts["pictures"] == Part()
    assert "history" not in allocation.parts and rest.budgets == []
    assert allocation.used == 1_000 and allocation.remaining == 0
    assert "prompt block notes cut: 400 of 500 tokens wanted granted, 400 used, 1 items left out" in caplog.text
    assert "prompt block pictures dropped: 0 tokens left, 250 wanted" in caplog.text
    assert "rules" not in caplog.text
    assert prompt_blocks.assemble([keep, shrink, drop, rest], allocation.parts) == [
        {"role": "system", "content": "rules"},
        {"role": "system", "content": "notes"},
    ]


def test_a_shrinking_block_below_its_minimum_is_dropped(caplog):
    small = Sized("small", 0, Need(share=Fraction(1, 2), minimum=600), Give.SHRINK, 300)
    with caplog.at_level(logging.INFO, logger="llm.prompt_blocks"):
        allocation = prompt_blocks.allocate([small], turn(1_000))
    assert small.budgets == [] and allocation.parts["small"] == Part() and allocation.remaining == 1_000
    assert "prompt block small dropped: 500 tokens left, 500 wanted" in caplog.text


def test_a_block_an_app_registers_is_placed_by_its_position(clients, llm):
    class Reminder(BaseBlock):
        name = "reminder"
        position = 35  # after the learning record, before the images and the history
        give = Give.DROP

        def need(self, turn: PromptTurn) -> Need:
            return Need(share=Fraction(1, 100))

        def build(self, turn: PromptTurn, budget: int) -> Part:
            return Part([{"role": "system", "content": "Exam on Friday."}], 12)

    prompt_blocks.register(Reminder())
    try:
        chat(clients["alice"], start(clients["alice"]), 1)
    finally:
        prompt_blocks.unregister("reminder")
    prompt = llm.calls("chat")[-1]["messages"]
    assert [m["content"] for m in prompt[1:]] == ["Exam on Friday.", prompt[-1]["content"]]
    assert prompt[-1]["role"] == "user"


@pytest.mark.usefixtures("transactional_db")
def test_the_slow_calls_of_a_prompt_run_off_the_database_step_threads(clients, openai_embedder, settings):
    """With the database steps on their pool (DB_STEP_THREADS > 0): the message's embedding for
    recall and the compression summary run on threads of their own, the steps on the pool."""
    settings.DB_STEP_THREADS = 2
    settings.COMPRESSION_THRESHOLD_TOKENS = window.turn_limits().fixed + 1_200
    openai_embedder.script("compression", {"content": "SUMMARY: fractions practice."})
    threads: dict[str, list[str]] = {"embed": [], "summary": [], "step": []}

    def recorded(kind: str, fn: Any) -> Any:
        def call(*args: Any, **kwargs: Any) -> Any:
            threads[kind].append(threading.current_thread().name)
            return fn(*args, **kwargs)

        return call

    with (
        mock.patch.object(embeddings.OpenAIEmbedder, "embed", recorded("embed", embeddings.OpenAIEmbedder.embed)),
        mock.patch.object(
            context, "_summarise_for_compression", recorded("summary", context._summarise_for_compression)
        ),
        mock.patch.object(drive, "turn_begin", recorded("step", drive.turn_begin)),
    ):
        chat(clients["alice"], start(clients["alice"]), 12)
    assert ContextCheckpoint.objects.filter(summary="SUMMARY: fractions practice.").exists()
    assert threads["step"] and all(name.startswith("db-step") for name in threads["step"])
    assert threads["embed"] and threads["summary"]
    assert not any(name.startswith("db-step") for name in threads["embed"] + threads["summary"]), threads


def test_a_database_error_while_building_the_prompt_releases_the_conversation(clients, llm):
    """The prompt is built after the message is stored: a database error then is a 503 saying
    the message is saved, and the conversation is free for the retry."""
    from django.db import OperationalError

    from conversations.models import Conversation
    from tests.conversations.test_turn import send

    cid = start(clients["alice"])
    with mock.patch.object(prompt, "context_build", side_effect=OperationalError("server closed the connection")):
        resp = send(clients["alice"], cid, "hello", "m1")
    assert resp.status_code == 503
    error = resp.json()["error"]
    assert error["code"] == "database_unavailable" and error["retry_safe"]
    assert "student_message_id" in error["details"]
    assert Conversation.objects.get(pk=cid).turn_token == ""
    assert send(clients["alice"], cid, "hello", "m1").status_code == 201


class Preparing(Sized):
    """A block with something to prepare before the database step (as memories with an embedder)."""

    def __init__(self) -> None:
        super().__init__("preparing", 36, Need(share=Fraction(1, 100)), Give.DROP, 5)
        self.prepared: list[str] = []

    async def prepare(self, turn: PromptTurn) -> None:
        self.prepared.append(turn.message)


def test_a_block_is_synchronous_unless_it_prepares(settings):
    """BaseBlock's default follows whether the block overrides `prepare`; a block without the
    hook prepares; memories prepare only when recall embeds the message."""

    class Bare:  # the protocol alone, no `synchronous`
        name, position, give = "bare", 1, Give.SHRINK

    sized = Sized("s", 1, Need(), Give.SHRINK, 1)
    assert sized.synchronous(turn(100)) and not Preparing().synchronous(turn(100))
    assert prompt_blocks.synchronous([sized], turn(100))
    assert not prompt_blocks.synchronous([sized, Preparing()], turn(100))
    assert not prompt_blocks.synchronous([sized, Bare()], turn(100))
    memories = next(b for b in prompt_blocks.registered() if b.name == "memories")
    settings.EMBEDDINGS_BACKEND = "none"
    assert prompt_blocks.synchronous(prompt_blocks.registered(), turn(100))
    settings.EMBEDDINGS_BACKEND, settings.EMBEDDINGS_BASE_URL = "openai", "http://127.0.0.1:9/v1"
    assert not memories.synchronous(turn(100))
    assert memories.synchronous(PromptTurn(1, 1, "  ", "en", 100))
    assert memories.synchronous(PromptTurn(1, 1, "hi", "en", 100, absent=frozenset({"memories"})))


def _prompt_steps(clients: Any, llm: Any) -> list[str]:
    """The functions `prompt` ran in database steps of its own during one turn, and the reply."""
    from tests.conversations.test_turn import send

    steps: list[str] = []
    own_step = prompt.db_step

    async def recorded(fn: Any, /, *args: Any, **kwargs: Any) -> Any:
        steps.append(fn.__name__)
        return await own_step(fn, *args, **kwargs)

    llm.script("chat", {"content": "Three quarters."})
    cid = start(clients["alice"])
    with mock.patch.object(prompt, "db_step", recorded):
        resp = send(clients["alice"], cid, "What is 1/2 + 1/4?", "m1")
    assert resp.status_code == 201, resp.content
    assert resp.json()["reply"]["content"] == "Three quarters."
    assert llm.calls("chat")[-1]["messages"][-1] == {"role": "user", "content": "What is 1/2 + 1/4?"}
    return steps


def test_with_nothing_to_prepare_the_prompt_is_drafted_in_the_claim_s_step(clients, llm):
    """No embedder: no block prepares, so the prompt's database step runs in the claim's."""
    assert _prompt_steps(clients, llm) == []


def test_a_block_that_prepares_gets_the_prompt_its_own_step(clients, llm):
    """A block with something to prepare: its `prepare` runs, then the prompt's own step."""
    block = Preparing()
    prompt_blocks.register(block)
    try:
        steps = _prompt_steps(clients, llm)
    finally:
        prompt_blocks.unregister(block.name)
    assert steps == ["turn_prompt_draft"]
    assert block.prepared == ["What is 1/2 + 1/4?"]
    assert block.budgets  # built in that step
