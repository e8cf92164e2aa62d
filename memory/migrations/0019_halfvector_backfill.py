"""Copy the vectors stored before 0018 into memory_halfvector, on a live database.

PostgreSQL only (the table stays empty on SQLite). Batches of BATCH vectors in memory_id order,
each in a transaction of its own, so that no lock is held for long: a batch locks its
memory_memoryembedding rows against deletion while it copies them (FOR KEY SHARE: a vector
deleted meanwhile is not copied back), and skips a row the trigger has written since 0018 (ON
CONFLICT DO NOTHING: that copy is the newer). Running it again copies nothing twice. It ends with
VACUUM (ANALYZE) of the new table, so that recall's scan reads it by an index-only scan at once.
docs/operations.md says what to expect on a large database.
"""

from typing import Any

from django.db import migrations, transaction

BATCH = 2000

COPY = """
WITH batch AS (
    SELECT memory_id, student_id, model, dim, vector FROM memory_memoryembedding
    WHERE memory_id > %s ORDER BY memory_id LIMIT %s FOR KEY SHARE
), copied AS (
    INSERT INTO memory_halfvector (memory_id, student_id, model, dim, vector)
    SELECT memory_id, student_id, model, dim, vector::halfvec FROM batch
    ON CONFLICT DO NOTHING
)
SELECT max(memory_id) FROM batch
"""


def backfill(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    last = 0
    while True:
        with transaction.atomic(using=connection.alias), connection.cursor() as cursor:
            cursor.execute(COPY, [last, BATCH])
            (last,) = cursor.fetchone()
        if last is None:
            break
    with connection.cursor() as cursor:
        cursor.execute("VACUUM (ANALYZE) memory_halfvector")


class Migration(migrations.Migration):
    atomic = False

    dependencies = [("memory", "0018_halfvector")]

    operations = [migrations.RunPython(backfill, migrations.RunPython.noop, elidable=True)]
