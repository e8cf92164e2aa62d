from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("conversations", "0007_file_reason_limits"),
    ]

    operations = [
        migrations.AddField(
            model_name="message",
            name="tool_events",
            field=models.JSONField(blank=True, default=list),
        ),
    ]
