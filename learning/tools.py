"""The tutor's learning tools: their definitions for the model, and one entry point for the chat
turn to run a call.

The chat turn offers `LEARNING_TOOLS` beside save_memory and, for a call whose name is in
`TOOL_NAMES`, calls `learning_tool_run`, sends `result` back to the model as the tool's output
and shows `quiz` (if any) to the student, serialised by learning.serializers.quiz_event.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import translation

from learning import services
from learning.models import MAX_QUESTIONS, Quiz, TaskStatus
from learning.validation import (
    ANSWER_MAX_CHARS,
    CHOICES_MAX,
    CHOICES_MIN,
    REASON_MAX_CHARS,
    SKILL_MAX_WORDS,
)

CREATE_QUIZ_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "create_quiz",
        "description": "Give the student a short quiz on a skill you worked on. The app shows and grades it.",
        "parameters": {
            "type": "object",
            "properties": {
                "topic": {"type": "string"},
                "skill": {
                    "type": "string",
                    "description": f"At most {SKILL_MAX_WORDS} words, e.g. 'adding fractions'; reuse labels.",
                },
                "questions": {
                    "type": "array",
                    "minItems": 1,
                    "maxItems": MAX_QUESTIONS,
                    "items": {
                        "type": "object",
                        "properties": {
                            "kind": {"type": "string", "enum": ["multiple_choice", "numeric", "short_text"]},
                            "prompt": {"type": "string"},
                            "choices": {
                                "type": "array",
                                "items": {"type": "string"},
                                "description": f"multiple_choice: {CHOICES_MIN}-{CHOICES_MAX} options.",
                            },
                            "answer": {
                                "type": "string",
                                "description": f"Right choice's text, a number, or <= {ANSWER_MAX_CHARS} chars.",
                            },
                            "tolerance": {"type": "number", "description": "numeric: accepted difference."},
                            "explanation": {"type": "string", "description": "Shown after answering."},
                        },
                        "required": ["kind", "prompt", "answer", "explanation"],
                    },
                },
            },
            "required": ["topic", "skill", "questions"],
        },
    },
}

UPDATE_TASK_TOOL: dict[str, Any] = {
    "type": "function",
    "function": {
        "name": "update_task",
        "description": "Set the student's status on a homework task (ids in the learning record).",
        "parameters": {
            "type": "object",
            "properties": {
                "task": {"type": "integer"},
                "status": {"type": "string", "enum": list(TaskStatus.Status.values)},
                "reason": {"type": "string", "description": f"At most {REASON_MAX_CHARS} chars."},
            },
            "required": ["task", "status", "reason"],
            "additionalProperties": False,
        },
    },
}

LEARNING_TOOLS: list[dict[str, Any]] = [CREATE_QUIZ_TOOL, UPDATE_TASK_TOOL]
TOOL_NAMES = frozenset(tool["function"]["name"] for tool in LEARNING_TOOLS)


@dataclass(frozen=True)
class ToolRun:
    result: str  # the tool's output, for the model
    quiz: Quiz | None = None  # a quiz created: shown to the student with the reply
    task_status: TaskStatus | None = None


def learning_tool_run(
    *, name: str, arguments: str, student_id: int, conversation_id: int, message_id: int | None = None
) -> ToolRun:
    """Run one create_quiz or update_task call of the model for the conversation's student, in
    the turn of the student message `message_id` (the quiz is linked to it).

    Never raises for a bad call: invalid JSON, invalid arguments or a reached cap come back as
    an error text for the model (in English, whatever the student's language), which it can
    correct. A name outside TOOL_NAMES is the caller's mistake (ValueError).
    """
    if name not in TOOL_NAMES:
        raise ValueError(f"not a learning tool: {name!r}")
    try:
        # strict=False: llama-cpp-python's grammar lets a raw newline into a JSON string.
        args = json.loads(arguments or "{}", strict=False)
    except json.JSONDecodeError:
        return ToolRun(f"Error: {name} not run. The arguments must be a JSON object.")
    try:
        with translation.override("en"):
            if name == "create_quiz":
                quiz = services.quiz_create_from_tool(
                    student_id=student_id, conversation_id=conversation_id, arguments=args, message_id=message_id
                )
                return ToolRun(quiz_tool_result(quiz), quiz=quiz)
            status = services.task_update_from_tool(student_id=student_id, arguments=args)
            return ToolRun(task_tool_result(status), task_status=status)
    except ValidationError as exc:
        return ToolRun(f"Error: {name} not run. " + " ".join(exc.messages))


def quiz_tool_result(quiz: Quiz) -> str:
    plural = "s" if quiz.question_count != 1 else ""
    return (
        f"Quiz {quiz.pk} created: {quiz.question_count} question{plural} on {quiz.topic!r} (skill {quiz.skill!r}). "
        "The app shows it to the student and grades it; do not give the answers away. Its result will "
        "appear in the learning record."
    )


def task_tool_result(status: TaskStatus) -> str:
    return f"Task {status.task_id} is now {status.status.replace('_', ' ')} for the student."
