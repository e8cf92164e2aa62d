"""core.background: tasks sent by name after commit, Celery's retries with limits from the
settings, and the periodic tasks the apps declare, given to beat."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from unittest import mock

import pytest
from celery import shared_task
from celery.exceptions import Retry
from django.conf import settings as django_settings
from django.db import transaction
from kombu.exceptions import OperationalError as BrokerDown

from core import background
from tutor.celery import app

ROOT = Path(__file__).resolve().parent.parent.parent
SWEEP = "conversations.tasks.files_sweep"


@shared_task(
    base=background.Retrying,
    name="tests.core.flaky",
    bind=True,
    autoretry_for=(ConnectionError,),
    max_retries_setting="SUMMARY_MAX_RETRIES",
    retry_backoff_setting="SUMMARY_RETRY_BACKOFF_SECONDS",
)
def flaky(self, tries: list[int], fail_until: int) -> str:
    """Fails with ConnectionError until its `fail_until`-th try; after its last try, says so."""
    tries.append(self.request.retries)
    try:
        if len(tries) < fail_until:
            raise ConnectionError("down")
    except ConnectionError:
        if not background.last_try(self):
            raise
        return "gave up"
    return "done"


@shared_task(
    base=background.Retrying, name="tests.core.counted", bind=True, max_tries_setting="FILES_EXTRACT_MAX_ATTEMPTS"
)
def counted(self) -> None:
    """A task whose limit is a number of tries."""


# --- enqueue ------------------------------------------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_enqueue_sends_once_the_transaction_commits():
    task = background._registered(SWEEP)
    with mock.patch.object(task, "delay") as delay:
        with transaction.atomic():
            background.enqueue(SWEEP, 7, reason="test")
            assert delay.call_count == 0  # not before the commit
        delay.assert_called_once_with(7, reason="test")


@pytest.mark.django_db(transaction=True)
def test_enqueue_sends_nothing_when_the_transaction_rolls_back():
    task = background._registered(SWEEP)
    with mock.patch.object(task, "delay") as delay:
        with pytest.raises(RuntimeError), transaction.atomic():
            background.enqueue(SWEEP, 7)
            raise RuntimeError("rolled back")
        assert delay.call_count == 0


@pytest.mark.django_db(transaction=True)
def test_a_broker_that_is_down_is_logged_not_raised(caplog):
    task = background._registered(SWEEP)
    with mock.patch.object(task, "delay", side_effect=BrokerDown("Error 111 connecting")) as delay:
        with transaction.atomic():
            background.enqueue(SWEEP, 7)
        assert delay.call_count == 1
        assert background.send(SWEEP, 8) is False
    [first, second] = [r for r in caplog.records if r.name == "core.background"]
    assert first.levelname == "ERROR" and SWEEP in first.getMessage() and "(7,)" in first.getMessage()
    assert first.exc_info is not None and isinstance(first.exc_info[1], BrokerDown)
    assert "(8,)" in second.getMessage()


def test_a_task_name_this_process_never_imported_is_found_by_autodiscovery():
    registry = app.tasks
    task = registry[SWEEP]
    del registry[SWEEP]
    try:
        with mock.patch.object(app, "autodiscover_tasks", side_effect=lambda force: registry.register(task)) as found:
            assert background._registered(SWEEP) is task
        found.assert_called_once_with(force=True)
    finally:
        registry[SWEEP] = task


def test_sends_at_once_of_a_task_not_imported_yet_discover_it_once_and_all_find_it():
    """Concurrent first sends (a web process's first turns at once) wait for the one discovery:
    none finds the tasks module half imported and its task missing."""
    registry = app.tasks
    task = registry[SWEEP]
    del registry[SWEEP]

    def slow_discovery(force: bool) -> None:
        time.sleep(0.05)  # importing the apps' tasks modules
        registry.register(task)

    try:
        with (
            mock.patch.object(app, "autodiscover_tasks", side_effect=slow_discovery) as found,
            ThreadPoolExecutor(max_workers=8) as pool,
        ):
            assert list(pool.map(lambda _: background._registered(SWEEP), range(8))) == [task] * 8
        found.assert_called_once_with(force=True)
    finally:
        registry[SWEEP] = task


# --- retries ------------------------------------------------------------------------------------


def test_celery_retries_up_to_the_settings_limit_read_at_each_try(settings):
    settings.SUMMARY_MAX_RETRIES = 2
    tries: list[int] = []
    assert flaky.apply(args=(tries, 99)).get() == "gave up"
    assert tries == [0, 1, 2]  # the first try, then two retries

    settings.SUMMARY_MAX_RETRIES = 4
    tries = []
    assert flaky.apply(args=(tries, 3)).get() == "done"
    assert tries == [0, 1, 2]
    tries = []
    assert flaky.apply(args=(tries, 99)).get() == "gave up"
    assert tries == [0, 1, 2, 3, 4]


def test_a_limit_in_tries_is_one_retry_less(settings):
    settings.FILES_EXTRACT_MAX_ATTEMPTS = 3
    assert counted.max_retries == 2
    settings.FILES_EXTRACT_MAX_ATTEMPTS = 0
    assert counted.max_retries == 0


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_a_retry_waits_the_backoff_doubled_at_each_retry_with_jitter(settings, retries):
    settings.SUMMARY_RETRY_BACKOFF_SECONDS = 0.5
    flaky.push_request(id="t", args=(), kwargs={}, retries=retries, is_eager=True, called_directly=False)
    try:
        logged = background.retry_countdown(flaky)
        with pytest.raises(Retry) as raised:
            flaky.retry(exc=ConnectionError("down"))
        assert raised.value.when == logged  # the delay a task logs is the one it retries in
        assert 0.5 * 2**retries * 0.8 <= logged <= 0.5 * 2**retries * 1.2
        with pytest.raises(Retry) as explicit:
            flaky.retry(exc=ConnectionError("down"), countdown=9.0)
        assert explicit.value.when == 9.0
    finally:
        flaky.pop_request()


def test_last_try(settings):
    settings.SUMMARY_MAX_RETRIES = 2
    for retries, last in [(0, False), (1, False), (2, True)]:
        flaky.push_request(retries=retries)
        try:
            assert background.last_try(flaky) is last
        finally:
            flaky.pop_request()


# --- periodic tasks -----------------------------------------------------------------------------


EXPECTED_SCHEDULE = {
    "end-idle-conversations": {"task": "conversations.tasks.conversations_end_idle", "schedule": 60.0},
    "sweep-pending-summaries": {"task": "conversations.tasks.summaries_sweep", "schedule": 60.0},
    "sweep-pending-files": {"task": "conversations.tasks.files_sweep", "schedule": 60.0},
    "sweep-pending-grading": {"task": "learning.tasks.grading_sweep", "schedule": 300.0},
    "sweep-missing-embeddings": {"task": "memory.tasks.embeddings_sweep", "schedule": 600.0},
    "safety-escalations": {"task": "safety.tasks.escalations_due", "schedule": 60.0},
    "safety-deliveries-sweep": {"task": "safety.tasks.deliveries_sweep", "schedule": 300.0},
    "safety-messages-sweep": {"task": "safety.tasks.messages_sweep", "schedule": 60.0},
    "webhooks-deliveries-sweep": {"task": "webhooks.tasks.deliveries_sweep", "schedule": 300.0},
    "lti-scores-sweep": {"task": "lti.tasks.scores_sweep", "schedule": 300.0},
    "retention-apply": {"task": "retention.tasks.retention_apply", "schedule": 86400.0},
    "purge-access-log": {"task": "audit.tasks.access_log_purge_due", "schedule": 86400.0},
    "consolidate-memories": {
        "task": "memory.tasks.memories_consolidate_due",
        "schedule": django_settings.MEMORY_CONSOLIDATION_INTERVAL_HOURS * 3600,
    },
}


def test_the_apps_declare_their_periodic_tasks_and_the_celery_app_gives_them_to_beat():
    assert background.beat_schedule() == EXPECTED_SCHEDULE
    app.finalize()
    assert app.conf.beat_schedule == EXPECTED_SCHEDULE
    for entry in EXPECTED_SCHEDULE.values():  # each names a task of an app's tasks module
        assert background._registered(entry["task"]).name == entry["task"]


def test_periodic_replaces_a_key_and_leaves_out_a_task_never_run(monkeypatch):
    monkeypatch.setattr(background, "_schedule", background._schedule.emptied())
    background.periodic("a", "x.tasks.a", 60)
    background.periodic("a", "x.tasks.a", 30)
    background.periodic("b", "x.tasks.b", 0)
    assert background.beat_schedule() == {"a": {"task": "x.tasks.a", "schedule": 30.0}}
    background.periodic("a", "x.tasks.a", -1)
    assert background.beat_schedule() == {}


@pytest.mark.worker
def test_a_real_beat_starts_with_the_declared_schedule(tmp_path):
    """`celery -A tutor beat` logs its schedule when it starts: every entry the apps declared."""
    log = tmp_path / "beat.log"
    env = {**os.environ, "PYTHONUNBUFFERED": "1", "CELERY_SKIP_CHECKS": "1", "PYTHONPATH": str(ROOT)}
    env["DJANGO_SETTINGS_MODULE"] = os.environ.get("DJANGO_SETTINGS_MODULE", "tutor.settings.test")
    command = [sys.executable, "-m", "celery", "-A", "tutor", "beat", "-l", "DEBUG", "-s", str(tmp_path / "schedule")]
    with log.open("wb") as out:
        beat = subprocess.Popen(command, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while "beat: Ticking" not in log.read_text() and beat.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
    finally:
        beat.terminate()
        beat.wait(15)
    text = log.read_text()
    # With Redis the scheduler is RedBeat's (one beat holds its lock), which logs each entry it
    # stores; without, Celery's own, which logs the whole schedule.
    entry_name = "RedBeatSchedulerEntry" if "RedBeatSchedulerEntry" in text else "ScheduleEntry"
    if entry_name == "ScheduleEntry":
        assert "Current schedule:" in text, text[-3000:]
    for key, entry in EXPECTED_SCHEDULE.items():
        assert f"<{entry_name}: {key} {entry['task']}()" in text, text[-3000:]
