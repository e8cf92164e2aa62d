"""The flags API, under /api/v1/safety/ (tutor/urls.py)."""

from django.urls import path

from safety import apis

urlpatterns = [
    path("flags/", apis.FlagListApi.as_view(), name="flag-list"),
    path("flags/<id:flag_id>/", apis.FlagDetailApi.as_view(), name="flag-detail"),
    path("flags/<id:flag_id>/acknowledge/", apis.FlagAcknowledgeApi.as_view(), name="flag-acknowledge"),
    path("flags/<id:flag_id>/resolve/", apis.FlagResolveApi.as_view(), name="flag-resolve"),
]
