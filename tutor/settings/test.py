"""The test suite's settings: the base settings, with runtime files in a directory of their own.

`make test` never touches `var/` (the development database, broker and cache): tests and the
Celery workers they start share a temporary directory, removed at the end of the run.
Throttles are off unless a test turns them on.
"""

import os
import tempfile

if (_xdist_worker := os.environ.get("PYTEST_XDIST_WORKER", "")) and os.environ.get(
    "TUTOR_TEST_VAR_WORKER"
) != _xdist_worker:
    # Each pytest-xdist worker (pytest -n) has a directory of its own: its SQLite test database,
    # uploaded files and logs, removed at the end of its run. The servers and Celery workers it
    # starts inherit the directory (TUTOR_TEST_VAR_WORKER says it is already the worker's own).
    os.environ["TUTOR_VAR_DIR"] = tempfile.mkdtemp(prefix=f"tutor-test-{_xdist_worker}-")
    os.environ["TUTOR_TEST_VAR_WORKER"] = _xdist_worker
else:
    os.environ.setdefault("TUTOR_VAR_DIR", tempfile.mkdtemp(prefix="tutor-test-"))

from .base import *  # noqa: F403
from .base import env_int, env_rate

# Off here; a test turns one on with `settings`, or in the environment of a server it starts.
THROTTLE_SEND_RATE = env_rate("THROTTLE_SEND_RATE", "")
THROTTLE_MEMORY_WRITE_RATE = env_rate("THROTTLE_MEMORY_WRITE_RATE", "")
LOGIN_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 0)
LOGIN_ACCOUNT_FAILURE_LIMIT = env_int("LOGIN_ACCOUNT_FAILURE_LIMIT", 0)
LOGIN_ADDRESS_RATE = env_rate("LOGIN_ADDRESS_RATE", "")
# In-process tests share their transaction with the turn's steps, on the test's own thread; the
# server started in a subprocess by the tests sets it as production does.
DB_STEP_THREADS = env_int("DB_STEP_THREADS", 0)
