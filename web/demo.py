"""The demo students' history (`seed_demo`): a past conversation with its summary, a fact drawn
from it, a teacher's note, a quiz to answer and a task, so that a first run shows memory at work
before anyone has chatted. Written through each app's services, as the product writes them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from accounts.models import User
from conversations.models import Conversation, Message
from learning.services import quiz_create_from_tool, task_create
from llm.demo_model import DEMO_MODEL_ID
from llm.tokens import count_tokens
from memory.models import AIMemory
from memory.services.notes import teacher_note_create
from memory.services.records import memory_derived_store, memory_summary_store


@dataclass(frozen=True)
class History:
    """One student's past, in their language."""

    subject: str
    messages: tuple[str, ...]  # student, tutor, student, tutor
    summary: tuple[str, str]
    fact: tuple[str, str]
    note: tuple[str, str]
    quiz: dict[str, object]
    task: tuple[str, str]


ENGLISH = History(
    subject="Adding fractions",
    messages=(
        "How do I add 1/2 and 1/3?",
        "Find a common denominator first: 6 works for both. 1/2 is 3/6 and 1/3 is 2/6, so the sum is 5/6.",
        "So 1/4 + 1/2 is 3/4?",
        "Yes: 1/2 is 2/4, and 1/4 + 2/4 = 3/4. You found the common denominator yourself.",
    ),
    summary=(
        "Adding fractions with unlike denominators",
        "The student learned to add fractions by finding a common denominator first. "
        "They solved 1/4 + 1/2 on their own and should practise with denominators like 3 and 5 next.",
    ),
    fact=(
        "Needs a common denominator reminder",
        "The student adds fractions correctly once reminded to find a common denominator first.",
    ),
    note=(
        "Prefers worked examples before exercises",
        "In class the student understands faster with one worked example before trying exercises.",
    ),
    quiz={
        "topic": "Adding fractions",
        "skill": "adding fractions",
        "questions": [
            {
                "kind": "multiple_choice",
                "prompt": "What is 1/3 + 1/6?",
                "choices": ["1/2", "2/9", "1/9"],
                "answer": "1/2",
                "explanation": "1/3 is 2/6, and 2/6 + 1/6 = 3/6 = 1/2.",
            },
            {
                "kind": "numeric",
                "prompt": "What is 1/4 + 1/4, as a decimal number?",
                "answer": 0.5,
                "explanation": "1/4 + 1/4 = 2/4 = 1/2 = 0.5.",
            },
        ],
    },
    task=("Fractions worksheet, exercises 1 to 5", "Add the fractions, finding a common denominator first."),
)

FRENCH = History(
    subject="Additionner des fractions",
    messages=(
        "Comment additionner 1/2 et 1/3 ?",
        "Cherche d'abord un dénominateur commun : 6 convient aux deux. 1/2 fait 3/6 et 1/3 fait 2/6, donc la somme "
        "fait 5/6.",
        "Donc 1/4 + 1/2 fait 3/4 ?",
        "Oui : 1/2 fait 2/4, et 1/4 + 2/4 = 3/4. Tu as trouvé le dénominateur commun tout seul.",
    ),
    summary=(
        "Additionner des fractions de dénominateurs différents",
        "L'élève a appris à additionner des fractions en cherchant d'abord un dénominateur commun. "
        "Il a résolu 1/4 + 1/2 seul et devrait s'entraîner ensuite avec des dénominateurs comme 3 et 5.",
    ),
    fact=(
        "A besoin du rappel du dénominateur commun",
        "L'élève additionne correctement les fractions quand on lui rappelle de chercher un dénominateur commun.",
    ),
    note=(
        "Préfère un exemple corrigé avant les exercices",
        "En classe, l'élève comprend plus vite avec un exemple corrigé avant de se lancer dans les exercices.",
    ),
    quiz={
        "topic": "Additionner des fractions",
        "skill": "additionner des fractions",
        "questions": [
            {
                "kind": "multiple_choice",
                "prompt": "Combien font 1/3 + 1/6 ?",
                "choices": ["1/2", "2/9", "1/9"],
                "answer": "1/2",
                "explanation": "1/3 fait 2/6, et 2/6 + 1/6 = 3/6 = 1/2.",
            },
            {
                "kind": "numeric",
                "prompt": "Combien font 1/4 + 1/4, en nombre décimal ?",
                "answer": 0.5,
                "explanation": "1/4 + 1/4 = 2/4 = 1/2 = 0,5.",
            },
        ],
    },
    task=(
        "Fiche de fractions, exercices 1 à 5",
        "Additionne les fractions en cherchant d'abord un dénominateur commun.",
    ),
)


def demo_history_seed(*, student: User, teacher: User) -> bool:
    """Give a demo student their past (see the module docstring), unless they have a conversation
    already: a second run, or a student who has chatted, is left as it is. Returns whether it
    wrote. One transaction; the memories' background work (embedding, extraction) is enqueued
    once it commits, as for any memory."""
    history = FRENCH if student.language == User.Language.FRENCH else ENGLISH
    with transaction.atomic():
        User.objects.select_for_update().get(pk=student.pk)
        if Conversation.objects.filter(student=student).exists():
            return False
        ended = timezone.now() - timedelta(days=1)
        conversation = Conversation.objects.create(
            student=student,
            subject=history.subject,
            status=Conversation.Status.ENDED,
            last_activity_at=ended,
            ended_at=ended,
            summary_status=Conversation.SummaryStatus.DONE,
            summary_requested_at=ended,
            message_count=len(history.messages),
        )
        stored: list[Message] = []
        for seq, content in enumerate(history.messages, 1):
            tutor = seq % 2 == 0
            stored.append(
                Message.objects.create(
                    conversation=conversation,
                    seq=seq,
                    role=Message.Role.TUTOR if tutor else Message.Role.STUDENT,
                    content=content,
                    client_message_id=None if tutor else f"demo-{seq}",
                    reply_to=stored[-1] if tutor else None,
                    token_count=count_tokens(content),
                    model=DEMO_MODEL_ID if tutor else "",
                )
            )
        Conversation.objects.filter(pk=conversation.pk).update(
            created_at=ended - timedelta(minutes=10), history_tokens=sum(m.token_count for m in stored)
        )
        summary, _ = memory_summary_store(
            student_id=student.pk, conversation_id=conversation.pk, title=history.summary[0], content=history.summary[1]
        )
        memory_derived_store(
            student_id=student.pk,
            kind=AIMemory.Kind.FACT,
            source=AIMemory.Source.EXTRACTION,
            source_ref=f"demo:{conversation.pk}:fact",
            title=history.fact[0],
            content=history.fact[1],
            evidence=[summary.pk],
            confidence=0.9,
            model=DEMO_MODEL_ID,
        )
        teacher_note_create(teacher=teacher, student_id=student.pk, title=history.note[0], content=history.note[1])
        quiz_create_from_tool(
            student_id=student.pk, conversation_id=conversation.pk, arguments=history.quiz, message_id=stored[-2].pk
        )
        task_create(
            teacher=teacher,
            classroom_id=None,
            student_id=student.pk,
            title=history.task[0],
            instructions=history.task[1],
            subject=history.subject,
            due_at=timezone.now() + timedelta(days=7),
        )
    return True
