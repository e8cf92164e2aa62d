from django.apps import AppConfig


class LearningConfig(AppConfig):
    name = "learning"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from learning.tools import LEARNING
        from llm.tools import register

        for tool in LEARNING:
            register(tool)
        from learning.blocks import LearningRecordBlock
        from llm import prompt_blocks

        prompt_blocks.register(LearningRecordBlock())
        from core import background

        background.periodic("sweep-pending-grading", "learning.tasks.grading_sweep", 300)
