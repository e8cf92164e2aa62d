import os

from celery import Celery
from celery.signals import worker_process_init

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
