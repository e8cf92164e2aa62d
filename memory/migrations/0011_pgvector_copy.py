"""Vectors in pgvector columns (2 of 3): copy every stored vector from its bytes.

Resumable: batches of BATCH rows, each in its own transaction, pick the rows not copied yet, so
an interrupted `migrate` goes on where it stopped when run again. The bytes are little-endian
float32, `dim` values per vector.
"""

import numpy as np
from django.db import migrations, transaction

BATCH = 500


def copy_vectors(apps, schema_editor):
    MemoryEmbedding = apps.get_model("memory", "MemoryEmbedding")
    alias = schema_editor.connection.alias
    rows = MemoryEmbedding.objects.using(alias).filter(vector_new__isnull=True).order_by("pk")
    while True:
        with transaction.atomic(using=alias):
            batch = list(rows.only("pk", "dim", "vector", "sentence_vectors")[:BATCH])
            if not batch:
                return
            for row in batch:
                row.vector_new = np.frombuffer(bytes(row.vector), dtype="<f4")
                sentences = np.frombuffer(bytes(row.sentence_vectors), dtype="<f4")
                row.sentence_vectors_new = sentences.reshape(-1, row.dim) if sentences.size else sentences
            MemoryEmbedding.objects.using(alias).bulk_update(batch, ["vector_new", "sentence_vectors_new"])


class Migration(migrations.Migration):
    atomic = False

    dependencies = [
        ("memory", "0010_pgvector_columns"),
    ]

    operations = [
        migrations.RunPython(copy_vectors, migrations.RunPython.noop, elidable=True),
    ]
