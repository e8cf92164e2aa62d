"""The chat prompt's blocks as plug-ins, and the one allocator that fits them in the window.

A block is one part of the prompt (the system prompt, the student's memories, the learning
record, the images, the history) that an app contributes by registering a `PromptBlock` in its
AppConfig.ready(). The chat turn (conversations.turn.prompt) builds every registered block for
each prompt, in `position` order, within what the model's window leaves: the window, less the
reply's reserve, the system prompt and the tool schemas (`available`).

The contract of a block:
- `name`: unique; registering the same name again replaces the block.
- `position`: where its messages go in the prompt, lowest first.
- `need(turn)`: its `Need`: a `share` of `available` (at most `cap` tokens), or all that
  `remainder`s once the others are built (the history, built by the turn itself because it may
  compress), or 0 for a block whose tokens are counted in the window's fixed part (the system
  prompt); and the `minimum` below which it is not worth building.
- `give`: how it gives way when the window is small: SHRINK (built within what is left, dropped
  below `minimum`), DROP (whole or not at all) or KEEP (always built with what it wants).
- `prepare(turn)`: optional, async. Slow work before the database step that builds the prompt
  (an embedding): it may await `core.db.db_step` for a read and `llm.offload.offload` for a slow
  call, never do either inline. It keeps its results in `turn.data[name]`.
- `synchronous(turn)`: optional. True when `prepare` has nothing to do for this turn (its `build`
  then does without `turn.data[name]`): when every block says so, the turn skips the `prepare`s
  and builds the prompt in its claim's database step (`synchronous`). A block without the hook
  always prepares; `BaseBlock`'s default is True unless the block overrides `prepare`.
- `build(turn, budget)`: runs in a database step; returns a `Part` of at most `budget` tokens
  (a KEEP block: what it needs), counted as the product counts them (llm.tokens). It must not call
  a model or an embedder. Untrusted text in it is delimited and neutralised (llm.untrusted).
- `presence(student_id)`: optional. Querysets any of which has a row when the block may have
  something to show the student (`student_id` an int or an OuterRef): the turn's claim reads
  them in its own round trip, and a block none of whose querysets has a row is in
  `turn.absent`, so that it skips its reads. No querysets (the default): always read.
- `shown(part)`: optional. The memories the built block showed, for the reply's access log, as
  (memory id, signals) in the order shown (`shown_by`).

`allocate` builds the blocks in position order, each within min(what it wants, what is left),
and logs (INFO) every block it cut below what it wanted, dropped, or that left items out.
"""

from __future__ import annotations

import enum
import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Protocol

from core.registry import Registry

logger = logging.getLogger(__name__)


class Give(enum.StrEnum):
    SHRINK = "shrink"
    DROP = "drop"
    KEEP = "keep"


@dataclass(frozen=True)
class Need:
    """What a block asks of the `available` tokens."""

    share: Fraction | None = None  # of `available`; None: nothing beyond the window's fixed part
    cap: int | None = None  # at most this many tokens
    minimum: int = 0  # below this, a SHRINK block is dropped
    remainder: bool = False  # takes what the others leave; built by the turn, not by `allocate`

    def wanted(self, available: int) -> int:
        if self.share is None:
            return 0
        tokens = max(0, available * self.share.numerator // self.share.denominator)
        return tokens if self.cap is None else min(tokens, self.cap)


@dataclass(frozen=True)
class TurnFile:
    """A file of the conversation as the blocks show it (the chat turn reads them once)."""

    id: int
    name: str
    kind: str  # "image", "PDF" or "text"
    pages: int | None
    text: str
    note: str  # what the tutor can and cannot read of it
    # A ready image the model may be shown: the reader of its data URL (it reads the storage).
    image: Callable[[], str] | None = None


@dataclass
class PromptTurn:
    """What a block knows of the turn it builds for (no app's model: plain values)."""

    student_id: int
    conversation_id: int
    message: str  # the student's new message
    language: str  # the student's (User.language), "" if unknown
    available: int  # the window less the reply's reserve, the system prompt and the tool schemas
    tools: list[Any] = field(default_factory=list)  # offered to the model (llm.tools.Tool)
    files: list[TurnFile] = field(default_factory=list)  # the conversation's, oldest first
    # The blocks whose `presence` found nothing for the student: they skip their reads.
    absent: frozenset[str] = frozenset()
    data: dict[str, Any] = field(default_factory=dict)  # by block name: what its `prepare` found


@dataclass(frozen=True)
class Part:
    """A built block: its messages and their tokens."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    tokens: int = 0
    left_out: int = 0  # items the block had but left out to fit its budget
    detail: Any = None  # the block's own record of what it built (read back by its `shown`)


class PromptBlock(Protocol):
    name: str
    position: int
    give: Give

    def need(self, turn: PromptTurn) -> Need: ...

    async def prepare(self, turn: PromptTurn) -> None: ...

    def build(self, turn: PromptTurn, budget: int) -> Part: ...


class BaseBlock(ABC):
    """Defaults for a block: nothing to prepare, a share of nothing, shrinks; `build` is each
    block's own."""

    name = ""
    position = 50
    give = Give.SHRINK

    def need(self, turn: PromptTurn) -> Need:
        return Need()

    async def prepare(self, turn: PromptTurn) -> None:
        return None

    def synchronous(self, turn: PromptTurn) -> bool:
        return type(self).prepare is BaseBlock.prepare

    @abstractmethod
    def build(self, turn: PromptTurn, budget: int) -> Part: ...

    def presence(self, *, student_id: Any) -> list[Any]:
        return []

    def shown(self, part: Part) -> list[tuple[int, dict[str, Any]]]:
        return []


def presence_of(block: PromptBlock, *, student_id: Any) -> list[Any]:
    """The block's presence querysets (none for a block without the hook: always read)."""
    presence = getattr(block, "presence", None)
    return list(presence(student_id=student_id)) if presence is not None else []


def synchronous(blocks: list[PromptBlock], turn: PromptTurn) -> bool:
    """Whether no block has anything to prepare for `turn` (a block without the hook has)."""
    for block in blocks:
        hook = getattr(block, "synchronous", None)
        if hook is None or not hook(turn):
            return False
    return True


def shown_by(block: PromptBlock, part: Part | None) -> list[tuple[int, dict[str, Any]]]:
    """What the built block showed, for the access log (nothing for a block without the hook)."""
    shown = getattr(block, "shown", None)
    return list(shown(part)) if shown is not None and part is not None else []


_registry: Registry[PromptBlock] = Registry("prompt block", replace="any", order=lambda b: (b.position, b.name))


def register(block: PromptBlock) -> None:
    """Add `block` to every chat prompt (replacing a block of the same name)."""
    _registry.register(block)


def unregister(name: str) -> None:
    _registry.unregister(name)


def registered() -> list[PromptBlock]:
    """The registered blocks in prompt order."""
    return _registry.items()


@dataclass(frozen=True)
class Allocation:
    parts: dict[str, Part]  # by block name, the built blocks (not the remainder's)
    used: int  # tokens of the built blocks
    remaining: int  # what is left of `available` for the remainder block


def allocate(blocks: list[PromptBlock], turn: PromptTurn) -> Allocation:
    """Build `blocks` (but the remainder) in position order within `turn.available` tokens."""
    left = turn.available
    parts: dict[str, Part] = {}
    for block in blocks:
        need = block.need(turn)
        if need.remainder:
            continue
        wanted = need.wanted(turn.available)
        budget = wanted if block.give is Give.KEEP else min(wanted, max(0, left))
        if block.give is not Give.KEEP and (
            (block.give is Give.DROP and budget < wanted) or (wanted and budget < need.minimum)
        ):
            logger.info("prompt block %s dropped: %d tokens left, %d wanted", block.name, budget, wanted)
            parts[block.name] = Part()
            continue
        part = block.build(turn, budget)
        if budget < wanted or part.left_out:
            logger.info(
                "prompt block %s cut: %d of %d tokens wanted granted, %d used, %d items left out",
                block.name,
                budget,
                wanted,
                part.tokens,
                part.left_out,
            )
        parts[block.name] = part
        left -= part.tokens
    return Allocation(parts, turn.available - left, left)


def assemble(blocks: list[PromptBlock], parts: dict[str, Part]) -> list[dict[str, Any]]:
    """The prompt's messages: each block's, in position order."""
    return [message for block in blocks for message in parts.get(block.name, Part()).messages]
