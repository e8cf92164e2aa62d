"""The tutor's learning tools, create_quiz and update_task, as plug-ins (llm.tools).

Registered by learning's AppConfig.ready(), after save_memory; offered only on a window large
enough for every tool's schema. A quiz created is sent to the client as a `quiz` event (the
student's view, learning.serializers.quiz_event), kept with the reply for a replayed turn.
"""

from __future__ import annotations

from typing import Literal

from pydantic import ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

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
from llm.tools import Tool, ToolArguments, ToolContext, ToolEvent, ToolEventType, ToolResult


class QuestionArguments(ToolArguments):
    kind: Literal["multiple_choice", "numeric", "short_text"]
    prompt: str
    choices: list[str] | SkipJsonSchema[None] = Field(
        default=None, description=f"multiple_choice: {CHOICES_MIN}-{CHOICES_MAX} options."
    )
    answer: str = Field(description=f"Right choice's text, a number, or <= {ANSWER_MAX_CHARS} chars.")
    tolerance: float | SkipJsonSchema[None] = Field(default=None, description="numeric: accepted difference.")
    explanation: str = Field(description="Shown after answering.")


class QuizArguments(ToolArguments):
    """create_quiz's arguments; the rules between fields (a multiple-choice answer among its
    choices, a numeric answer a number...) are learning.validation's, checked by the service."""

    topic: str
    skill: str = Field(description=f"At most {SKILL_MAX_WORDS} words, e.g. 'adding fractions'; reuse labels.")
    questions: list[QuestionArguments] = Field(min_length=1, max_length=MAX_QUESTIONS)


class TaskArguments(ToolArguments):
    """update_task's arguments; whether the task is the student's is the service's to check."""

    model_config = ConfigDict(extra="forbid")

    task: int
    status: TaskStatus.Status
    reason: str = Field(description=f"At most {REASON_MAX_CHARS} chars.")


class CreateQuiz(Tool):
    name = "create_quiz"
    description = "Give the student a short quiz on a skill you worked on. The app shows and grades it."
    arguments = QuizArguments
    instruction = (
        "After working on a skill, you may check it with the create_quiz tool: the app shows the quiz and grades it."
    )
    event_types = (
        ToolEventType("quiz", QuizOutput(), "A quiz the tutor created with create_quiz (questions, no answers)."),
    )

    def run(self, context: ToolContext, arguments: QuizArguments) -> ToolResult:
        """Store the quiz, linked to the turn's student message (services.quiz_create_from_tool:
        its ValidationError, a cap reached included, reaches the model)."""
        quiz = services.quiz_create_from_tool(
            student_id=context.student_id,
            conversation_id=context.conversation_id,
            arguments=arguments.model_dump(exclude_none=True),
            message_id=context.message_id,
        )
        return ToolResult(quiz_tool_result(quiz), [ToolEvent("quiz", quiz_event(quiz))], value=quiz)


class UpdateTask(Tool):
    name = "update_task"
    description = "Set the student's status on a homework task (ids in the learning record)."
    arguments = TaskArguments
    instruction = (
        "When the student tells you how a homework task is going, call update_task with the task's "
        "id from the learning record."
    )

    def run(self, context: ToolContext, arguments: TaskArguments) -> ToolResult:
        status = services.task_update_from_tool(
            student_id=context.student_id, arguments=arguments.model_dump(mode="json")
        )
        return ToolResult(task_tool_result(status), value=status)


# Registered by learning's AppConfig.ready(), in this order.
LEARNING: tuple[Tool, ...] = (CreateQuiz(), UpdateTask())


def quiz_tool_result(quiz: Quiz) -> str:
    plural = "s" if quiz.question_count != 1 else ""
    return (
        f"Quiz {quiz.pk} created: {quiz.question_count} question{plural} on {quiz.topic!r} (skill {quiz.skill!r}). "
        "The app shows it to the student and grades it; do not give the answers away. Its result will "
        "appear in the learning record."
    )


def task_tool_result(status: TaskStatus) -> str:
    return f"Task {status.task_id} is now {status.status.replace('_', ' ')} for the student."
