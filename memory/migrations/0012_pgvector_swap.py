"""Vectors in pgvector columns (3 of 3): the copies take the place of the byte columns.

Fails, changing nothing, if a row was not copied (its new column is still NULL).
"""

from django.db import migrations

import memory.fields


class Migration(migrations.Migration):

    dependencies = [
        ("memory", "0011_pgvector_copy"),
    ]

    operations = [
        migrations.RemoveField(model_name="memoryembedding", name="vector"),
        migrations.RemoveField(model_name="memoryembedding", name="sentence_vectors"),
        migrations.RenameField(model_name="memoryembedding", old_name="vector_new", new_name="vector"),
        migrations.RenameField(
            model_name="memoryembedding", old_name="sentence_vectors_new", new_name="sentence_vectors"
        ),
        migrations.AlterField(
            model_name="memoryembedding", name="vector", field=memory.fields.VectorField()
        ),
        migrations.AlterField(
            model_name="memoryembedding", name="sentence_vectors", field=memory.fields.VectorListField()
        ),
    ]
