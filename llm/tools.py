"""The tutor's tools as plug-ins: the `Tool` interface, the registry the apps fill, and the one
place a model's tool call is run.

An app contributes a tool by registering an instance in its AppConfig.ready():

    register(SaveMemory())

The registry keeps the registration order (the apps' order in INSTALLED_APPS, then the order of
their `register` calls): the model is offered the tools, and the system prompt gets their
instructions, in that order. The chat turn (conversations) knows no tool by name: it offers the
registered tools that fit the model's window, runs a call with `tool_call_run`, sends the
result's `text` back to the model and the result's `events` to the client.

A tool's arguments are declared once, as a pydantic model (`ToolArguments`): the JSON Schema the
model is offered is generated from it, and the model's call is validated against it before the
tool runs. The rules that need the database or the domain (a title's words, a task of the
student's) stay with the service the tool calls, which raises django's ValidationError.

`tool_call_run` answers every call with a text for the model and never raises for a bad call:
an unknown name, arguments that are not a JSON object or that the declaration refuses, and a
django ValidationError raised by `Tool.run` all come back as an error text, in English whatever
the student's language.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pydantic
from django.core.exceptions import ValidationError
from django.utils import translation
from pydantic.json_schema import GenerateJsonSchema

from core.registry import Registry


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


class ToolArguments(pydantic.BaseModel):
    """The arguments of a tool, declared once: the JSON Schema offered to the model is generated
    from the fields (their types, `Field(description=..., min_length=...)`, enums as Literal or
    an Enum), and the model's call is validated against the same fields (pydantic's lax mode: a
    number where text is declared becomes text, "12" where an integer is, an integer). Fields
    the declaration does not name are ignored, unless the model's config forbids them
    (`extra="forbid"`, which the schema then states as `additionalProperties: false`)."""

    model_config = pydantic.ConfigDict(coerce_numbers_to_str=True)


class _ToolSchema(GenerateJsonSchema):
    # No titles: the model reads the descriptions, and every token of a tool's schema is taken
    # from the prompt's window.
    def field_title_should_be_set(self, schema: Any) -> bool:
        return False


def arguments_schema(arguments: type[pydantic.BaseModel]) -> dict[str, Any]:
    """The JSON Schema of `arguments` as a tool's `parameters`: without titles, the models'
    docstrings, a null default or `$defs` (each reference replaced by its definition: small
    models' grammars and the prompt's token count both prefer one flat object)."""
    generated = arguments.model_json_schema(schema_generator=_ToolSchema)
    definitions = generated.pop("$defs", {})
    # A model's docstring is for its readers here, not for the model (the fields describe).
    for model in (generated, *definitions.values()):
        model.pop("description", None)

    def flat(node: Any, *, properties: bool = False) -> Any:
        if isinstance(node, list):
            return [flat(item) for item in node]
        if not isinstance(node, dict):
            return node
        if properties:  # a mapping of field names to schemas: every key is a field's
            return {name: flat(value) for name, value in node.items()}
        reference = node.get("$ref", "")
        if reference.startswith("#/$defs/"):
            return flat(
                {**definitions[reference.removeprefix("#/$defs/")], **{k: v for k, v in node.items() if k != "$ref"}}
            )
        return {
            key: flat(value, properties=key == "properties")
            for key, value in node.items()
            if key != "title" and not (key == "default" and value is None)
        }

    schema: dict[str, Any] = flat(generated)
    return schema


class Tool(ABC):
    """A tool the tutor model may call.

    - `name`: the function name the model calls; unique in the registry.
    - `description`: what the tool does, for the model.
    - `arguments`: the ToolArguments model of its arguments, the one declaration of their
      schema and their validation.
    - `schema`: the OpenAI function definition sent to the model, generated from the three
      above: {"type": "function", "function": {"name", "description", "parameters"}}.
    - `instruction`: the sentence the system prompt gets when the tool is offered ("" for none).
    - `small_window`: offered even on a window too small for every tool's schema.
    - `follows`: the name of a prompt block (llm.prompt_blocks) whose presence the tool follows:
      not offered when that block is absent for the student ("" for none). save_memory follows
      the memories, absent for a student without consent to memory.
    - `failure`: how an error text for the model starts, after "Error: " (what did not happen).
    - `event_types`: the events `run` may return, for the API schema.
    - `run(context, arguments)`: does the work for `arguments` (an instance of `arguments`,
      validated). It returns a ToolResult, or raises django's ValidationError for arguments the
      domain refuses: its messages reach the model after "Error: <failure>". It runs in a
      database step (synchronous, in a transaction of its own if it needs one), in English
      (translation.override("en")).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    arguments: ClassVar[type[ToolArguments]]
    schema: ClassVar[dict[str, Any]]
    instruction: ClassVar[str] = ""
    small_window: ClassVar[bool] = False
    follows: ClassVar[str] = ""
    event_types: ClassVar[tuple[ToolEventType, ...]] = ()

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if all(hasattr(cls, attribute) for attribute in ("name", "description", "arguments")):
            cls.schema = {
                "type": "function",
                "function": {
                    "name": cls.name,
                    "description": cls.description,
                    "parameters": arguments_schema(cls.arguments),
                },
            }

    @property
    def failure(self) -> str:
        return f"{self.name} not run."

    @abstractmethod
    def run(self, context: ToolContext, arguments: Any) -> ToolResult: ...


# The same tool class registered again (an app set up twice) takes the place of the first;
# another tool of the same name is a ValueError.
_registry: Registry[Tool] = Registry("tool")


def register(tool: Tool) -> Tool:
    """Add `tool` after the tools registered so far (see `_registry`)."""
    return _registry.register(tool)


def unregister(name: str) -> None:
    """Remove the tool `name` (for tests); no error if it is not registered."""
    _registry.unregister(name)


def registered() -> list[Tool]:
    """Every registered tool, in registration order."""
    return _registry.items()


def event_types() -> list[ToolEventType]:
    """The events the registered tools may send, each name once (its first declaration), in
    registration order."""
    seen: dict[str, ToolEventType] = {}
    for tool in _registry.items():
        for event_type in tool.event_types:
            seen.setdefault(event_type.name, event_type)
    return list(seen.values())


def tool_call_run(*, tools: Sequence[Tool], context: ToolContext, name: str, arguments: str) -> ToolResult:
    """Run the model's call of `name` with `arguments` (its JSON text) among the offered `tools`.

    Never raises for a bad call: a name not offered, arguments that are not a JSON object or
    that the tool's declaration refuses, or a ValidationError from the tool come back as an
    error text for the model (in English), which it can correct. Any other exception is the
    tool's bug and propagates.
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
        parsed = tool.arguments.model_validate(decoded)
    except pydantic.ValidationError as exc:
        return ToolResult(f"Error: {tool.failure} " + arguments_refused(exc))
    try:
        # The model reads the error: in English whatever the student's language (not translated).
        with translation.override("en"):
            return tool.run(context, parsed)
    except ValidationError as exc:
        return ToolResult(f"Error: {tool.failure} " + " ".join(exc.messages))


def arguments_refused(error: pydantic.ValidationError) -> str:
    """pydantic's errors as one text for the model (pydantic writes them in English): each as
    `<where>: <what>.`, e.g. `questions[0].kind: Input should be 'numeric' or 'short_text'.`"""

    def where(location: tuple[int | str, ...]) -> str:
        text = ""
        for part in location:
            text += f"[{part}]" if isinstance(part, int) else f".{part}" if text else str(part)
        return text or "arguments"

    return " ".join(f"{where(e['loc'])}: {e['msg'].rstrip('.')}." for e in error.errors(include_url=False))


def _fields(tool: Tool) -> str:
    """' {"a": ..., "b": ...}' for the schema's required arguments, '' if it requires none."""
    required = tool.schema["function"].get("parameters", {}).get("required", [])
    return " {" + ", ".join(f'"{name}": ...' for name in required) + "}" if required else ""
