from typing import Any

from django.db import migrations, models
from django.db.models import F


def confirm_what_is_not_a_single_extraction(apps: Any, schema_editor: Any) -> None:
    """Facts and approaches that were not extracted from one memory (merges of several, imports)
    were confirmed when written. Extracted ones stay unconfirmed: nothing checked that a second
    source agrees, so they wait for one (or a teacher) like a new extraction."""
    AIMemory = apps.get_model("memory", "AIMemory")
    AIMemory.objects.filter(kind__in=["fact", "approach"]).exclude(source="extraction").update(
        confirmed_at=F("created_at")
    )


class Migration(migrations.Migration):
    dependencies = [
        ("memory", "0014_lifecycle"),
    ]

    operations = [
        # Nullable without a default: SQLite adds the column in place (no table rebuild, so the
        # FTS5 trigger of 0013 stays).
        migrations.AddField(
            model_name="aimemory",
            name="confirmed_at",
            field=models.DateTimeField(
                blank=True,
                help_text="When a second source or a teacher confirmed this fact or approach.",
                null=True,
            ),
        ),
        migrations.RunPython(confirm_what_is_not_a_single_extraction, migrations.RunPython.noop),
    ]
