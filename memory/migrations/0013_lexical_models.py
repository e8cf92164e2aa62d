"""The PostgreSQL lexical index as models whose rows cascade from their memory and student.

The tables keep their names. Their rows move to the new tables, only those of active memories
that still exist; the statistics are computed again from them; the old tables go. On SQLite,
where FTS5 holds the index, a trigger removes a deleted memory's entry. Plain SQL only: this
migration imports no code of the app, so it applies the same whatever memory.search.fts becomes.
"""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


LEGACY = ("memory_doc", "memory_posting", "memory_term_stats", "memory_student_stats")

SQLITE_TRIGGER = (
    "CREATE TRIGGER IF NOT EXISTS memory_fts_on_delete AFTER DELETE ON memory_aimemory "
    "BEGIN DELETE FROM memory_fts WHERE rowid = old.id; END"
)


def set_legacy_aside(apps, schema_editor):
    connection = schema_editor.connection
    with connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute(SQLITE_TRIGGER)
            return
        if connection.vendor != "postgresql":
            return
        tables = set(connection.introspection.table_names(cursor))
        for table in LEGACY:
            if table in tables:
                cursor.execute(f'ALTER TABLE "{table}" RENAME TO "{table}_legacy"')
                cursor.execute(f'ALTER TABLE "{table}_legacy" RENAME CONSTRAINT "{table}_pkey" TO "{table}_legacy_pkey"')


def move_rows(apps, schema_editor):
    connection = schema_editor.connection
    if connection.vendor != "postgresql":
        return
    with connection.cursor() as cursor:
        tables = set(connection.introspection.table_names(cursor))
        if "memory_doc_legacy" in tables:
            cursor.execute(
                "INSERT INTO memory_doc (memory_id, student_id, doc_len) "
                "SELECT d.memory_id, m.student_id, d.doc_len FROM memory_doc_legacy d "
                "JOIN memory_aimemory m ON m.id = d.memory_id AND m.status = 'active'"
            )
        if "memory_posting_legacy" in tables:
            cursor.execute(
                "INSERT INTO memory_posting (student_id, term, memory_id, tf, doc_len) "
                "SELECT d.student_id, left(p.term, 100), p.memory_id, p.tf, p.doc_len FROM memory_posting_legacy p "
                "JOIN memory_doc d ON d.memory_id = p.memory_id ON CONFLICT DO NOTHING"
            )
        cursor.execute(
            "INSERT INTO memory_term_stats (student_id, term, df) "
            "SELECT student_id, term, count(*) FROM memory_posting GROUP BY student_id, term"
        )
        cursor.execute(
            "INSERT INTO memory_student_stats (student_id, n_docs, total_len) "
            "SELECT student_id, count(*), sum(doc_len) FROM memory_doc GROUP BY student_id"
        )
        for table in LEGACY:
            cursor.execute(f'DROP TABLE IF EXISTS "{table}_legacy"')


def drop_trigger(apps, schema_editor):
    if schema_editor.connection.vendor == "sqlite":
        with schema_editor.connection.cursor() as cursor:
            cursor.execute("DROP TRIGGER IF EXISTS memory_fts_on_delete")


class Migration(migrations.Migration):

    dependencies = [
        ('accounts', '0004_classroom_budgets'),
        ('memory', '0012_pgvector_swap'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.RunPython(set_legacy_aside, drop_trigger),
        migrations.CreateModel(
            name='StudentStatistic',
            fields=[
                ('student', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to=settings.AUTH_USER_MODEL)),
                ('n_docs', models.IntegerField()),
                ('total_len', models.BigIntegerField()),
            ],
            options={
                'db_table': 'memory_student_stats',
            },
        ),
        migrations.CreateModel(
            name='IndexedMemory',
            fields=[
                ('memory', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, primary_key=True, related_name='+', serialize=False, to='memory.aimemory')),
                ('doc_len', models.IntegerField()),
                ('student', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'db_table': 'memory_doc',
            },
        ),
        migrations.CreateModel(
            name='Posting',
            fields=[
                ('pk', models.CompositePrimaryKey('student_id', 'term', 'memory_id', blank=True, editable=False, primary_key=True, serialize=False)),
                ('term', models.CharField(max_length=100)),
                ('tf', models.IntegerField()),
                ('doc_len', models.IntegerField()),
                ('memory', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memory.aimemory')),
                ('student', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'db_table': 'memory_posting',
            },
        ),
        migrations.CreateModel(
            name='TermStatistic',
            fields=[
                ('pk', models.CompositePrimaryKey('student_id', 'term', blank=True, editable=False, primary_key=True, serialize=False)),
                ('term', models.CharField(max_length=100)),
                ('df', models.IntegerField()),
                ('student', models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to=settings.AUTH_USER_MODEL)),
            ],
            options={
                'db_table': 'memory_term_stats',
            },
        ),
        migrations.RunPython(move_rows, migrations.RunPython.noop),
    ]
