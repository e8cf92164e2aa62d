"""numpy's BLAS threads are limited per process when Django starts (memory.apps)."""

from __future__ import annotations

from django.conf import settings
from threadpoolctl import threadpool_info

from memory.apps import limit_blas_threads


def _blas_threads() -> set[int]:
    """Thread counts of numpy's own BLAS (scipy, loaded by the local embedder, has its own)."""
    return {
        info["num_threads"] for info in threadpool_info() if info["user_api"] == "blas" and "numpy" in info["filepath"]
    }


def test_numpy_blas_runs_on_the_configured_number_of_threads():
    assert settings.NUMPY_BLAS_THREADS == 1
    assert _blas_threads() == {1}  # set by MemoryConfig.ready(), numpy's OpenBLAS is loaded
    try:
        limit_blas_threads(2)
        assert _blas_threads() == {2}
        limit_blas_threads(0)  # 0 leaves it alone
        assert _blas_threads() == {2}
    finally:
        limit_blas_threads(settings.NUMPY_BLAS_THREADS)
    assert _blas_threads() == {1}
