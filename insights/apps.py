from django.apps import AppConfig


class InsightsConfig(AppConfig):
    """Questions about a student or a class, answered from what the product knows, with citations."""

    name = "insights"
    default_auto_field = "django.db.models.BigAutoField"
