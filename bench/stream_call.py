"""CPU per streamed model call: `llm.gateway.stream` against the scripted model, in this process.

    .venv/bin/python bench/stream_call.py [--calls 1500] [--concurrency 20]

The scripted model (`bench/load.py --serve-model`, 0.05-0.1 s per answer) runs in its own
process; this one makes `--calls` chat calls, `--concurrency` at a time, after 50 for warm-up,
and prints its own CPU time (user + system) per call: the SDK, the HTTP client and the SSE
parsing, what the chat turn's server spends on its model call. No database is used.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--calls", type=int, default=1500)
    parser.add_argument("--concurrency", type=int, default=20)
    args = parser.parse_args()
    model = subprocess.Popen(
        [sys.executable, str(ROOT / "bench" / "load.py"), "--serve-model", "--model-seconds", "0.05", "0.1"],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert model.stdout is not None
        os.environ["LLM_BASE_URL"] = model.stdout.readline().strip().split()[-1]
        os.environ["LLM_MODEL"] = "scripted-bench"
        os.environ.setdefault("DJANGO_SETTINGS_MODULE", "tutor.settings.base")
        import django

        django.setup()
        import uvloop

        print(uvloop.run(_measure(args.calls, args.concurrency)))  # uvicorn's loop
    finally:
        model.kill()


async def _measure(calls: int, concurrency: int) -> str:
    from llm import gateway
    from llm.models import LLMUsage

    messages = [{"role": "system", "content": "You are a tutor. " * 200}, {"role": "user", "content": "Hello."}]
    gate = asyncio.Semaphore(concurrency)

    async def on_delta(text: str) -> None:
        pass

    async def one() -> None:
        async with gate:
            await gateway.stream(
                messages=messages,
                purpose=LLMUsage.Purpose.CHAT,
                profile=gateway.chat_profile(),
                on_delta=on_delta,
                usage_sink=[],
            )

    await asyncio.gather(*[one() for _ in range(50)])
    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*[one() for _ in range(calls)])
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    per_call = cpu * 1000 / calls
    return f"{calls} calls, {concurrency} at a time: {per_call:.3f} ms CPU per call, {calls / wall:.0f} calls/s"


if __name__ == "__main__":
    main()
