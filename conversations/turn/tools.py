"""The turn's tools (llm.tools, the tools the apps registered): which the model is offered for
its window, what their schemas take of it, and the model's calls run between its rounds.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from llm import gateway
from llm.tokens import count_tokens
from llm.tools import Tool, ToolContext, ToolResult, registered, tool_call_run

# The tools' schemas take at most this share of the model's window.
TOOLS_WINDOW_SHARE = 8


_tools_tokens_cache: dict[tuple[str, tuple[str, ...]], int] = {}


def tools_tokens(tools: list[Tool]) -> int:
    """The tools' schemas as the product counts them (a server renders them into the prompt),
    counted once per chat model."""
    key = (settings.LLM_MODEL, tuple(tool.name for tool in tools))
    if key not in _tools_tokens_cache:
        _tools_tokens_cache[key] = count_tokens(json.dumps(tool_schemas(tools)))
    return _tools_tokens_cache[key]


def tool_schemas(tools: list[Tool]) -> list[dict[str, Any]]:
    """The tools as the model is offered them (OpenAI function definitions)."""
    return [tool.schema for tool in tools]


def turn_tools(window: int, *, absent: frozenset[str] = frozenset()) -> list[Tool]:
    """The tools for a model of `window` tokens, in registration order: every registered tool
    when all their schemas take at most 1/TOOLS_WINDOW_SHARE of it, else the small_window ones;
    never one that follows a prompt block `absent` for the student (Tool.follows)."""
    tools = [tool for tool in registered() if not (tool.follows and tool.follows in absent)]
    if tools_tokens(tools) * TOOLS_WINDOW_SHARE <= window:
        return tools
    return [tool for tool in tools if tool.small_window]


@dataclass(frozen=True)
class ToolOutcome:
    call: gateway.ToolCall
    result: ToolResult  # its text for the model, its events for the client


def turn_tools_run(
    *,
    conversation_id: int,
    student_id: int,
    calls: list[gateway.ToolCall],
    message_id: int | None = None,
    tools: list[Tool] | None = None,
) -> list[ToolOutcome]:
    """Run the model's tool calls in the turn of the student message `message_id`, among the
    `tools` offered (every registered tool when None); an invalid call gets an error text for the
    model, never raises (llm.tools.tool_call_run)."""
    offered = registered() if tools is None else tools
    context = ToolContext(student_id=student_id, conversation_id=conversation_id, message_id=message_id)
    return [
        ToolOutcome(call, tool_call_run(tools=offered, context=context, name=call.name, arguments=call.arguments))
        for call in calls
    ]
