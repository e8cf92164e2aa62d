"""The turn's window: what the chat model's window leaves for the prompt (the reply's reserve, the
system prompt and the tools' schemas set aside), whether a message fits it, and what is learned
when the server refuses a prompt as longer than its window.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from django.conf import settings
from django.utils import formats
from django.utils.translation import gettext as _

from conversations import prompts
from conversations.turn.tools import tools_tokens, turn_tools
from core.errors import ApplicationError
from llm import costs, gateway
from llm.tokens import MESSAGE_OVERHEAD_TOKENS, count_tokens
from llm.tools import Tool


class MessageTooLong(ApplicationError):
    code = "message_too_long"


@dataclass(frozen=True)
class Limits:
    """What the chat model's window leaves for a turn's prompt."""

    window: int  # in the product's token counts, the unit of every budget
    prompt: int  # the window less the reply's reserve
    fixed: int  # the system prompt and the tools' schemas
    stated: int  # the window as the server states it, for messages
    tools: list[Tool] = field(default_factory=list)  # offered to the model (turn_tools)

    @property
    def available(self) -> int:
        # What the prompt blocks share (llm.prompt_blocks): the prompt less the fixed part.
        return max(0, self.prompt - self.fixed)

    @property
    def message(self) -> int:
        # One message must fit beside the system prompt, with room for the markers around it.
        return self.prompt - self.fixed - MESSAGE_OVERHEAD_TOKENS - 64


def turn_ceiling() -> tuple[Decimal, float]:
    """The most a turn can cost at the chat model's price (llm.costs), and how long it may run:
    each of its model rounds (MAX_TOOL_ROUNDS + 1) a prompt as long as the server's window allows
    beside the longest reply, and that reply; its deadline and a lease's time to finish."""
    limits = turn_limits()
    reply = limits.window - limits.prompt
    prompt = max(limits.prompt, limits.stated - reply)
    one = costs.usage_cost(model=gateway.chat_profile().model, prompt_tokens=prompt, completion_tokens=reply)
    return one * (settings.MAX_TOOL_ROUNDS + 1), settings.TURN_DEADLINE_SECONDS + settings.TURN_LEASE_SECONDS


def turn_limits(*, absent: frozenset[str] = frozenset()) -> Limits:
    """The window's limits for a turn whose `absent` prompt blocks (the claim's presence check)
    leave out the tools that follow them (turn_tools); none absent: every tool, the most a turn
    can take (turn_ceiling, check_fits)."""
    profile = gateway.chat_profile()
    resolved = gateway.context_window(profile)
    window = resolved.tokens
    tools = turn_tools(window, absent=absent)
    fixed = _system_prompt_tokens(tools)
    return Limits(window, window - gateway.reply_reserve(window), fixed, resolved.stated, tools)


def check_fits(content: str) -> int:
    """The message's tokens. A message that cannot fit the model's window is refused before it
    is stored or sent."""
    limits = turn_limits()
    tokens = count_tokens(content)
    if tokens <= limits.message:
        return tokens
    max_characters = max(0, int(limits.message * len(content) / tokens) // 100 * 100)
    raise MessageTooLong(
        _(
            "This message is too long for the tutor model (%(context)s-token context): at most about "
            "%(characters)s characters. Split it or shorten it."
        )
        % {
            "context": formats.number_format(limits.stated, force_grouping=True),
            "characters": formats.number_format(max_characters, force_grouping=True),
        },
        details={"max_characters": max_characters, "context_window": limits.stated, "message_tokens": tokens},
    )


_system_tokens_cache: dict[tuple[str, tuple[str, ...]], int] = {}


def _system_prompt_tokens(tools: list[Tool]) -> int:
    key = (settings.LLM_MODEL, tuple(tool.name for tool in tools))
    if key not in _system_tokens_cache:
        # The longest of the prompts that name a language: the budget holds for every student.
        system = max(count_tokens(prompts.system_prompt(language=code, tools=tools)) for code in prompts.LANGUAGE_NAMES)
        _system_tokens_cache[key] = system + tools_tokens(tools) + MESSAGE_OVERHEAD_TOKENS
    return _system_tokens_cache[key]


def window_learn(*, sent_tokens: int, window: int | None, requested: int | None = None) -> None:
    """What the server's refusal of a prompt of `sent_tokens` (our count) as longer than its window
    teaches of the endpoint:
    - the window it named, and, when our count is below the size the server gave (`requested`),
      or below the window itself, how many fewer tokens we count than it does (its tokenizer
      differs from ours);
    - if it named no window, one a fifth smaller than what was sent."""
    profile = gateway.chat_profile()
    if window is None:
        gateway.learn_window(profile, min(turn_limits().window, sent_tokens) * 4 // 5)
    elif requested and requested > sent_tokens:
        gateway.learn_window(profile, window, scale=sent_tokens / requested * 0.95)
    elif sent_tokens < window:
        gateway.learn_window(profile, window, scale=sent_tokens / window * 0.9)
