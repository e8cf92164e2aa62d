"""A student's vectors, decoded once per process and kept current: recall ranks them with numpy.

Reading and decoding a student's vectors on every query costs far more than the dot product, so
each process keeps them, bounded in bytes (EMBEDDINGS_CACHE_BYTES), kept current by the student's
memory revision (one primary-key read per query). SQLite has no vector type: its single process
loads a student on their first query. On PostgreSQL a student the process does not hold yet is
ranked by the database (memory.search.vector_search) while `warm` loads them on the cache's own
thread, so that no request waits for a load.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection
from django.db.models import Count, Max, Sum

from memory.models import AIMemory, MemoryEmbedding

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class StudentVectors:
    version: int  # the student's memory revision (StudentMemoryRevision) these vectors reflect
    ids: np.ndarray  # int64 memory ids, ascending
    matrix: np.ndarray  # (n, dim) float32, rows L2-normalised
    created: np.ndarray  # float64 epoch seconds of each memory's created_at
    sentence_matrix: np.ndarray  # (total sentences, dim) float32, memory by memory
    sentence_start: np.ndarray  # int64 (n,): first row of each memory in sentence_matrix
    sentence_count: np.ndarray  # int64 (n,)
    # The arrays above are the first rows of these buffers (see _Store).
    store: _Store | None = field(default=None, compare=False, repr=False)


class _Store:
    """The buffers behind successive StudentVectors of one (student, model), with spare rows.

    Most writes add a memory whose id is the student's highest: the cache then catches up by
    writing the new rows after the last used one, instead of copying a matrix of 100 MB (10,000
    memories of 8 sentences). A StudentVectors only sees its first rows, which nothing rewrites;
    the rows after them are claimed under a lock by one catch-up at a time.
    """

    def __init__(self, rows: int, sentence_rows: int, dim: int) -> None:
        """Empty buffers for `rows` memories and `sentence_rows` sentences, and spare room."""
        capacity, sentence_capacity = rows + max(16, rows // 8), sentence_rows + max(128, sentence_rows // 8)
        self.ids = np.empty(capacity, np.int64)
        self.matrix = np.empty((capacity, dim), np.float32)
        self.created = np.empty(capacity, np.float64)
        self.counts = np.empty(capacity, np.int64)
        self.starts = np.empty(capacity, np.int64)
        self.sentences = np.empty((sentence_capacity, dim), np.float32)
        self.rows, self.sentence_rows = 0, 0
        self._lock = threading.Lock()

    @classmethod
    def holding(cls, v: StudentVectors) -> StudentVectors:
        """`v` copied into a new store."""
        n, s = v.ids.shape[0], v.sentence_matrix.shape[0]
        store = cls(n, s, v.matrix.shape[1])
        store._write(0, 0, v.ids, v.matrix, v.created, v.sentence_count, v.sentence_matrix)
        store.rows, store.sentence_rows = n, s
        return store.vectors(v.version, n, s)

    @classmethod
    def decoding(cls, version: int, rows: list[Any], dim: int) -> StudentVectors:
        """Rows of _VECTOR_FIELDS ordered by memory id (those of `dim` only) copied into a new
        store: each row's values are copied once, straight into the buffers."""
        rows = [r for r in rows if r[1] == dim]
        n = len(rows)
        counts = np.fromiter((r[4] for r in rows), dtype=np.int64, count=n)
        s = int(counts.sum())
        store = cls(n, s, dim)
        store.ids[:n] = np.fromiter((r[0] for r in rows), dtype=np.int64, count=n)
        store.created[:n] = np.fromiter((r[3].timestamp() for r in rows), dtype=np.float64, count=n)
        store.counts[:n] = counts
        store.starts[:n] = _starts(counts)
        for buffer, column, used in ((store.matrix, 2, n), (store.sentences, 5, s)):
            target, at = buffer.reshape(-1), 0
            for r in rows:
                values = r[column]
                target[at : at + values.size] = values
                at += values.size
            if at != used * dim:  # recall then falls back to lexical, and logs it
                raise ValueError(f"stored vectors of {dim} dimensions do not add up to {used} rows")
        store.rows, store.sentence_rows = n, s
        return store.vectors(version, n, s)

    def _write(
        self,
        n: int,
        s: int,
        ids: np.ndarray,
        matrix: np.ndarray,
        created: np.ndarray,
        counts: np.ndarray,
        sentences: np.ndarray,
    ) -> None:
        k = ids.shape[0]
        self.ids[n : n + k], self.matrix[n : n + k], self.created[n : n + k] = ids, matrix, created
        self.counts[n : n + k] = counts
        self.starts[n : n + k] = s + _starts(counts)
        self.sentences[s : s + sentences.shape[0]] = sentences

    def vectors(self, version: int, n: int, s: int) -> StudentVectors:
        return StudentVectors(
            version,
            self.ids[:n],
            self.matrix[:n],
            self.created[:n],
            self.sentences[:s],
            self.starts[:n],
            self.counts[:n],
            self,
        )

    def append(self, base: StudentVectors, fresh: StudentVectors) -> StudentVectors | None:
        """`base` followed by `fresh`'s rows, written in place; None when `base` is not the last
        state of this store (another catch-up appended after it) or there is no room left."""
        n, s = base.ids.shape[0], base.sentence_matrix.shape[0]
        k, ks = fresh.ids.shape[0], fresh.sentence_matrix.shape[0]
        with self._lock:
            if (
                (self.rows, self.sentence_rows) != (n, s)
                or n + k > self.ids.shape[0]
                or (s + ks > self.sentences.shape[0])
            ):
                return None
            self.rows, self.sentence_rows = n + k, s + ks
        self._write(n, s, fresh.ids, fresh.matrix, fresh.created, fresh.sentence_count, fresh.sentence_matrix)
        return self.vectors(fresh.version, n + k, s + ks)


class VectorCache:
    """Decoded vectors per (student, model), kept current with the student's memory revision.

    Re-reading and decoding a student's vectors on every query costs far more than the dot
    product. Every write to a student's memories or vectors takes
    the student's next revision and stamps its rows with it (memory.services.writing.student_revision_next),
    so the version check reads one row by primary key, and a cache that is behind reads only the
    rows stamped above the revision it holds: the memories written, edited or archived since, and
    the vectors stored since. Those memories leave the cached matrix and come back with their
    current vector, if they are active and have one of this model. Bounded to
    EMBEDDINGS_CACHE_BYTES of buffers, least recently used student out (the latest one stays,
    whatever its size: SQLite has no other way to rank them). On PostgreSQL a student whose
    vectors exceed the bound is never loaded (`warm`): the database ranks them.

    The cache holds committed rows only: what is read inside a transaction (which may hold its
    own writes, and may roll back) is used for that read and not kept, unless the caller owns the
    transaction and discards it (`scope`, for the evaluation). The chat reads in autocommit.
    """

    def __init__(self) -> None:
        self._data: OrderedDict[tuple[int, str], StudentVectors] = OrderedDict()
        self._lock = threading.Lock()
        self._scoped = threading.local()
        self._bytes = 0  # what the cached buffers hold
        self._warming: dict[tuple[int, str], Future[None]] = {}
        # Students whose vectors would not fit in EMBEDDINGS_CACHE_BYTES: the database ranks them.
        self._oversized: set[tuple[int, str]] = set()
        self._loader: ThreadPoolExecutor | None = None
        self.loads = 0  # whole loads
        self.updates = 0  # catch-ups from the rows written since the cached revision

    def clear(self) -> None:
        with self._lock:
            self._data.clear()
            self._oversized.clear()
            self._bytes = 0

    @property
    def nbytes(self) -> int:
        """The bytes of the vectors held (each store's buffers, spare rows included)."""
        return self._bytes

    @contextmanager
    def scope(self) -> Iterator[None]:
        """Keep what is read inside the caller's transaction, which the caller then rolls back:
        the cache is emptied when the block ends (`manage.py recall_eval`)."""
        self._scoped.active = True
        try:
            yield
        finally:
            self._scoped.active = False
            self.clear()

    def holds(self, student_id: int, model: str) -> bool:
        """Whether some version of the student's vectors is held (it may be behind)."""
        with self._lock:
            return (student_id, model) in self._data

    def warm(self, student_id: int, model: str) -> Future[None] | None:
        """Load the student's vectors on the cache's own thread, off the caller's path (PostgreSQL:
        the query that finds them cold is answered by the database meanwhile); None when a load of
        them is already under way, or when they would not fit in EMBEDDINGS_CACHE_BYTES (the
        database goes on ranking that student: the process never holds more than the bound for
        them). The thread's database connection is closed after each load."""
        key = (student_id, model)
        with self._lock:
            if key in self._warming or key in self._oversized:
                return None
            if self._loader is None:
                self._loader = ThreadPoolExecutor(max_workers=1, thread_name_prefix="vector-cache")
            future = self._loader.submit(self._warm, student_id, model)
            self._warming[key] = future
        return future

    def settle(self) -> None:
        """Wait for the loads under way (for the benchmarks and the tests)."""
        with self._lock:
            pending = list(self._warming.values())
        for future in pending:
            future.result()

    def _warm(self, student_id: int, model: str) -> None:
        try:
            if vectors_bytes(student_id=student_id, model=model) > settings.EMBEDDINGS_CACHE_BYTES:
                with self._lock:
                    self._oversized.add((student_id, model))
                logger.info("vector cache: student %s's vectors exceed EMBEDDINGS_CACHE_BYTES, not held", student_id)
                return
            self.get(student_id, model)
        except Exception:
            logger.exception("vector cache: loading student %s's vectors failed", student_id)
        finally:
            with self._lock:
                self._warming.pop((student_id, model), None)
            connection.close()

    def version(self, student_id: int) -> int:
        """The student's memory revision: one primary-key lookup (0 before their first write)."""
        with connection.cursor() as cursor:
            cursor.execute(_VERSION_SQL, {"student": student_id})
            row = cursor.fetchone()
        return int(row[0]) if row else 0

    def get(self, student_id: int, model: str, *, use_cache: bool = True, version: int | None = None) -> StudentVectors:
        """The student's vectors; `version`: what `version` returns, if the caller read it already."""
        key = (student_id, model)
        if version is None:
            version = self.version(student_id)
        cached = None
        if use_cache:
            with self._lock:
                cached = self._data.get(key)
                if cached is not None and cached.version == version:
                    self._data.move_to_end(key)
                    return cached
        if cached is not None and cached.version < version:
            loaded = catch_up(cached, student_id=student_id, model=model, version=version)
            self.updates += 1
        else:
            # Nothing cached, or a revision that went back (the student's rows were deleted).
            loaded = load_vectors(student_id=student_id, model=model, version=version)
            self.loads += 1
        if use_cache and (not connection.in_atomic_block or getattr(self._scoped, "active", False)):
            with self._lock:
                # Two threads racing may leave the older of their reads: the next one catches up.
                replaced = self._data.get(key)
                self._data[key] = loaded
                self._data.move_to_end(key)
                self._bytes += _nbytes(loaded) - (_nbytes(replaced) if replaced is not None else 0)
                while len(self._data) > 1 and self._bytes > settings.EMBEDDINGS_CACHE_BYTES:
                    _, evicted = self._data.popitem(last=False)
                    self._bytes -= _nbytes(evicted)
        return loaded


_VERSION_SQL = (
    "SELECT COALESCE((SELECT revision FROM memory_studentmemoryrevision WHERE student_id = %(student)s), 0) AS revision"
)

_VECTOR_FIELDS = ("memory_id", "dim", "vector", "memory__created_at", "sentences", "sentence_vectors")


def vectors_bytes(*, student_id: int, model: str) -> int:
    """What holding the student's current vectors of `model` takes, in bytes (float32 rows: one
    per memory and one per sentence), read from the rows' counts without their vectors."""
    row = MemoryEmbedding.objects.filter(
        student_id=student_id, model=model, memory__status=AIMemory.Status.ACTIVE
    ).aggregate(rows=Count("pk"), sentences=Sum("sentences"), dim=Max("dim"))
    return 4 * (int(row["rows"] or 0) + int(row["sentences"] or 0)) * int(row["dim"] or 0)


def _vector_rows(*, student_id: int, model: str, memory_ids: set[int] | None = None) -> list[Any]:
    """The student's current vectors of `model` (those of `memory_ids` only, if given), as rows
    of _VECTOR_FIELDS ordered by memory id, each vector a float32 array (the sentences flat)."""
    if connection.vendor == "postgresql":
        return _vector_rows_binary(student_id=student_id, model=model, memory_ids=memory_ids)
    rows = MemoryEmbedding.objects.filter(student_id=student_id, model=model, memory__status=AIMemory.Status.ACTIVE)
    if memory_ids is not None:
        rows = rows.filter(memory_id__in=memory_ids)
    return list(rows.order_by("memory_id").values_list(*_VECTOR_FIELDS))


_BINARY_ROWS_SQL = """
SELECT e.memory_id, e.dim, e.vector, m.created_at, e.sentences, e.sentence_vectors
FROM memory_memoryembedding e JOIN memory_aimemory m ON m.id = e.memory_id
WHERE e.student_id = %(student)s AND e.model = %(model)s AND m.status = 'active'
  AND (%(all)s OR e.memory_id = ANY(%(ids)s))
ORDER BY e.memory_id
"""


def _vector_rows_binary(*, student_id: int, model: str, memory_ids: set[int] | None) -> list[Any]:
    """_vector_rows on PostgreSQL, the vectors read in pgvector's binary form (int16 dimensions,
    int16 unused, big-endian float4s) and decoded by numpy: pgvector's text form, parsed number
    by number, takes about 20 times longer for a student's thousands of vectors."""
    import psycopg
    from psycopg.adapt import Loader
    from psycopg.pq import Format
    from psycopg.types import TypeInfo

    class VectorLoader(Loader):
        format = Format.BINARY

        def load(self, data: Any) -> np.ndarray:
            return np.frombuffer(data, dtype=">f4", offset=4)

    connection.ensure_connection()
    raw = connection.connection
    info = TypeInfo.fetch(raw, "vector")
    if info is None:
        raise RuntimeError("the vector type is missing from this database")
    connection.validate_thread_sharing()
    with psycopg.Cursor(raw) as cursor:  # bound on the server: binary results need it
        info.register(cursor)
        cursor.adapters.register_loader(info.oid, VectorLoader)
        ids = sorted(memory_ids or ())
        params = {"student": student_id, "model": model, "all": memory_ids is None, "ids": ids}
        cursor.execute(_BINARY_ROWS_SQL, params, binary=True)
        return [
            (pk, dim, vector, created, count, np.concatenate(sentences) if sentences else np.zeros(0, np.float32))
            for pk, dim, vector, created, count, sentences in cursor.fetchall()
        ]


def _starts(counts: np.ndarray) -> np.ndarray:
    return np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64) if counts.size else counts


def load_vectors(*, student_id: int, model: str, version: int) -> StudentVectors:
    """Every current vector of the student for `model`, decoded (the dimension of the first)."""
    rows = _vector_rows(student_id=student_id, model=model)
    return _Store.decoding(version, rows, rows[0][1] if rows else 1)


# A catch-up that would read more changed memories than this, or than a quarter of the cached
# ones (at least 64), reads everything instead.
CATCH_UP_MAX_ROWS = 5000


def catch_up(cached: StudentVectors, *, student_id: int, model: str, version: int) -> StudentVectors:
    """`cached` brought to `version` from the rows stamped above `cached.version` (see VectorCache).

    A memory written, edited or archived since, or whose vector was stored since (of any model:
    re-embedding with another model replaces the row), is dropped from the matrix and read again.
    Reading rows newer than `version` as well is harmless: they are read again next time. New
    memories, the usual case, are appended in place (_Store); anything else is copied.
    """
    changed = set(
        AIMemory.objects.filter(student_id=student_id, revision__gt=cached.version).values_list("pk", flat=True)
    )
    changed.update(
        MemoryEmbedding.objects.filter(student_id=student_id, revision__gt=cached.version).values_list(
            "memory_id", flat=True
        )
    )
    if len(changed) > min(CATCH_UP_MAX_ROWS, max(64, cached.ids.size // 4)):
        # A re-embedding of most memories: one whole read is cheaper (and SQLite bounds `IN`).
        return load_vectors(student_id=student_id, model=model, version=version)
    rows = _vector_rows(student_id=student_id, model=model, memory_ids=changed) if changed else []
    if not cached.ids.size:
        return _Store.decoding(version, rows, rows[0][1] if rows else 1)
    fresh = _Store.decoding(version, rows, cached.matrix.shape[1])
    keep = ~np.isin(cached.ids, np.fromiter(changed, dtype=np.int64, count=len(changed)))
    if keep.all():
        if not fresh.ids.size:
            return replace(cached, version=version)
        if cached.store is not None and fresh.ids[0] > cached.ids[-1]:
            appended = cached.store.append(cached, fresh)
            if appended is not None:
                return appended
    ids = np.concatenate([cached.ids[keep], fresh.ids])
    counts = np.concatenate([cached.sentence_count[keep], fresh.sentence_count])
    sentences = np.concatenate([cached.sentence_matrix[np.repeat(keep, cached.sentence_count)], fresh.sentence_matrix])
    matrix = np.concatenate([cached.matrix[keep], fresh.matrix])
    created = np.concatenate([cached.created[keep], fresh.created])
    order = np.argsort(ids, kind="stable")
    if not np.array_equal(order, np.arange(order.size)):
        # An older memory came back (re-embedded after an edit): back to its place by id.
        starts = _starts(counts)
        sentences = np.concatenate([sentences[s : s + c] for s, c in zip(starts[order], counts[order], strict=True)])
        ids, matrix, created, counts = ids[order], matrix[order], created[order], counts[order]
    return _Store.holding(StudentVectors(version, ids, matrix, created, sentences, _starts(counts), counts))


vector_cache = VectorCache()


def _nbytes(v: StudentVectors) -> int:
    if v.store is not None:
        return int(v.store.matrix.nbytes + v.store.sentences.nbytes)
    return int(v.matrix.nbytes + v.sentence_matrix.nbytes)
