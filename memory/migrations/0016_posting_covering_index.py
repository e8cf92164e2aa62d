"""The postings' primary key (student, term, memory) carries tf and doc_len (INCLUDE), so that
the lexical statements (memory.search.postings) read a term's postings by an index-only scan,
from the one index the table needs.

PostgreSQL only: Django cannot state INCLUDE on a primary key, so the model's state is
unchanged and the key is rebuilt in SQL. SQLite keeps no postings (its search is FTS5).
"""

from typing import Any

from django.db import migrations

COLUMNS = "(student_id, term, memory_id)"


def _rebuild_key(schema_editor: Any, include: str) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'memory_posting'::regclass AND contype = 'p'"
        )
        row = cursor.fetchone()
        drop = f'DROP CONSTRAINT "{row[0]}", ' if row else ""
        cursor.execute(
            f"ALTER TABLE memory_posting {drop}ADD CONSTRAINT memory_posting_pkey PRIMARY KEY {COLUMNS}{include}"
        )


def cover(apps: Any, schema_editor: Any) -> None:
    _rebuild_key(schema_editor, " INCLUDE (tf, doc_len)")


def uncover(apps: Any, schema_editor: Any) -> None:
    _rebuild_key(schema_editor, "")


class Migration(migrations.Migration):
    dependencies = [("memory", "0015_memory_confirmed_at")]

    operations = [migrations.RunPython(cover, uncover, elidable=False)]
