"""The tutor's learning tools, create_quiz and update_task, as plug-ins (llm.tools).

Registered by learning's AppConfig.ready(), after save_memory; offered only on a window large
enough for every tool's schema. A quiz created is sent to the client as a `quiz` event (the
student's view, learning.serializers.quiz_event), kept with the reply for a replayed turn.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from learning import services
from learning.models import MAX_QUESTIONS, Quiz, TaskStatus
from learning.serializers import QuizOutput, quiz_event
from learning.validation import (
    ANSWER_MAX_CHARS,
    CHOICES_MAX,
    CHOICES_MIN,
    REASON_MAX_CHARS,
    SKILL_MAX_WORDS,
)
from llm.tools import Tool, ToolContext, ToolEvent, ToolEventType, ToolResult, tool_call_run

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


class CreateQuiz(Tool):
    name = "create_quiz"
    schema = CREATE_QUIZ_TOOL
    instruction = (
        "After working on a skill, you may check it with the create_quiz tool: the app shows the quiz and grades it."
    )
    event_types = (
        ToolEventType("quiz", QuizOutput(), "A quiz the tutor created with create_quiz (questions, no answers)."),
    )

    def run(self, context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        """Store the quiz, linked to the turn's student message (services.quiz_create_from_tool:
        its ValidationError, a cap reached included, reaches the model)."""
        quiz = services.quiz_create_from_tool(
            student_id=context.student_id,
            conversation_id=context.conversation_id,
            arguments=arguments,
            message_id=context.message_id,
        )
        return ToolResult(quiz_tool_result(quiz), [ToolEvent("quiz", quiz_event(quiz))], value=quiz)


class UpdateTask(Tool):
    name = "update_task"
    schema = UPDATE_TASK_TOOL
    instruction = (
        "When the student tells you how a homework task is going, call update_task with the task's "
        "id from the learning record."
    )

    def run(self, context: ToolContext, arguments: dict[str, Any]) -> ToolResult:
        status = services.task_update_from_tool(student_id=context.student_id, arguments=arguments)
        return ToolResult(task_tool_result(status), value=status)


# Registered by learning's AppConfig.ready(), in this order.
LEARNING: tuple[Tool, ...] = (CreateQuiz(), UpdateTask())


@dataclass(frozen=True)
class ToolRun:
    result: str  # the tool's output, for the model
    quiz: Quiz | None = None  # a quiz created: shown to the student with the reply
    task_status: TaskStatus | None = None


def learning_tool_run(
    *, name: str, arguments: str, student_id: int, conversation_id: int, message_id: int | None = None
) -> ToolRun:
    """Run one create_quiz or update_task call as the chat turn runs a call (llm.tools.tool_call_run,
    among the learning tools alone), for the conversation's student, in the turn of the student
    message `message_id` (the quiz is linked to it).

    Never raises for a bad call: invalid JSON, invalid arguments or a reached cap come back as an
    error text for the model (in English), which it can correct. A name outside TOOL_NAMES is the
    caller's mistake (ValueError).
    """
    if name not in TOOL_NAMES:
        raise ValueError(f"not a learning tool: {name!r}")
    result = tool_call_run(
        tools=LEARNING,
        context=ToolContext(student_id=student_id, conversation_id=conversation_id, message_id=message_id),
        name=name,
        arguments=arguments,
    )
    value = result.value
    return ToolRun(
        result.text,
        quiz=value if isinstance(value, Quiz) else None,
        task_status=value if isinstance(value, TaskStatus) else None,
    )


def quiz_tool_result(quiz: Quiz) -> str:
    plural = "s" if quiz.question_count != 1 else ""
    return (
        f"Quiz {quiz.pk} created: {quiz.question_count} question{plural} on {quiz.topic!r} (skill {quiz.skill!r}). "
        "The app shows it to the student and grades it; do not give the answers away. Its result will "
        "appear in the learning record."
    )


def task_tool_result(status: TaskStatus) -> str:
    return f"Task {status.task_id} is now {status.status.replace('_', ' ')} for the student."
