from django.contrib import admin
from django.urls import URLPattern, URLResolver, include, path, re_path, register_converter

from accounts import apis as accounts
from accounts import code_apis as sign_in_codes
from accounts import guardian_apis as guardians
from accounts import provisioning_apis as provisioning
from accounts import roster_apis as roster
from accounts.admin_login import AdminLoginForm, admin_login
from conversations import apis as conversations
from core.api import IdConverter
from core.errors import unknown_api_url, unknown_url
from core.health import live as health_live
from core.health import ready as health_ready
from core.metrics_views import metrics_view
from core.schema_view import SchemaApi
from insights import apis as insights
from learning import apis as learning
from learning import review_apis as learning_reviews
from llm import apis as llm
from lti import advantage_apis as lti_services
from lti import apis as lti
from memory import apis as memory
from memory import card_apis as card
from memory.language import user_language_change
from privacy import apis as privacy
from privacy import erasure_request_apis as erasure_requests
from retention import apis as retention
from sso import apis as sso
from web import apis as web_apis
from web import views as web_views

register_converter(IdConverter, "id")
admin.site.login_form = AdminLoginForm

api = "api/v1/"

api_urls: list[URLPattern | URLResolver] = [
    path("auth/token/", accounts.TokenObtainApi.as_view(), name="auth-token"),
    path("auth/csrf/", accounts.CsrfApi.as_view(), name="auth-csrf"),
    path("auth/login/", accounts.SessionLoginApi.as_view(), name="auth-login"),
    path("auth/logout/", accounts.LogoutApi.as_view(), name="auth-logout"),
    path("auth/code/", sign_in_codes.CodeTokenApi.as_view(), name="auth-code"),
    path("auth/code/login/", sign_in_codes.CodeSessionLoginApi.as_view(), name="auth-code-login"),
    path("auth/providers/", sso.SignInProviderListApi.as_view(), name="auth-providers"),
    path("auth/oidc/token/", sso.AppCodeTokenApi.as_view(), name="auth-oidc-token"),
    # Changing one's language re-indexes a student's memories: the memory app's service.
    path("me/", accounts.MeApi.as_view(language_change=user_language_change), name="me"),
    path("students/", accounts.StudentListApi.as_view(), name="student-list"),
    path("students/<id:student_id>/", accounts.StudentDetailApi.as_view(), name="student-detail"),
    path("roster/imports/", roster.RosterImportListApi.as_view(), name="roster-import-list"),
    path("roster/imports/<id:import_id>/", roster.RosterImportDetailApi.as_view(), name="roster-import-detail"),
    path("classrooms/", provisioning.ClassroomListCreateApi.as_view(), name="classroom-list"),
    # Provisioning (docs/api.md#provisioning); a student's language change re-indexes memories.
    path("users/", provisioning.UserListCreateApi.as_view(language_change=user_language_change), name="user-list"),
    path(
        "users/<id:user_id>/",
        provisioning.UserDetailApi.as_view(language_change=user_language_change),
        name="user-detail",
    ),
    path("schools/", provisioning.SchoolListApi.as_view(), name="school-list"),
    path("classrooms/<id:classroom_id>/", provisioning.ClassroomDetailApi.as_view(), name="classroom-detail"),
    path(
        "classrooms/<id:classroom_id>/enrollments/",
        provisioning.EnrollmentListCreateApi.as_view(),
        name="classroom-enrollments",
    ),
    path(
        "classrooms/<id:classroom_id>/enrollments/<id:user_id>/",
        provisioning.EnrollmentDetailApi.as_view(),
        name="classroom-enrollment",
    ),
    path(
        "classrooms/<id:classroom_id>/sign-in-codes/",
        sign_in_codes.SignInCodesApi.as_view(),
        name="classroom-sign-in-codes",
    ),
    path("conversations/", conversations.ConversationListCreateApi.as_view(), name="conversation-list"),
    path(
        "conversations/<id:conversation_id>/",
        conversations.ConversationDetailApi.as_view(),
        name="conversation-detail",
    ),
    path("conversations/<id:conversation_id>/messages/", conversations.message_send, name="message-send"),
    path(
        "conversations/<id:conversation_id>/messages/<id:message_id>/memories/",
        conversations.ReplyMemoriesApi.as_view(),
        name="reply-memories",
    ),
    path(
        "conversations/<id:conversation_id>/end/", conversations.ConversationEndApi.as_view(), name="conversation-end"
    ),
    path(
        "conversations/<id:conversation_id>/files/",
        conversations.ConversationFilesApi.as_view(),
        name="conversation-files",
    ),
    path("memories/", memory.MemoryListCreateApi.as_view(), name="memory-list"),
    path("memories/<id:memory_id>/", memory.MemoryDetailApi.as_view(), name="memory-detail"),
    path("memories/<id:memory_id>/archive/", memory.MemoryArchiveApi.as_view(), name="memory-archive"),
    path("memories/<id:memory_id>/supersede/", memory.MemorySupersedeApi.as_view(), name="memory-supersede"),
    path("memories/<id:memory_id>/chain/", memory.MemoryChainApi.as_view(), name="memory-chain"),
    path("memory-reviews/", memory.SupersessionReviewListApi.as_view(), name="memory-review-list"),
    path(
        "memory-reviews/<id:review_id>/apply/", memory.SupersessionReviewApplyApi.as_view(), name="memory-review-apply"
    ),
    path(
        "memory-reviews/<id:review_id>/dismiss/",
        memory.SupersessionReviewDismissApi.as_view(),
        name="memory-review-dismiss",
    ),
    path("students/<id:student_id>/card/", card.StudentCardApi.as_view(), name="student-card"),
    path("students/<id:student_id>/card/changes/", card.CardChangeListApi.as_view(), name="student-card-changes"),
    path("card-changes/<id:change_id>/accept/", card.CardChangeAcceptApi.as_view(), name="card-change-accept"),
    path("card-changes/<id:change_id>/reject/", card.CardChangeRejectApi.as_view(), name="card-change-reject"),
    path("usage/", llm.UsageApi.as_view(), name="usage"),
    path("quizzes/", learning.QuizListApi.as_view(), name="quiz-list"),
    path("quizzes/<id:quiz_id>/", learning.QuizDetailApi.as_view(), name="quiz-detail"),
    path("quizzes/<id:quiz_id>/answers/", learning.QuizAnswersApi.as_view(), name="quiz-answers"),
    path("students/<id:student_id>/skills/", learning.StudentSkillsApi.as_view(), name="student-skills"),
    path("classrooms/<id:classroom_id>/skills/", learning.ClassroomSkillsApi.as_view(), name="classroom-skills"),
    path("classrooms/<id:classroom_id>/roster/", web_apis.RosterApi.as_view(), name="classroom-roster"),
    path("students/<id:student_id>/reviews/", learning_reviews.StudentReviewsApi.as_view(), name="student-reviews"),
    path(
        "classrooms/<id:classroom_id>/reviews/",
        learning_reviews.ClassroomReviewsApi.as_view(),
        name="classroom-reviews",
    ),
    path("students/<id:student_id>/ask/", insights.student_ask, name="student-ask"),
    path("students/<id:student_id>/asks/", insights.StudentAsksApi.as_view(), name="student-asks"),
    path("classrooms/<id:classroom_id>/ask/", insights.classroom_ask, name="classroom-ask"),
    path(
        "classrooms/<id:classroom_id>/lti-sync/", lti_services.ClassroomLtiSyncApi.as_view(), name="classroom-lti-sync"
    ),
    path(
        "classrooms/<id:classroom_id>/lti-scores/",
        lti_services.ClassroomLtiScoresApi.as_view(),
        name="classroom-lti-scores",
    ),
    path("tasks/", learning.TaskListCreateApi.as_view(), name="task-list"),
    path("tasks/<id:task_id>/status/", learning.TaskStatusApi.as_view(), name="task-status"),
    path("students/<id:student_id>/export/", privacy.StudentExportApi.as_view(), name="student-export"),
    path("students/<id:student_id>/erase/", privacy.StudentEraseApi.as_view(), name="student-erase"),
    path("students/<id:student_id>/consent/", privacy.StudentConsentApi.as_view(), name="student-consent"),
    path("students/<id:student_id>/guardians/", guardians.StudentGuardiansApi.as_view(), name="student-guardians"),
    path(
        "students/<id:student_id>/guardians/<id:user_id>/",
        guardians.StudentGuardianDetailApi.as_view(),
        name="student-guardian",
    ),
    path(
        "students/<id:student_id>/erasure-requests/",
        erasure_requests.StudentErasureRequestApi.as_view(),
        name="student-erasure-requests",
    ),
    path("erasure-requests/", erasure_requests.ErasureRequestListApi.as_view(), name="erasure-request-list"),
    path(
        "erasure-requests/<id:request_id>/approve/",
        erasure_requests.ErasureRequestApproveApi.as_view(),
        name="erasure-request-approve",
    ),
    path(
        "erasure-requests/<id:request_id>/refuse/",
        erasure_requests.ErasureRequestRefuseApi.as_view(),
        name="erasure-request-refuse",
    ),
    path("students/<id:student_id>/access-log/", privacy.StudentAccessLogApi.as_view(), name="student-access-log"),
    path("schools/<id:school_id>/retention/", retention.SchoolRetentionApi.as_view(), name="school-retention"),
    path(
        "classrooms/<id:classroom_id>/retention/", retention.ClassroomRetentionApi.as_view(), name="classroom-retention"
    ),
    path("safety/", include("safety.urls")),
    path("webhooks/", include("webhooks.urls")),
    path("identity-providers/", include("sso.urls")),
    path("lti/platforms/", lti.PlatformListCreateApi.as_view(), name="lti-platform-list"),
    path("lti/platforms/<id:platform_id>/", lti.PlatformDetailApi.as_view(), name="lti-platform-detail"),
    path("lti/token/", lti.LaunchTokenApi.as_view(), name="lti-token"),
]

urlpatterns = [
    path("", web_views.root, name="root"),
    # The admin's sign-in shares the API's lockout and answers it with 429 (accounts.admin_login).
    path("admin/login/", admin_login, name="admin-login"),
    path("admin/", admin.site.urls),
    path(api, include(api_urls)),
    path("app/", include("web.urls")),
    # Signing in with a school's OpenID Connect provider, in the browser (sso.views).
    path("auth/oidc/", include("sso.web_urls")),
    # The LTI tool's pages, which an LMS launches in its frame (lti.frames).
    path("lti/", include("lti.urls")),
    # Answered before the URLs by core.health.OperationsEndpoints; here for `reverse`.
    path("health/live", health_live, name="health-live"),
    path("health/ready", health_ready, name="health-ready"),
    path("metrics", metrics_view, name="metrics"),
    path("api/schema/", SchemaApi.as_view(), name="schema"),
    # The docs' pages and assets are served from here, nothing from another host (web.views).
    path("api/docs/", web_views.swagger_page, name="docs"),
    path("api/redoc/", web_views.redoc_page, name="redoc"),
    path("api/redoc/redoc.standalone.js", web_views.redoc_script, name="redoc-script"),
    # Unknown URLs answer in the error envelope even with DEBUG on (Django's debug 404 is HTML).
    re_path(r"^api/", unknown_api_url),
    re_path(r"^(?!admin/)", unknown_url),
]

handler400 = "core.errors.handler400"
handler403 = "core.errors.handler403"
handler404 = "core.errors.handler404"
handler500 = "core.errors.handler500"
