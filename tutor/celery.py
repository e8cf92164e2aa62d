"""The Celery app: configured from the Django settings (CELERY_*), its tasks found in each app's
`tasks` module, and the queue of each task (`route`)."""

import logging
import os
import threading
from typing import Any

from celery import Celery, bootsteps
from celery.signals import (
    before_task_publish,
    setup_logging,
    task_postrun,
    task_prerun,
    worker_init,
    worker_process_init,
    worker_process_shutdown,
    worker_ready,
)

from tutor.broker import register as register_broker_transport

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")

# The broker's Redis transport, with its repair for a worker losing its connection (tutor.broker).
register_broker_transport()

app = Celery("tutor")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


def route(name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any) -> dict[str, str]:
    """Celery's router (CELERY_TASK_ROUTES): the queue of task `name` (core.background.task_queue).
    Tasks sent by beat and by the workers are routed alike."""
    from core.background import task_queue

    return {"queue": task_queue(name)}


def queues() -> list[str]:
    """The queues a worker reads to run every task (core.background.worker_queues)."""
    from core.background import worker_queues

    return worker_queues()


class QueueHeartbeat(bootsteps.StartStopStep):
    """A step of the worker's consumer: while it reads its queues, a thread names them in the
    broker every QUEUE_HEARTBEAT_SECONDS (core.consumers), so that a queue no worker reads shows
    on /health/ready and /metrics. A thread rather than the consumer's timer: a solo pool runs
    its tasks in the consumer's loop, and a long task would silence the timer."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent: Any, **kwargs: Any) -> None:
        super().__init__(parent, **kwargs)
        self.stopped: threading.Event | None = None
        self.worker = ""

    @staticmethod
    def _queues(consumer: Any) -> list[str]:
        task_consumer = getattr(consumer, "task_consumer", None)
        if task_consumer is not None:
            return sorted(queue.name for queue in task_consumer.queues)
        return sorted(consumer.app.amqp.queues.consume_from)

    def start(self, parent: Any) -> None:
        from django.conf import settings

        from core import consumers

        self.worker = f"{parent.hostname}:{os.getpid()}"
        stopped = self.stopped = threading.Event()
        interval = float(settings.QUEUE_HEARTBEAT_SECONDS)
        log = logging.getLogger(__name__)

        def beat() -> None:
            failing = False
            while not stopped.is_set():
                try:
                    consumers.heartbeat(self._queues(parent), self.worker)
                    failing = False
                except Exception as exc:  # the broker down: the consumer reconnects, and so do we
                    if not failing:
                        log.warning("queue heartbeat: the broker did not answer (%s)", exc)
                    failing = True
                stopped.wait(interval)

        threading.Thread(target=beat, name="queue-heartbeat", daemon=True).start()

    def stop(self, parent: Any) -> None:
        from core import consumers

        if self.stopped is not None:
            self.stopped.set()
            self.stopped = None
            try:
                consumers.gone(self._queues(parent), self.worker)
            except Exception:  # the broker down: the names expire on their own
                logging.getLogger(__name__).info("queue heartbeat: could not remove this worker's names")

    shutdown = stop


app.steps["consumer"].add(QueueHeartbeat)


@app.on_after_finalize.connect
def _give_beat_the_schedule(sender: Celery, **kwargs: object) -> None:
    # Beat reads `beat_schedule` when its scheduler starts, after the loader has set Django up
    # (every app's ready() has declared its periodic tasks) and finalized the app.
    from core.background import beat_schedule

    sender.conf.beat_schedule = beat_schedule()


@worker_process_init.connect
def _warm_up_pool_process(**kwargs: object) -> None:
    # Each pool process (prefork's children, or the solo pool's one) loads the embedder that
    # embeds memories and logs its models before its first task; the learned safety screen waits
    # for the first sweep, the query side for the first query.
    from tutor import collector
    from tutor.startup import warm_up

    warm_up(safety_screen=False, queries=False)
    collector.settle()


@worker_ready.connect
def _recover_summaries(**kwargs: object) -> None:
    # A worker (re)starting takes over the summaries that a dead process of this host was writing
    # (a broker that is down again is logged: beat's next sweep does the same).
    from core.background import send

    send("conversations.tasks.summaries_sweep")


# --- Logs: Django's LOGGING, and the log context that follows the work (core.request_id) ---------


@setup_logging.connect
def _logging_as_django(loglevel: int | str | None = None, **kwargs: object) -> None:
    # A receiver here keeps Celery from configuring logging itself (its own formatter on the root
    # logger): the worker and beat log through the project's handler and format, at the level
    # their command line asks for (`-l`).
    import logging.config

    from django.conf import settings

    logging.config.dictConfig(settings.LOGGING)
    if loglevel:
        logging.getLogger().setLevel(loglevel)


@before_task_publish.connect
def _carry_log_context(headers: dict[str, object] | None = None, **kwargs: object) -> None:
    # Every task sent (core.background.send, a task's own .delay) carries the sender's request,
    # user, conversation and turn ids in its message; a task sent outside any context, none.
    from core.request_id import HEADER, task_headers

    carried = task_headers()
    if headers is not None and carried and HEADER not in headers:
        headers[HEADER] = carried


@task_prerun.connect
def _begin_task_log_context(task_id: str = "", task: object = None, **kwargs: object) -> None:
    from core.request_id import HEADER, task_context_begin

    request = getattr(task, "request", None)
    task_context_begin(
        carried=getattr(request, HEADER, None), task_name=str(getattr(task, "name", "")), task_id=task_id
    )


@task_postrun.connect
def _end_task_log_context(**kwargs: object) -> None:
    from core.request_id import context_end

    context_end()


# --- Metrics (core.metrics): the queues' oldest task, and the samples of the pool's processes ----


@before_task_publish.connect
def _stamp_sent_at(headers: dict[str, object] | None = None, **kwargs: object) -> None:
    # When the task was sent: /metrics reads the oldest waiting task's age from it
    # (core.metrics_collector). A retry is sent again, and waits from then.
    import time

    if headers is not None:
        headers["sent_at"] = time.time()


@worker_init.connect
def _metrics_dir_reset(**kwargs: object) -> None:
    # The worker's main process, before it starts its pool: the samples of an earlier run of this
    # worker (PROMETHEUS_MULTIPROC_DIR, one per worker command) are dropped.
    from core.metrics import multiprocess_dir_reset

    multiprocess_dir_reset()


@worker_ready.connect
def _metrics_exposition(**kwargs: object) -> None:
    # A worker node's own /metrics (WORKER_METRICS_ADDR): the samples of this worker's processes.
    import logging

    from django.conf import settings

    from core.metrics import exposition_start

    if settings.WORKER_METRICS_ADDR:
        host, port = exposition_start(settings.WORKER_METRICS_ADDR)
        logging.getLogger(__name__).info("metrics served at http://%s:%s/metrics", host, port)


@worker_process_shutdown.connect
def _metrics_process_dead(pid: int | None = None, **kwargs: object) -> None:
    # A prefork child exits with os._exit (no atexit): its live gauges are dropped here.
    from core.metrics import process_exited

    process_exited(pid)
