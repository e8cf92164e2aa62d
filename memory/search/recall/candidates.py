"""Recall's candidates: the semantic candidates and their scores (SemanticScores), the topic
text, and the memories of the dates a query names. The lexical candidates and the ranking of the
vectors are the database's (memory.search.backend)."""

from __future__ import annotations

import logging
import re
import time
from datetime import datetime

import numpy as np
from django.db.models import Q
from django.utils import timezone

from memory.models import AIMemory
from memory.search import embeddings, fts, query_dates
from memory.search.backend import search_backend
from memory.search.recall.config import RecallConfig
from memory.search.scores import SemanticScores

logger = logging.getLogger(__name__)

_QUERY_WORD = re.compile(r"\w+(?:['\u2019]\w+)?", re.UNICODE)  # keeps "Alice's" whole


def topic_text(query: str, *, language: str, n_docs: int, dfs: dict[str, int], share: float) -> str | None:
    """`query` without the words found in at least `share` of the student's `n_docs` memories
    (`dfs`: document frequency of each index term), or None if no word is that common.

    The student's own name, or the subject every one of their notes mentions, tells none of
    their memories apart; in a short question it still weighs on the sentence embedding as much
    as the topic does. Stop words stay (the embedder reads "when did" and "what" as intent). A
    query made only of common words is returned as None too (nothing to refocus on).
    """
    kept: list[str] = []
    dropped = False
    for word in _QUERY_WORD.findall(query):
        terms = fts.analyse(word, language)
        if terms and all(dfs.get(term, 0) >= share * n_docs for term in terms):
            dropped = True
        else:
            kept.append(word)
    if not dropped or not any(fts.analyse(word, language) for word in kept):
        return None
    return " ".join(kept)


def topic_query(
    *,
    student_id: int,
    query: str,
    language: str,
    config: RecallConfig,
    frequencies: tuple[int, dict[str, int]] | None = None,
) -> str | None:
    """The topic text of `query` for this student (see `topic_text`). `frequencies`: the query
    terms' (n_docs, {term: df}) if the lexical search already read them, else one indexed query."""
    terms = fts.analyse(query, language)
    if not terms:
        return None
    n_docs, dfs = frequencies or search_backend().document_frequencies(student_id=student_id, terms=terms)
    if n_docs < max(config.topic_min_memories, 1):
        return None
    return topic_text(query, language=language, n_docs=n_docs, dfs=dfs, share=config.topic_common_share)


def semantic_candidates(
    *,
    student_id: int,
    query: str,
    language: str,
    frequencies: tuple[int, dict[str, int]] | None,
    depth: int,
    config: RecallConfig,
    now: datetime,
    query_vector: np.ndarray | None,
    topic_vector: np.ndarray | None,
    embedder: embeddings.Embedder | None,
    use_cache: bool,
    timings: dict[str, float],
    lexical_ids: list[int],
) -> tuple[list[tuple[int, float]], SemanticScores | None, str, float]:
    """(candidates, the candidates' scores, why degraded or "", ms spent embedding the query).
    `embedder`: the one recall resolved; `lexical_ids`: the lexical candidates, scored too."""
    chosen = embedder
    if chosen is None:
        return [], None, "no embedder configured", 0.0
    embed_ms = 0.0
    topic = None
    if config.topic_weight > 0:
        t = time.perf_counter()
        topic = topic_query(
            student_id=student_id, query=query, language=language, config=config, frequencies=frequencies
        )
        timings["topic_ms"] = (time.perf_counter() - t) * 1000
    try:
        # The query and its topic text are embedded in one call; a recent query is not embedded
        # again (embeddings.embed_queries keeps EMBEDDINGS_QUERY_CACHE_SIZE of them).
        texts = ([query] if query_vector is None else []) + ([topic] if topic and topic_vector is None else [])
        if texts:
            t = time.perf_counter()
            embedded = embeddings.embed_queries(chosen, texts, student_id=student_id)
            embed_ms = (time.perf_counter() - t) * 1000
            if query_vector is None:
                query_vector, embedded = embedded[0], embedded[1:]
            if topic and topic_vector is None:
                topic_vector = embedded[0]
        q = np.asarray(query_vector, dtype=np.float32)
        topic_q = None
        if topic and topic_vector is not None:
            topic_q = np.asarray(topic_vector, dtype=np.float32)
        elif config.topic_weight > 0:
            topic_q = q  # nothing to strip: the topic is the query itself
        found, scores, degraded = search_backend().semantic(
            student_id=student_id, model=chosen.name, query=q, topic=topic_q, depth=depth, extra=lexical_ids,
            config=config, now=now, use_cache=use_cache, timings=timings,
        )  # fmt: skip
    except embeddings.EmbedderUnavailable as exc:
        logger.warning("recall: embedder unavailable, lexical only: %s", exc)
        return [], None, f"embedder unavailable: {exc}", embed_ms
    except Exception as exc:
        # Recall is a bonus: a broken embedder (bad model files, out of memory) must not fail
        # the chat. Logged with its traceback; the lexical signal still runs.
        logger.exception("recall: semantic search failed, lexical only")
        return [], None, f"semantic search failed: {type(exc).__name__}", embed_ms
    return found, scores, degraded, embed_ms


def dated_candidates(
    *,
    student_id: int,
    candidates: list[int],
    scores: SemanticScores | None,
    spans: list[query_dates.Span],
    config: RecallConfig,
) -> dict[int, float]:
    """created_at (epoch seconds) of the candidates, and of up to `date_candidates` more memories
    of the spans. The semantic scores know the candidates' dates; the database is asked for those it
    does not know and for the memories of the spans (the index on student, status, created_at)."""
    tz = timezone.get_current_timezone()
    created: dict[int, float] = {}
    if scores is not None and candidates:
        when = scores.created_of(candidates)
        created = {pk: float(w) for pk, w in zip(candidates, when.tolist(), strict=True) if not np.isnan(w)}
    active = AIMemory.objects.active().filter(student_id=student_id)
    unknown = [pk for pk in candidates if pk not in created]
    if unknown:
        created.update((pk, at.timestamp()) for pk, at in active.filter(pk__in=unknown).values_list("pk", "created_at"))
    within = Q()
    for span in spans:
        start, end = (datetime.fromtimestamp(b, tz) for b in query_dates.span_bounds(span, tz))
        within |= Q(created_at__gte=start, created_at__lt=end)
    extra = active.filter(within).exclude(pk__in=candidates).order_by("-created_at", "-id")
    limit = max(config.date_candidates, 0)
    created.update((pk, at.timestamp()) for pk, at in extra.values_list("pk", "created_at")[:limit])
    return created
