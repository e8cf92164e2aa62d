from django.apps import AppConfig


class LtiConfig(AppConfig):
    """LTI 1.3: the tutor as a tool that an LMS (Moodle, Canvas...) launches (docs/lti.md)."""

    name = "lti"
    verbose_name = "LTI"
    default_auto_field = "django.db.models.BigAutoField"
