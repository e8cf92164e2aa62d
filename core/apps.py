from django.apps import AppConfig


class CoreConfig(AppConfig):
    """What every app shares: errors, API helpers, database steps, auth, schema, throttles, cache."""

    name = "core"

    def ready(self) -> None:
        from core.checks import deploy_checks_install

        deploy_checks_install()
