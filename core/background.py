"""Background work: one way to send a task, one way to retry it, and one place where periodic
tasks are declared.

- `enqueue(name, *args)` sends the Celery task registered under `name` once the current
  transaction commits (at once outside a transaction). A broker that is down is logged, never
  raised: every caller has stored its work as pending first, and a sweep (beat) sends it again.
  Services name their tasks instead of importing them, so no app's services import its tasks.
- `Retrying` is the base of a task that Celery retries (`autoretry_for`), with its limits read
  from the settings at each try; a task that must do something after its last try checks
  `last_try(task)`, and otherwise raises the error again for Celery to retry.
- `task_queue(name)` is the queue task `name` goes to, and `worker_queues()` the queues a worker
  reads to run every task (tutor.celery routes with the first; /metrics watches the second).
- `periodic(key, task, seconds)` declares a periodic task. Each app declares its own, in its
  `AppConfig.ready()`; the Celery app (tutor.celery) gives beat the whole schedule
  (`beat_schedule()`).
"""

from __future__ import annotations

import logging
import random
import threading
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from operator import attrgetter
from typing import Any

from celery import Task, current_app
from django.conf import settings
from django.db import transaction

from core.registry import Registry

logger = logging.getLogger(__name__)


# --- Sending ----------------------------------------------------------------------------------


def enqueue(name: str, *args: Any, using: str | None = None, **kwargs: Any) -> None:
    """Send task `name` with these arguments after the transaction on `using` commits."""
    transaction.on_commit(partial(send, name, *args, **kwargs), using=using)


def send(name: str, *args: Any, **kwargs: Any) -> bool:
    """Send task `name` now. False (and logged) when the broker refused it.

    The task is looked up in the Celery app's registry (imported from its app's `tasks` module
    the first time this process sends a task it has not imported), and sent with its `delay`.
    """
    try:
        _registered(name).delay(*args, **kwargs)
    except Exception:
        logger.exception("could not enqueue %s%r; its sweep sends it again", name, args)
        return False
    return True


# Held while the apps' tasks modules are imported: a send that comes meanwhile waits for them
# rather than finding a module half imported and its task not registered yet.
_discovery = threading.Lock()


def _registered(name: str) -> Any:
    tasks = current_app.tasks
    if name not in tasks:
        with _discovery:
            if name not in tasks:
                # Celery's autodiscovery: every installed app's `tasks` module (a web process
                # imports none of them until it sends one).
                current_app.autodiscover_tasks(force=True)
    return tasks[name]


# --- Queues -----------------------------------------------------------------------------------


def _default_queue() -> str:
    return str(current_app.conf.task_default_queue or settings.CELERY_TASK_DEFAULT_QUEUE)


def task_queue(name: str) -> str:
    """The queue of task `name`: CELERY_QUEUE_PREFIX and its queue in settings.TASK_QUEUES
    (`default` for a task not listed there), while the default queue is the prefix's `default`.
    A default queue named otherwise (CELERY_QUEUE) takes every task: one worker on that one queue
    runs them all."""
    prefix = settings.CELERY_QUEUE_PREFIX
    default = _default_queue()
    if default != f"{prefix}default":
        return default
    return prefix + settings.TASK_QUEUES.get(name, "default")


def worker_queues() -> list[str]:
    """The queues a worker reads to run every task: the four queues, or CELERY_QUEUE's one."""
    prefix = settings.CELERY_QUEUE_PREFIX
    default = _default_queue()
    if default != f"{prefix}default":
        return [default]
    return [prefix + name for name in settings.QUEUE_NAMES]


# --- Retrying ---------------------------------------------------------------------------------


class Retrying(Task):
    """Base of a task whose transient errors Celery retries: the task lists them in
    `autoretry_for`, and names its settings, read at each try (a deployment's values, or a
    test's, hold without importing the task again):
    - `max_retries_setting`: the most retries; or `max_tries_setting`: the most tries (one more);
    - `retry_backoff_setting`: the first retry's delay in seconds, doubled at each retry, give
      or take 20% (`retry_countdown`), so that the tasks of one outage do not all come back at
      the same moment.

    Celery's own `retry_backoff` is not used: it rounds the delay to whole seconds (one at
    least) and its full jitter may bring a retry back at once.
    """

    max_retries_setting = ""
    max_tries_setting = ""
    retry_backoff_setting = ""

    @property
    def max_retries(self) -> int | None:  # type: ignore[override]
        if self.max_tries_setting:
            return max(0, int(getattr(settings, self.max_tries_setting)) - 1)
        return int(getattr(settings, self.max_retries_setting))

    def retry(
        self,
        args: Any = None,
        kwargs: Any = None,
        exc: Exception | None = None,
        throw: bool = True,
        eta: datetime | None = None,
        countdown: float | None = None,
        max_retries: int | None = None,
        **options: Any,
    ) -> Any:
        """Celery's retry; without a `countdown` or an `eta`, after `retry_countdown(self)`."""
        if countdown is None and eta is None:
            countdown = retry_countdown(self)
        return super().retry(args, kwargs, exc, throw, eta, countdown, max_retries, **options)


def retry_countdown(task: Retrying) -> float:
    """The delay before the retry of this try of `task`: its `retry_backoff_setting` seconds
    x 2^retries, give or take 20%. Drawn once per try, so a task may log the delay it retries in."""
    request = task.request
    countdown = getattr(request, "retry_countdown", None)
    if countdown is None:
        base = float(getattr(settings, task.retry_backoff_setting))
        countdown = base * 2**request.retries * random.uniform(0.8, 1.2)
        request.retry_countdown = countdown  # type: ignore[attr-defined]
    return float(countdown)


def last_try(task: Any) -> bool:
    """Whether a bound task runs its last try: an error now is not retried by Celery."""
    max_retries = task.max_retries
    return max_retries is not None and task.request.retries >= max_retries


# --- Periodic tasks ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Periodic:
    task: str
    seconds: float


@dataclass(frozen=True)
class _Entry:
    key: str
    periodic: Periodic


_schedule: Registry[_Entry] = Registry("periodic task", key=attrgetter("key"), replace="any", order=attrgetter("key"))


def periodic(key: str, task: str, seconds: float) -> None:
    """Declare that beat runs task `task` every `seconds`, under the entry `key`. Declaring the
    same key again replaces it; `seconds` of 0 or less leaves the task out of the schedule."""
    if seconds <= 0:
        _schedule.unregister(key)
        return
    _schedule.register(_Entry(key, Periodic(task=task, seconds=float(seconds))))


def beat_schedule() -> dict[str, dict[str, Any]]:
    """The schedule in Celery's `beat_schedule` form: every periodic task the apps declared."""
    return {entry.key: {"task": entry.periodic.task, "schedule": entry.periodic.seconds} for entry in _schedule}
