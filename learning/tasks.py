from __future__ import annotations

import logging
from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.db import InterfaceError, OperationalError
from django.utils import timezone

from core import background
from learning import model_grading
from learning.models import Quiz, QuizAttempt
from llm.gateway import LLMError, LLMNotConfigured

logger = logging.getLogger(__name__)


@shared_task(
    base=background.Retrying,
    bind=True,
    acks_late=True,
    autoretry_for=(LLMError, OperationalError, InterfaceError),
    max_retries_setting="GRADING_MAX_RETRIES",
    retry_backoff_setting="GRADING_RETRY_BACKOFF_SECONDS",
)
def quiz_attempt_grade(self, attempt_id: int) -> int:  # type: ignore[no-untyped-def]
    """Grade an attempt's pending short-text answers with the model.

    Safe to run twice or to be redelivered: only answers still pending are sent to the model, and
    `answer_grade_store` stores a verdict only on a pending answer, under the quiz's lock, so an
    answer is graded once and the quiz settled (score, mastery) once. Transient errors (the model
    unreachable, an answer that is not a verdict, the database restarting) are retried by Celery
    (`background.Retrying`: exponential backoff with jitter) up to GRADING_MAX_RETRIES; after
    that the answers still pending are stored as ungraded. An unconfigured model is not retried:
    `grading_sweep` enqueues the attempt again later.
    """
    try:
        return model_grading.attempt_grade_pending(attempt_id=attempt_id)
    except LLMNotConfigured:
        logger.warning("grading: attempt %s waits for a model to be configured (the sweep retries)", attempt_id)
        return 0
    except (LLMError, OperationalError, InterfaceError) as exc:
        if not background.last_try(self):
            logger.info("grading: attempt %s retry in %.1fs (%s)", attempt_id, background.retry_countdown(self), exc)
            raise
        count = model_grading.attempt_grading_abandon(attempt_id=attempt_id)
        logger.error(
            "grading: attempt %s gave up after %s tries (%s); %s ungraded",
            attempt_id,
            self.request.retries + 1,
            exc,
            count,
        )
        return 0


@shared_task(acks_late=True)
def grading_sweep() -> int:
    """Enqueue again the attempts still being graded GRADING_SWEEP_AFTER_MINUTES after they were
    submitted: an enqueue lost while the broker was down, or a model configured since. Longer
    than a task's retries last, so an attempt still retrying is rarely sent twice, and when it
    is, the second delivery finds nothing pending (see quiz_attempt_grade)."""
    cutoff = timezone.now() - timedelta(minutes=settings.GRADING_SWEEP_AFTER_MINUTES)
    due = list(
        QuizAttempt.objects.filter(quiz__status=Quiz.Status.GRADING, submitted_at__lt=cutoff)
        .order_by("submitted_at")
        .values_list("pk", flat=True)[:500]
    )
    for attempt_id in due:
        quiz_attempt_grade.delay(attempt_id)
    if due:
        logger.info("grading sweep: re-enqueued %d attempts", len(due))
    return len(due)
