from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _prune_search_index(sender: AppConfig, **kwargs: Any) -> None:
    from memory import fts

    # After a flush (tests) or a migration: the full-text tables are not Django models, so
    # nothing else removes entries whose memory is gone. (A no-op before they exist.)
    fts.prune_orphans()


class MemoryConfig(AppConfig):
    name = "memory"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        post_migrate.connect(_prune_search_index, sender=self)
