from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from memory.fields import HalfVectorField, VectorField, VectorListField


class AIMemoryQuerySet(models.QuerySet["AIMemory"]):
    def active(self) -> AIMemoryQuerySet:
        return self.filter(status=AIMemory.Status.ACTIVE)

    def of_tier(self, tier: str) -> AIMemoryQuerySet:
        """Memories of one tier (episodic, semantic or procedural; see AIMemory.TIER_KINDS)."""
        return self.filter(kind__in=AIMemory.TIER_KINDS[tier])

    def shown_to_student(self) -> AIMemoryQuerySet:
        """Without the teacher-only notes: what the student, and the tutor speaking to them, see."""
        return self.filter(visibility=AIMemory.Visibility.STUDENT)


class AIMemory(models.Model):
    """What the tutor remembers of a student, written between conversations.

    Memories are the student's private data and untrusted text: they are read through
    `memory.selectors`, which scope every query to the students the requester may see, and are
    shown to the model as data, never as instructions. They are archived or superseded, never
    deleted (the one exception is a legal erasure of the whole student).

    Three tiers, by kind (`tier`): episodic (what happened: summaries, notes, quiz results,
    files), semantic (durable facts about the student, extracted with a confidence from the
    memories cited in `evidence`) and procedural (what worked for this student, with the quiz
    outcomes that followed its use in `successes` and `failures`).

    Provenance: `source` (who wrote it), `evidence` (the ids of the memories it was drawn from),
    `confidence` (0 to 1), `model` (the model that wrote it, empty for people) and, for a fact
    or an approach, `confirmed_at` (when a second source or a teacher confirmed it). A memory
    replaced by a newer one is `superseded`, points at it through `superseded_by` and keeps the
    reason in `archived_reason`; the chain is read both ways (`supersedes` is the reverse).
    """

    class Tier(models.TextChoices):
        EPISODIC = "episodic", "Episodic"
        SEMANTIC = "semantic", "Semantic"
        PROCEDURAL = "procedural", "Procedural"

    class Kind(models.TextChoices):
        SUMMARY = "summary", "Conversation summary"
        NOTE = "note", "Tutor note"
        TEACHER_NOTE = "teacher_note", "Teacher note"
        QUIZ_RESULT = "quiz_result", "Quiz result"
        FILE = "file", "Uploaded file"
        FACT = "fact", "Fact about the student"
        APPROACH = "approach", "What worked"

    class Source(models.TextChoices):
        SUMMARY_TASK = "summary_task", "Summary task"
        SAVE_MEMORY_TOOL = "save_memory_tool", "save_memory tool"
        TEACHER = "teacher", "Teacher"
        QUIZ = "quiz", "Graded quiz"
        FILE_UPLOAD = "file_upload", "Uploaded file"
        EXTRACTION = "extraction", "Extracted from other memories"
        MERGE = "merge", "Merged from other memories"
        IMPORT = "import", "Imported"
        MCP_TOOL = "mcp_tool", "An agent's write (MCP)"

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        ARCHIVED = "archived", "Archived"
        SUPERSEDED = "superseded", "Superseded"

    class Visibility(models.TextChoices):
        STUDENT = "student", "The student and their teachers"
        TEACHER_ONLY = "teacher_only", "Teachers only"

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="memories")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    title = models.CharField(max_length=200)
    content = models.TextField()
    source = models.CharField(max_length=24, choices=Source.choices)
    source_conversation = models.ForeignKey(
        "conversations.Conversation",
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="memories",
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        null=True,
        blank=True,
        on_delete=models.PROTECT,
        related_name="authored_memories",
        help_text="The teacher who wrote a teacher note.",
    )
    # Counted once at write time, so the memory block's size is known without re-tokenising.
    token_count = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    # A teacher note may be kept from the student: it never reaches the student's API, nor the
    # tutor's prompt (the tutor speaks to the student and could repeat it).
    visibility = models.CharField(max_length=16, choices=Visibility.choices, default=Visibility.STUDENT)
    archived_reason = models.CharField(max_length=300, blank=True)
    # The record a quiz result or file memory was written from ("quiz:12", "file:7"): one memory
    # per record, whatever the retries.
    source_ref = models.CharField(max_length=40, blank=True, default="")
    # A fallback summary, written from the conversation itself when the model could not write
    # one: low confidence, shown to teachers for review, replaced by a later summary or a
    # teacher's correction.
    needs_review = models.BooleanField(default=False)
    confidence = models.FloatField(default=1.0)
    created_at = models.DateTimeField(db_index=True)
    updated_at = models.DateTimeField(auto_now=True)
    # The student's memory revision (StudentMemoryRevision) of the last write to this memory.
    revision = models.BigIntegerField(default=0)
    # The ids of the memories this one was drawn from (an extracted fact, a merge).
    evidence = models.JSONField(default=list, blank=True)
    # A fact or an approach drawn by a model is confirmed by a second source (another memory
    # agreeing, a merge) or a teacher; until then it stays out of the prompt's "most confident"
    # block (memory.selectors.turn_memories). Null for the other kinds.
    confirmed_at = models.DateTimeField(
        null=True, blank=True, help_text="When a second source or a teacher confirmed this fact or approach."
    )
    model = models.CharField(max_length=200, blank=True, default="", help_text="The model that wrote it.")
    # Procedural memories: quiz outcomes after a conversation whose prompt showed it.
    successes = models.PositiveIntegerField(default=0)
    failures = models.PositiveIntegerField(default=0)
    # Moved when the memory is in a reply's prompt (the access log, conversations.ReplyMemory).
    recall_count = models.PositiveIntegerField(default=0)
    last_recalled_at = models.DateTimeField(null=True, blank=True)
    # Relations used by recall's relation bonus: the newer memory that replaced this one (the
    # chain stays readable), and explicit links between memories. Deleted only by an erasure.
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    links = models.ManyToManyField("self", blank=True, symmetrical=True)

    objects = AIMemoryQuerySet.as_manager()

    TIER_KINDS: dict[str, tuple[str, ...]] = {
        Tier.EPISODIC: (Kind.SUMMARY, Kind.NOTE, Kind.TEACHER_NOTE, Kind.QUIZ_RESULT, Kind.FILE),
        Tier.SEMANTIC: (Kind.FACT,),
        Tier.PROCEDURAL: (Kind.APPROACH,),
    }

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["student", "status", "-created_at", "-id"], name="memory_student_recent"),
            # The vector cache reads what changed since the revision it holds (memory.search.vector_cache).
            models.Index(fields=["student", "revision"], name="memory_student_revision"),
        ]
        constraints = [
            # Exactly one summary per conversation: a redelivered summary task stores nothing new.
            models.UniqueConstraint(
                fields=["source_conversation"],
                condition=Q(kind="summary"),
                name="memory_one_summary_per_conversation",
            ),
            models.UniqueConstraint(
                fields=["student", "source_ref"], condition=~Q(source_ref=""), name="memory_one_per_source_ref"
            ),
            models.CheckConstraint(
                condition=~Q(kind="summary") | Q(source_conversation__isnull=False),
                name="memory_summary_has_conversation",
            ),
            models.CheckConstraint(
                condition=~Q(kind="teacher_note") | Q(author__isnull=False),
                name="memory_teacher_note_has_author",
            ),
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="memory_confidence_between_0_and_1"
            ),
            models.CheckConstraint(
                condition=Q(visibility="student") | Q(kind="teacher_note"),
                name="memory_only_teacher_notes_teacher_only",
            ),
            models.CheckConstraint(
                condition=~Q(status="superseded") | Q(superseded_by__isnull=False),
                name="memory_superseded_has_successor",
            ),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def tier(self) -> str:
        for tier, kinds in self.TIER_KINDS.items():
            if self.kind in kinds:
                return tier
        return self.Tier.EPISODIC


class SupersessionReview(models.Model):
    """A pair the summary model thought might be an update, with too little confidence to act.

    Nothing changed when it was logged: both memories stayed active. A teacher of the student
    applies it (the older is superseded) or dismisses it. One row per pair.
    """

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        APPLIED = "applied", "Applied"
        DISMISSED = "dismissed", "Dismissed"

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    older = models.ForeignKey(AIMemory, on_delete=models.CASCADE, related_name="+")
    newer = models.ForeignKey(AIMemory, on_delete=models.CASCADE, related_name="+")
    confidence = models.FloatField()
    reason = models.CharField(max_length=300)
    model = models.CharField(max_length=200, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["older", "newer"], name="supersession_review_one_per_pair"),
            models.CheckConstraint(condition=~Q(older=models.F("newer")), name="supersession_review_two_memories"),
        ]

    def __str__(self) -> str:
        return f"#{self.older_id} -> #{self.newer_id} ({self.confidence:.2f}, {self.status})"


class ConsolidationDecision(models.Model):
    """What consolidation decided for one cluster of near-duplicate memories (memory.lifecycle).

    `members` are the cluster's memory ids, sorted; `key` their digest, unique per student, so a
    cluster is asked about once: merged (`merged` is the new memory, the members are archived) or
    skipped (the model's confidence was too low, or its answer unusable; `reason` says which).
    """

    class Outcome(models.TextChoices):
        MERGED = "merged", "Merged"
        SKIPPED = "skipped", "Skipped"

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64)
    members = models.JSONField(default=list)
    outcome = models.CharField(max_length=16, choices=Outcome.choices)
    merged = models.ForeignKey(AIMemory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    confidence = models.FloatField(null=True, blank=True)
    reason = models.CharField(max_length=300, blank=True, default="")
    model = models.CharField(max_length=200, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.UniqueConstraint(fields=["student", "key"], name="consolidation_one_per_cluster")]

    def __str__(self) -> str:
        return f"{self.student_id} {self.members}: {self.outcome}"


class MemoryEmbedding(models.Model):
    """The vectors of one memory, stored in the same database as the memory itself.

    `vector` is the L2-normalised embedding of the whole memory (title and content);
    `sentence_vectors` holds `sentences` more, one per sentence of the content (a question
    usually matches one sentence of a memory better than the whole of it; see memory.search.recall).
    On PostgreSQL they are pgvector `vector` and `vector[]` columns, ranked in the database
    (memory.search.vector_search); on SQLite, float32 bytes (memory.fields). `model` and `dim` say which
    embedder wrote them, so a change of model is detected (recall ignores vectors of another
    model and `manage.py reembed` replaces them). `text_hash` is the hash of the text that was
    embedded: the embedding task skips a memory whose vector is already current. `student` is
    denormalised so that one student's vectors are read through one index.
    """

    memory = models.OneToOneField(AIMemory, primary_key=True, on_delete=models.CASCADE, related_name="embedding")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    model = models.CharField(max_length=200)
    dim = models.PositiveIntegerField()
    vector = VectorField()
    sentences = models.PositiveIntegerField(default=0)
    sentence_vectors = VectorListField()
    text_hash = models.CharField(max_length=64)
    updated_at = models.DateTimeField(auto_now=True)
    # The student's memory revision (StudentMemoryRevision) of the write that stored this vector.
    revision = models.BigIntegerField(default=0)

    class Meta:
        # One student's vectors are read by the leading column; what changed since a revision by both.
        indexes = [models.Index(fields=["student", "revision"], name="embedding_student_revision")]
        constraints = [models.CheckConstraint(condition=Q(dim__gt=0), name="embedding_dim_positive")]

    def __str__(self) -> str:
        return f"{self.memory_id} ({self.model}, {self.dim})"


class HalfVector(models.Model):
    """A memory's whole-text vector again, in half precision, narrow: what recall's scan reads on
    PostgreSQL (memory.search.vector_search), half the bytes of the vector and none of the rest of
    its MemoryEmbedding row. Its primary key (student, model, dim, memory) INCLUDEs the vector
    (migration 0018), so one student's vectors are one range of that index, read by an
    index-only scan wherever their rows lie in the table. The scan only shortlists: the
    shortlist is scored again from MemoryEmbedding's float32 vectors, so what recall returns
    does not depend on this copy's precision.

    Written by a trigger on memory_memoryembedding (migration 0018), never by the app: every
    write to a vector, whoever makes it (the services, the admin, a data fix in SQL), changes
    its copy in the same transaction. Rows cascade from the memory and the student. Used on
    PostgreSQL only; the table stays empty on SQLite, whose vector cache reads MemoryEmbedding.
    """

    pk = models.CompositePrimaryKey("student_id", "model", "dim", "memory_id")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    model = models.CharField(max_length=200)
    dim = models.PositiveIntegerField()
    memory = models.OneToOneField(AIMemory, on_delete=models.CASCADE, related_name="+")
    vector = HalfVectorField()

    class Meta:
        db_table = "memory_halfvector"

    def __str__(self) -> str:
        return f"{self.memory_id} ({self.model}, {self.dim}, half precision)"


class StudentMemoryRevision(models.Model):
    """A counter per student, moved by every write to their memories or vectors.

    Each write takes the next value in its transaction (`memory.services.student_revision_next`)
    and stamps the rows it writes with it. The counter's row stays locked until that transaction
    commits, so one student's writes commit in revision order: a reader who sees revision R sees
    every row stamped R or lower. The vector cache of the embedded SQLite default
    (memory.search.vector_cache) reads this one row to know
    whether it is current, and the rows stamped above the revision it holds to catch up, instead
    of decoding all of a student's vectors again. Deleting memory rows (never done: memories are
    archived) would have to delete this row too, so that caches start again from zero.
    The same holds on PostgreSQL, where each process keeps the same cache.
    """

    student = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    revision = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"{self.student_id}: {self.revision}"


# --- The PostgreSQL lexical index (memory.search.fts) ---------------------------------------------------
# Used on PostgreSQL only: SQLite indexes memories in an FTS5 table, and these tables stay empty
# there (they exist so that a deletion cascades the same way on both databases). Every row
# cascades from its memory or its student, so deleting either (legal erasure) needs no code of
# its own. The statistics are kept by memory.search.fts in the write's transaction; a memory deleted
# outside the services leaves them slightly high until `manage.py reindex`, which rebuilds them.


class IndexedMemory(models.Model):
    """An active memory in the lexical index: its length in index terms."""

    memory = models.OneToOneField(AIMemory, primary_key=True, on_delete=models.CASCADE, related_name="+")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    doc_len = models.IntegerField()

    class Meta:
        db_table = "memory_doc"

    def __str__(self) -> str:
        return f"{self.memory_id}: {self.doc_len} terms"


class Posting(models.Model):
    """One index term of one memory, with its count (`tf`) and the memory's length: a query
    term's postings for a student are one range of the primary key."""

    pk = models.CompositePrimaryKey("student_id", "term", "memory_id")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    term = models.CharField(max_length=100)
    memory = models.ForeignKey(AIMemory, on_delete=models.CASCADE, related_name="+")
    tf = models.IntegerField()
    doc_len = models.IntegerField()

    class Meta:
        db_table = "memory_posting"
        # On PostgreSQL the primary key INCLUDEs tf and doc_len (migration 0016), so a term's
        # postings are an index-only scan; Django cannot state INCLUDE on a primary key.

    def __str__(self) -> str:
        return f"{self.term} in {self.memory_id}"


class TermStatistic(models.Model):
    """How many of a student's indexed memories hold a term (BM25's document frequency)."""

    pk = models.CompositePrimaryKey("student_id", "term")
    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", db_index=False)
    term = models.CharField(max_length=100)
    df = models.IntegerField()

    class Meta:
        db_table = "memory_term_stats"

    def __str__(self) -> str:
        return f"{self.student_id} {self.term}: {self.df}"


class StudentStatistic(models.Model):
    """A student's indexed memories and their total length in terms (BM25's N and avgdl)."""

    student = models.OneToOneField(
        settings.AUTH_USER_MODEL, primary_key=True, on_delete=models.CASCADE, related_name="+"
    )
    n_docs = models.IntegerField()
    total_len = models.BigIntegerField()

    class Meta:
        db_table = "memory_student_stats"

    def __str__(self) -> str:
        return f"{self.student_id}: {self.n_docs} memories"


# --- The student card (memory.card) ----------------------------------------------------------------------


class StudentCard(models.Model):
    """A short profile of one student that the tutor always sees, at the top of its prompt
    (memory.card_block): goals, accommodations, interests, level and preferred register.

    Written only through memory.card, which logs every change as a CardChange and keeps the
    rendered card within MEMORY_CARD_MAX_TOKENS (`token_count`, counted at write time). The
    list fields hold short one-line strings, without duplicates. `student_editable` names the
    fields the student may edit themself (never `accommodations`), set by a teacher.
    """

    class Field(models.TextChoices):
        GOALS = "goals", "Goals"
        ACCOMMODATIONS = "accommodations", "Accommodations"
        INTERESTS = "interests", "Interests"
        LEVEL = "level", "Level"
        REGISTER = "register", "Preferred register"

    LIST_FIELDS = (Field.GOALS, Field.ACCOMMODATIONS, Field.INTERESTS)
    TEXT_FIELDS = (Field.LEVEL, Field.REGISTER)
    # What a teacher may let the student edit.
    STUDENT_EDITABLE_CHOICES = (Field.GOALS, Field.INTERESTS, Field.LEVEL, Field.REGISTER)

    student = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="card")
    goals = models.JSONField(default=list, blank=True)
    accommodations = models.JSONField(default=list, blank=True)
    interests = models.JSONField(default=list, blank=True)
    level = models.CharField(max_length=120, blank=True, default="")
    register = models.CharField(max_length=120, blank=True, default="")
    student_editable = models.JSONField(default=list, blank=True)
    token_count = models.PositiveIntegerField(default=0)
    updated_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"Card of {self.student_id}"


class CardChange(models.Model):
    """One change to a student's card: made by a teacher, the student or staff (applied at once),
    or proposed by fact extraction (applied at high confidence, else pending; an accommodation
    always pending until a teacher accepts it). Append-only: a pending change is decided once
    (applied or rejected, by `decided_by` at `decided_at`), and no row is ever edited after.

    `op` is `add` or `remove` for a list field (and `student_editable`), `set` for level and
    register (`value` "" clears it). `memory` is the fact it was proposed from.
    """

    class Op(models.TextChoices):
        ADD = "add", "Add"
        REMOVE = "remove", "Remove"
        SET = "set", "Set"

    class Status(models.TextChoices):
        APPLIED = "applied", "Applied"
        PENDING = "pending", "Pending"
        REJECTED = "rejected", "Rejected"

    class Source(models.TextChoices):
        TEACHER = "teacher", "Teacher"
        STUDENT = "student", "Student"
        EXTRACTION = "extraction", "Extracted from a fact"
        STAFF = "staff", "Staff"

    FIELD_CHOICES = [*StudentCard.Field.choices, ("student_editable", "Editable by the student")]

    student = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="+")
    field = models.CharField(max_length=24, choices=FIELD_CHOICES)
    op = models.CharField(max_length=8, choices=Op.choices)
    value = models.CharField(max_length=120, blank=True, default="")
    status = models.CharField(max_length=16, choices=Status.choices)
    source = models.CharField(max_length=16, choices=Source.choices)
    actor = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    confidence = models.FloatField(null=True, blank=True)
    memory = models.ForeignKey(AIMemory, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    reason = models.CharField(max_length=300, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    decided_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(fields=["student", "-created_at", "-id"], name="card_change_student_recent"),
            models.Index(fields=["student", "status"], name="card_change_student_status"),
        ]
        constraints = [
            # The same proposal waits once: a redelivered extraction adds no second row.
            models.UniqueConstraint(
                fields=["student", "field", "op", "value"],
                condition=Q(status="pending"),
                name="card_change_one_pending_per_value",
            ),
            models.CheckConstraint(
                condition=Q(status="pending", decided_at__isnull=True)
                | (~Q(status="pending") & Q(decided_at__isnull=False)),
                name="card_change_decided_unless_pending",
            ),
            models.CheckConstraint(
                condition=Q(confidence__isnull=True) | (Q(confidence__gte=0) & Q(confidence__lte=1)),
                name="card_change_confidence_between_0_and_1",
            ),
            models.CheckConstraint(
                condition=Q(op="set", field__in=["level", "register"])
                | (Q(op__in=["add", "remove"]) & ~Q(field__in=["level", "register"])),
                name="card_change_op_fits_field",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.field} {self.op} {self.value!r} ({self.status})"
