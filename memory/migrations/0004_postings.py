"""Drops the tsvector table of earlier versions on PostgreSQL; puts memory_id in the
embeddings' index (an INCLUDE column: PostgreSQL only, ignored by SQLite).

The postings tables this migration created in earlier versions are models now (0013), which
takes over the rows of a database that has them. Plain SQL only: no code of the app.
"""

from django.db import migrations, models


def drop_tsvector_table(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS memory_search")


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0003_fulltext"),
    ]

    operations = [
        migrations.RunPython(drop_tsvector_table, migrations.RunPython.noop),
        # The vector cache's version check counts memory_id: with it in the index the check is
        # an index-only scan (10,000 memories: 1.3 ms instead of 8-10 ms reading the heap).
        migrations.RemoveIndex(model_name="memoryembedding", name="embedding_student_model"),
        migrations.AddIndex(
            model_name="memoryembedding",
            index=models.Index(
                fields=["student", "model", "updated_at"], include=("memory",), name="embedding_student_model"
            ),
        ),
    ]
