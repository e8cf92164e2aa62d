"""Safety (safety/): screening of what students write and upload and of the tutor's replies,
flags for the teachers, alerts to the school's contacts (docs/safety.md)."""

from __future__ import annotations

from .env import env_bool, env_float, env_int, env_json, env_list, env_str, env_url

_HTTP = ("http", "https")

# The backends that screen besides the offline line, which always runs: "moderation" (an
# OpenAI-compatible /v1/moderations endpoint) and "classifier" (the chat or summary model asked
# for a structured verdict). Empty: the offline line alone.
SAFETY_BACKENDS = env_list("SAFETY_BACKENDS", "")
SAFETY_MODERATION_BASE_URL = env_url("SAFETY_MODERATION_BASE_URL", "https://api.openai.com/v1", schemes=_HTTP)
SAFETY_MODERATION_API_KEY = env_str("SAFETY_MODERATION_API_KEY", secret=True)
SAFETY_MODERATION_MODEL = env_str("SAFETY_MODERATION_MODEL", "omni-moderation-latest")
# Which configured model classifies: "summary" (LLM_SUMMARY_*) or "chat" (LLM_*).
SAFETY_CLASSIFIER_MODEL = env_str("SAFETY_CLASSIFIER_MODEL", "summary")
# Each backend's own time limit; one that does not answer in time is recorded as such.
SAFETY_BACKEND_TIMEOUT_SECONDS = env_float("SAFETY_BACKEND_TIMEOUT_SECONDS", 3.0)
# How long a chat turn waits for the backends once its prompt is ready, before calling the model
# (a crisis found later is still flagged and alerted).
SAFETY_TURN_WAIT_SECONDS = env_float("SAFETY_TURN_WAIT_SECONDS", 0.3)
# Screen the tutor's replies (the offline line while streaming, the backends at the end).
SAFETY_SCREEN_REPLIES = env_bool("SAFETY_SCREEN_REPLIES", True)
# The learned screen beside the rules on students' messages (safety.learned, docs/safety.md).
SAFETY_LEARNED = env_bool("SAFETY_LEARNED", True)
# The queue's excerpt of a message or file.
SAFETY_EXCERPT_CHARS = 500
# Alerts: the sender, the webhook signing secret ("whsec_" + base64) for contacts with none of
# their own, retries of a delivery, and the delay before an unacknowledged crisis goes to the
# next contact.
SAFETY_EMAIL_FROM = env_str("SAFETY_EMAIL_FROM", "safety@tutor.localhost")
SAFETY_WEBHOOK_SECRET = env_str("SAFETY_WEBHOOK_SECRET", secret=True)
SAFETY_WEBHOOK_TIMEOUT_SECONDS = env_float("SAFETY_WEBHOOK_TIMEOUT_SECONDS", 5.0)
SAFETY_DELIVERY_MAX_RETRIES = env_int("SAFETY_DELIVERY_MAX_RETRIES", 8)
SAFETY_DELIVERY_BACKOFF_SECONDS = env_float("SAFETY_DELIVERY_BACKOFF_SECONDS", 10.0)
SAFETY_ESCALATION_MINUTES = env_float("SAFETY_ESCALATION_MINUTES", 15.0)
# The school's safety lead: who gets a crisis that none of the student's teachers and contacts
# can receive (no email, none covering the class, every alert failed); empty: every active staff
# account with an email address (safety.unrouted).
SAFETY_LEAD_EMAILS = env_list("SAFETY_LEAD_EMAILS", "")
# The pattern across conversations: this many lower-severity signals (distress) within this many
# days raise a concern citing them.
SAFETY_PATTERN_COUNT = env_int("SAFETY_PATTERN_COUNT", 3)
SAFETY_PATTERN_DAYS = env_int("SAFETY_PATTERN_DAYS", 14)
# The page a teacher's alert links to (the teacher page's flag queue).
SAFETY_QUEUE_URL = env_str("SAFETY_QUEUE_URL", "http://localhost:8000/app/teacher/safety/")
# What a student in crisis is shown, by language, unless their class has its own
# (safety.ClassroomSafety). The defaults are France's and the UK's/US's national lines, as
# examples: a school sets its own (docs/safety.md).
SAFETY_RESOURCES = env_json(
    "SAFETY_RESOURCES",
    {
        "fr": [
            {
                "name": "3114, numéro national de prévention du suicide",
                "phone": "3114",
                "url": "https://3114.fr",
                "text": "24h/24, gratuit.",
            },
            {
                "name": "119, Allô Enfance en Danger",
                "phone": "119",
                "url": "https://www.allo119.gouv.fr",
                "text": "24h/24, gratuit, pour les enfants en danger.",
            },
            {
                "name": "3018, harcèlement et violences numériques",
                "phone": "3018",
                "url": "https://www.3018.fr",
                "text": "Gratuit, anonyme.",
            },
            {"name": "Urgences", "phone": "112", "url": "", "text": "En cas de danger immédiat."},
        ],
        "en": [
            {
                "name": "Childline (UK)",
                "phone": "0800 1111",
                "url": "https://www.childline.org.uk",
                "text": "Free, 24/7.",
            },
            {
                "name": "988 Suicide & Crisis Lifeline (US)",
                "phone": "988",
                "url": "https://988lifeline.org",
                "text": "Call or text, 24/7.",
            },
            {
                "name": "Emergency services",
                "phone": "999 (UK) / 911 (US)",
                "url": "",
                "text": "If someone is in danger now.",
            },
        ],
    },
)
