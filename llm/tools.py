"""The tutor's tools as plug-ins: the `Tool` interface, the registry the apps fill, and the one
place a model's tool call is run.

An app contributes a tool by registering an instance in its AppConfig.ready():

    register(SaveMemory())

The registry keeps the registration order (the apps' order in INSTALLED_APPS, then the order of
their `register` calls): the model is offered the tools, and the system prompt gets their
instructions, in that order. The chat turn (conversations) knows no tool by name: it offers the
registered tools that fit the model's window, runs a call with `tool_call_run`, sends the
result's `text` back to the model and the result's `events` to the client.

`tool_call_run` answers every call with a text for the model and never raises for a bad call:
an unknown name, arguments that are not a JSON object, and a django ValidationError raised by
`Tool.run` all come back as an error text, in English whatever the student's language.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from django.core.exceptions import ValidationError
from django.utils import translation


@dataclass(frozen=True)
class ToolContext:
    """Whose turn a call is run in: the conversation's student, the conversation, and the
    student message being answered (None outside a chat turn)."""

    student_id: int
    conversation_id: int
    message_id: int | None = None


@dataclass(frozen=True)
class ToolEvent:
    """An event for the client: sent as `event: <name>` and `data: <JSON of data>` while the
    turn streams. `stored`: kept with the reply and sent again when the turn is replayed (a retry
    with the same client_message_id); False for data that can be deleted or changed later (a
    memory note), which a replay must not bring back."""

    name: str
    data: dict[str, Any]
    stored: bool = True


@dataclass(frozen=True)
class ToolResult:
    """What a call did: `text` is the tool's output for the model, `events` go to the client in
    order. `value` is what the tool made (a row, say), for callers in this process; it is never
    sent."""

    text: str
    events: list[ToolEvent] = field(default_factory=list)
    value: Any = None


@dataclass(frozen=True)
class ToolEventType:
    """An event a tool may send, for the API schema: its name, the serializer of its data (a
    DRF serializer instance) and a one-line description."""

    name: str
    serializer: Any
    description: str


class Tool(ABC):
    """A tool the tutor model may call.

    - `name`: the function name the model calls; unique in the registry.
    - `schema`: the OpenAI function definition sent to the model,
      {"type": "function", "function": {"name": name, "description": ..., "parameters": <JSON
      Schema of the arguments>}}.
    - `instruction`: the sentence the system prompt gets when the tool is offered ("" for none).
    - `small_window`: offered even on a window too small for every tool's schema.
    - `failure`: how an error text for the model starts, after "Error: " (what did not happen).
    - `event_types`: the events `run` may return, for the API schema.
    - `run(context, arguments)`: does the work for `arguments` (a dict decoded from the model's
      JSON, not validated against the schema: the tool checks what it needs). It returns a
      ToolResult, or raises django's ValidationError for arguments it refuses: its messages
      reach the model after "Error: <failure>". It runs in a database step (synchronous, in a
      transaction of its own if it needs one), in English (translation.override("en")).
    """

    name: ClassVar[str]
    schema: ClassVar[dict[str, Any]]
    instruction: ClassVar[str] = ""
    small_window: ClassVar[bool] = False
    event_types: ClassVar[tuple[ToolEventType, ...]] = ()

    @property
    def failure(self) -> str:
        return f"{self.name} not run."

    @abstractmethod
    def run(self, context: ToolContext, arguments: dict[str, Any]) -> ToolResult: ...


_registry: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    """Add `tool` after the tools registered so far. The same tool class registered again (an app
    set up twice) takes the place of the first; another tool of the same name is a ValueError."""
    if tool.schema.get("function", {}).get("name") != tool.name:
        raise ValueError(f"tool {tool.name!r}: its schema names another function")
    known = _registry.get(tool.name)
    if known is not None and type(known) is not type(tool):
        raise ValueError(f"a tool named {tool.name!r} is registered already ({type(known).__qualname__})")
    _registry[tool.name] = tool
    return tool


def unregister(name: str) -> None:
    """Remove the tool `name` (for tests); no error if it is not registered."""
    _registry.pop(name, None)


def registered() -> list[Tool]:
    """Every registered tool, in registration order."""
    return list(_registry.values())


def tool_named(name: str) -> Tool | None:
    return _registry.get(name)


def event_types() -> list[ToolEventType]:
    """The events the registered tools may send, each name once (its first declaration), in
    registration order."""
    seen: dict[str, ToolEventType] = {}
    for tool in _registry.values():
        for event_type in tool.event_types:
            seen.setdefault(event_type.name, event_type)
    return list(seen.values())


def tool_call_run(*, tools: Sequence[Tool], context: ToolContext, name: str, arguments: str) -> ToolResult:
    """Run the model's call of `name` with `arguments` (its JSON text) among the offered `tools`.

    Never raises for a bad call: a name not offered, arguments that are not a JSON object, or a
    ValidationError from the tool come back as an error text for the model (in English), which
    it can correct. Any other exception is the tool's bug and propagates.
    """
    tool = next((t for t in tools if t.name == name), None)
    if tool is None:
        names = ", ".join(t.name for t in tools)
        return ToolResult(f"Error: unknown tool {name!r}. The tools are: {names}.")
    try:
        # strict=False: llama-cpp-python's grammar lets a raw newline into a JSON string.
        decoded = json.loads(arguments or "{}", strict=False)
    except json.JSONDecodeError:
        decoded = None
    if not isinstance(decoded, dict):
        return ToolResult(f"Error: {tool.failure} The arguments must be a JSON object{_fields(tool)}.")
    try:
        # The model reads the error: in English whatever the student's language (not translated).
        with translation.override("en"):
            return tool.run(context, decoded)
    except ValidationError as exc:
        return ToolResult(f"Error: {tool.failure} " + " ".join(exc.messages))


def _fields(tool: Tool) -> str:
    """' {"a": ..., "b": ...}' for the schema's required arguments, '' if it requires none."""
    required = tool.schema["function"].get("parameters", {}).get("required", [])
    return " {" + ", ".join(f'"{name}": ...' for name in required) + "}" if required else ""
