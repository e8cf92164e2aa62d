from django.apps import AppConfig


class WebConfig(AppConfig):
    """The web app under /app/: two pages, a student's and a teacher's, over the API."""

    name = "web"
