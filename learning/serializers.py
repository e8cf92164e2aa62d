"""How quizzes, skills and tasks are shown to clients (the API, and the chat turn's quiz event)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from learning.models import Answer, Question, Quiz, ReviewCard, SkillMastery, Task, TaskStatus
from learning.selectors import StudentTaskStatus

# --- Quizzes ------------------------------------------------------------------------------------


class AnswerOutput(serializers.ModelSerializer[Answer]):
    class Meta:
        model = Answer
        fields = ["question", "given", "result", "model_graded", "feedback", "graded_at"]
        read_only_fields = fields


class QuestionOutput(serializers.ModelSerializer[Question]):
    """A question; its expected answer and explanation are null for the student until they answer."""

    choices = serializers.ListField(child=serializers.CharField(), help_text="Multiple choice: the options.")
    expected_answer = serializers.SerializerMethodField()
    explanation = serializers.SerializerMethodField()

    class Meta:
        model = Question
        fields = ["id", "position", "kind", "prompt", "choices", "tolerance", "expected_answer", "explanation"]
        read_only_fields = fields

    def _revealed(self) -> bool:
        return bool(self.context.get("reveal"))

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_expected_answer(self, question: Question) -> str | None:
        return question.expected_answer if self._revealed() else None

    @extend_schema_field(serializers.CharField(allow_null=True))
    def get_explanation(self, question: Question) -> str | None:
        return question.explanation if self._revealed() else None


class QuizSummaryOutput(serializers.ModelSerializer[Quiz]):
    """A quiz and, once answered, its attempt's facts (null before)."""

    client_attempt_id = serializers.CharField(source="attempt.client_attempt_id", read_only=True, allow_null=True)
    answered_at = serializers.DateTimeField(source="attempt.submitted_at", read_only=True, allow_null=True)
    correct = serializers.IntegerField(
        source="attempt.correct", read_only=True, allow_null=True, help_text="Right answers, once all are graded."
    )
    graded_at = serializers.DateTimeField(source="attempt.graded_at", read_only=True, allow_null=True)

    class Meta:
        model = Quiz
        fields = [
            "id",
            "student",
            "conversation",
            "topic",
            "skill",
            "status",
            "question_count",
            "created_at",
            "client_attempt_id",
            "answered_at",
            "correct",
            "graded_at",
        ]
        read_only_fields = fields


class QuizOutput(QuizSummaryOutput):
    """A quiz with its questions and, once answered, the answers with their results (see quiz_output)."""

    questions = serializers.SerializerMethodField()
    answers = serializers.SerializerMethodField()

    class Meta(QuizSummaryOutput.Meta):
        fields = [*QuizSummaryOutput.Meta.fields, "questions", "answers"]
        read_only_fields = fields

    @extend_schema_field(QuestionOutput(many=True))
    def get_questions(self, quiz: Quiz) -> list[dict[str, Any]]:
        viewer = self.context.get("viewer")
        # The student (and their guardian) sees the expected answers once they have answered;
        # their teacher always.
        reveal = hasattr(quiz, "attempt") or (
            viewer is not None and viewer.pk != quiz.student_id and getattr(viewer, "role", None) != "guardian"
        )
        return list(QuestionOutput(quiz.questions.all(), many=True, context={"reveal": reveal}).data)

    @extend_schema_field(AnswerOutput(many=True))
    def get_answers(self, quiz: Quiz) -> list[dict[str, Any]]:
        """The student's answers in question order; empty until they answer."""
        attempt = getattr(quiz, "attempt", None)
        return list(AnswerOutput(attempt.answers.all(), many=True).data) if attempt is not None else []


def quiz_output(quiz: Quiz, *, viewer: Any) -> dict[str, Any]:
    """A quiz (from learning.selectors.quiz_get) as `viewer` may see it."""
    return dict(QuizOutput(quiz, context={"viewer": viewer}).data)


def quiz_event(quiz: Quiz) -> dict[str, Any]:
    """The data of the chat turn's quiz event: the new quiz as its student sees it (no answers)."""
    return dict(QuizOutput(quiz, context={"viewer": None}).data)


class QuizAnswersOutput(serializers.Serializer[None]):
    quiz = QuizOutput()
    replayed = serializers.BooleanField(help_text="The same client_attempt_id again: the stored result.")


# --- Mastery ------------------------------------------------------------------------------------


class SkillOutput(serializers.Serializer[Any]):
    skill = serializers.CharField()
    estimate = serializers.FloatField(help_text="Probability that the skill is mastered, today (0 to 1).")
    trend = serializers.FloatField(help_text="The estimate's change over the last results (-1 to 1).")
    attempts = serializers.IntegerField(help_text="Graded answers on this skill.")
    correct = serializers.IntegerField()
    latest_quiz_id = serializers.IntegerField(allow_null=True)
    latest_correct = serializers.IntegerField(help_text="The latest quiz: right answers ...")
    latest_total = serializers.IntegerField(help_text="... out of its graded answers.")
    last_result_at = serializers.DateTimeField()


class StudentSkillOutput(SkillOutput):
    student_id = serializers.IntegerField()
    username = serializers.CharField()


class ClassSkillOutput(serializers.Serializer[Any]):
    skill = serializers.CharField()
    class_average = serializers.FloatField(help_text="The mean estimate of the students assessed on it.")
    students = StudentSkillOutput(many=True, help_text="The students assessed on it, weakest first.")


class ClassroomSkillsOutput(serializers.Serializer[Any]):
    classroom = serializers.IntegerField()
    name = serializers.CharField()
    skills = ClassSkillOutput(many=True, help_text="Weakest class average first.")


# --- Tasks --------------------------------------------------------------------------------------


class TaskStatusOutput(serializers.Serializer[Any]):
    student_id = serializers.IntegerField()
    username = serializers.CharField()
    status = serializers.ChoiceField(choices=TaskStatus.Status.choices)
    set_by = serializers.ChoiceField(
        choices=TaskStatus.Source.choices, allow_null=True, help_text="Who set it; null: never set."
    )
    reason = serializers.CharField(allow_blank=True, help_text="The tutor's reason, when it set the status.")
    updated_at = serializers.DateTimeField(allow_null=True)
    overdue = serializers.BooleanField(help_text="Due date passed and not done (computed).")


class TaskOutput(serializers.ModelSerializer[Task]):
    statuses = serializers.SerializerMethodField()

    class Meta:
        model = Task
        fields = [
            "id",
            "teacher",
            "classroom",
            "student",
            "title",
            "instructions",
            "subject",
            "due_at",
            "created_at",
            "statuses",
        ]
        read_only_fields = fields

    @extend_schema_field(TaskStatusOutput(many=True))
    def get_statuses(self, task: Task) -> list[dict[str, Any]]:
        """A student's own status; for a teacher, every targeted student's."""
        statuses: list[StudentTaskStatus] = self.context["statuses"].get(task.pk, [])
        return list(TaskStatusOutput(statuses, many=True).data)


# --- A student's export (privacy.export, docs/privacy.md) ----------------------------------------


class ExportSkill(serializers.ModelSerializer[SkillMastery]):
    history = serializers.ListField(child=serializers.FloatField(), read_only=True)

    class Meta:
        model = SkillMastery
        fields = [
            "id",
            "skill",
            "skill_key",
            "attempts",
            "correct",
            "estimate",
            "estimated_at",
            "trend",
            "history",
            "latest_quiz",
            "latest_correct",
            "latest_total",
            "updated_at",
        ]
        read_only_fields = fields


class ExportReviewCard(serializers.ModelSerializer[ReviewCard]):
    """A skill's review schedule (FSRS's card, learning.reviews): `skill` is its mastery row's id."""

    skill: serializers.PrimaryKeyRelatedField[SkillMastery] = serializers.PrimaryKeyRelatedField(
        source="mastery", read_only=True
    )

    class Meta:
        model = ReviewCard
        fields = [
            "id",
            "skill",
            "skill_key",
            "state",
            "step",
            "stability",
            "difficulty",
            "due",
            "last_review",
            "reviews",
            "last_quiz",
            "updated_at",
        ]
        read_only_fields = fields


class ExportTask(serializers.ModelSerializer[Task]):
    """A task set to the student or to one of their classes, with the student's own status
    (`todo` and nulls when they never set one)."""

    progress = serializers.SerializerMethodField()

    class Meta:
        model = Task
        fields = ["id", "title", "instructions", "subject", "due_at", "classroom", "teacher", "created_at", "progress"]
        read_only_fields = fields

    @extend_schema_field(
        serializers.DictField(help_text="{status, source, reason, updated_at}: the student's status on the task.")
    )
    def get_progress(self, task: Task) -> dict[str, Any]:
        row = self.context.get("statuses", {}).get(task.pk)
        when = serializers.DateTimeField().to_representation(row.updated_at) if row else None
        return {
            "status": row.status if row else "todo",
            "source": row.source if row else None,
            "reason": row.reason if row else "",
            "updated_at": when,
        }


class ExportLearning(serializers.Serializer[None]):
    quizzes = QuizOutput(many=True, read_only=True, help_text="With questions and answers (QuizOutput).")
    skills = ExportSkill(many=True, read_only=True)
    reviews = ExportReviewCard(many=True, read_only=True, help_text="The review schedule per skill.")
    tasks = ExportTask(many=True, read_only=True)
