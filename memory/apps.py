from django.apps import AppConfig
from django.conf import settings


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from llm.tools import register
        from memory.tools import SaveMemory

        limit_blas_threads(settings.NUMPY_BLAS_THREADS)
        register(SaveMemory())
        from llm import prompt_blocks
        from memory.blocks import MemoryBlock

        prompt_blocks.register(MemoryBlock())
        from memory.card_block import StudentCardBlock

        prompt_blocks.register(StudentCardBlock())
        from core import background

        background.periodic("sweep-missing-embeddings", "memory.tasks.embeddings_sweep", 600)
        background.periodic(
            "consolidate-memories",
            "memory.tasks.memories_consolidate_due",
            settings.MEMORY_CONSOLIDATION_INTERVAL_HOURS * 3600,
        )


def limit_blas_threads(threads: int) -> None:
    """Run numpy's BLAS (OpenBLAS) on `threads` threads in this process (0: leave it alone).

    Recall's products are small (10,000 x 384 memory vectors, a few thousand sentence vectors).
    Split over the cores of a machine that also runs the database, the web server and the worker,
    a product waits for a time slice on every core: bench/recall_latency.py measured 8 ms for a
    product that takes 0.3 ms on one thread. A web or worker process serves its concurrency with
    processes and threads of its own, not with BLAS threads. Only OpenBLAS is limited: ONNX Runtime
    (the local embedder) keeps its own thread pool.
    """
    if threads <= 0:
        return
    import numpy  # noqa: F401  (loads OpenBLAS: threadpoolctl only sees loaded libraries)
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=threads, user_api="blas")
