"""Quizzes over the API: what the student sees before and after answering, grading, idempotent
answers, and the 4xx of a bad submission."""

from __future__ import annotations

from learning.models import Answer, Quiz, QuizAttempt, SkillMastery
from tests.learning.conftest import ALL_RIGHT, SKILL, THREE_OF_FIVE, answers_body, make_quiz, new_conversation


def test_the_student_sees_no_expected_answer_before_answering(clients, quiz):
    """Before answering, the questions come without expected answers or explanations (null)."""
    resp = clients["alice"].get(f"/api/v1/quizzes/{quiz.pk}/")
    assert resp.status_code == 200, resp.content
    body = resp.json()
    assert (body["status"], body["answered_at"], body["correct"], body["skill"]) == ("open", None, None, SKILL)
    assert body["answers"] == []
    assert [q["kind"] for q in body["questions"]] == [
        "multiple_choice",
        "numeric",
        "short_text",
        "numeric",
        "short_text",
    ]
    assert body["questions"][0]["choices"] == ["3/4", "2/6", "1/6"]
    for question in body["questions"]:
        assert question["expected_answer"] is None and question["explanation"] is None


def test_the_teacher_sees_everything(clients, quiz):
    """The student's teacher reads the expected answers and explanations at any time."""
    body = clients["teacher_a"].get(f"/api/v1/quizzes/{quiz.pk}/").json()
    assert [q["expected_answer"] for q in body["questions"]] == [
        "3/4",
        "0.83",
        "denominator",
        "1/2",
        "a common denominator",
    ]
    assert all(q["explanation"] for q in body["questions"])


def test_answers_are_graded_and_the_results_shown(clients, quiz):
    """3 of 5 right, every answer decided without the model: graded at once, explanations shown,
    the score stored on the attempt and the skill's mastery updated."""
    resp = clients["alice"].post(
        f"/api/v1/quizzes/{quiz.pk}/answers/", answers_body(quiz, THREE_OF_FIVE), format="json"
    )
    assert resp.status_code == 201, resp.content
    body = resp.json()
    assert body["replayed"] is False
    result = body["quiz"]
    assert result["status"] == "graded"
    assert (result["correct"], result["question_count"], result["client_attempt_id"]) == (3, 5, "attempt-1")
    assert [a["question"] for a in result["answers"]] == [q["id"] for q in result["questions"]]
    assert [a["result"] for a in result["answers"]] == [
        "correct",
        "correct",
        "correct",
        "incorrect",
        "incorrect",
    ]
    assert not any(a["model_graded"] for a in result["answers"])
    assert all(q["expected_answer"] and q["explanation"] for q in result["questions"])
    mastery = SkillMastery.objects.get(student=quiz.student)
    assert (mastery.attempts, mastery.correct, mastery.latest_correct, mastery.latest_total) == (5, 3, 3, 5)
    assert mastery.latest_quiz_id == quiz.pk


def test_the_same_client_attempt_id_replays_the_result(clients, quiz):
    """A retried submission (same client_attempt_id) returns the stored result, even with other
    answers, and changes nothing."""
    url = f"/api/v1/quizzes/{quiz.pk}/answers/"
    first = clients["alice"].post(url, answers_body(quiz, THREE_OF_FIVE), format="json").json()
    again = clients["alice"].post(url, answers_body(quiz, ALL_RIGHT), format="json")
    assert again.status_code == 201
    assert again.json()["replayed"] is True
    assert again.json()["quiz"] == first["quiz"]
    assert SkillMastery.objects.get(student=quiz.student).attempts == 5


def test_answering_twice_is_a_conflict(clients, quiz):
    """Another client_attempt_id on an answered quiz: 409, the first result stands."""
    url = f"/api/v1/quizzes/{quiz.pk}/answers/"
    clients["alice"].post(url, answers_body(quiz, THREE_OF_FIVE), format="json")
    resp = clients["alice"].post(url, answers_body(quiz, ALL_RIGHT, attempt="attempt-2"), format="json")
    assert resp.status_code == 409, resp.content
    assert resp.json()["error"]["code"] == "conflict"
    assert QuizAttempt.objects.get(quiz=quiz).correct == 3


def test_bad_submissions_are_400_and_store_nothing(clients, quiz, school):
    """An unknown question id (another quiz's too), a question answered twice, a missing one, a
    multiple-choice answer that is no choice: 400 naming the problem, nothing stored."""
    other = make_quiz(school["alice"], topic="Another quiz")
    url = f"/api/v1/quizzes/{quiz.pk}/answers/"
    body = answers_body(quiz, ALL_RIGHT)
    foreign = other.questions.first().pk
    cases = {
        "unknown": {**body, "answers": [*body["answers"][:4], {"question": foreign, "answer": "x"}]},
        "twice": {**body, "answers": [*body["answers"][:4], body["answers"][0]]},
        "missing": {**body, "answers": body["answers"][:4]},
        "not a choice": {**body, "answers": [{**body["answers"][0], "answer": "7/8"}, *body["answers"][1:]]},
        "empty": {**body, "answers": []},
        "not a list": {**body, "answers": {"question": 1}},
    }
    messages = {}
    for name, payload in cases.items():
        resp = clients["alice"].post(url, payload, format="json")
        assert resp.status_code == 400, (name, resp.content)
        messages[name] = resp.json()["error"]["message"]
    assert f"Question {foreign} is not a question of this quiz" in messages["unknown"]
    assert "answered twice" in messages["twice"]
    assert "missing" in messages["missing"]
    assert "one of its choices" in messages["not a choice"]
    assert not QuizAttempt.objects.exists()
    assert Quiz.objects.get(pk=quiz.pk).status == "open"


def test_a_blank_answer_skips_a_question(clients, quiz):
    """An empty answer is allowed (skipped) and counted wrong, without asking the model."""
    resp = clients["alice"].post(
        f"/api/v1/quizzes/{quiz.pk}/answers/", answers_body(quiz, ["", "", "", "", ""]), format="json"
    )
    assert resp.status_code == 201, resp.content
    assert resp.json()["quiz"]["correct"] == 0
    assert set(Answer.objects.values_list("result", flat=True)) == {"incorrect"}


def test_a_teacher_cannot_answer_for_the_student(clients, quiz):
    """The student's teacher may read the quiz but not answer it (403); nothing stored."""
    resp = clients["teacher_a"].post(
        f"/api/v1/quizzes/{quiz.pk}/answers/", answers_body(quiz, ALL_RIGHT), format="json"
    )
    assert resp.status_code == 403
    assert not QuizAttempt.objects.exists()


def test_the_list_is_scoped_and_filtered(clients, school):
    """A student lists their own quizzes, a teacher their students' (narrowed by ?student= and
    ?conversation=), newest first, without questions."""
    conversation = new_conversation(school["alice"])
    first = make_quiz(school["alice"], conversation)
    second = make_quiz(school["alice"], conversation, topic="Fractions again")
    elsewhere = make_quiz(school["alice"])
    bobs = make_quiz(school["bob"])
    carols = make_quiz(school["carol"])

    def ids(client, query=""):
        resp = client.get(f"/api/v1/quizzes/{query}")
        assert resp.status_code == 200, resp.content
        return [q["id"] for q in resp.json()["results"]]

    assert ids(clients["alice"]) == [elsewhere.pk, second.pk, first.pk]
    assert ids(clients["alice"], f"?conversation={conversation.pk}") == [second.pk, first.pk]
    assert ids(clients["bob"]) == [bobs.pk]
    assert ids(clients["teacher_a"]) == [bobs.pk, elsewhere.pk, second.pk, first.pk]
    assert ids(clients["teacher_a"], f"?student={school['bob'].pk}") == [bobs.pk]
    assert ids(clients["teacher_b"]) == [carols.pk]
    assert "questions" not in clients["alice"].get("/api/v1/quizzes/").json()["results"][0]
    assert clients["teacher_b"].get(f"/api/v1/quizzes/?student={school['alice'].pk}").status_code == 404
    assert clients["alice"].get("/api/v1/quizzes/?conversation=abc").status_code == 400


def test_another_users_conversation_is_a_404_like_another_student(clients, school):
    """?conversation= of a conversation the requester may not read (another student's, another
    class's) is a 404, as ?student= of a student they may not see: not an empty list that would
    tell nothing apart from a conversation without quizzes."""
    bobs = new_conversation(school["bob"])
    make_quiz(school["bob"], bobs)
    carols = new_conversation(school["carol"])
    assert clients["alice"].get(f"/api/v1/quizzes/?conversation={bobs.pk}").status_code == 404
    assert clients["teacher_b"].get(f"/api/v1/quizzes/?conversation={bobs.pk}").status_code == 404
    assert clients["teacher_a"].get(f"/api/v1/quizzes/?conversation={carols.pk}").status_code == 404
    assert clients["alice"].get("/api/v1/quizzes/?conversation=999999").status_code == 404
    # Their own (and their teacher's view of it) still lists, even without quizzes.
    assert clients["teacher_a"].get(f"/api/v1/quizzes/?conversation={bobs.pk}").json()["count"] == 1
    assert clients["carol"].get(f"/api/v1/quizzes/?conversation={carols.pk}").json()["count"] == 0
