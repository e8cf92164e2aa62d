from django.apps import AppConfig


class PrivacyConfig(AppConfig):
    """A student's export and legal erasure. It sits above every other app (it reads and deletes
    their rows); nothing imports it but the URLs and the settings."""

    name = "privacy"
    default_auto_field = "django.db.models.BigAutoField"
