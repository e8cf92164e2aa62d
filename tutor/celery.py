import os

from celery import Celery
from celery.signals import worker_process_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")

app = Celery("tutor")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.on_after_finalize.connect
def _give_beat_the_schedule(sender: Celery, **kwargs: object) -> None:
    # Beat reads `beat_schedule` when its scheduler starts, after the loader has set Django up
    # (every app's ready() has declared its periodic tasks) and finalized the app.
    from core.background import beat_schedule

    sender.conf.beat_schedule = beat_schedule()


@worker_process_init.connect
def _warm_up_pool_process(**kwargs: object) -> None:
    # Each pool process (prefork's children, or the solo pool's one) loads the embedder and logs
    # its models before its first task.
    from tutor.startup import warm_up

    warm_up()


@worker_ready.connect
def _recover_summaries(**kwargs: object) -> None:
    # A worker (re)starting takes over the summaries that a dead process of this host was writing
    # (a broker that is down again is logged: beat's next sweep does the same).
    from core.background import send

    send("memory.tasks.summaries_sweep")
