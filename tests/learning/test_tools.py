"""The tutor's tools: create_quiz and update_task, their validation (errors written for the
model), the cap per conversation, and the entry point the chat turn calls."""

from __future__ import annotations

import json

import jsonschema
import pytest
from django.core.exceptions import ValidationError
from django.utils import translation

from learning.models import Question, Quiz, Task, TaskStatus
from learning.serializers import quiz_event
from learning.services import quiz_create_from_tool, task_update_from_tool
from learning.tools import CreateQuiz, UpdateTask
from llm.tools import ToolContext, tool_call_run
from tests.learning.conftest import QUIZ_ARGS, new_conversation, quiz_args


def test_the_tool_definitions_are_json_schemas_the_examples_satisfy():
    """The definitions, generated from the tools' argument declarations, are valid JSON Schema
    naming their tools, and the arguments used in these tests satisfy them."""
    for tool in (CreateQuiz, UpdateTask):
        jsonschema.Draft202012Validator.check_schema(tool.schema["function"]["parameters"])
        assert tool.schema["function"]["name"] == tool.name
    jsonschema.validate(json.loads(json.dumps(QUIZ_ARGS)), CreateQuiz.schema["function"]["parameters"])
    task = {"task": 1, "status": "done", "reason": "Finished"}
    jsonschema.validate(task, UpdateTask.schema["function"]["parameters"])


def test_a_quiz_is_stored_with_typed_questions(school):
    conversation = new_conversation(school["alice"])
    quiz = quiz_create_from_tool(student_id=school["alice"].pk, conversation_id=conversation.pk, arguments=QUIZ_ARGS)
    assert (quiz.question_count, quiz.status, quiz.conversation_id) == (5, "open", conversation.pk)
    mc, num, short, frac, _ = quiz.questions.order_by("position")
    assert (mc.kind, mc.correct_choice, mc.expected_number, mc.tolerance) == ("multiple_choice", 0, None, None)
    assert (num.expected_number, num.tolerance, num.expected_answer) == (0.83, 0.01, "0.83")
    assert (short.expected_number, short.tolerance, short.choices) == (None, None, [])
    assert (frac.expected_number, frac.tolerance, frac.expected_answer) == (0.5, 0.0, "1/2")
    # A model may send a number where the schema says text.
    numeric = quiz_create_from_tool(
        student_id=school["alice"].pk,
        conversation_id=conversation.pk,
        arguments=_question(kind="numeric", answer=0.75, tolerance="0.01"),
    ).questions.get()
    assert (numeric.expected_number, numeric.expected_answer, numeric.tolerance) == (0.75, "0.75", 0.01)


def _question(**changes):
    return quiz_args(questions=[{**QUIZ_ARGS["questions"][0], **changes}])


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ([1, 2], "JSON object"),
        (quiz_args(topic=""), "topic is required"),
        (quiz_args(skill="x " * 13), "short label"),
        (quiz_args(skill="!!!"), "short label"),
        (quiz_args(questions=[]), "1 to 10 (got 0)"),
        (quiz_args(questions=QUIZ_ARGS["questions"] * 3), "1 to 10 (got 15)"),
        (quiz_args(questions="five"), "1 to 10 (got none)"),
        (_question(kind="essay"), "Question 1: kind must be one of"),
        (_question(prompt=" "), "Question 1: prompt is required"),
        (_question(explanation=None), "Question 1: explanation is required"),
        (_question(choices=["only one"]), "Question 1: a multiple-choice question needs 2 to 6 choices"),
        (_question(choices=["3/4", " 3/4 ", "1/6"]), "must differ"),
        (_question(answer="5/8"), "one of the choices"),
        (_question(kind="numeric", answer="three quarters"), "must be a number"),
        (_question(kind="numeric", answer="0.75", tolerance=-1), "tolerance must be a number >= 0"),
        (_question(kind="numeric", answer="0.75", tolerance="wide"), "tolerance must be a number >= 0"),
        (_question(kind="short_text", answer=""), "answer is required"),
        (_question(kind="short_text", answer="?!"), "letters or digits"),
        (_question(kind="short_text", answer="x" * 201), "at most 200 characters"),
    ],
)
def test_invalid_arguments_are_refused_with_a_message_for_the_model(school, arguments, message):
    conversation = new_conversation(school["alice"])
    with pytest.raises(ValidationError) as exc:
        quiz_create_from_tool(student_id=school["alice"].pk, conversation_id=conversation.pk, arguments=arguments)
    assert message in " ".join(exc.value.messages)
    assert not Quiz.objects.exists() and not Question.objects.exists()


def test_a_cap_per_conversation_and_the_same_quiz_stored_once(school, settings):
    """QUIZ_MAX_PER_CONVERSATION quizzes per conversation; the model is told the limit. The same
    arguments again (a retried turn) return the quiz already stored, even at the cap."""
    settings.QUIZ_MAX_PER_CONVERSATION = 2
    alice = school["alice"]
    conversation = new_conversation(alice)
    first = quiz_create_from_tool(student_id=alice.pk, conversation_id=conversation.pk, arguments=quiz_args())
    second = quiz_create_from_tool(student_id=alice.pk, conversation_id=conversation.pk, arguments=quiz_args(topic="B"))
    again = quiz_create_from_tool(student_id=alice.pk, conversation_id=conversation.pk, arguments=quiz_args())
    assert again.pk == first.pk and second.pk != first.pk
    with pytest.raises(ValidationError, match="at most 2 quizzes per conversation"):
        quiz_create_from_tool(student_id=alice.pk, conversation_id=conversation.pk, arguments=quiz_args(topic="C"))
    other = new_conversation(alice)
    assert quiz_create_from_tool(student_id=alice.pk, conversation_id=other.pk, arguments=quiz_args(topic="C"))
    assert Quiz.objects.filter(conversation=conversation).count() == 2


def test_the_turns_entry_point_never_raises_for_a_bad_call(school):
    """Run as the turn runs a call (llm.tools.tool_call_run), the learning tools answer every
    call with a text for the model (errors in English, even for a French student): what their
    declaration refuses (a quiz of no question, a kind that is none, a status that is none,
    a field too many) before the service, what the domain refuses after it; and the quiz made."""
    alice = school["alice"]
    conversation = new_conversation(alice)
    context = ToolContext(student_id=alice.pk, conversation_id=conversation.pk)

    def run(name, arguments):
        return tool_call_run(tools=[CreateQuiz(), UpdateTask()], context=context, name=name, arguments=arguments)

    made = run("create_quiz", json.dumps(QUIZ_ARGS))
    assert isinstance(made.value, Quiz) and made.text.startswith(f"Quiz {made.value.pk} created: 5 questions")
    assert "do not give the answers away" in made.text
    assert [event.name for event in made.events] == ["quiz"]
    with translation.override("fr"):
        bad = run("create_quiz", json.dumps(quiz_args(questions=[])))
    assert bad.value is None and bad.events == []
    assert bad.text == (
        "Error: create_quiz not run. questions: List should have at least 1 item after validation, not 0."
    )
    essay = run("create_quiz", json.dumps(_question(kind="essay")))
    assert essay.text.startswith("Error: create_quiz not run. questions[0].kind: Input should be 'multiple_choice'")
    assert run("create_quiz", "{not json").text.startswith("Error: create_quiz not run. The arguments must be")
    assert run("update_task", '{"task": 99, "status": "done", "reason": "x"}').text.startswith(
        "Error: update_task not run. Task 99 is not one of the student's tasks"
    )
    assert run("update_task", '{"task": 99, "status": "finished", "reason": "x"}').text == (
        "Error: update_task not run. status: Input should be 'todo', 'in_progress' or 'done'."
    )
    assert run("update_task", '{"task": 99, "status": "done", "reason": "x", "mood": "happy"}').text == (
        "Error: update_task not run. mood: Extra inputs are not permitted."
    )
    unknown = run("save_memory", "{}").text
    assert unknown == "Error: unknown tool 'save_memory'. The tools are: create_quiz, update_task."
    assert Quiz.objects.count() == 1


def test_update_task_sets_the_students_status_with_a_reason(school):
    """The tutor sets the status of the student's own task (set to them or to their class), with
    its reason; another student's task, a bad status or no reason is refused."""
    alice, bob = school["alice"], school["bob"]
    mine = Task.objects.create(teacher=school["teacher_a"], student=alice, title="Exercise 4 p. 12")
    classwide = Task.objects.create(teacher=school["teacher_a"], classroom=school["class_a"], title="Read ch. 3")
    bobs = Task.objects.create(teacher=school["teacher_a"], student=bob, title="Bob's exercise")
    carols_class = Task.objects.create(teacher=school["teacher_b"], classroom=school["class_b"], title="5B only")

    status = task_update_from_tool(
        student_id=alice.pk, arguments={"task": mine.pk, "status": "in_progress", "reason": "Started question 1"}
    )
    assert (status.status, status.source, status.updated_by, status.reason) == (
        "in_progress",
        "tutor",
        None,
        "Started question 1",
    )
    task_update_from_tool(student_id=alice.pk, arguments={"task": str(classwide.pk), "status": "done", "reason": "ok"})
    assert TaskStatus.objects.get(task=classwide, student=alice).status == "done"
    assert not TaskStatus.objects.filter(task=classwide, student=bob).exists()

    for task in (bobs, carols_class):
        with pytest.raises(ValidationError, match="not one of the student's tasks"):
            task_update_from_tool(student_id=alice.pk, arguments={"task": task.pk, "status": "done", "reason": "x"})
    with pytest.raises(ValidationError, match="status must be one of todo, in_progress, done"):
        task_update_from_tool(student_id=alice.pk, arguments={"task": mine.pk, "status": "finished", "reason": "x"})
    with pytest.raises(ValidationError, match="reason is required"):
        task_update_from_tool(student_id=alice.pk, arguments={"task": mine.pk, "status": "done"})
    with pytest.raises(ValidationError, match="task must be the id"):
        task_update_from_tool(student_id=alice.pk, arguments={"task": 2**70, "status": "done", "reason": "x"})
    assert TaskStatus.objects.count() == 2


def test_the_quiz_event_shows_the_new_quiz_without_its_answers(school):
    """What the chat turn sends the client with the reply: the questions, no expected answers."""
    conversation = new_conversation(school["alice"])
    quiz = quiz_create_from_tool(student_id=school["alice"].pk, conversation_id=conversation.pk, arguments=QUIZ_ARGS)
    event = quiz_event(quiz)
    assert (event["id"], event["status"], event["conversation"], event["answered_at"]) == (
        quiz.pk,
        "open",
        conversation.pk,
        None,
    )
    assert event["questions"][0]["prompt"] == "1/2 + 1/4 = ?"
    assert {q["expected_answer"] for q in event["questions"]} == {None}
    assert {q["explanation"] for q in event["questions"]} == {None}
    assert event["answers"] == []
    assert "3/4" not in json.dumps([{k: v for k, v in q.items() if k != "choices"} for q in event["questions"]])
