"""What the safety app plugs into the others, once, from SafetyConfig.ready()."""

from __future__ import annotations


def register_all() -> None:
    from conversations import screening
    from core import background
    from safety.guard import SafetyGuard

    screening.register(SafetyGuard())
    from safety import files

    files.connect()
    background.periodic("safety-escalations", "safety.tasks.escalations_due", 60)
    background.periodic("safety-deliveries-sweep", "safety.tasks.deliveries_sweep", 300)
    background.periodic("safety-messages-sweep", "safety.tasks.messages_sweep", 60)
