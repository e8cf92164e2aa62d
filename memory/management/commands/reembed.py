"""Embed every active memory that has no vector from the configured model, in batches.

For a change of embedding model (or a first install of one): run it once, interrupt it any
time and run it again to resume, since it only picks memories still without a current vector.
Recall keeps working meanwhile: a memory without a current vector is found lexically, and the
vectors of the old model are ignored (they are replaced as the command goes).
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from memory.management.progress import ProgressBar
from memory.models import AIMemory, MemoryEmbedding
from memory.search import embeddings
from memory.selectors import memories_missing_embedding
from memory.services.embedding import memory_embeddings_write


class Command(BaseCommand):
    help = "Embed active memories whose vector is missing or from another model (resumable)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch-size", type=int, default=64)
        parser.add_argument("--limit", type=int, default=0, help="stop after this many memories (0: all)")

    def handle(self, *args: Any, **options: Any) -> None:
        embedder = embeddings.get_embedder()
        if embedder is None:
            raise CommandError("No embedder configured (EMBEDDINGS_BACKEND is none, or local is not installed).")
        model = embedder.name
        stale = MemoryEmbedding.objects.filter(~Q(model=model)).count()
        total = AIMemory.objects.active().exclude(embedding__model=model).count()
        if options["limit"]:
            total = min(total, options["limit"])
        self.stdout.write(f"model {model}: {total} memories to embed ({stale} vectors from another model)")
        done = stored = 0
        after = 0
        started = time.monotonic()
        bar = ProgressBar(total, unit="memories")
        while done < total:
            size = min(options["batch_size"], total - done)
            ids = memories_missing_embedding(model=model, limit=size, after_id=after)
            if not ids:
                break
            stored += memory_embeddings_write(memory_ids=ids, embedder=embedder)
            done += len(ids)
            after = ids[-1]
            bar.update(len(ids))
        bar.close()
        self.stdout.write(f"embedded {stored} memories with {model} in {time.monotonic() - started:.1f}s")
