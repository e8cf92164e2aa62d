"""The full-text index of memories: SQLite FTS5 or a PostgreSQL tsvector table.

The PostgreSQL tsvector table created here was replaced by postings tables in 0004; its SQL
is frozen in this migration (memory.fts no longer knows it) so that the chain still applies.
"""

from django.db import migrations, transaction

LEGACY_PG_CREATE = [
    # No foreign key: Django's flush (tests) truncates memory_aimemory without CASCADE.
    "CREATE TABLE IF NOT EXISTS memory_search ("
    " memory_id bigint PRIMARY KEY,"
    " student_id bigint NOT NULL,"
    " tsv tsvector NOT NULL,"
    " doc_len integer NOT NULL)",
    "CREATE INDEX IF NOT EXISTS memory_search_student_len ON memory_search (student_id, doc_len)",
]
LEGACY_PG_GIN_COMPOSITE = "CREATE INDEX IF NOT EXISTS memory_search_gin ON memory_search USING gin (student_id, tsv)"
LEGACY_PG_GIN_PLAIN = "CREATE INDEX IF NOT EXISTS memory_search_gin ON memory_search USING gin (tsv)"
LEGACY_PG_INSERT = (
    "INSERT INTO memory_search (memory_id, student_id, tsv, doc_len) "
    "VALUES (%s, %s, to_tsvector('simple', %s), %s) ON CONFLICT (memory_id) DO NOTHING"
)
LEGACY_PG_DROP = "DROP TABLE IF EXISTS memory_search"


def legacy_pg_create(apps, schema_editor):
    """The tsvector table, filled from the active memories (also 0004's reverse)."""
    from memory import fts

    connection = schema_editor.connection
    with connection.cursor() as cursor:
        for statement in LEGACY_PG_CREATE:
            cursor.execute(statement)
        try:
            # btree_gin lets one GIN index serve "this student AND these words".
            with transaction.atomic(using=connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
                cursor.execute(LEGACY_PG_GIN_COMPOSITE)
        except Exception:
            cursor.execute(LEGACY_PG_GIN_PLAIN)
        AIMemory = apps.get_model("memory", "AIMemory")
        rows = []
        for m in AIMemory.objects.filter(status="active").select_related("student").iterator():
            terms = fts.analyse(fts.memory_text(m.title, m.content), m.student.language)
            rows.append((m.pk, m.student_id, " ".join(terms), len(terms)))
        for start in range(0, len(rows), 1000):
            cursor.executemany(LEGACY_PG_INSERT, rows[start:start + 1000])


def create_index(apps, schema_editor):
    from memory import fts

    connection = schema_editor.connection
    if connection.vendor == "postgresql":
        legacy_pg_create(apps, schema_editor)
        return
    if connection.vendor != "sqlite":
        raise RuntimeError(f"memory full-text search supports SQLite and PostgreSQL, not {connection.vendor}")
    with connection.cursor() as cursor:
        cursor.execute(fts.SQLITE_CREATE)
    AIMemory = apps.get_model("memory", "AIMemory")
    rows = [
        fts.IndexRow(memory_id=m.pk, student_id=m.student_id, text=fts.memory_text(m.title, m.content),
                     language=m.student.language)
        for m in AIMemory.objects.filter(status="active").select_related("student").iterator()
    ]
    for start in range(0, len(rows), 1000):
        fts.memory_index(rows[start:start + 1000])


def drop_index(apps, schema_editor):
    from memory import fts

    with schema_editor.connection.cursor() as cursor:
        cursor.execute(LEGACY_PG_DROP if schema_editor.connection.vendor == "postgresql" else fts.SQLITE_DROP)


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0002_embeddings_relations"),
        ("accounts", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_index, drop_index)]
