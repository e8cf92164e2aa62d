"""The webhooks API, under /api/v1/webhooks/ (tutor/urls.py)."""

from django.urls import path

from webhooks import apis

urlpatterns = [
    path("", apis.WebhookListCreateApi.as_view(), name="webhook-list"),
    path("<id:webhook_id>/", apis.WebhookDetailApi.as_view(), name="webhook-detail"),
    path("<id:webhook_id>/deliveries/", apis.WebhookDeliveriesApi.as_view(), name="webhook-deliveries"),
]
