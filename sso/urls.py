"""The identity providers' API, under /api/v1/identity-providers/ (tutor/urls.py)."""

from django.urls import path

from sso import apis

urlpatterns = [
    path("", apis.ProviderListCreateApi.as_view(), name="identity-provider-list"),
    path("<id:provider_id>/", apis.ProviderDetailApi.as_view(), name="identity-provider-detail"),
]
