from celery import shared_task

from conversations import services


@shared_task(acks_late=True)
def conversations_end_idle() -> int:
    """End conversations idle for CONVERSATION_IDLE_MINUTES. Safe twice: ending is idempotent."""
    return services.conversations_end_idle()
