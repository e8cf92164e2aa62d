import logging
import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")

app = Celery("tutor")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@worker_process_init.connect
def _warm_up_pool_process(**kwargs: object) -> None:
    # Each pool process (prefork's children, or the solo pool's one) loads the embedder and logs
    # its models before its first task.
    from tutor.startup import warm_up

    warm_up()


@worker_ready.connect
def _recover_summaries(**kwargs: object) -> None:
    # A worker (re)starting takes over the summaries that a dead process of this host was writing.
    from conversations.tasks import summaries_sweep

    try:
        summaries_sweep.delay()
    except Exception:  # the broker may be down again; beat's next sweep does the same
        logging.getLogger(__name__).exception("summary recovery at start-up could not be enqueued")
