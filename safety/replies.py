"""What the tutor says when screening steps in, in the student's language: the instructions of
a crisis turn, the reply when the model cannot answer one, the resources as text, and the
replacement of a reply that failed screening (docs/safety.md). The texts are a school's
safeguarding wording, not the model's: keep them short, warm, and free of diagnosis."""

from __future__ import annotations

LANGUAGES = ("en", "fr")

CRISIS_INSTRUCTIONS = {
    "en": (
        "Safety first: the student's latest message suggests they may be in danger or thinking of "
        "hurting themselves. Put the lesson aside for this reply. Answer in English, briefly and "
        "warmly: acknowledge what they said and that it took courage, do not lecture, judge or "
        "diagnose, do not promise secrecy, and encourage them to talk right now to an adult they "
        "trust (a parent, a teacher, the school nurse). Say that help is available; the list of "
        "people to contact is added after your reply. Never describe means of self-harm."
    ),
    "fr": (
        "La sécurité d'abord : le dernier message de l'élève laisse penser qu'il ou elle est peut-être "
        "en danger ou pense à se faire du mal. Laisse la leçon de côté pour cette réponse. Réponds en "
        "français, brièvement et avec chaleur : reconnais ce qu'il ou elle a dit et le courage qu'il a "
        "fallu, ne fais pas la morale, ne juge pas, ne pose pas de diagnostic, ne promets pas le "
        "secret, et encourage-le ou la à parler tout de suite à un adulte de confiance (un parent, un "
        "professeur, l'infirmière scolaire). Dis que de l'aide existe ; la liste des contacts est "
        "ajoutée après ta réponse. Ne décris jamais de moyen de se faire du mal."
    ),
}

CRISIS_MESSAGE = {
    "en": (
        "Thank you for telling me. What you are going through sounds really hard, and you do not "
        "have to face it alone. Please talk to an adult you trust today: a parent, a teacher, the "
        "school nurse. If you are in danger right now, call emergency services."
    ),
    "fr": (
        "Merci de me l'avoir dit. Ce que tu vis a l'air vraiment difficile, et tu n'as pas à "
        "l'affronter seul·e. Parles-en aujourd'hui à un adulte de confiance : un parent, un "
        "professeur, l'infirmière scolaire. Si tu es en danger maintenant, appelle les secours."
    ),
}

RESOURCES_HEADING = {"en": "You can talk to someone now:", "fr": "Tu peux parler à quelqu'un dès maintenant :"}

REPLACEMENT = {
    "en": "Sorry, I cannot answer that. Let's get back to your work: what would you like to look at?",
    "fr": "Désolé, je ne peux pas répondre à cela. Revenons à ton travail : sur quoi veux-tu avancer ?",
}


def language(code: str | None) -> str:
    """One of LANGUAGES: `code`'s, else English."""
    code = (code or "").split("-")[0].lower()
    return code if code in LANGUAGES else "en"


def resources_text(resources: list[dict[str, str]], lang: str) -> str:
    """The resources as the end of a reply: a heading, then one line each."""
    if not resources:
        return ""
    lines = []
    for item in resources:
        parts = [item["name"]]
        if item.get("phone"):
            parts.append(item["phone"])
        line = " - ".join(parts)
        if item.get("text"):
            line += f" ({item['text']})"
        if item.get("url"):
            line += f" {item['url']}"
        lines.append(f"- {line}")
    return "\n\n" + RESOURCES_HEADING[language(lang)] + "\n" + "\n".join(lines)
