"""A narrow copy of the whole-text vectors in half precision, for recall's scan (memory.models.HalfVector).

On PostgreSQL: the table, its primary key INCLUDing the vector (Django cannot state INCLUDE, so
the key is rebuilt in SQL, on the empty table), no statistics on `student_id` (so that the
planner reads one student's rows from that index whatever share of the table they hold, as it
does when many students share it), and the trigger that keeps the copy: every insert, update of
a vector and delete on memory_memoryembedding changes its row in the same transaction. Creating
the trigger takes a lock on memory_memoryembedding that waits for the writes in progress and
holds new ones for a moment; reads go on. The rows that exist already are copied by 0019, in
batches. It needs pgvector 0.7 or later (the `halfvec` type); the migration checks first.

SQLite: the table only, which stays empty (its search reads the vectors from its own cache).
"""

from typing import Any

from django.conf import settings
from django.db import migrations, models

import memory.fields

TOO_OLD = (
    "This database's pgvector has no halfvec type, which recall's vector copy needs: update the "
    "extension to 0.7 or later (install the newer package, then ALTER EXTENSION vector UPDATE; in this "
    "database), then run migrate again. Nothing of this migration was applied."
)

SYNC = """
CREATE FUNCTION memory_halfvector_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' OR (TG_OP = 'UPDATE' AND OLD.memory_id <> NEW.memory_id) THEN
        DELETE FROM memory_halfvector WHERE memory_id = OLD.memory_id;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO memory_halfvector (memory_id, student_id, model, dim, vector)
        VALUES (NEW.memory_id, NEW.student_id, NEW.model, NEW.dim, NEW.vector::halfvec)
        ON CONFLICT (memory_id) DO UPDATE SET student_id = EXCLUDED.student_id, model = EXCLUDED.model,
            dim = EXCLUDED.dim, vector = EXCLUDED.vector;
    END IF;
    RETURN NULL;
END
$$;
CREATE TRIGGER memory_halfvector_sync
    AFTER INSERT OR DELETE OR UPDATE OF memory_id, student_id, model, dim, vector ON memory_memoryembedding
    FOR EACH ROW EXECUTE FUNCTION memory_halfvector_sync();
"""

UNSYNC = """
DROP TRIGGER IF EXISTS memory_halfvector_sync ON memory_memoryembedding;
DROP FUNCTION IF EXISTS memory_halfvector_sync();
"""


class HalfvecMissing(RuntimeError):
    pass


def require_halfvec(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute("SELECT to_regtype('halfvec') IS NOT NULL")
        if not cursor.fetchone()[0]:
            raise HalfvecMissing(TOO_OLD)


def prepare(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor != "postgresql":
        return
    with schema_editor.connection.cursor() as cursor:
        cursor.execute(
            "SELECT conname FROM pg_constraint WHERE conrelid = 'memory_halfvector'::regclass AND contype = 'p'"
        )
        (key,) = cursor.fetchone()
        cursor.execute(
            f'ALTER TABLE memory_halfvector DROP CONSTRAINT "{key}", ADD CONSTRAINT memory_halfvector_pkey'
            " PRIMARY KEY (student_id, model, dim, memory_id) INCLUDE (vector)"
        )
        cursor.execute("ALTER TABLE memory_halfvector ALTER COLUMN student_id SET STATISTICS 0")
        cursor.execute(SYNC)


def unprepare(apps: Any, schema_editor: Any) -> None:
    if schema_editor.connection.vendor == "postgresql":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute(UNSYNC)


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0017_student_card"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(require_halfvec, migrations.RunPython.noop, elidable=False),
        migrations.CreateModel(
            name="HalfVector",
            fields=[
                (
                    "pk",
                    models.CompositePrimaryKey(
                        "student_id", "model", "dim", "memory_id", blank=True, editable=False, primary_key=True,
                        serialize=False,
                    ),
                ),  # fmt: skip
                ("model", models.CharField(max_length=200)),
                ("dim", models.PositiveIntegerField()),
                ("vector", memory.fields.HalfVectorField()),
                (
                    "memory",
                    models.OneToOneField(
                        on_delete=models.deletion.CASCADE, related_name="+", to="memory.aimemory"
                    ),
                ),
                (
                    "student",
                    models.ForeignKey(
                        db_index=False, on_delete=models.deletion.CASCADE, related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),  # fmt: skip
            ],
            options={"db_table": "memory_halfvector"},
        ),
        migrations.RunPython(prepare, unprepare, elidable=False),
    ]
