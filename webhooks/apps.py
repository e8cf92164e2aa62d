from django.apps import AppConfig


class WebhooksConfig(AppConfig):
    name = "webhooks"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core import background, events
        from webhooks import delivery

        # The product's events reach the schools' subscribers (core.events' sink): recorded in
        # the emitting transaction, sent after it commits.
        events.sinks.register(events.Sink("webhooks", delivery.event_receive, durable=True))
        background.periodic("webhooks-deliveries-sweep", "webhooks.tasks.deliveries_sweep", 300)
