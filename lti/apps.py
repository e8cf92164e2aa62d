from django.apps import AppConfig


class LtiConfig(AppConfig):
    """LTI 1.3: the tutor as a tool that an LMS (Moodle, Canvas...) launches (docs/lti.md)."""

    name = "lti"
    verbose_name = "LTI"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import background, events
        from lti import grades

        # A graded quiz of a conversation launched from an LMS goes back to its course (AGS).
        # Recorded in the grading's transaction, sent after it commits.
        events.sinks.register(events.Sink("lti-grades", grades.event_receive, durable=True))
        background.periodic("lti-scores-sweep", "lti.tasks.scores_sweep", 300)
