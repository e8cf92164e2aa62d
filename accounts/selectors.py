"""The scoping primitive: which students' data a user may read.

Every read of a student's data (conversations, messages, memories) goes through
`students_visible_to`. It fails closed: a user who is neither a student, a teacher nor a school
administrator sees no one. A row outside this scope is answered with 404, never 403, so its
existence is not revealed.

Tenancy has three levels: a school (or a district and its schools), its classes, and a class's
active enrolments. A teacher sees the students actively enrolled in the active classes they
actively teach; a school administrator sees the people and classes of their school (a
district's administrator: of its schools too), which is what a teacher of every class there
sees; staff oversee all through the `*_overseen` and `*_administered` selectors.
"""

from __future__ import annotations

from typing import Any, NoReturn

from django.db.models import Exists, Q, QuerySet
from django.utils.translation import gettext as _

from accounts.models import Classroom, Enrollment, GuardianLink, RosterImport, School, User
from core.errors import NotFound


def is_educator(user: Any) -> bool:
    """A signed-in, active teacher or school administrator: who reads students through classes
    or a school, with a teacher's powers over those students."""
    return bool(
        user is not None
        and getattr(user, "is_authenticated", False)
        and user.is_active
        and getattr(user, "role", None) in (User.Role.TEACHER, User.Role.ADMINISTRATOR)
    )


def memory_consent_given(student_id: int, *, lock: bool = False) -> bool:
    """Whether the student's family consents to the tutor remembering them (`User.memory_consent`;
    False for no such student). `lock`: in the caller's transaction, hold the student's row
    against a change of consent until it commits (privacy.consent locks it to change it)."""
    users = User.objects.filter(pk=student_id)
    if lock:
        users = users.select_for_update(no_key=True)
    return bool(users.values_list("memory_consent", flat=True).first())


def memory_consent_present(student_id: Any) -> Exists:
    """Whether the student (an id or an OuterRef) has consent to memory: an expression for a
    prompt block's presence (llm.prompt_blocks), read in the chat turn's claim."""
    return Exists(User.objects.filter(pk=student_id, memory_consent=True))


def schools_administered_by(user: Any) -> QuerySet[School]:
    """The schools `user` administers: a school administrator's school, or their district and
    the schools under it (two levels down); every school for a staff account; none for anyone
    else."""
    if is_staff_account(user):
        return School.objects.all()
    if not is_educator(user) or user.role != User.Role.ADMINISTRATOR or user.school_id is None:
        return School.objects.none()
    return schools_under(user.school_id)


def schools_under(school_id: int) -> QuerySet[School]:
    """School `school_id` and, for a district, the schools under it (two levels down)."""
    return School.objects.filter(Q(pk=school_id) | Q(parent_id=school_id) | Q(parent__parent_id=school_id))


def enrollments_current() -> QuerySet[Enrollment]:
    """The enrolments that make a student one of a class's students: active, of an active
    student, in an active class. An inactive enrolment (the roster dropped it) or class is kept
    and counts nowhere: not in the class's lists, questions, reviews and tasks, not in who sees
    the student."""
    return Enrollment.objects.filter(
        active=True, classroom__active=True, student__is_active=True, student__role=User.Role.STUDENT
    )


def classrooms_taught_by(user: Any) -> QuerySet[Classroom]:
    """The active classes `user` actively teaches (any teacher enrolment, primary or not)."""
    if not is_educator(user):
        return Classroom.objects.none()
    return Classroom.objects.filter(
        active=True, teacher_enrollments__teacher=user, teacher_enrollments__active=True
    ).distinct()


def students_visible_to(user: Any) -> QuerySet[User]:
    """Students whose data `user` may read: themselves; the students actively enrolled in a
    teacher's active classes; a school administrator's students (of their schools, or enrolled
    in a class there)."""
    students = User.objects.filter(role=User.Role.STUDENT, is_active=True)
    if user is None or not getattr(user, "is_authenticated", False) or not user.is_active:
        return students.none()
    if user.role == User.Role.STUDENT:
        return students.filter(pk=user.pk)
    if user.role == User.Role.TEACHER:
        taught = classrooms_taught_by(user).values("pk")
        return students.filter(pk__in=Enrollment.objects.filter(active=True, classroom__in=taught).values("student"))
    if user.role == User.Role.ADMINISTRATOR:
        schools = schools_administered_by(user).values("pk")
        enrolled = Enrollment.objects.filter(active=True, classroom__active=True, classroom__school__in=schools)
        return students.filter(Q(school__in=schools) | Q(pk__in=enrolled.values("student")))
    return students.none()


def _student_in(students: QuerySet[User], student_id: Any) -> User:
    """The student `student_id` of `students`, or NotFound (an id that is not a number too)."""
    try:
        pk = int(student_id)
    except (TypeError, ValueError):
        raise NotFound(_("Student not found.")) from None
    student = students.filter(pk=pk).first()
    if student is None:
        raise NotFound(_("Student not found."))
    return student


def student_get_visible(*, user: Any, student_id: Any) -> User:
    """One student `user` may read, or NotFound."""
    return _student_in(students_visible_to(user), student_id)


def is_guardian(user: Any) -> bool:
    """A signed-in, active guardian (docs/privacy.md#guardians)."""
    return bool(
        user is not None
        and getattr(user, "is_authenticated", False)
        and user.is_active
        and getattr(user, "role", None) == User.Role.GUARDIAN
    )


def students_guarded_by(user: Any) -> QuerySet[User]:
    """The active students `user` is an active guardian of, through an active GuardianLink; no
    one for anyone else. Never part of `students_visible_to`: a guardian reads only what
    `students_readable_by` opens to them."""
    students = User.objects.filter(role=User.Role.STUDENT, is_active=True)
    if not is_guardian(user):
        return students.none()
    return students.filter(pk__in=GuardianLink.objects.filter(guardian=user, active=True).values("student"))


def student_get_guarded(*, user: Any, student_id: Any) -> User:
    """One student `user` is an active guardian of (`students_guarded_by`), or NotFound."""
    return _student_in(students_guarded_by(user), student_id)


def students_readable_by(user: Any) -> QuerySet[User]:
    """The scope of the reads a guardian shares with teachers (a child's memories but teacher-only
    notes, skills, quizzes, usage, the export): a guardian's children (`students_guarded_by`),
    and for anyone else exactly `students_visible_to`, never wider."""
    if is_guardian(user):
        return students_guarded_by(user)
    return students_visible_to(user)


def student_get_readable(*, user: Any, student_id: Any) -> User:
    """One student of `students_readable_by(user)`, or NotFound."""
    return _student_in(students_readable_by(user), student_id)


def is_staff_account(user: Any) -> bool:
    """An active staff account (role staff with is_staff): oversees every student and class
    (safety flags, cards, reviews, questions). A teacher given is_staff is not one."""
    return bool(
        getattr(user, "is_authenticated", False)
        and user.is_active
        and user.is_staff
        and getattr(user, "role", None) == User.Role.STAFF
    )


def student_get_overseen(*, user: Any, student_id: Any) -> User:
    """One student `user` may read as `student_get_visible` says, or any active student for a
    staff account (`is_staff_account`); otherwise NotFound."""
    if not is_staff_account(user):
        return student_get_visible(user=user, student_id=student_id)
    try:
        pk = int(student_id)
    except (TypeError, ValueError):
        raise NotFound(_("Student not found.")) from None
    student = User.objects.filter(pk=pk, role=User.Role.STUDENT, is_active=True).first()
    if student is None:
        raise NotFound(_("Student not found."))
    return student


def students_administered_by(user: Any) -> QuerySet[User]:
    """The students on whom `user` may use the admin's powers over a student's whole record (a
    privacy export or erasure, each with its own permission, which the caller checks): every
    student, deactivated ones included, for a staff account (`is_staff_account`); for anyone
    else with admin access (a teacher given `is_staff`), the students `students_visible_to`
    returns, as the admin scopes them (accounts.admin_tenancy); no one for a user without admin
    access. Holding a permission never widens this scope."""
    students = User.objects.filter(role=User.Role.STUDENT)
    if is_staff_account(user):
        return students
    if not (getattr(user, "is_authenticated", False) and user.is_active and user.is_staff):
        return students.none()
    return students_visible_to(user)


def student_get_administered(*, user: Any, student_id: Any) -> User:
    """One student of `students_administered_by(user)`, or NotFound (as for a student that does
    not exist)."""
    return _student_in(students_administered_by(user), student_id)


def classrooms_visible_to(user: Any) -> QuerySet[Classroom]:
    """The classrooms whose class-wide figures `user` may read, by name: the active classes a
    teacher teaches; the active classes of a school administrator's schools; none for anyone
    else (as learning.selectors.classroom_get_visible decides for one classroom)."""
    if not is_educator(user):
        return Classroom.objects.none()
    if user.role == User.Role.ADMINISTRATOR:
        return Classroom.objects.filter(active=True, school__in=schools_administered_by(user).values("pk")).order_by(
            "name", "id"
        )
    return classrooms_taught_by(user).order_by("name", "id")


def is_school_manager(user: Any) -> bool:
    """A staff account, or an active school administrator: who manages what belongs to schools
    (their roster imports, webhooks, identity providers, LMS platforms), each within `schools_administered_by`."""
    return is_staff_account(user) or (is_educator(user) and user.role == User.Role.ADMINISTRATOR)


def may_import_roster(user: Any) -> bool:
    """Who may upload a OneRoster bundle: a school manager (a school administrator's import
    touches only their schools)."""
    return is_school_manager(user)


def roster_import_get_visible(*, user: Any, import_id: Any) -> RosterImport:
    """One roster import `user` may read: any for a staff account, their own for a school
    administrator; otherwise NotFound (as for one that does not exist)."""
    imports = RosterImport.objects.none()
    if is_staff_account(user):
        imports = RosterImport.objects.all()
    elif may_import_roster(user):
        imports = RosterImport.objects.filter(created_by=user)
    found = imports.filter(pk=import_id).first() if str(import_id).isdigit() else None
    if found is None:
        raise NotFound(_("Roster import not found."))
    return found


def people_managed_by(user: Any) -> QuerySet[User]:
    """The people `user` may look up and provision (the provisioning API, docs/api.md#provisioning):
    every student, teacher and administrator for a staff account; for a school administrator,
    the people of their schools and the students enrolled in a class there; for a teacher, the
    active students of their school and of their classes (whom they may enrol); no one for
    anyone else. Staff and administrators see deactivated people too; staff accounts are never
    in it (the admin manages them)."""
    people = User.objects.exclude(role=User.Role.STAFF)
    if is_staff_account(user):
        return people
    if not is_educator(user):
        return people.none()
    if user.role == User.Role.ADMINISTRATOR:
        schools = schools_administered_by(user).values("pk")
        enrolled = Enrollment.objects.filter(classroom__school__in=schools).values("student")
        return people.filter(Q(school__in=schools) | Q(role=User.Role.STUDENT, pk__in=enrolled))
    students = people.filter(role=User.Role.STUDENT, is_active=True)
    taught = Enrollment.objects.filter(active=True, classroom__in=classrooms_taught_by(user).values("pk"))
    if user.school_id is None:
        return students.filter(pk__in=taught.values("student"))
    # A student of the school in no active class yet (just provisioned) is any of its teachers'
    # to enrol; once in a class, only that class's teachers see them (a 404 to the others).
    placed = Enrollment.objects.filter(active=True, classroom__active=True).values("student")
    return students.filter(Q(pk__in=taught.values("student")) | (Q(school_id=user.school_id) & ~Q(pk__in=placed)))


def classrooms_managed_by(user: Any) -> QuerySet[Classroom]:
    """The classes whose roster `user` may read and change: every class for a staff account;
    the classes of a school administrator's schools, inactive ones too; the active classes a
    teacher teaches (their students only: accounts.provisioning_rights says what each may
    change); none for anyone else."""
    if is_staff_account(user):
        return Classroom.objects.order_by("name", "id")
    if not is_educator(user):
        return Classroom.objects.none()
    if user.role == User.Role.ADMINISTRATOR:
        return Classroom.objects.filter(school__in=schools_administered_by(user).values("pk")).order_by("name", "id")
    return classrooms_taught_by(user).order_by("name", "id")


def schools_provisioned_by(user: Any) -> QuerySet[School]:
    """The schools `user` may list and put people in: those they administer
    (`schools_administered_by`: every school for staff), or a teacher's own school."""
    if is_educator(user) and user.role == User.Role.TEACHER and user.school_id is not None:
        return School.objects.filter(pk=user.school_id)
    return schools_administered_by(user)


def classrooms_listed_for(user: Any, *, inactive: bool = False) -> QuerySet[Classroom]:
    """GET /classrooms/: `classrooms_visible_to(user)`, or for a staff account every active
    class; with `inactive`, a staff account's and a school administrator's inactive classes too
    (`classrooms_managed_by`)."""
    if is_staff_account(user) or (inactive and is_educator(user) and user.role == User.Role.ADMINISTRATOR):
        managed = classrooms_managed_by(user)
        return managed if inactive else managed.filter(active=True)
    return classrooms_visible_to(user)


def _classroom_not_found() -> NoReturn:
    raise NotFound(_("Classroom not found."))


def students_listed_for(user: Any, *, classroom_id: int | None = None, inactive: bool = False) -> QuerySet[User]:
    """GET /students/: `students_visible_to(user)`, a guardian's children for a guardian; with
    `inactive`, a school administrator's students deactivated ones included
    (`people_managed_by`). `classroom_id` narrows it to the class's active enrolments (with
    `inactive`, the ended ones too), or NotFound when the class is not one
    `classrooms_listed_for(user, inactive=...)` gives. Staff see no student here (their
    directory is the provisioning API's GET /users/)."""
    if is_guardian(user):
        # A guardian's children (docs/privacy.md#guardians), by name; no class is theirs.
        return students_guarded_by(user) if classroom_id is None else _classroom_not_found()
    wide = inactive and is_educator(user) and user.role == User.Role.ADMINISTRATOR
    students = people_managed_by(user).filter(role=User.Role.STUDENT) if wide else students_visible_to(user)
    if classroom_id is None:
        return students
    classroom = classrooms_listed_for(user, inactive=wide).filter(pk=classroom_id).first()
    if classroom is None:
        _classroom_not_found()
    enrolled = Enrollment.objects.filter(classroom=classroom)
    if not wide:
        enrolled = enrolled.filter(active=True)
    return students.filter(pk__in=enrolled.values("student"))


def classroom_get_overseen(*, user: Any, classroom_id: Any) -> Classroom:
    """One class `user` may act on as its teacher: one of `classrooms_visible_to(user)` (its
    teachers, its school's administrators), or any active class for a staff account
    (`is_staff_account`); any other, and any class for a student, is NotFound."""
    try:
        pk = int(classroom_id)
    except (TypeError, ValueError):
        raise NotFound(_("Classroom not found.")) from None
    classrooms = Classroom.objects.filter(active=True) if is_staff_account(user) else classrooms_visible_to(user)
    classroom = classrooms.filter(pk=pk).first()
    if classroom is None:
        raise NotFound(_("Classroom not found."))
    return classroom
