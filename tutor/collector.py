"""The garbage collector of a long-running process, set once it has loaded what it keeps.

A web or worker process holds some 300,000 objects that live as long as it does: Django, the
apps' modules, the models' tables and caches. CPython's oldest generation holds them, and
each of its full collections walks them all again, though they never become garbage. A chat
turn, which leaves short-lived cycles behind (futures, tasks, exceptions and their tracebacks),
also brings the young generation's collections every 700 allocations, CPython's default.

`settle()`, called once a process has warmed up (`tutor.startup.warm_up`: the ASGI lifespan's
start-up in a web process, `worker_process_init` in a Celery pool process), does two things:

- collects once, then **freezes** what is left (`gc.freeze()`): those objects move to a
  permanent generation that no collection walks again. Nothing that is garbage is frozen, and
  cycles made later are collected as before. A frozen object dropped later is freed by its
  reference count; one in a cycle stays, a cost bounded by what start-up made.
- raises the young generation's threshold to `YOUNG_THRESHOLD` allocations: most of a turn's
  objects are freed by their reference counts before a collection comes, so fewer survive into
  the older generations, and the collections that do come are fewer. The older generations keep
  CPython's thresholds.

What it saves is measured in `bench/README.md` ("The garbage collector"). Idempotent; never raises.
"""

from __future__ import annotations

import gc
import logging

logger = logging.getLogger("tutor.startup")

YOUNG_THRESHOLD = 10_000


def settle() -> None:
    """Freeze what the process holds now, and collect the young generation less often."""
    try:
        gc.collect()
        gc.freeze()
        _, middle, old = gc.get_threshold()
        gc.set_threshold(YOUNG_THRESHOLD, middle, old)
    except Exception:  # pragma: no cover - gc's calls do not raise on CPython
        logger.exception("the garbage collector could not be set")
        return
    logger.info(
        "garbage collector: %d objects frozen, young generation every %d allocations",
        gc.get_freeze_count(),
        YOUNG_THRESHOLD,
    )
