from django.apps import AppConfig

# Once a day: beat runs it every 24 hours from its start (docs/privacy.md#retention).
RETENTION_INTERVAL_SECONDS = 24 * 3600


class RetentionConfig(AppConfig):
    name = "retention"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import background

        background.periodic("retention-apply", "retention.tasks.retention_apply", RETENTION_INTERVAL_SECONDS)
