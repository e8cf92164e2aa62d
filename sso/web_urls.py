"""The browser's sign-in with a school's provider, under /auth/oidc/ (tutor/urls.py)."""

from django.urls import path

from sso import views

app_name = "sso"

urlpatterns = [
    path("<id:provider_id>/login/", views.oidc_login, name="login"),
    path("callback/", views.oidc_callback, name="callback"),
]
