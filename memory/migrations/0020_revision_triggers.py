"""The student's memory revision follows every write on PostgreSQL, whoever makes it.

The services take the student's next revision and stamp what they write with it
(memory.services.writing.student_revision_next); the vector cache of each process follows it
(memory.search.vector_cache). A write that does not (a data fix in SQL, a script) is stamped by
these triggers in its own transaction:
- a memory inserted, or whose status, student or date changes, and a vector inserted or
  changed, without the student's current revision taken for it: the next revision, stamped on
  the row (a service's write carries the revision it took, the counter's value in its
  transaction, so the triggers leave it alone);
- a vector deleted outside such a write: its memory is stamped, so that a cache reads it again
  and finds it without a vector;
- a memory deleted: the counter row goes, so that every cache loads the student again
  (StudentMemoryRevision).

PostgreSQL only; on SQLite the embedded default's single process writes through the services.
Creating the triggers takes a lock on both tables that waits for the writes in progress and holds
new ones for a moment; reads go on.
"""

from collections.abc import Callable
from typing import Any

from django.db import migrations

TRIGGERS = """
CREATE FUNCTION memory_revision_take(student bigint) RETURNS bigint LANGUAGE sql AS $$
    INSERT INTO memory_studentmemoryrevision (student_id, revision) VALUES (student, 1)
    ON CONFLICT (student_id) DO UPDATE SET revision = memory_studentmemoryrevision.revision + 1
    RETURNING revision
$$;

CREATE FUNCTION memory_revision_stamp() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    taken bigint;
BEGIN
    SELECT revision INTO taken FROM memory_studentmemoryrevision WHERE student_id = NEW.student_id;
    IF taken IS NULL OR NEW.revision IS DISTINCT FROM taken
       OR (TG_OP = 'UPDATE' AND NEW.revision = OLD.revision) THEN
        NEW.revision := memory_revision_take(NEW.student_id);
    END IF;
    RETURN NEW;
END
$$;

CREATE FUNCTION memory_revision_vector_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE memory_aimemory SET revision = memory_revision_take(OLD.student_id)
    WHERE id = OLD.memory_id AND revision IS DISTINCT FROM (
        SELECT revision FROM memory_studentmemoryrevision WHERE student_id = OLD.student_id);
    RETURN NULL;
END
$$;

CREATE FUNCTION memory_revision_memory_gone() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM memory_studentmemoryrevision WHERE student_id = OLD.student_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER memory_revision_memory
    BEFORE INSERT OR UPDATE OF status, student_id, created_at ON memory_aimemory
    FOR EACH ROW EXECUTE FUNCTION memory_revision_stamp();
CREATE TRIGGER memory_revision_vector
    BEFORE INSERT OR UPDATE OF memory_id, student_id, model, dim, vector, sentence_vectors ON memory_memoryembedding
    FOR EACH ROW EXECUTE FUNCTION memory_revision_stamp();
CREATE TRIGGER memory_revision_vector_gone
    AFTER DELETE ON memory_memoryembedding
    FOR EACH ROW EXECUTE FUNCTION memory_revision_vector_gone();
CREATE TRIGGER memory_revision_memory_gone
    AFTER DELETE ON memory_aimemory
    FOR EACH ROW EXECUTE FUNCTION memory_revision_memory_gone();
"""

DROP = """
DROP TRIGGER IF EXISTS memory_revision_memory ON memory_aimemory;
DROP TRIGGER IF EXISTS memory_revision_vector ON memory_memoryembedding;
DROP TRIGGER IF EXISTS memory_revision_vector_gone ON memory_memoryembedding;
DROP TRIGGER IF EXISTS memory_revision_memory_gone ON memory_aimemory;
DROP FUNCTION IF EXISTS memory_revision_stamp();
DROP FUNCTION IF EXISTS memory_revision_vector_gone();
DROP FUNCTION IF EXISTS memory_revision_memory_gone();
DROP FUNCTION IF EXISTS memory_revision_take(bigint);
"""


def on_postgresql(sql: str) -> Callable[[Any, Any], None]:
    """A migration step that runs `sql` on PostgreSQL and nothing elsewhere."""

    def run(apps: Any, schema_editor: Any) -> None:
        if schema_editor.connection.vendor == "postgresql":
            schema_editor.execute(sql)

    return run


class Migration(migrations.Migration):
    dependencies = [("memory", "0019_halfvector_backfill")]

    operations = [migrations.RunPython(on_postgresql(TRIGGERS), on_postgresql(DROP), elidable=False)]
