from django.apps import AppConfig


class ConversationsConfig(AppConfig):
    name = "conversations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from conversations.blocks import HistoryBlock, ImagesBlock, SystemBlock
        from llm import prompt_blocks

        for block in (SystemBlock(), ImagesBlock(), HistoryBlock()):
            prompt_blocks.register(block)
        from core import background

        background.periodic("end-idle-conversations", "conversations.tasks.conversations_end_idle", 60)
        background.periodic("sweep-pending-summaries", "conversations.tasks.summaries_sweep", 60)
        background.periodic("sweep-pending-files", "conversations.tasks.files_sweep", 60)
