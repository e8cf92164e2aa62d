"""The LTI pages, under /lti/ (tutor/urls.py): what the platform's administrator registers
(the API's `tool` answer lists them)."""

from django.urls import path

from lti import views

app_name = "lti"

urlpatterns = [
    path("jwks/", views.jwks, name="jwks"),
    path("login/", views.login, name="login"),
    path("launch/", views.launch, name="launch"),
    # The same view: a platform may register a separate URL for deep linking requests.
    path("deep-link/", views.launch, name="deep-link"),
    path("deep-link/respond/", views.deep_link_respond, name="deep-link-respond"),
]
