"""Background work: one way to send a task, and one place where periodic tasks are declared.

- `enqueue(name, *args)` sends the Celery task registered under `name` once the current
  transaction commits (at once outside a transaction). A broker that is down is logged, never
  raised: every caller has stored its work as pending first, and a sweep (beat) sends it again.
  Services name their tasks instead of importing them, so no app's services import its tasks.
- `periodic(key, task, seconds)` declares a periodic task. Each app declares its own, in its
  `AppConfig.ready()`; the Celery app (tutor.celery) gives beat the whole schedule
  (`beat_schedule()`).

Retries are Celery's own (`autoretry_for`, `retry_backoff`, `retry_jitter`, `max_retries` on
the task); a task that must do something after its last try checks `last_try(task)`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from functools import partial
from typing import Any

from celery import current_app
from django.db import transaction

logger = logging.getLogger(__name__)


def enqueue(name: str, *args: Any, using: str | None = None, **kwargs: Any) -> None:
    """Send task `name` with these arguments after the transaction on `using` commits."""
    transaction.on_commit(partial(send, name, *args, **kwargs), using=using)


def send(name: str, *args: Any, **kwargs: Any) -> bool:
    """Send task `name` now. False (and logged) when the broker refused it."""
    try:
        current_app.tasks[name].apply_async(args, kwargs)
    except Exception:
        logger.exception("could not enqueue %s%r; its sweep sends it again", name, args)
        return False
    return True


def last_try(task: Any) -> bool:
    """Whether a bound task runs its last try: an error now is not retried by Celery."""
    max_retries = task.max_retries
    return max_retries is not None and task.request.retries >= max_retries


@dataclass(frozen=True)
class Periodic:
    task: str
    seconds: float


_schedule: dict[str, Periodic] = {}


def periodic(key: str, task: str, seconds: float) -> None:
    """Declare that beat runs task `task` every `seconds`, under the entry `key`. Declaring the
    same key again replaces it; `seconds` of 0 or less leaves the task out of the schedule."""
    if seconds <= 0:
        _schedule.pop(key, None)
        return
    _schedule[key] = Periodic(task=task, seconds=float(seconds))


def beat_schedule() -> dict[str, dict[str, Any]]:
    """The schedule in Celery's `beat_schedule` form: every periodic task the apps declared."""
    return {key: {"task": p.task, "schedule": p.seconds} for key, p in sorted(_schedule.items())}
