"""How often a real small model writes a valid summary, with and without structured output.

Starts llama-cpp-python's server with SmolLM2-135M-Instruct (4,096-token window, as the
real-model tests do; requirements-realmodel.txt), makes `--conversations` ended conversations of
3-8 turns in a throwaway SQLite database, and runs the product's summary writer on each once per
mode of LLM_SUMMARY_RESPONSE_FORMAT: `none` (JSON asked in the prompt only, as before structured
output) and `auto` (json_schema, refused by this server, then json_object with the schema). It
counts the summaries stored from the model's answer ("stored") against the fallback memories.

    .venv/bin/python bench/summary_success.py [--conversations 10]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TUTOR = [
    "Sure. A fraction is a part of a whole: the bottom number says how many equal parts.",
    "Three quarters of 12: divide 12 by 4 to get 3, then multiply by 3 to get 9.",
    "Dividing by a fraction is multiplying by its reciprocal, so we flip the second one.",
    "Half of the base times the height. With base 6 and height 4 the area is 12.",
    "Yes: 1/2 means 1 divided by 2, which is 0.5.",
    "A prime number has exactly two divisors: 1 and itself, like 2, 3, 5 and 7.",
    "What is 2/3 of 9? Take your time.",
    "Well done, 9 is right for three quarters of 12.",
]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=10)
    args = parser.parse_args()

    var = Path(tempfile.mkdtemp(prefix="tutor-summary-bench-"))
    os.environ.update(
        {
            "DJANGO_SETTINGS_MODULE": "tutor.settings.base",
            "TUTOR_VAR_DIR": str(var),
            "DATABASE_URL": f"sqlite:///{var / 'bench.sqlite3'}",
            "EMBEDDINGS_BACKEND": "none",
            "LOG_LEVEL": "WARNING",
        }
    )
    import django

    # Before the fixtures' module, which imports models; the server's URL is set once known.
    django.setup()
    from django.conf import settings

    from tests.real_model.conftest import (
        CHAT_FORMAT,
        CONTEXT_TOKENS,
        SERVER_OPTIONS,
        free_port,
        gguf_path,
        missing_requirement,
    )

    missing = missing_requirement()
    if missing:
        print(f"cannot run: {missing}", file=sys.stderr)
        return 2
    port = free_port()
    log = var / "llama-server.log"
    command = [sys.executable, "-m", "llama_cpp.server", "--model", str(gguf_path()), "--n_ctx", str(CONTEXT_TOKENS)]
    command += ["--chat_format", CHAT_FORMAT, "--n_threads", "2", "--seed", "1234", "--port", str(port)]
    command += SERVER_OPTIONS
    with log.open("wb") as out:
        server = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        base_url = f"http://127.0.0.1:{port}/v1"
        _wait(base_url, server)
        settings.LLM_BASE_URL = settings.LLM_SUMMARY_BASE_URL = base_url
        settings.LLM_API_KEY = settings.LLM_SUMMARY_API_KEY = "x"
        settings.LLM_SUMMARY_TIMEOUT_SECONDS = 180.0
        from django.core.management import call_command

        call_command("migrate", verbosity=0)
        results = {mode: _run(mode, args.conversations) for mode in ("none", "auto")}
    finally:
        server.terminate()
        server.wait(30)
    print(
        f"\nSummaries by SmolLM2-135M-Instruct (llama-cpp-python {CONTEXT_TOKENS}-token window), "
        f"{time.strftime('%Y-%m-%d')}, {os.cpu_count()} cores"
    )
    print("| LLM_SUMMARY_RESPONSE_FORMAT | stored from the model | fallback | other | seconds per summary |")
    print("|---|---|---|---|---|")
    for mode, (outcomes, seconds, errors) in results.items():
        n = sum(outcomes.values())
        print(
            f"| {mode} | {outcomes['stored']} / {n} | {outcomes['fallback']} / {n} | "
            f"{n - outcomes['stored'] - outcomes['fallback']} | {seconds:.1f} |"
        )
        for error, count in errors.most_common(5):
            print(f"    {count} x {error}")
    return 0


def _wait(base_url: str, server: subprocess.Popen[bytes]) -> None:
    import httpx2

    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        if server.poll() is not None:
            raise RuntimeError("the model server exited")
        try:
            if httpx2.get(f"{base_url}/models", timeout=2).status_code == 200:
                return
        except httpx2.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError("the model server did not start")


def _run(mode: str, count: int) -> tuple[Counter[str], float, Counter[str]]:
    from django.conf import settings
    from django.utils import timezone

    from accounts.models import User
    from conversations.models import Conversation, Message
    from conversations.summaries import conversation_summary_write
    from tests.real_model.test_real_model import STUDENT_LINES as STUDENT

    settings.LLM_SUMMARY_RESPONSE_FORMAT = mode
    student = User.objects.create_user(username=f"student-{mode}", password="x", role=User.Role.STUDENT)
    outcomes: Counter[str] = Counter()
    errors: Counter[str] = Counter()
    started = time.monotonic()
    for n in range(count):
        turns = 3 + n % 6
        conversation = Conversation.objects.create(
            student=student,
            subject="Maths",
            status=Conversation.Status.ENDED,
            last_activity_at=timezone.now(),
            ended_at=timezone.now(),
            summary_status=Conversation.SummaryStatus.PENDING,
            message_count=2 * turns,
        )
        rows: list[Any] = []
        for t in range(turns):
            i = (n + t) % len(STUDENT)
            rows.append(
                Message(
                    conversation=conversation,
                    seq=2 * t + 1,
                    role="student",
                    content=STUDENT[i],
                    client_message_id=f"{n}-{t}",
                    token_count=len(STUDENT[i]) // 4,
                )
            )
            rows.append(
                Message(
                    conversation=conversation,
                    seq=2 * t + 2,
                    role="tutor",
                    content=TUTOR[i % len(TUTOR)],
                    token_count=len(TUTOR[i % len(TUTOR)]) // 4,
                )
            )
        Message.objects.bulk_create(rows)
        outcome = conversation_summary_write(conversation_id=conversation.pk).value
        outcomes[outcome] += 1
        if outcome != "stored":
            errors[Conversation.objects.get(pk=conversation.pk).summary_error[:120]] += 1
    return outcomes, (time.monotonic() - started) / max(1, count), errors


if __name__ == "__main__":
    raise SystemExit(main())
