"""PostgreSQL's recall statements: the lexical ones read the postings by an index-only scan, the
hot ones are prepared once per connection, and the vector statement ranks as documented
(memory.search.vector_search), checked against the same ranking computed in numpy; its scan
reads the half-precision copy of the vectors by an index-only scan, which a trigger keeps
equal to the vectors whatever writes them, and ranks exactly as the float32 scan does."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.utils import timezone

from memory.fields import vector_text
from memory.models import AIMemory, HalfVector, MemoryEmbedding
from memory.search import postings, vector_search
from tests.conftest import make_user

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.postgresql_only,
]

MODEL = "test:random-16"
DIM = 16


def _unit(rng: np.random.Generator, rows: int) -> np.ndarray:
    values = rng.standard_normal((rows, DIM)).astype(np.float32)
    return values / np.linalg.norm(values, axis=1, keepdims=True)


def _plan(sql: str, params: dict[str, Any]) -> str:
    with connection.cursor() as cursor:
        # The tables are small: without this the planner may read them whole. What is checked is
        # that the index covers the statement, so that PostgreSQL can answer from it alone.
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("EXPLAIN " + sql, params)
        return "\n".join(row[0] for row in cursor.fetchall())


@pytest.mark.parametrize(
    "statement",
    ["_PG_BM25_ALL", "_PG_BM25_ONE", "_PG_BM25_PRUNED", "_PG_BM25_PRUNED_ONE"],
)
def test_the_lexical_statements_read_the_postings_from_the_covering_index_alone(statement: str) -> None:
    student = make_user("pg-plan")
    _postings(student, make_user("pg-plan-other"))
    params = {
        "student": student.pk,
        "limit": 10,
        "k1": postings.BM25_K1,
        "k1p1": postings.BM25_K1 + 1,
        "b": postings.BM25_B,
        "avgdl": 20.0,
        "terms": ["t1", "t2"],
        "idf": [1.5, 0.7],
        "rest_terms": ["t3"],
        "rest_idf": [0.1],
        "rest": 0.22,
    }
    plan = _plan(getattr(postings, statement), params)
    scans = [line for line in plan.splitlines() if "memory_posting" in line]
    assert scans, plan
    assert all("Index Only Scan using memory_posting_pkey" in line for line in scans), plan


def _postings(*students: Any) -> None:
    """80 memories per student, each with 25 of 400 terms, and fresh statistics: the planner
    then chooses its plan as it would for a real student, whatever ran before."""
    rng = np.random.default_rng(7)
    rows = []
    for student in students:
        for i in range(80):
            memory = AIMemory.objects.create(
                student=student, kind="note", title=f"p{i}", content="x", created_at=timezone.now()
            )
            for term in rng.choice(400, size=25, replace=False):
                rows.append((student.pk, f"t{term}", memory.pk, int(rng.integers(1, 4)), 40))
    with connection.cursor() as cursor:
        cursor.executemany(
            "INSERT INTO memory_posting (student_id, term, memory_id, tf, doc_len) VALUES (%s, %s, %s, %s, %s)", rows
        )
        cursor.execute("ANALYZE memory_posting")


def _memories(student: Any, rng: np.random.Generator, n: int) -> list[tuple[int, np.ndarray, np.ndarray, float]]:
    """n memories with random vectors (0 to 4 sentences each), a day apart; (id, whole vector,
    sentence vectors, age in days)."""
    now = timezone.now()
    out = []
    for i in range(n):
        memory = AIMemory.objects.create(
            student=student, kind="note", title=f"m{i}", content="x", created_at=now - timedelta(days=i)
        )
        whole, sentences = _unit(rng, 1)[0], _unit(rng, int(rng.integers(0, 5)))
        MemoryEmbedding.objects.create(
            memory=memory, student=student, model=MODEL, dim=DIM, vector=whole,
            sentences=len(sentences), sentence_vectors=sentences, text_hash="x",
        )  # fmt: skip
        out.append((memory.pk, whole, sentences, float(i)))
    return out


def _expected(
    memories: list[tuple[int, np.ndarray, np.ndarray, float]],
    q: np.ndarray,
    topic: np.ndarray | None,
    *,
    depth: int,
    shortlist: int,
    mix: float,
    half_life: float,
    floor: float,
    extra: list[int],
) -> tuple[list[int], dict[int, float], dict[int, float]]:
    """The documented ranking, in numpy: (top ids, {id: score}, {id: topic similarity})."""
    sims = {pk: float(np.dot(whole.astype(np.float64), q)) for pk, whole, _, _ in memories}
    short = sorted(sims, key=lambda pk: (-sims[pk], pk))[: max(shortlist, depth)]
    by_id = {pk: (whole, sentences, age) for pk, whole, sentences, age in memories}

    def decay(age: float) -> float:
        return floor + (1 - floor) * 0.5 ** (age / half_life) if half_life > 0 else 1.0

    scores: dict[int, float] = {}
    for pk in short:
        _, sentences, age = by_id[pk]
        score = sims[pk]
        if len(sentences) and mix > 0:
            best = float(np.max(sentences.astype(np.float64) @ q))
            score = (1 - mix) * sims[pk] + mix * max(best, sims[pk])
        scores[pk] = score * decay(age)
    top = sorted(scores, key=lambda pk: (-scores[pk], pk))[:depth]
    for pk in extra:
        if pk not in scores:
            scores[pk] = sims[pk] * decay(by_id[pk][2])
    returned = set(top) | set(extra)
    topics: dict[int, float] = {}
    if topic is not None:
        for pk in returned:
            whole, sentences, _ = by_id[pk]
            vectors = sentences if len(sentences) else whole[None, :]
            topics[pk] = float(np.max(vectors.astype(np.float64) @ topic))
    return top, {pk: scores[pk] for pk in returned}, topics


@pytest.mark.parametrize(("mix", "half_life", "with_topic"), [(0.5, 0.0, True), (0.5, 10.0, False), (0.0, 0.0, True)])
def test_the_vector_statement_ranks_as_documented(mix: float, half_life: float, with_topic: bool) -> None:
    rng = np.random.default_rng(3)
    student = make_user("pg-vectors")
    memories = _memories(student, rng, 40)
    q = _unit(rng, 1)[0].astype(np.float64)
    topic = _unit(rng, 1)[0].astype(np.float64) if with_topic else None
    extra = [memories[i][0] for i in (3, 17, 25, 39)]
    options = {"depth": 5, "shortlist": 12, "mix": mix, "half_life": half_life, "floor": 0.2, "extra": extra}
    found = vector_search.search(
        student_id=student.pk, model=MODEL, query=q.astype(np.float32),
        topic=None if topic is None else topic.astype(np.float32), depth=5, extra=extra, shortlist=12, mix=mix,
        half_life_days=half_life, decay_floor=0.2, now=timezone.now(),
    )  # fmt: skip
    # The vectors went through float32, as stored: compare with the stored ones.
    q32 = q.astype(np.float32).astype(np.float64)
    t32 = None if topic is None else topic.astype(np.float32).astype(np.float64)
    top, scores, topics = _expected(memories, q32, t32, **options)  # type: ignore[arg-type]
    assert found.top == top
    assert sorted(found.ids.tolist()) == sorted(scores)
    for pk, score, similarity in zip(found.ids.tolist(), found.scores.tolist(), found.topic.tolist(), strict=True):
        assert score == pytest.approx(scores[pk], abs=1e-5)
        if topic is None:
            assert np.isnan(similarity)
        else:
            assert similarity == pytest.approx(topics[pk], abs=1e-5)


def test_the_hot_statements_are_prepared_once_per_connection(settings: Any) -> None:
    # DB_PREPARED_STATEMENTS is on by default: the connection prepares on first execution.
    assert connection.settings_dict["OPTIONS"].get("prepare_threshold") == 0
    student = make_user("pg-prepared")
    memories = _memories(student, np.random.default_rng(5), 3)
    for _ in range(3):
        vector_search.search(
            student_id=student.pk, model=MODEL, query=memories[0][1], topic=None, depth=2, extra=[], shortlist=3,
            mix=0.5, half_life_days=0.0, decay_floor=0.2, now=timezone.now(),
        )  # fmt: skip
        postings.search(student_id=student.pk, query="fractions", language="en", limit=5)
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements WHERE NOT from_sql")
        prepared = [row[0] for row in cursor.fetchall()]
    assert sum("memory_memoryembedding" in sql and "sentence_vectors" in sql for sql in prepared) == 1, prepared
    assert sum("memory_student_stats" in sql for sql in prepared) == 1, prepared


def _search(student: Any, q: np.ndarray, *, depth: int = 5, extra: list[int] | None = None) -> vector_search.Ranked:
    return vector_search.search(
        student_id=student.pk, model=MODEL, query=q.astype(np.float32), topic=_unit(np.random.default_rng(1), 1)[0],
        depth=depth, extra=extra or [], shortlist=12, mix=0.5, half_life_days=0.0, decay_floor=0.2, now=timezone.now(),
    )  # fmt: skip


def _same(a: vector_search.Ranked, b: vector_search.Ranked) -> bool:
    return a.top == b.top and all(
        np.array_equal(getattr(a, name), getattr(b, name), equal_nan=True)
        for name in ("ids", "scores", "created", "topic")
    )


def test_the_scan_reads_one_student_s_half_precision_vectors_from_the_covering_index_alone() -> None:
    rng = np.random.default_rng(4)
    student = make_user("pg-half-plan")
    _memories(student, rng, 30)
    _memories(make_user("pg-half-plan-other"), rng, 30)
    q = vector_text(_unit(rng, 1)[0])
    params: dict[str, Any] = {
        "q": q, "q_half": q, "topic": None, "student": student.pk, "model": MODEL, "dim": DIM, "shortlist": 12,
        "fetch": 12 + vector_search.SPARE, "margin": 0.01, "mix": 0.5, "half_life": 0.0, "floor": 0.2,
        "now": timezone.now(), "depth": 5, "extra": [],
    }  # fmt: skip
    plan = _plan(vector_search.SQL, params)
    scans = [line for line in plan.splitlines() if "memory_halfvector" in line]
    assert scans and all("Index Only Scan using memory_halfvector_pkey" in line for line in scans), plan


@pytest.mark.parametrize(("alike", "path"), [(60, "half"), (130, "exact")])
def test_vectors_alike_get_the_float32_scan_s_shortlist(monkeypatch: Any, alike: int, path: str) -> None:
    """Memories whose vectors are the same one give or take far less than half precision's
    rounding (a student's notes written from one template) are all within the margin of the
    shortlist's last one: the half-precision scan keeps them all and scores them again in float32
    (60 of them, within SPARE), or leaves the ranking to the float32 scan (130, beyond it). The
    result is the float32 scan's to the last bit either way, as with SPARE 0, where the scan never
    certifies its shortlist and the float32 scan always runs."""
    rng = np.random.default_rng(8)
    student = make_user("pg-alike")
    base = _unit(rng, 1)[0]
    now = timezone.now()
    for i in range(alike + 20):
        memory = AIMemory.objects.create(student=student, kind="note", title=f"a{i}", content="x", created_at=now)
        if i < alike:
            whole = base + rng.standard_normal(DIM).astype(np.float32) * 1e-3
            whole /= np.linalg.norm(whole)
        else:
            whole = _unit(rng, 1)[0]
        sentences = _unit(rng, 2)
        MemoryEmbedding.objects.create(
            memory=memory, student=student, model=MODEL, dim=DIM, vector=whole, sentences=2,
            sentence_vectors=sentences, text_hash="x",
        )  # fmt: skip
    q = base + _unit(rng, 1)[0] * 0.3
    q /= np.linalg.norm(q)
    extra = [memory.pk for memory in AIMemory.objects.filter(student=student).order_by("-id")[:3]]
    vector_search.scan_paths.clear()
    found = _search(student, q, extra=extra)
    assert vector_search.scan_paths == {path: 1}
    monkeypatch.setattr(vector_search, "SPARE", 0)
    exact = _search(student, q, extra=extra)
    assert vector_search.scan_paths == {path: 1, "exact": 1} if path == "half" else {"exact": 2}
    assert _same(found, exact)


def _copies() -> dict[int, tuple[int, str, int, np.ndarray]]:
    return {row.memory_id: (row.student_id, row.model, row.dim, row.vector) for row in HalfVector.objects.all()}


def test_the_half_precision_copy_follows_every_write_to_a_vector() -> None:
    """Written, replaced (the same model or another), deleted: through the ORM or in SQL, the
    copy is the vector rounded to half precision, in the same transaction, and it goes with the
    vector or the memory."""
    rng = np.random.default_rng(6)
    student = make_user("pg-copy")
    (kept, _, _, _), (replaced, _, _, _), (dropped, _, _, _), (erased, _, _, _) = _memories(student, rng, 4)

    def expected(memory_id: int) -> tuple[int, str, int, np.ndarray]:
        row = MemoryEmbedding.objects.get(memory_id=memory_id)
        return student.pk, row.model, row.dim, row.vector.astype(np.float16).astype(np.float32)

    def check(present: list[int]) -> None:
        copies = _copies()
        assert sorted(copies) == sorted(present)
        for pk in present:
            student_id, model, dim, vector = copies[pk]
            want = expected(pk)
            assert (student_id, model, dim) == want[:3] and np.array_equal(vector, want[3])

    check([kept, replaced, dropped, erased])
    embedding = MemoryEmbedding.objects.get(memory_id=replaced)
    embedding.vector = _unit(rng, 1)[0]
    embedding.save()
    check([kept, replaced, dropped, erased])
    MemoryEmbedding.objects.filter(memory_id=replaced).update(
        model="test:another-8", dim=8, vector=_unit(rng, 1)[0][:8]
    )
    check([kept, replaced, dropped, erased])
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_memoryembedding SET vector = %s::vector WHERE memory_id = %s",
            [vector_text(_unit(rng, 1)[0]), kept],
        )
        cursor.execute("DELETE FROM memory_memoryembedding WHERE memory_id = %s", [dropped])
    check([kept, replaced, erased])
    AIMemory.objects.filter(pk=erased).delete()
    check([kept, replaced])
    MemoryEmbedding.objects.filter(memory_id=kept).update(revision=5)  # not a vector: the copy stays as it is
    check([kept, replaced])


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize(("mix", "half_life"), [(0.5, 0.0), (0.5, 10.0), (0.0, 0.0)])
def test_the_vectors_held_in_the_process_rank_as_the_statement_does(mix: float, half_life: float) -> None:
    """A student's first query is answered by the statement while the cache's thread loads their
    vectors; the next ones from the held vectors: the same top, best first, and the same scores
    (the products are summed in another order: within float32 rounding) for the lexical
    candidates the fusion asks about too."""
    from memory.search.backend import search_backend
    from memory.search.tuning import RecallConfig
    from memory.search.vector_cache import vector_cache

    rng = np.random.default_rng(11)
    student = make_user("pg-held")
    memories = _memories(student, rng, 60)
    _memories(make_user("pg-held-other"), rng, 20)
    config = RecallConfig().with_(sentence_shortlist=15, sentence_mix=mix, decay_half_life_days=half_life)
    backend, now = search_backend(), timezone.now()
    for i in range(8):
        q, topic = _unit(rng, 1)[0], _unit(rng, 1)[0]
        extra = [memories[j][0] for j in rng.choice(len(memories), 6, replace=False)]
        runs = []
        for use_cache in (False, True):
            timings: dict[str, float] = {}
            top, scores, degraded = backend.semantic(
                student_id=student.pk, model=MODEL, query=q, topic=topic, depth=10, extra=extra, config=config,
                now=now, use_cache=use_cache, timings=timings,
            )  # fmt: skip
            assert not degraded and scores is not None
            runs.append((top, scores))
            if i == 0 and use_cache:
                assert scores.vectors is None  # not held yet: the statement answered, the thread loads them
                vector_cache.settle()
                assert vector_cache.holds(student.pk, MODEL)
        (by_statement, statement_scores), (held_top, held_scores) = runs
        if i > 0:
            assert held_scores.vectors is not None  # ranked in the process
        assert [pk for pk, _ in held_top] == [pk for pk, _ in by_statement]
        assert [s for _, s in held_top] == pytest.approx([s for _, s in by_statement], abs=1e-5)
        assert held_scores.of(extra) == pytest.approx(statement_scores.of(extra), abs=1e-5)
        assert held_scores.topic_of(extra) == pytest.approx(statement_scores.topic_of(extra), abs=1e-5)


@pytest.mark.django_db(transaction=True)
def test_a_student_too_large_for_the_cache_is_ranked_by_the_database(settings: Any) -> None:
    """A student whose vectors exceed EMBEDDINGS_CACHE_BYTES is never loaded into the process:
    every query is the statement's, and no load is started again; a student within the bound
    is held as usual."""
    from memory.search.backend import search_backend
    from memory.search.tuning import RecallConfig
    from memory.search.vector_cache import vector_cache, vectors_bytes

    rng = np.random.default_rng(5)
    large, small = make_user("pg-large"), make_user("pg-small")
    _memories(large, rng, 40)
    _memories(small, rng, 4)
    needed = vectors_bytes(student_id=large.pk, model=MODEL)
    assert needed >= 40 * DIM * 4  # a row per memory, and one per sentence
    settings.EMBEDDINGS_CACHE_BYTES = needed - 1
    vector_cache.clear()
    loads = vector_cache.loads
    backend, config = search_backend(), RecallConfig()
    for student in (large, large, small, small):
        q = _unit(rng, 1)[0]
        top, scores, degraded = backend.semantic(
            student_id=student.pk, model=MODEL, query=q, topic=None, depth=5, extra=[], config=config,
            now=timezone.now(), use_cache=True, timings={},
        )  # fmt: skip
        assert top and not degraded and scores is not None
        vector_cache.settle()
    assert not vector_cache.holds(large.pk, MODEL) and vector_cache.warm(large.pk, MODEL) is None
    assert vector_cache.holds(small.pk, MODEL) and vector_cache.loads == loads + 1
    vector_cache.clear()


def test_writes_outside_the_services_move_the_student_s_revision() -> None:
    """The triggers stamp what a service did not (a data fix in SQL): a memory inserted or
    archived, a vector stored or deleted; a service's own stamp is left as it is; deleting a
    memory drops the counter, so that every cache loads the student again."""
    from memory.models import StudentMemoryRevision
    from memory.search.vector_cache import vector_cache
    from memory.services.writing import student_revision_next

    student = make_user("pg-revision")
    [(pk, whole, _, _)] = _memories(student, np.random.default_rng(2), 1)  # through the ORM: no revision taken
    memory, vector = AIMemory.objects.get(pk=pk), MemoryEmbedding.objects.get(memory_id=pk)
    assert (memory.revision, vector.revision, vector_cache.version(student.pk)) == (1, 2, 2)
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memory_aimemory SET status = 'archived' WHERE id = %s", [pk])
        assert AIMemory.objects.get(pk=pk).revision == 3
        cursor.execute("UPDATE memory_aimemory SET title = 'a title only' WHERE id = %s", [pk])
        assert vector_cache.version(student.pk) == 3  # not what the cache reads
        cursor.execute("UPDATE memory_memoryembedding SET vector = %s WHERE memory_id = %s", [vector_text(-whole), pk])
        assert MemoryEmbedding.objects.get(memory_id=pk).revision == 4
        cursor.execute("DELETE FROM memory_memoryembedding WHERE memory_id = %s", [pk])
        assert AIMemory.objects.get(pk=pk).revision == 5
    taken = student_revision_next(student.pk)  # a service's write keeps its own stamp
    AIMemory.objects.filter(pk=pk).update(status="active", revision=taken)
    assert AIMemory.objects.get(pk=pk).revision == taken == vector_cache.version(student.pk) == 6
    AIMemory.objects.filter(pk=pk).delete()
    assert not StudentMemoryRevision.objects.filter(student=student).exists()


def test_the_cache_reads_the_vectors_the_orm_reads() -> None:
    """The vector cache reads pgvector's binary form (memory.search.vector_cache): the same rows,
    the same float32 values as the models' fields give, for a student or some of their memories."""
    from memory.search.vector_cache import _VECTOR_FIELDS, _vector_rows

    student = make_user("pg-binary")
    memories = _memories(student, np.random.default_rng(4), 12)
    _memories(make_user("pg-binary-other"), np.random.default_rng(5), 3)
    orm = list(
        MemoryEmbedding.objects.filter(student=student, model=MODEL).order_by("memory_id").values_list(*_VECTOR_FIELDS)
    )
    some = {memories[3][0], memories[7][0]}
    for rows, expected in (
        (_vector_rows(student_id=student.pk, model=MODEL), orm),
        (_vector_rows(student_id=student.pk, model=MODEL, memory_ids=some), [r for r in orm if r[0] in some]),
    ):
        assert [r[0] for r in rows] == [r[0] for r in expected]
        for got, want in zip(rows, expected, strict=True):
            assert (got[1], got[3], got[4]) == (want[1], want[3], want[4])
            assert np.array_equal(got[2], want[2]) and np.array_equal(got[5], want[5])
