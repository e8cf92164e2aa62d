"""The full-text index of memories: an SQLite FTS5 table.

On PostgreSQL the index is a set of models (0013); the tsvector table this migration created
in earlier versions, and the postings tables of 0004, are replaced there, so nothing is made
here. Plain SQL only: migrations import no code of the app. A database that held memories
before this migration indexes them with `manage.py reindex`.
"""

from django.db import migrations

SQLITE_CREATE = (
    "CREATE VIRTUAL TABLE IF NOT EXISTS memory_fts USING fts5(scope, body, tokenize = 'unicode61 remove_diacritics 2')"
)


def create_index(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor not in ("sqlite", "postgresql"):
        raise RuntimeError(f"memory full-text search supports SQLite and PostgreSQL, not {connection.vendor}")
    if connection.vendor == "sqlite":
        with connection.cursor() as cursor:
            cursor.execute(SQLITE_CREATE)


def drop_index(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("DROP TABLE IF EXISTS memory_fts")


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0002_embeddings_relations"),
        ("accounts", "0001_initial"),
    ]

    operations = [migrations.RunPython(create_index, drop_index)]
