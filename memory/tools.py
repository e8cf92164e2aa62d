"""The save_memory tool: the tutor keeps a note about the student for later conversations.

Registered by memory's AppConfig.ready(); offered on every window (small_window), to a student
with consent to memory only (it follows the memory block's presence). A note saved
is sent to the client as a `memory` event, live only: a replayed turn does not send it again (the
student may have deleted or changed the note since).
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field

from llm.tools import Tool, ToolArguments, ToolContext, ToolEvent, ToolEventType, ToolResult
from memory.models import AIMemory
from memory.serializers import MemoryOutput
from memory.services.notes import memory_note_save


class SaveMemoryArguments(ToolArguments):
    """save_memory's arguments; the note's rules (a title of 4 to 10 words, a content of at most
    200 words) are memory.validation's, checked by the service."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(description="4 to 10 words.")
    content: str = Field(description="The note, at most 200 words.")


def memory_event(memory: AIMemory) -> dict[str, Any]:
    """The data of the chat turn's `memory` event: the note the model just saved, without a
    query (a note just saved replaces no memory)."""
    memory._prefetched_objects_cache = {"supersedes": AIMemory.objects.none()}  # type: ignore[attr-defined]
    return dict(MemoryOutput(memory).data)


class SaveMemory(Tool):
    name = "save_memory"
    description = (
        "Keep a note about the student for future conversations, e.g. 'Struggles with "
        "fractions but strong in geometry'."
    )
    arguments = SaveMemoryArguments
    instruction = (
        "When you learn something about the student that will matter in later sessions (a "
        "difficulty, a strength, a goal, a preference), call the save_memory tool with a short "
        "title and a note. Do not save small talk."
    )
    small_window = True
    follows = "memories"  # memory.blocks.MemoryBlock: not offered without consent to memory
    failure = "memory not saved."
    event_types = (ToolEventType("memory", MemoryOutput(), "A note the tutor saved with save_memory."),)

    def run(self, context: ToolContext, arguments: SaveMemoryArguments) -> ToolResult:
        """Store the note (memory.services.notes.memory_note_save: its ValidationError reaches the
        model); the same note again in the conversation is stored once and sends no event."""
        memory, created = memory_note_save(
            student_id=context.student_id,
            conversation_id=context.conversation_id,
            title=arguments.title,
            content=arguments.content,
        )
        if not created:
            return ToolResult(f"Already saved as memory {memory.pk}.", value=memory)
        event = ToolEvent("memory", memory_event(memory), stored=False)
        return ToolResult(f"Saved memory {memory.pk}: {memory.title}", [event], value=memory)
