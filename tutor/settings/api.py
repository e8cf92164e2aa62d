"""The REST framework and its OpenAPI schema (drf-spectacular: /api/schema/, /api/docs/)."""

from __future__ import annotations

from .env import env_int

# --- REST framework -------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "core.auth.TokenAuthentication",
        "core.auth.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "core.api.Pagination",
    "PAGE_SIZE": 20,
    "EXCEPTION_HANDLER": "core.errors.exception_handler",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["core.api.JSONParser"],
    "DEFAULT_SCHEMA_CLASS": "core.schema.AutoSchema",
    "UNAUTHENTICATED_USER": None,
    "DEFAULT_THROTTLE_CLASSES": [],
}
# JSON bodies nested deeper than this are refused with 400 (core.api.JSONParser).
JSON_MAX_DEPTH = env_int("JSON_MAX_DEPTH", 32, minimum=1)

# --- OpenAPI (drf-spectacular): /api/schema/, and /api/docs/ with assets served from here -------
SPECTACULAR_SETTINGS = {
    "TITLE": "Tutor API",
    "DESCRIPTION": (
        "A chat backend for tutoring apps with long-term memory. Every error answers "
        '`{"error": {"code", "message", "details", "retry_safe"}}`.'
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    # Request and response bodies as separate components: `id`, `created_at` and the like are
    # required in responses and absent from requests, so a generated client types both exactly.
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # Rules between fields (`{}` refused by a PATCH, one of two fields...): core.api.BODY_RULES.
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "core.api.schema_body_rules"],
    # No validator badge: Swagger UI would send the schema's URL to validator.swagger.io.
    "SWAGGER_UI_SETTINGS": {"deepLinking": True, "validatorUrl": None},
    "SCHEMA_PATH_PREFIX": "/api/v1",
    # `<id:...>` in URLs (core.api.IdConverter): a positive 64-bit integer.
    "PATH_CONVERTER_OVERRIDES": {
        "id": {"type": "integer", "format": "int64", "minimum": 1, "maximum": 9223372036854775807}
    },
    "ENUM_NAME_OVERRIDES": {
        "LanguageEnum": "accounts.models.User.Language",
        "UserRoleEnum": "accounts.models.User.Role",
        "RosterImportStatusEnum": "accounts.models.RosterImport.Status",
        "ProvisionedRoleEnum": "accounts.provisioning_apis.PROVISIONED_ROLES",
        "EnrolledRoleEnum": "accounts.provisioning_apis.ENROLLED_ROLES",
        "ConversationStatusEnum": "conversations.models.Conversation.Status",
        "SummaryStatusEnum": "conversations.models.Conversation.SummaryStatus",
        "MessageRoleEnum": "conversations.models.Message.Role",
        "FileStatusEnum": "conversations.models.ConversationFile.Status",
        "FileReasonEnum": "conversations.models.ConversationFile.Reason",
        "MemoryKindEnum": "memory.models.AIMemory.Kind",
        "MemorySourceEnum": "memory.models.AIMemory.Source",
        "MemoryStatusEnum": "memory.models.AIMemory.Status",
        "MemoryVisibilityEnum": "memory.models.AIMemory.Visibility",
        "QuizStatusEnum": "learning.models.Quiz.Status",
        "FlagStatusEnum": "safety.models.Flag.Status",
        "FlagSourceEnum": "safety.models.Flag.Source",
        "FlagSeverityEnum": "safety.types.Severity",
        "FlagCategoryEnum": "safety.types.Category",
        "FlagActionKindEnum": "safety.models.FlagAction.Kind",
        "DeliveryStatusEnum": "safety.models.Delivery.Status",
        "DeliveryChannelEnum": "safety.models.Delivery.Channel",
        "QuestionKindEnum": "learning.models.Question.Kind",
        "AnswerResultEnum": "learning.models.Answer.Result",
        "TaskProgressEnum": "learning.models.TaskStatus.Status",
        "TaskStatusSourceEnum": "learning.models.TaskStatus.Source",
        "CardFieldEnum": "memory.models.CardChange.FIELD_CHOICES",
        "CardEditableFieldEnum": "memory.models.StudentCard.STUDENT_EDITABLE_CHOICES",
        "CardChangeOpEnum": "memory.models.CardChange.Op",
        "CardChangeStatusEnum": "memory.models.CardChange.Status",
        "CardChangeSourceEnum": "memory.models.CardChange.Source",
        "WebhookEventEnum": "core.events.EVENT_TYPES",
    },
}
