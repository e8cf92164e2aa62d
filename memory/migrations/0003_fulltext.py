"""The full-text index of memories: SQLite FTS5 or a PostgreSQL tsvector table (memory.fts)."""

from django.db import migrations, transaction


def create_index(apps, schema_editor):
    from memory import fts

    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            for statement in fts.PG_CREATE:
                cursor.execute(statement)
            try:
                # btree_gin lets one GIN index serve "this student AND these words".
                with transaction.atomic(using=schema_editor.connection.alias):
                    cursor.execute("CREATE EXTENSION IF NOT EXISTS btree_gin")
                    cursor.execute(fts.PG_GIN_COMPOSITE)
            except Exception:
                cursor.execute(fts.PG_GIN_PLAIN)
        elif connection.vendor == "sqlite":
            cursor.execute(fts.SQLITE_CREATE)
        else:
            raise RuntimeError(f"memory full-text search supports SQLite and PostgreSQL, not {connection.vendor}")
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
        cursor.execute(fts.PG_DROP if schema_editor.connection.vendor == "postgresql" else fts.SQLITE_DROP)


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0002_embeddings_relations"),
        ("accounts", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_index, drop_index)]
