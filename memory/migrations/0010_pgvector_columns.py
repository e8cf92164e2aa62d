"""Vectors in pgvector columns on PostgreSQL (1 of 3): the extension, and the new columns.

On PostgreSQL this needs the pgvector extension. The migration checks for it first and stops
with a clear error, before changing anything, when the server does not have it or the
database user may not create it; run `CREATE EXTENSION vector` as a superuser, then `migrate`
again. On SQLite the new columns hold float32 bytes (memory.fields).
"""

from django.db import DatabaseError, migrations, transaction

import memory.fields

MISSING = (
    "This PostgreSQL server has no pgvector extension, which memory vectors need. Install it "
    "(Debian/Ubuntu: the postgresql-<version>-pgvector package; managed PostgreSQL offers it "
    "built in), run CREATE EXTENSION vector; in this database, then run migrate again. "
    "Nothing of this migration was applied."
)
NOT_ALLOWED = (
    "pgvector is installed on this PostgreSQL server but this database user may not create the "
    "extension: as a superuser, run CREATE EXTENSION vector; in this database, then run migrate "
    "again. Nothing of this migration was applied. ({error})"
)


class PgvectorMissing(RuntimeError):
    pass


def require_pgvector(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_extension WHERE extname = 'vector'")
        if cursor.fetchone():
            return
        cursor.execute("SELECT 1 FROM pg_available_extensions WHERE name = 'vector'")
        if not cursor.fetchone():
            raise PgvectorMissing(MISSING)
        try:
            with transaction.atomic(using=connection.alias):
                cursor.execute("CREATE EXTENSION IF NOT EXISTS vector")
        except DatabaseError as exc:
            raise PgvectorMissing(NOT_ALLOWED.format(error=str(exc).strip())) from exc


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0009_record_memories"),
    ]

    operations = [
        migrations.RunPython(require_pgvector, migrations.RunPython.noop),
        migrations.AddField(
            model_name="memoryembedding",
            name="vector_new",
            field=memory.fields.VectorField(null=True),
        ),
        migrations.AddField(
            model_name="memoryembedding",
            name="sentence_vectors_new",
            field=memory.fields.VectorListField(null=True),
        ),
    ]
