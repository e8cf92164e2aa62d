"""scripts/serve.sh on a loaded machine: uvicorn's supervisor gives its worker processes
WEB_WORKER_HEALTHCHECK_SECONDS to answer its health check, their start-up included, instead of
uvicorn's 5 seconds, so a slow start is not killed and started again for ever."""

from __future__ import annotations

from pathlib import Path

import httpx2
import pytest

from tests.conftest import ROOT, Serve

pytestmark = pytest.mark.worker

# Python imports `sitecustomize` at every interpreter's start: in uvicorn's worker processes
# (started by multiprocessing's spawn), this one takes 8 seconds before anything else runs, as
# a start-up on a loaded machine does (the process answers its supervisor only after it).
SLOW_START = """\
import sys
import time

if "--multiprocessing-fork" in sys.argv:
    time.sleep(8)
"""


def test_worker_processes_slower_to_start_than_uvicorns_default_check_are_not_killed(
    worker_env: dict[str, str], tmp_path: Path
) -> None:
    (tmp_path / "sitecustomize.py").write_text(SLOW_START)
    env = {**worker_env, "PYTHONPATH": f"{tmp_path}:{ROOT}", "WEB_WORKER_HEALTHCHECK_SECONDS": "30"}
    serve = Serve(env, tmp_path / "serve.log").start()
    try:
        assert serve.proc is not None
        command = Path(f"/proc/{serve.proc.pid}/cmdline").read_bytes().split(b"\0")
        assert command[command.index(b"--timeout-worker-healthcheck") + 1] == b"30"
        assert httpx2.get(f"{serve.base}/health/live", timeout=5).status_code == 200
        text = serve.log_text()
        assert "died" not in text, text
    finally:
        serve.stop()
    serve.check()
