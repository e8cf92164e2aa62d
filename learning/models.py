"""What the tutor knows about a student's learning: quizzes and their results, mastery per skill,
homework tasks and each student's status on them.

Invariants are database constraints; the services (learning.services) keep the rest.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import F, OrderBy, Q

MAX_QUESTIONS = 10
# Tasks due first, those without a due date last.
TASKS_DUE_FIRST: list[str | OrderBy] = [F("due_at").asc(nulls_last=True), "id"]


class Quiz(models.Model):
    """A quiz the tutor wrote with the `create_quiz` tool, for one student, on one skill."""

    class Status(models.TextChoices):
        OPEN = "open", "Waiting for the student's answers"
        # Answered; some short-text answers wait for the model to grade them (learning.tasks).
        GRADING = "grading", "Being graded"
        GRADED = "graded", "Graded"

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="quizzes")
    # A quiz outlives its conversation.
    conversation = models.ForeignKey(
        "conversations.Conversation", null=True, blank=True, on_delete=models.SET_NULL, related_name="quizzes"
    )
    message = models.ForeignKey(
        "conversations.Message",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="quizzes",
        help_text="The student message whose turn created the quiz.",
    )
    topic = models.CharField(max_length=200)
    skill = models.CharField(max_length=100, help_text="The skill label, as the tutor wrote it.")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    question_count = models.PositiveSmallIntegerField()
    # sha256 of the validated tool arguments: the same quiz created twice in one conversation (a
    # retried turn) is stored once.
    fingerprint = models.CharField(max_length=64)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(question_count__gte=1, question_count__lte=MAX_QUESTIONS), name="quiz_question_count"
            ),
            models.UniqueConstraint(
                fields=["conversation", "fingerprint"],
                condition=Q(conversation__isnull=False),
                name="quiz_unique_per_conversation",
            ),
        ]
        indexes = [models.Index(fields=["student", "-created_at"], name="quiz_student_recent")]

    def __str__(self) -> str:
        return f"Quiz {self.pk} ({self.skill}) of {self.student_id}"


class Question(models.Model):
    class Kind(models.TextChoices):
        MULTIPLE_CHOICE = "multiple_choice", "Multiple choice"
        NUMERIC = "numeric", "Numeric"
        SHORT_TEXT = "short_text", "Short text"

    quiz = models.ForeignKey(Quiz, on_delete=models.CASCADE, related_name="questions")
    position = models.PositiveSmallIntegerField()
    kind = models.CharField(max_length=16, choices=Kind.choices)
    prompt = models.TextField()
    choices = models.JSONField(default=list, blank=True, help_text="The options of a multiple-choice question.")
    # As the tutor wrote it; grading uses the typed fields below where the kind has one.
    expected_answer = models.CharField(max_length=200)
    correct_choice = models.PositiveSmallIntegerField(null=True, blank=True, help_text="Index into `choices`.")
    expected_number = models.FloatField(null=True, blank=True)
    tolerance = models.FloatField(null=True, blank=True)
    explanation = models.TextField()

    class Meta:
        ordering = ["quiz", "position"]
        constraints = [
            models.UniqueConstraint(fields=["quiz", "position"], name="question_unique_position"),
            models.CheckConstraint(
                condition=Q(position__gte=1, position__lte=MAX_QUESTIONS), name="question_position_range"
            ),
            # Each kind carries exactly what grading it needs.
            models.CheckConstraint(
                condition=(
                    Q(kind="multiple_choice", correct_choice__isnull=False, expected_number__isnull=True)
                    | Q(kind="numeric", correct_choice__isnull=True, expected_number__isnull=False)
                    | Q(kind="short_text", correct_choice__isnull=True, expected_number__isnull=True)
                ),
                name="question_kind_fields",
            ),
            models.CheckConstraint(
                condition=Q(kind="numeric", tolerance__gte=0) | (~Q(kind="numeric") & Q(tolerance__isnull=True)),
                name="question_tolerance",
            ),
        ]

    def __str__(self) -> str:
        return f"Question {self.position} of quiz {self.quiz_id}"


class QuizAttempt(models.Model):
    """The student's one set of answers to a quiz. One per quiz (answering again is a 409);
    `client_attempt_id` makes a retried submission return the same result."""

    quiz = models.OneToOneField(Quiz, on_delete=models.CASCADE, related_name="attempt")
    client_attempt_id = models.CharField(max_length=64)
    submitted_at = models.DateTimeField()
    # Set together once every answer is graded (Quiz.status graded).
    correct = models.PositiveSmallIntegerField(null=True, blank=True)
    total = models.PositiveSmallIntegerField()
    graded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.CheckConstraint(
                condition=Q(correct__isnull=True, graded_at__isnull=True)
                | Q(correct__isnull=False, graded_at__isnull=False, correct__lte=F("total")),
                name="attempt_score",
            ),
        ]

    def __str__(self) -> str:
        return f"Attempt on quiz {self.quiz_id}"


class Answer(models.Model):
    class Result(models.TextChoices):
        CORRECT = "correct", "Correct"
        INCORRECT = "incorrect", "Incorrect"
        # A short-text answer the normalised match could not decide: the model grades it.
        PENDING = "pending", "Waiting for grading"
        # The model could not grade it (refused, or unreachable past the last retry): counted
        # neither way, left for the teacher to read.
        UNGRADED = "ungraded", "Could not be graded"

    attempt = models.ForeignKey(QuizAttempt, on_delete=models.CASCADE, related_name="answers")
    question = models.ForeignKey(Question, on_delete=models.CASCADE, related_name="answers")
    given = models.TextField(blank=True)
    result = models.CharField(max_length=16, choices=Result.choices)
    model_graded = models.BooleanField(default=False)
    feedback = models.CharField(max_length=500, blank=True, help_text="The grading model's comment.")
    graded_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["attempt", "question__position"]
        constraints = [
            models.UniqueConstraint(fields=["attempt", "question"], name="answer_one_per_question"),
            models.CheckConstraint(
                condition=Q(result="pending", graded_at__isnull=True)
                | (~Q(result="pending") & Q(graded_at__isnull=False)),
                name="answer_graded_at",
            ),
            models.CheckConstraint(
                condition=Q(model_graded=False) | Q(result__in=["correct", "incorrect"]),
                name="answer_model_graded_result",
            ),
        ]

    def __str__(self) -> str:
        return f"Answer to question {self.question_id}: {self.result}"


class SkillMastery(models.Model):
    """A student's record on one skill: counts, the latest quiz, and a Bayesian knowledge tracing
    estimate (learning.mastery, docs/learning.md) with its trend.

    `estimate` is the probability that the skill is mastered right after the latest result, at
    `estimated_at`; readers decay it toward the prior for the time since (mastery.estimate_now).
    """

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="skills")
    skill = models.CharField(max_length=100, help_text="The label as last written.")
    # The label folded (case, accents, spacing): "Adding fractions" and "adding  fractions" are one skill.
    skill_key = models.CharField(max_length=100)
    attempts = models.PositiveIntegerField(default=0, help_text="Graded answers.")
    correct = models.PositiveIntegerField(default=0)
    estimate = models.FloatField()
    estimated_at = models.DateTimeField()
    trend = models.FloatField(default=0.0, help_text="The estimate's change over the last results.")
    # The estimates after each of the last results, oldest first (the trend's window).
    history = models.JSONField(default=list, blank=True)
    latest_quiz = models.ForeignKey(Quiz, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    latest_correct = models.PositiveSmallIntegerField(default=0)
    latest_total = models.PositiveSmallIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["student", "skill_key"]
        constraints = [
            models.UniqueConstraint(fields=["student", "skill_key"], name="skill_mastery_unique"),
            models.CheckConstraint(condition=Q(estimate__gte=0, estimate__lte=1), name="skill_mastery_estimate"),
            models.CheckConstraint(condition=Q(correct__lte=F("attempts")), name="skill_mastery_counts"),
            models.CheckConstraint(
                condition=Q(latest_correct__lte=F("latest_total")), name="skill_mastery_latest_counts"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.skill} of {self.student_id}: {self.estimate:.2f}"


class Task(models.Model):
    """Homework a teacher assigns to a whole class or to one student (exactly one)."""

    teacher = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="tasks_authored")
    classroom = models.ForeignKey(
        "accounts.Classroom", null=True, blank=True, on_delete=models.CASCADE, related_name="tasks"
    )
    student = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.CASCADE, related_name="tasks_assigned"
    )
    title = models.CharField(max_length=200)
    instructions = models.TextField(blank=True)
    subject = models.CharField(max_length=100, blank=True)
    due_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = TASKS_DUE_FIRST
        constraints = [
            models.CheckConstraint(
                condition=Q(classroom__isnull=False, student__isnull=True)
                | Q(classroom__isnull=True, student__isnull=False),
                name="task_one_target",
            ),
        ]

    def __str__(self) -> str:
        return self.title


class TaskStatus(models.Model):
    """One student's progress on a task. A student without a row has not started: `todo`."""

    class Status(models.TextChoices):
        TODO = "todo", "To do"
        IN_PROGRESS = "in_progress", "In progress"
        DONE = "done", "Done"

    class Source(models.TextChoices):
        STUDENT = "student", "The student"
        TUTOR = "tutor", "The tutor (update_task tool)"

    task = models.ForeignKey(Task, on_delete=models.CASCADE, related_name="statuses")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="task_statuses")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.TODO)
    source = models.CharField(max_length=16, choices=Source.choices)
    # The user who set it; null when the tutor did.
    updated_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    reason = models.CharField(max_length=300, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["task", "student"], name="task_status_unique"),
            models.CheckConstraint(
                condition=Q(source="tutor", updated_by__isnull=True) | Q(source="student"),
                name="task_status_source",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.task_id} for {self.student_id}: {self.status}"


class ReviewCard(models.Model):
    """The review schedule of one student's skill: its FSRS card (learning.reviews), fed by the
    skill's graded quizzes, one review each, in the quiz's grading transaction. A card exists once
    a quiz of the skill has a graded answer (its SkillMastery has attempts).

    `due` is when the skill's probability of recall falls to LEARNING_REVIEWS["desired_retention"];
    `last_quiz` the latest quiz counted (by submission time), which makes counting it twice a no-op.
    """

    class State(models.IntegerChoices):
        # fsrs.State's values. With no learning steps (learning.reviews) a reviewed card is in review.
        LEARNING = 1, "Learning"
        REVIEW = 2, "Review"
        RELEARNING = 3, "Relearning"

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="review_cards")
    mastery = models.OneToOneField(SkillMastery, on_delete=models.CASCADE, related_name="review_card")
    # The mastery row's skill_key: one card per student and skill.
    skill_key = models.CharField(max_length=100)
    state = models.PositiveSmallIntegerField(choices=State.choices)
    step = models.PositiveSmallIntegerField(null=True, blank=True)
    stability = models.FloatField(help_text="Days until the probability of recall falls to 90 %.")
    difficulty = models.FloatField(help_text="FSRS's difficulty, 1 (easiest) to 10.")
    due = models.DateTimeField()
    last_review = models.DateTimeField(help_text="The latest counted quiz's submission.")
    reviews = models.PositiveIntegerField(help_text="Graded quizzes counted.")
    last_quiz = models.ForeignKey(Quiz, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["student", "due"]
        constraints = [
            models.UniqueConstraint(fields=["student", "skill_key"], name="review_card_unique"),
            models.CheckConstraint(condition=Q(stability__gt=0), name="review_card_stability"),
            models.CheckConstraint(condition=Q(difficulty__gte=1, difficulty__lte=10), name="review_card_difficulty"),
            models.CheckConstraint(condition=Q(reviews__gte=1), name="review_card_reviews"),
        ]
        indexes = [models.Index(fields=["student", "due"], name="review_card_student_due")]

    def __str__(self) -> str:
        return f"{self.skill_key} of {self.student_id}: due {self.due:%Y-%m-%d}"
