from django.db import migrations, models
from django.utils import timezone


def stamp_deactivated(apps, schema_editor):
    """People deactivated before the date was kept count from now (a retention policy's
    `inactive_days` starts then for them)."""
    User = apps.get_model("accounts", "User")
    User.objects.filter(is_active=False, deactivated_at__isnull=True).update(deactivated_at=timezone.now())


class Migration(migrations.Migration):
    dependencies = [
        ("accounts", "0008_user_memory_consent"),
    ]

    operations = [
        migrations.AddField(
            model_name="user",
            name="deactivated_at",
            field=models.DateTimeField(blank=True, help_text="When the person was deactivated.", null=True),
        ),
        migrations.RunPython(stamp_deactivated, migrations.RunPython.noop),
    ]
