"""The arguments of the tutor's tools, checked before anything is stored.

The messages are read by the model (the chat turn returns them as the tool's result so that it
can correct the call), never by a person: they are in English and not translated, and each one
says what to change.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from core.api import MAX_ID
from learning.grading import normalise_text, parse_number
from learning.models import MAX_QUESTIONS, Question, TaskStatus
from memory.validation import refuse_unstorable

TOPIC_MAX_CHARS = 200
SKILL_MAX_CHARS = 100
SKILL_MAX_WORDS = 12
PROMPT_MAX_CHARS = 1000
EXPLANATION_MAX_CHARS = 1000
ANSWER_MAX_CHARS = 200
CHOICES_MIN, CHOICES_MAX = 2, 6
REASON_MAX_CHARS = 300
# A teacher's homework task (the API and learning.services.task_create).
TASK_TITLE_MAX_CHARS = 200
TASK_INSTRUCTIONS_MAX_CHARS = 5000
TASK_SUBJECT_MAX_CHARS = 100


@dataclass(frozen=True)
class QuestionSpec:
    kind: str
    prompt: str
    choices: list[str]
    expected_answer: str
    correct_choice: int | None
    expected_number: float | None
    tolerance: float | None
    explanation: str


@dataclass(frozen=True)
class QuizSpec:
    topic: str
    skill: str
    questions: list[QuestionSpec]


@dataclass(frozen=True)
class TaskUpdateSpec:
    task_id: int
    status: str
    reason: str


def _text(value: object, name: str, limit: int, *, one_line: bool = True) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ValidationError({name: [f"{name} is required and must be text."]})
    text = " ".join(value.split()) if one_line else value.strip()
    if len(text) > limit:
        raise ValidationError({name: [f"{name} must be at most {limit} characters (got {len(text)})."]})
    refuse_unstorable(text, name)
    return text


def skill_key(skill: str) -> str:
    """The label a skill is recorded under: two spellings of one label are one skill."""
    return normalise_text(skill)[:SKILL_MAX_CHARS]


def validate_quiz_arguments(arguments: object) -> QuizSpec:
    """The create_quiz tool's arguments as a QuizSpec, or ValidationError naming what to fix."""
    if not isinstance(arguments, dict):
        raise ValidationError('Arguments must be a JSON object {"topic": ..., "skill": ..., "questions": [...]}.')
    topic = _text(arguments.get("topic"), "topic", TOPIC_MAX_CHARS)
    skill = _text(arguments.get("skill"), "skill", SKILL_MAX_CHARS)
    if len(skill.split()) > SKILL_MAX_WORDS or not skill_key(skill):
        raise ValidationError(
            {"skill": [f"skill must be a short label of 1 to {SKILL_MAX_WORDS} words, e.g. 'adding fractions'."]}
        )
    questions = arguments.get("questions")
    if not isinstance(questions, list) or not 1 <= len(questions) <= MAX_QUESTIONS:
        count = len(questions) if isinstance(questions, list) else "none"
        raise ValidationError({"questions": [f"questions must be a list of 1 to {MAX_QUESTIONS} (got {count})."]})
    specs = [_question(item, number) for number, item in enumerate(questions, 1)]
    return QuizSpec(topic=topic, skill=skill, questions=specs)


def _question(item: object, number: int) -> QuestionSpec:
    def fail(message: str) -> ValidationError:
        return ValidationError({"questions": [f"Question {number}: {message}"]})

    if not isinstance(item, dict):
        raise fail("must be an object with kind, prompt, answer and explanation.")
    kind = item.get("kind")
    if kind not in Question.Kind.values:
        raise fail(f"kind must be one of {', '.join(Question.Kind.values)} (got {kind!r}).")
    try:
        prompt = _text(item.get("prompt"), "prompt", PROMPT_MAX_CHARS, one_line=False)
        explanation = _text(item.get("explanation"), "explanation", EXPLANATION_MAX_CHARS, one_line=False)
    except ValidationError as exc:
        raise fail(" ".join(exc.messages)) from None
    answer = item.get("answer")
    if kind == Question.Kind.NUMERIC:
        number_value = parse_number(answer)
        if number_value is None:
            raise fail(f"a numeric question's answer must be a number, e.g. 0.75 or 3/4 (got {answer!r}).")
        tolerance = item.get("tolerance")
        tolerance_value = 0.0 if tolerance is None else parse_number(tolerance)
        if tolerance_value is None or tolerance_value < 0:
            raise fail(f"tolerance must be a number >= 0 (got {tolerance!r}).")
        expected = answer if isinstance(answer, str) else f"{number_value:g}"
        return QuestionSpec(
            kind, prompt, [], expected.strip()[:ANSWER_MAX_CHARS], None, number_value, tolerance_value, explanation
        )
    if not isinstance(answer, str) or not answer.strip():
        raise fail("answer is required and must be text.")
    answer = answer.strip()
    if len(answer) > ANSWER_MAX_CHARS:
        raise fail(f"answer must be at most {ANSWER_MAX_CHARS} characters.")
    try:
        refuse_unstorable(answer, "answer")
    except ValidationError as exc:
        raise fail(" ".join(exc.messages)) from None
    if kind == Question.Kind.SHORT_TEXT:
        if not normalise_text(answer):
            raise fail("a short-text answer needs letters or digits, not only punctuation.")
        return QuestionSpec(kind, prompt, [], answer, None, None, None, explanation)
    choices = item.get("choices")
    if (
        not isinstance(choices, list)
        or not CHOICES_MIN <= len(choices) <= CHOICES_MAX
        or not all(isinstance(c, str) and c.strip() and len(c.strip()) <= ANSWER_MAX_CHARS for c in choices)
    ):
        raise fail(
            f"a multiple-choice question needs {CHOICES_MIN} to {CHOICES_MAX} choices, "
            f"each a text of at most {ANSWER_MAX_CHARS} characters."
        )
    clean = [c.strip() for c in choices]
    try:
        for choice in clean:
            refuse_unstorable(choice, "choices")
    except ValidationError as exc:
        raise fail(" ".join(exc.messages)) from None
    folded = [normalise_text(c) for c in clean]
    if len(set(folded)) != len(folded) or not all(folded):
        raise fail("the choices must differ from one another (ignoring case, accents and punctuation).")
    if normalise_text(answer) not in folded:
        raise fail("answer must be the text of one of the choices.")
    return QuestionSpec(kind, prompt, clean, answer, folded.index(normalise_text(answer)), None, None, explanation)


def validate_task_arguments(arguments: object) -> TaskUpdateSpec:
    """The update_task tool's arguments, or ValidationError naming what to fix."""
    if not isinstance(arguments, dict):
        raise ValidationError('Arguments must be a JSON object {"task": ..., "status": ..., "reason": ...}.')
    task = arguments.get("task")
    if isinstance(task, str) and task.strip().isdigit():
        task = int(task.strip())
    if isinstance(task, bool) or not isinstance(task, int) or not 0 < task <= MAX_ID:
        raise ValidationError({"task": [f"task must be the id of one of the student's tasks (got {task!r})."]})
    status = arguments.get("status")
    if status not in TaskStatus.Status.values:
        raise ValidationError({"status": [f"status must be one of {', '.join(TaskStatus.Status.values)}."]})
    reason = _text(arguments.get("reason"), "reason", REASON_MAX_CHARS)
    return TaskUpdateSpec(task_id=task, status=str(status), reason=reason)


def validate_task_text(*, title: object, instructions: object, subject: object) -> tuple[str, str, str]:
    """A task's title (required), instructions and subject, stripped, within their limits in
    characters and storable; ValidationError naming the field otherwise, in the messages (and
    with the limits) of the API's serializer, which refuses the same first. For teachers: these
    messages are translated, unlike the tools' ones."""
    texts = {"title": title, "instructions": instructions, "subject": subject}
    limits = {
        "title": TASK_TITLE_MAX_CHARS,
        "instructions": TASK_INSTRUCTIONS_MAX_CHARS,
        "subject": TASK_SUBJECT_MAX_CHARS,
    }
    clean = {}
    for name, value in texts.items():
        text = value.strip() if isinstance(value, str) else ""
        if name == "title" and not text:
            raise ValidationError({name: [_("This field may not be blank.")]})
        if len(text) > limits[name]:
            message = _("Ensure this field has no more than {max_length} characters.").format(max_length=limits[name])
            raise ValidationError({name: [message]})
        refuse_unstorable(text, name)
        clean[name] = text
    return clean["title"], clean["instructions"], clean["subject"]
