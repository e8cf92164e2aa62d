"""Consolidation: near-duplicate memories of one student merged into one, by the summary model.

For one student, the active notes, facts and approaches (teacher notes keep their author;
summaries, quiz results and files are one per record) are clustered by the similarity of their
vectors, within one kind: two memories whose cosine is MEMORY_CONSOLIDATION_SIMILARITY or more
are linked, and a cluster is a connected group (at most MEMORY_CONSOLIDATION_MAX_CLUSTER, the
oldest first). The model is asked to merge each cluster, with a confidence:
- at MEMORY_MERGE_MIN_CONFIDENCE or more, the merged memory is stored (source `merge`, the
  members and their own evidence as its evidence) and every member is archived with the reason
  "merged into #id" and points at it (`superseded_by`);
- below, or if the answer is unusable, nothing changes.
Either way the decision is recorded (ConsolidationDecision, one per cluster), so a cluster is
asked about once. Nothing is deleted, and a second run over the same memories changes nothing.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field

import numpy as np
from django.conf import settings
from django.db import transaction

from accounts.models import User
from accounts.selectors import memory_consent_given
from llm import gateway, structured
from llm.models import LLMUsage
from memory.lifecycle_prompts import MERGE_SCHEMA, PromptMemory, merge_messages, parse_merge
from memory.models import AIMemory, ConsolidationDecision, MemoryEmbedding
from memory.search import embeddings
from memory.services.lifecycle import memory_retire
from memory.services.records import memory_derived_store

logger = logging.getLogger(__name__)

CONSOLIDATED_KINDS = (AIMemory.Kind.NOTE, AIMemory.Kind.FACT, AIMemory.Kind.APPROACH)


@dataclass(frozen=True)
class Cluster:
    kind: str
    members: tuple[int, ...]  # memory ids, sorted
    similarity: float  # the weakest link's cosine

    @property
    def key(self) -> str:
        return hashlib.sha256(",".join(map(str, self.members)).encode()).hexdigest()


@dataclass
class Report:
    """What a run did (or, dry, would do) per cluster: "merged into #id", "skipped: why",
    "decided already" or "would ask the model"."""

    student_id: int
    clusters: list[tuple[Cluster, str]] = field(default_factory=list)

    def count(self, prefix: str) -> int:
        return sum(1 for _, outcome in self.clusters if outcome.startswith(prefix))


def clusters_find(*, student_id: int, threshold: float | None = None) -> list[Cluster]:
    """The student's clusters of near-duplicate active memories, oldest members first."""
    threshold = settings.MEMORY_CONSOLIDATION_SIMILARITY if threshold is None else threshold
    model = embeddings.current_model_name()
    if model is None:
        return []
    rows = list(
        MemoryEmbedding.objects.filter(
            student_id=student_id,
            model=model,
            memory__status=AIMemory.Status.ACTIVE,
            memory__kind__in=CONSOLIDATED_KINDS,
            memory__visibility=AIMemory.Visibility.STUDENT,
        )
        .order_by("memory_id")
        .values_list("memory_id", "memory__kind", "vector")
    )
    found: list[Cluster] = []
    for kind in CONSOLIDATED_KINDS:
        of_kind = [(pk, np.asarray(vector, dtype=np.float32)) for pk, k, vector in rows if k == kind]
        if len(of_kind) < 2:
            continue
        ids = [pk for pk, _ in of_kind]
        matrix = np.vstack([v / (np.linalg.norm(v) or 1.0) for _, v in of_kind])
        sims = matrix @ matrix.T
        parent = list(range(len(ids)))
        for i, j in zip(*np.nonzero(np.triu(sims >= threshold, k=1)), strict=True):
            parent[_root(parent, int(i))] = _root(parent, int(j))
        groups: dict[int, list[int]] = {}
        for i in range(len(ids)):
            groups.setdefault(_root(parent, i), []).append(i)
        for members in groups.values():
            for start in range(0, len(members), settings.MEMORY_CONSOLIDATION_MAX_CLUSTER):
                chunk = members[start : start + settings.MEMORY_CONSOLIDATION_MAX_CLUSTER]
                if len(chunk) < 2:
                    continue
                weakest = float(sims[np.ix_(chunk, chunk)].min())
                found.append(Cluster(kind, tuple(ids[i] for i in chunk), round(weakest, 4)))
    return sorted(found, key=lambda c: c.members)


def _root(parent: list[int], i: int) -> int:
    """Union-find: the representative of i's group (halving the path on the way)."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


def consolidate_student(*, student_id: int, dry_run: bool = False) -> Report:
    """Merge the student's clusters (module docstring). Returns the report.

    A dry run asks no model and writes nothing. Raises gateway.LLMUnavailable (transient: the
    task retries; the clusters done so far stay done). A student without consent to memory has
    nothing merged (an empty report): their teachers' notes stay as written.
    """
    report = Report(student_id)
    if not memory_consent_given(student_id):
        return report
    decided = set(ConsolidationDecision.objects.filter(student_id=student_id).values_list("key", flat=True))
    profile = gateway.background_profile()
    for cluster in clusters_find(student_id=student_id):
        if cluster.key in decided:
            report.clusters.append((cluster, "decided already"))
        elif dry_run or not gateway.is_configured(profile):
            report.clusters.append((cluster, "would ask the model" if dry_run else "skipped: no model configured"))
        else:
            report.clusters.append((cluster, _merge(student_id, cluster, profile)))
    return report


def _merge(student_id: int, cluster: Cluster, profile: gateway.Profile) -> str:
    members = list(AIMemory.objects.filter(student_id=student_id, pk__in=cluster.members).order_by("pk"))
    language = User.objects.filter(pk=student_id).values_list("language", flat=True).first() or "en"
    prompt = [PromptMemory(m.pk, m.kind, m.title, m.content) for m in members]
    try:
        answer = structured.complete_structured(
            messages=merge_messages(members=prompt, language=language),
            schema=MERGE_SCHEMA,
            name="memory_merge",
            purpose=LLMUsage.Purpose.CONSOLIDATION,
            profile=profile,
            student_id=student_id,
        )
        merge = parse_merge(answer.content)
    except (ValueError, gateway.LLMBadResponse) as exc:
        return _decide(student_id, cluster, f"skipped: unusable answer ({exc})"[:300], model=profile.model_id)
    model = answer.model or profile.model_id
    if merge.confidence < settings.MEMORY_MERGE_MIN_CONFIDENCE:
        reason = f"skipped: confidence {merge.confidence:.2f} below {settings.MEMORY_MERGE_MIN_CONFIDENCE}"
        return _decide(
            student_id, cluster, f"{reason} ({merge.reason})"[:300], confidence=merge.confidence, model=model
        )
    with transaction.atomic():
        locked = list(AIMemory.objects.select_for_update().filter(pk__in=cluster.members).order_by("pk"))
        if any(m.status != AIMemory.Status.ACTIVE for m in locked) or len(locked) != len(cluster.members):
            return "skipped: a member changed meanwhile (asked again next run)"
        evidence = {pk for m in locked for pk in [m.pk, *m.evidence]}
        merged, _ = memory_derived_store(
            student_id=student_id,
            kind=cluster.kind,
            source=AIMemory.Source.MERGE,
            source_ref=f"merge:{cluster.key[:32]}",
            title=merge.title,
            content=merge.content,
            evidence=sorted(evidence),
            confidence=min(merge.confidence, max(m.confidence for m in locked)),
            model=model,
        )
        merged.successes = sum(m.successes for m in locked)
        merged.failures = sum(m.failures for m in locked)
        merged.save(update_fields=["successes", "failures"])
        for member in locked:
            memory_retire(member, reason=f"merged into #{merged.pk}", successor=merged)
        return _decide(
            student_id, cluster, f"merged into #{merged.pk}", confidence=merge.confidence, model=model, merged=merged
        )


def _decide(
    student_id: int,
    cluster: Cluster,
    outcome: str,
    *,
    model: str,
    confidence: float | None = None,
    merged: AIMemory | None = None,
) -> str:
    ConsolidationDecision.objects.get_or_create(
        student_id=student_id,
        key=cluster.key,
        defaults={
            "members": list(cluster.members),
            "outcome": ConsolidationDecision.Outcome.MERGED if merged else ConsolidationDecision.Outcome.SKIPPED,
            "merged": merged,
            "confidence": confidence,
            "reason": outcome[:300],
            "model": model[:200],
        },
    )
    return outcome


def students_due(*, since: object) -> list[int]:
    """Students with a note, fact or approach written since `since`: consolidation's periodic
    task runs for them (a maintenance read across students, not a tenant read)."""
    return sorted(
        set(
            AIMemory.objects.active()
            .filter(kind__in=CONSOLIDATED_KINDS, created_at__gte=since)
            .values_list("student_id", flat=True)
        )
    )
