from django.apps import AppConfig


class AuditConfig(AppConfig):
    """The access log: who read a student's records (audit.services writes it, docs/privacy.md).
    It sits below accounts, so that every app (the admin of accounts included) can record."""

    name = "audit"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import background

        background.periodic("purge-access-log", "audit.tasks.access_log_purge_due", 24 * 3600)
