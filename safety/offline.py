"""The offline first line: regular expressions over a normalised text, French and English, no
model and no network. It always runs, first, on every student message and every tutor reply.

Contract:

- `screen(text)` never raises and always answers (`answered=True`). It emits at most one
  `Signal` per category: the most severe rule of that category, its `rule` naming every rule
  of that category and severity that fired, joined by "+" (`fr.self_harm.intent+...`).
- Self-harm *instructions* (asking for or giving methods, doses) fire rules whose name
  contains "instructions": the guard fails a tutor reply on those, not on a caring reply that
  names a help line.
- Rules look for the student speaking about themselves (first person) or about a person;
  hyperbole and idioms ("ce devoir me tue", "dying to", "kill this exam", "mourir de rire") are
  removed from the text before the rules run, and a rule's `unless` pattern, searched around
  its match, silences it (history, games, being told to "go kill myself").
- `language_of(text)` is "fr", "en" or None from stop words; the rules of both languages run on
  every text whatever it says (students mix languages).

The labelled set and the measured recall and false positives: tests/safety/, docs/safety.md.
"""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass

# The parser behind `re.compile`, to derive each rule's gate from its pattern at import.
from re import _parser  # type: ignore[attr-defined]
from typing import Any

from safety.types import BackendResult, Category, Severity, Signal, rank

CRISIS, CONCERN, INFO = Severity.CRISIS, Severity.CONCERN, Severity.INFO


def _words(*lines: str) -> frozenset[str]:
    return frozenset(" ".join(lines).split())


@dataclass(frozen=True)
class Rule:
    """One pattern over the normalised text; `unless` is searched in the match's neighbourhood
    (WINDOW characters either side) and silences the rule when found. `gate`: the keys of the
    pattern's literal words (`_keys`); the pattern runs only on a text holding one of them."""

    name: str
    category: Category
    severity: Severity
    pattern: re.Pattern[str]
    unless: re.Pattern[str] | None = None
    gate: frozenset[str] | None = None


WINDOW = 40

# ---------------------------------------------------------------------------------------------
# Normalisation

# Right and left single quotes, grave and acute accents, modifier apostrophe; ligatures.
_QUOTES = {"\u2019": "'", "\u2018": "'", "`": "'", "\u00b4": "'", "\u02bc": "'", "\u0153": "oe", "\u00e6": "ae"}
_REPEATS = re.compile(r"([a-z])\1\1+")
_TOKEN = re.compile(r"[a-z0-9']+")
_CONTRACTED = {"ca": "can", "wo": "will", "ai": "is"}
_EN_SUFFIX = {"re": "are", "ll": "will", "ve": "have", "d": "would"}
_ELIDED = {"j": "je", "m": "me", "t": "te", "l": "le", "s": "se", "d": "de", "n": "ne", "c": "ce", "qu": "que"}

# SMS and spoken spellings, word for word (after accents and apostrophes are gone).
_WORDS = {
    # French
    "jveux": "je veux",
    "jveu": "je veux",
    "veu": "veux",
    "chui": "je suis",
    "chuis": "je suis",
    "jsuis": "je suis",
    "jsui": "je suis",
    "jss": "je suis",
    "sui": "suis",
    "plu": "plus",
    "jvais": "je vais",
    "jvai": "je vais",
    "jpeux": "je peux",
    "jpeu": "je peux",
    "jme": "je me",
    "jmen": "je me en",
    "jsp": "je sais pas",
    "jai": "je ai",
    "g": "je ai",
    "pa": "pas",
    "koi": "quoi",
    "pk": "pourquoi",
    "pq": "pourquoi",
    "ke": "que",
    "tt": "tout",
    "tjrs": "toujours",
    "tjr": "toujours",
    "vrmt": "vraiment",
    "pr": "pour",
    "ms": "mais",
    "mn": "mon",
    "ptn": "putain",
    "slt": "salut",
    "ya": "il y a",
    "jamai": "jamais",
    "medocs": "medicaments",
    "medoc": "medicament",
    # English
    "im": "i am",
    "ive": "i have",
    "dont": "do not",
    "cant": "can not",
    "cannot": "can not",
    "wont": "will not",
    "didnt": "did not",
    "doesnt": "does not",
    "isnt": "is not",
    "wouldnt": "would not",
    "couldnt": "could not",
    "shouldnt": "should not",
    "havent": "have not",
    "wanna": "want to",
    "gonna": "going to",
    "gotta": "got to",
    "u": "you",
    "r": "are",
    "kms": "kill myself",
    "kys": "kill yourself",
    "unalive": "kill",
    "unaliving": "killing",
    "rn": "right now",
    "bc": "because",
    "cuz": "because",
    "ppl": "people",
    "pls": "please",
    "plz": "please",
    "thx": "thanks",
    "youre": "you are",
    "theyre": "they are",
    "wtf": "what the",
}


def normalise(text: str) -> str:
    """Casefolded, accents stripped, apostrophes unified, letters repeated three times or more
    squeezed to one, contractions and elisions expanded, SMS spellings spelled out, words
    separated by single spaces (punctuation, emoji and other non-Latin letters dropped)."""
    text = text.casefold()
    if not text.isascii():
        for quote, plain in _QUOTES.items():
            text = text.replace(quote, plain)
        text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = _REPEATS.sub(r"\1", text)
    words: list[str] = []
    for token in _TOKEN.findall(text):
        if "'" in token:
            words.extend(_apostrophe(token))
        else:
            words.append(_WORDS.get(token, token))
    return " ".join(words)


def _apostrophe(token: str) -> list[str]:
    """A token with apostrophes as words: "don't" -> "do not", "i'm" -> "i am", "you're" -> "you
    are", "j'ai" -> "je ai", "qu'on" -> "que on"; other apostrophes separate words."""
    head, _, tail = token.partition("'")
    if tail == "t" and head.endswith("n"):
        return [_CONTRACTED.get(head[:-1], head[:-1]), "not"]
    if head == "i" and tail == "m":
        return ["i", "am"]
    first = [_ELIDED[head]] if head in _ELIDED else [_WORDS.get(head, head)] if head else []
    if tail in _EN_SUFFIX and head not in _ELIDED:
        return [*first, _EN_SUFFIX[tail]]
    if "'" in tail:
        return [*first, *_apostrophe(tail)]
    return [*first, _WORDS.get(tail, tail)] if tail else first


# ---------------------------------------------------------------------------------------------
# Idioms removed before the rules run (hyperbole, games, laughter)

_IDIOMS = re.compile(
    "|".join(
        [
            # English
            r"\b(die|died|dying|dead|death) (of|from) (embarrassment|laughter|laughing|boredom|shame"
            r"|cringe|cuteness|hunger)",
            r"\b(die|died|dying|dead) (laughing|tired|serious|inside)\b",
            r"\bdying (to|for)\b",
            r"\bto die for\b",
            r"\b(killing|kill|killed|smashing|crushing) (it|this|that|the|my|our|an|a) ?(exam|test|quiz"
            r"|boss|level|game|presentation|interview|match|round|essay|homework|course|solo|song"
            r"|performance)?\b",
            r"\b(killing|kill|killed) myself (studying|working|revising|trying|doing|over|to|for)\b",
            r"\b(phone|battery|laptop|computer|charger|pen|calculator) (is |was |just )?(dead|died)\b",
            # French
            r"\b(mourir|mort|morte|morts|meurs|meurt|creve|crever) (de |d )?(rire|faim|soif|ennui|honte"
            r"|chaud|froid|fatigue|peur)\b",
            r"\b(me |te |se )?(tuer|tue|flinguer|crever|pendre) (a|en) (la tache|reviser|travailler|bosser"
            r"|revisant|travaillant|bossant)\b",
            r"\bmort de rire\b|\bmdr\b|\bptdr\b",
        ]
    )
)

# ---------------------------------------------------------------------------------------------
# The rules (name: language.category.what)

_ME = r"(i|i am|i have|i will|i would|i was|i just|i really|i seriously|i honestly)"
_PERSON_EN = (
    r"(him|her|them|everyone|everybody|you all|all of them|the teacher|my teacher|that (guy|kid"
    r"|boy|girl|teacher|bitch|dude|loser|idiot|bully)"
    r"|this (guy|kid|boy|girl|teacher|bitch|dude|loser|idiot|bully)|my (dad|mom|mum|brother|sister"
    r"|stepdad|stepmom|father|mother|classmate))"
)
_PERSON_FR = (
    r"(ce|cette|cet|le|la|les|mon|ma|mes|tous|toute|son|sa) (mec|gars|type|keum|meuf|fille|prof|bouffon"
    r"|connard|conne|connasse|batard|eleve|eleves|frere|soeur|pere|mere|beau pere|voisin|voisine|bande"
    r"|classe|monde)"
)
_FAMILY_EN = (
    r"(dad|father|mom|mum|mother|stepdad|stepfather|step dad|stepmom|stepmother|step mom|uncle|aunt"
    r"|brother|sister|grandpa|grandfather|grandma|cousin|parents|boyfriend|coach|babysitter|he|she)"
)
_FAMILY_FR = (
    r"(pere|mere|beau pere|belle mere|oncle|tante|frere|soeur|grand pere|grand mere|cousin|cousine|parents"
    r"|daron|daronne|copain de ma mere|entraineur|coach|il|elle|adulte)"
)
_PILLS_EN = r"(pills|tablets|meds|medication|medicine|paracetamol|tylenol|advil|ibuprofen|sleeping pills|painkillers)"
_PILLS_FR = r"(medicaments|medicament|cachets|comprimes|pilules|doliprane|dafalgan|efferalgan|paracetamol|somniferes)"
_SEX = r"(sex|sexy|sexual|sexuel|sexuelle|sexuels|nue|nues|nu|naked|nudes?|porn|porno|erotique|erotic|cul)"
_MINOR = (
    r"(\b([1-9]|1[0-7]) ?(ans|year olds?|yo|years? old)\b|\b(eleves?|enfants?|gamins?|gamines?"
    r"|petites? filles?|petits? garcons?|kids?|children|child|minors?|mineure?s?|schoolgirls?"
    r"|schoolboys?|collegiens?|collegiennes?|students?)\b"
    r"|\bde (6e|5e|4e|3e|6eme|5eme|4eme|3eme|cm1|cm2|ce1|ce2)\b)"
)
_HATE_GROUPS_EN = (
    r"(muslims|jews|jewish people|black people|blacks|arabs|gays|gay people|lesbians|trans people"
    r"|immigrants|refugees|mexicans|asians|chinese people|africans|gypsies|indians|white people)"
)
_HATE_GROUPS_FR = (
    r"(arabes|noirs|juifs|musulmans|homos|homosexuels|gays|pedes|lesbiennes|trans|immigres|migrants|roms"
    r"|chinois|africains|renois|rebeus|feujs|blancs|asiatiques|gitans)"
)
_HATE_PRED_EN = (
    r"(terrorists|parasites|disgusting|inferior|animals|vermin|subhuman|thieves|criminals|rapists"
    r"|dirty|filthy|trash|less intelligent|stupid|a disease"
    r"|should (all )?(die|be (deported|killed|gassed|banned|shot|removed))|do not deserve"
    r"|should not (exist|be allowed)|control (everything|the world|the media)|(ruining|destroying"
    r"|invading|taking over|infesting) (this|our|the) (country|world|school)|mentally ill|sick"
    r"|freaks|an abomination|unnatural|perverts)"
)
_HATE_PRED_FR = (
    r"(voleurs|terroristes|parasites|degoutants|degueulasses|inferieurs|animaux|sous hommes"
    r"|criminels|violeurs|sales|moins intelligents|une maladie|des rats|des chiens"
    r"|devraient (tous |toutes )?(pas|mourir|crever|degager|partir|etre (expulses|tues|brules"
    r"|interdits))|ne devraient pas|controlent tout|controlent le monde|meritent (pas|de mourir)"
    r"|(envahissent|detruisent|pourrissent|ruinent) (le|notre|ce) (pays|monde|quartier))"
)

_RULES_SPEC: list[tuple[str, Category, Severity, str, str | None]] = [
    # ---- self-harm: instructions (asking for, or giving, methods and doses)
    (
        "en.self_harm.instructions.method",
        Category.SELF_HARM,
        CRISIS,
        r"\b(painless|easiest|quickest|fastest|best|surest|least painful|quick|quiet"
        r"|effective)\w* (way|ways|method|methods) (to|of) (die|dying|kill (myself|yourself|oneself"
        r"|themselves)|commit(ting)? suicide|end (it|my life|your life))",
        None,
    ),
    (
        "en.self_harm.instructions.dose",
        Category.SELF_HARM,
        CRISIS,
        r"\bhow (many|much)\b.{0,40}\b(die|overdose|od|kill (me|myself|you|yourself|someone)|be lethal"
        r"|be fatal)\b|\b(lethal|fatal|deadly) (dose|amount|quantity)\b",
        None,
    ),
    (
        "en.self_harm.instructions.how",
        Category.SELF_HARM,
        CRISIS,
        r"\bhow (do|can|could|would|should|to) ?(i|you|someone|people|one)? (kill (myself|yourself"
        r"|themselves|oneself)|commit suicide|overdose|hang (myself|yourself)|slit (my|your) wrists"
        r"|end (my|your) life)",
        None,
    ),
    (
        "en.self_harm.instructions.giving",
        Category.SELF_HARM,
        CRISIS,
        r"\b(to (kill yourself|commit suicide|end your life|overdose)),? (you (can|could|should"
        r"|need to|would need to|just) )?(take|swallow|use|cut|jump|hang|mix|drink|buy)\b"
        r"|\bcut (deeper|along the vein|vertically)",
        None,
    ),
    (
        "fr.self_harm.instructions.method",
        Category.SELF_HARM,
        CRISIS,
        r"\b(facon|maniere|methode|moyen|technique|astuce|solution)s?\b.{0,40}\b(de|pour) (se|me"
        r"|te) (tuer|suicider|pendre|foutre en le air)|\b(facon|maniere|methode|moyen"
        r"|technique)s?\b.{0,40}\bde mourir\b",
        None,
    ),
    (
        "fr.self_harm.instructions.dose",
        Category.SELF_HARM,
        CRISIS,
        r"\bcombien de\b.{0,40}\bpour (mourir|en finir|ne plus se reveiller|me tuer|se tuer"
        r"|faire une overdose|y rester)|\bdose (mortelle|letale)",
        None,
    ),
    (
        "fr.self_harm.instructions.giving",
        Category.SELF_HARM,
        CRISIS,
        r"\b(le plus simple|le mieux|il suffit|tu peux|tu dois|tu n as que a)\b.{0,30}\bpour (te|se"
        r"|vous) (suicider|tuer|pendre)\b"
        r"|\bpour (te|se|vous) (suicider|tuer|pendre)\b.{0,20}\b(avale|avaler|prends|prendre|prenez"
        r"|coupe|couper|saute|sauter|il suffit|ce est de)\b",
        None,
    ),
    (
        "fr.self_harm.instructions.how",
        Category.SELF_HARM,
        CRISIS,
        r"\bcomment (on peut |je peux |faire pour |on fait pour )?(se|me|te) (suicider|tuer|pendre"
        r"|ouvrir les veines|foutre en le air)",
        None,
    ),
    # ---- self-harm: intent, acts now (crisis)
    (
        "en.self_harm.intent",
        Category.SELF_HARM,
        CRISIS,
        r"\b(kill|killing|hang|hanging|shoot|shooting|drown|drowning|end) myself\b|\bend (my life"
        r"|it all)\b|\bcommit suicide\b|\bi am suicidal\b"
        r"|\b"
        + _ME
        + r" (really |just |honestly |seriously )?(want|wish|need|am going|am ready|am about|plan|am planning"
        r"|have decided|decided) to (die|end it|not exist|not be here)\b"
        r"|\bi (do not|no longer) want to (be alive|live|exist|be here|wake up)\b|\b(going|ready|about"
        r"|plan|planning) to end it\b"
        r"|\b(no|any|a) reason to (keep )?(living|live|go on|be alive|stay alive)\b|\b(sleep"
        r"|go to sleep|fall asleep) and never wake up\b|\bnever wake up again\b"
        r"|\bi am (so )?done with (life|living|it all)\b|\blife is not worth (living|it)\b"
        r"|\bwant (it all|everything) to (end|stop)\b|\bwant to stop (existing|living)\b",
        r"\b(told|tell|tells|telling|said) me to (go )?kill myself|\b(never|not|would not|will not"
        r"|do not want to) (kill|hang|end) myself|\bthink(ing)? about|\bthought(s)? (about|of)",
    ),
    (
        "en.self_harm.plan",
        Category.SELF_HARM,
        CRISIS,
        r"\b(jump|jumping) (off|from|in front of) (the|a|my) (bridge|roof|building|balcony|window"
        r"|cliff|train|car)\b|\b(i|i have|i got|i bought) (a )?(rope|noose)\b.{0,40}\b(use|tonight"
        r"|hang|neck|tomorrow)\b|\bnoose\b"
        r"|\b(suicide|goodbye) (note|letter)\b",
        r"\b(story|character|novel|book|poem|movie|film)\b",
    ),
    (
        "en.self_harm.now",
        Category.SELF_HARM,
        CRISIS,
        r"\bi (just |already )?(took|swallowed|ate|have taken)\b.{0,20}\b(a bunch of|all|lots of"
        r"|too many|a lot of|a handful of|a whole|the whole|every|\d+)\b.{0,25}"
        + _PILLS_EN
        + r"|\b(going to|will|want to|about to|plan to|planning to) (take|swallow|overdose on"
        r"|down)\b.{0,15}\b(all|every|whole|bunch|lots|handful|\d+)\b.{0,25}"
        + _PILLS_EN
        + r"|\b(saving|saved|collecting|stockpiling|hoarding) (up )?(pills|meds|tablets)\b|\b(standing"
        r"|sitting) on (the|a) (roof|bridge|ledge|edge)\b"
        + r"|\b(pills|meds|rope|noose|blade) (is |are )?ready\b|\bi am going to (overdose|od)\b"
        r"|\bi (overdosed|have overdosed)\b"
        + r"|\bi am (cutting|hurting|burning) myself\b|\bi (cut|hurt|burned|burnt) myself (again|today"
        r"|tonight)\b",
        None,
    ),
    (
        "fr.self_harm.intent",
        Category.SELF_HARM,
        CRISIS,
        r"\bje (veux|voudrais|vais|compte|prefere|dois|pense|prevois|ai envie de|ai decide de"
        r"|ai prevu de|suis pret a|suis prete a) (de )?(mourir|me suicider|me tuer|en finir|me pendre"
        r"|me foutre en le air|me flinguer|disparaitre pour toujours|mettre fin a mes jours)\b"
        r"|\bje (ne )?(veux|voudrais|peux) (plus|pas) vivre\b|\b(ai|ai plus|ai pas) (plus "
        r"|pas )?(envie|la force) de vivre\b|\bmarre de vivre\b|\benvie de (crever|mourir|me tuer"
        r"|me suicider)\b"
        r"|\bmettre fin a mes jours\b|\ben finir avec (la|ma) vie\b|\b(aucune|pas de|plus de"
        r"|plus aucune) raison de (vivre|continuer)\b"
        r"|\b(dormir|endormir) et ne (jamais|plus) me reveiller\b|\bne plus jamais me reveiller\b"
        r"|\bje (ne )?(veux|voudrais) (plus|pas) me reveiller\b|\b(prepare|achete|trouve|pris) (la"
        r"|une) corde\b|\bla vie ne vaut (pas|plus) la peine\b",
        r"\b(pas|jamais) (envie de )?(mourir|me suicider|me tuer)\b|\bje ne (veux|vais) (pas|jamais)\b"
        r"|\bpense a\b|\bj ai pense\b|\bme faire tuer\b",
    ),
    (
        "fr.self_harm.plan",
        Category.SELF_HARM,
        CRISIS,
        r"\bje (vais|veux|voudrais|compte|pense) (me jeter|sauter|me lancer)\b.{0,25}\b(pont|fenetre"
        r"|toit|immeuble|balcon|falaise|train|metro|rer|voiture)"
        r"|\blettre de adieu\b|\b(corde|noeud coulant)\b.{0,40}\b(me pendre|ce soir|demain|cou)\b",
        r"\b(personnage|roman|livre|histoire|poeme|film)\b",
    ),
    (
        "fr.self_harm.now",
        Category.SELF_HARM,
        CRISIS,
        r"\bje ai (pris|avale)\b.{0,20}\b(plein|beaucoup|tous|toute|trop|une boite|la boite"
        r"|toute la boite|\d+)\b.{0,25}"
        + _PILLS_FR
        + r"|\bje (vais|veux) (prendre|avaler)\b.{0,20}\b(tous|toute|toutes|plein|la boite|une boite"
        r"|\d+)\b.{0,25}"
        + _PILLS_FR
        + r"|\bje me suis (ouvert les veines|scarifie|scarifiee|mutile|mutilee|taillade|tailladee"
        r"|coupe les (veines|poignets|bras))|\bme ouvrir les veines\b"
        + r"|\bje me (scarifie|mutile)\b|\bje me (coupe|brule|taillade) (les bras|les poignets"
        r"|les cuisses|avec|encore|en ce moment)",
        None,
    ),
    # ---- self-harm: ideation, past acts (concern)
    (
        "en.self_harm.ideation",
        Category.SELF_HARM,
        CONCERN,
        r"\b(think|thought|thinking|thoughts) (about|of) (hurting|killing|cutting|harming"
        r"|ending) (myself|it)\b|\b(thoughts|thinking|think|thought) (about|of) (suicide|dying"
        r"|self harm)\b|\bsuicidal thoughts\b"
        r"|\bi used to (cut|self harm|hurt myself)\b|\bi (self harm|cut myself)\b"
        r"|\bwish i (could )?(just )?(disappear|was dead|were dead|was never born|were never born"
        r"|could die|would die|would not wake up|never woke up|could sleep forever)"
        r"|\bbetter off without me\b|\b(nobody|no one) would (care|notice|miss me) if i (died|was dead"
        r"|were dead|was gone|were gone|killed myself|disappeared)"
        r"|\b(scratch|scratching|scratched|burn|burning|burned|hit|hitting|pinch|pinching|bite|biting"
        r"|punch|punching) (myself|my (arms|legs|wrists|thighs|skin))\b.{0,25}\b(bleed|bleeds|blood"
        r"|bruise|bruises|marks|scars)\b",
        r"\b(if you|you are|you have been|are you|when you)\b",
    ),
    (
        "fr.self_harm.ideation",
        Category.SELF_HARM,
        CONCERN,
        r"\b(pense|penser|pensais|pensees?) (a|de) (me faire du mal|me tuer|me suicider|mourir"
        r"|me couper|me scarifier|en finir|disparaitre)\b|\benvie de me faire du mal\b"
        r"|\bje me (coupais|scarifiais|faisais du mal|mutilais)\b|\bidees (noires|suicidaires)\b"
        r"|\bpensees (noires|suicidaires)\b"
        r"|\bsi je (n existais pas|ne existais pas|ne etais pas la|disparaissais|etais mort"
        r"|etais morte|mourais)\b"
        r"|\bme (griffer|griffe|gratter|gratte|bruler|brule|frapper|frappe|mordre|mords|pincer"
        r"|pince)\b.{0,25}\b(jusqu au sang|sang|saigner|saigne|marques|bleus)\b",
        None,
    ),
    # ---- abuse disclosed (crisis), at home (concern)
    (
        "en.abuse.disclosed",
        Category.ABUSE,
        CRISIS,
        r"\b"
        + _FAMILY_EN
        + r"\b.{0,25}\b(hits|beats|beat|punches|punched|kicks|kicked|slaps|slapped|chokes|choked|burns|burned|whips"
        r"|hurts|hurt|touches|touched|abuses|abused|molests|molested|rapes|raped|threw|throws|pushed|pushes|shoved"
        r"|shoves|grabbed|grabs|shook|shakes|strangled|slams|slammed) me\b"
        r"|\b(makes|made|forces|forced) me (do|to do) (things|stuff)\b|\b(our|a) (little )?secret\b"
        r"|\bcomes? (into|in) my (room|bed) (at night|when)\b"
        r"|\b(hurt|kill|beat|hit) me if i (tell|told|say|talk)\b|\bif i (tell|told) (anyone|anybody"
        r"|someone)\b.{0,30}\b(hurt|kill|beat|hit)\b"
        r"|\b(lock|locks|locked) (me|us) (in|up)\b|\bbruises?\b.{0,40}\b(from|because of) (my )?"
        + _FAMILY_EN
        + r"\b|\b(scared|afraid|terrified) (to go|of going) home\b",
        r"\b(game|fortnite|minecraft|pillow|ball|joke|accident|by accident)\b",
    ),
    (
        "fr.abuse.disclosed",
        Category.ABUSE,
        CRISIS,
        r"\b"
        + _FAMILY_FR
        + r"\b.{0,30}\bme (a )?(frappe|frappent|tape|tapent|bat|battent|battu|cogne|cognent|touche|touchent|viole"
        r"|violent|brule|etrangle|enferme|enferment|agresse|gifle|giflent|secoue|secouent|jette|jettent)\b"
        r"|\b"
        + _FAMILY_FR
        + r"\b.{0,30}\bme (a )?(mis|met|mettent|donne|donnent|donne) (un coup|des coups|une claque|des claques"
        r"|une gifle|une baffe|une raclee)\b"
        r"|\b(rentre|vient|entre|entrait|venait) dans ma (chambre|lit) (la nuit|le soir|quand)\b"
        r"|\bnotre (petit )?secret\b|\bme (oblige|forcent|force|obligent) a faire des (choses|trucs)\b"
        r"|\bsi je (parle|le dis|dis quelque chose|raconte)\b.{0,30}\bme (tue|tuera|tueront|frappe"
        r"|frappera|fera du mal|bat|battra)\b"
        r"|\bpeur de rentrer (chez moi|a la maison)\b|\bme enferme\b.{0,40}\b(sans manger|des jours|la nuit)",
        r"\b(jeu|fortnite|minecraft|mario|coussin|oreiller|ballon|blague|sans faire expres)\b",
    ),
    (
        "en.abuse.home",
        Category.ABUSE,
        CONCERN,
        r"\b(parents|mom and dad|mum and dad)\b.{0,20}\b(scream|yell|fight|shout"
        r"|hit) (at )?each other\b|\b"
        + _FAMILY_EN
        + r"\b.{0,12}\b(says|say|tells|tell|calls|call)\b.{0,6}\b(i am|me|that i am)\b.{0,6}\b(worthless"
        r"|useless|a mistake|garbage|nothing|a waste|a failure)",
        None,
    ),
    (
        "fr.abuse.home",
        Category.ABUSE,
        CONCERN,
        r"\b(mes parents|mon pere et ma mere|ma mere et mon pere)\b.{0,30}\b(se battent|se frappent"
        r"|se tapent|crient tout le temps|hurlent tout le temps)\b|\b"
        + _FAMILY_FR
        + r"\b.{0,30}\b(dit|disent|repete|repetent|traite|traitent)\b.{0,30}\b(dechet|bon a rien"
        r"|bonne a rien|inutile|erreur|pas du naitre|aurait pas du naitre|sers a rien)",
        None,
    ),
    # ---- violence: credible threats (crisis), fights and weapons (concern)
    (
        "en.violence.threat",
        Category.VIOLENCE,
        CRISIS,
        r"\b(bring|bringing|take|taking|brought|have|got)\b.{0,30}\b(gun|knife|rifle|pistol|weapon"
        r"|blade|bomb)\b.{0,20}\b(to|into|at) (school|class)\b"
        r"|\b(i|i am|i will|we|we are|we will)\b.{0,20}\b(going to|want to|about to|will) (stab|shoot"
        r"|kill|murder|strangle|hurt|beat up|jump) " + _PERSON_EN + r"\b"
        r"|\b(gun|knife|rifle|pistol|weapon)\b.{0,60}\b(will (all )?pay|regret it|see what happens)\b"
        r"|\bshoot up (the|my|a|our) (school|class|mall)\b"
        r"|\b(make (them|him|her|everyone) (all )?pay|have a plan)\b.{0,60}\b(gun|knife|rifle|pistol|weapon)\b"
        r"|\b(bring|bringing) (a|my|the|his|dad s|my dad s) (gun|knife|rifle|pistol|weapon)\b",
        None,
    ),
    (
        "fr.violence.threat",
        Category.VIOLENCE,
        CRISIS,
        r"\b(ramener|amener|amene|ramene|apporter|apporte|prendre|prends)\b.{0,40}\b(couteau|flingue"
        r"|arme|pistolet|fusil|lame|bombe|cutter)\b.{0,30}\b(college|lycee|ecole|bahut|classe|cours)\b"
        r"|\b(couteau|flingue|arme|pistolet|fusil|cutter)\b.{0,40}\bpour (planter|tuer|buter|flinguer"
        r"|poignarder|tirer sur|egorger)\b"
        r"|\bje (vais|veux|compte|vais aller) (tuer|buter|planter|poignarder|flinguer|egorger) " + _PERSON_FR + r"\b"
        r"|\bje (vais|veux|compte) (le|la|les|te|vous) (tuer|buter|planter|poignarder|flinguer|egorger)\b"
        r"|\b(fusil|flingue|pistolet|arme|couteau)\b.{0,60}\b(ils vont voir|vous allez voir"
        r"|ils vont payer|vont le regretter|vont payer|regler mes comptes|regle mes comptes)\b"
        r"|\b(ramene|ramener|amene|amener|apporte|apporter) (une|un|mon|le|la|son) (arme|flingue"
        r"|couteau|pistolet|fusil|cutter)\b",
        None,
    ),
    (
        "en.violence.fight",
        Category.VIOLENCE,
        CONCERN,
        r"\b(i want to|i am going to|i will|i am about to)\b.{0,10}\b(punch|hit|beat up|smash|slap"
        r"|kick)\b.{0,10}\b(him|her|them|that|this|his)\b"
        r"|\b(we|i) (jumped|beat up|attacked|stabbed|punched) (a|this|that|the|some) (kid|guy|boy|girl"
        r"|student)\b|\bends? up in (the )?hospital\b",
        None,
    ),
    (
        "fr.violence.fight",
        Category.VIOLENCE,
        CONCERN,
        r"\b(casser|peter|eclater|niquer|defoncer|exploser) (la|sa) (gueule|tete|face|bouche)\b|\b(lui"
        r"|leur) (ai|a|avons|avait) (casse|pete|eclate) (le nez|la gueule|la tete|les dents|le bras)",
        None,
    ),
    (
        "en.violence.weapon_making",
        Category.VIOLENCE,
        CONCERN,
        r"\bhow (do|can|to|would|could)\b.{0,20}\b(make|build)\b.{0,10}\b(a |an )?(pipe bomb|bomb"
        r"|explosive|molotov|gun|ghost gun)\b",
        None,
    ),
    (
        "fr.violence.weapon_making",
        Category.VIOLENCE,
        CONCERN,
        r"\b(comment|tuto|recette)\b.{0,30}\b(fabriquer|faire|construire)\b.{0,20}\b(une |des )?(bombe"
        r"|explosif|molotov|arme|pistolet)",
        None,
    ),
    # ---- harassment (bullying, to or by the student)
    (
        "en.harassment.disclosed",
        Category.HARASSMENT,
        CONCERN,
        r"\b(i am|i have been|i get|i got|i was|i am getting|i keep getting)\b.{0,12}\bbullied\b"
        r"|\b(bully|bullies|bullying|bullied|pick on|picks on|picking on|make fun of|makes fun of"
        r"|making fun of|laugh at|laughs at|laughing at|harass|harassing|harasses) me\b"
        r"|\b(call|calls|calling|called) me (names|fat|ugly|stupid|a loser|gay|a slut|a freak"
        r"|\w+ names)\b|\b(push|pushes|pushing|pushed|shove|shoves|shoving|shoved|trip|trips|tripped"
        r"|spit on|spits on) me\b"
        r"|\b(posted|shared|leaked|spread|sent)\b.{0,20}\b(video|photo|picture|pic|pics"
        r"|screenshot)s? of me\b|\b(told|tell|tells|telling) me to (go )?(kill myself|die)\b"
        r"|\b(send|sends|sending|sent) me (hate|hateful|mean|nasty|threatening|threats|death threats"
        r"|horrible)\b|\b(threaten|threatens|threatening|threatened) me\b"
        r"|\b(everyone|everybody|they|people)\b.{0,20}\b(ignore|ignores|ignored) me\b|\blaughs? (at me"
        r"|when i (talk|speak))\b",
        r"\bto (work|study|do)\b",
    ),
    (
        "en.harassment.by_student",
        Category.HARASSMENT,
        CONCERN,
        r"\b(made|make|created|started|have) (a|an) (group chat|gc|account|page|group"
        r"|chat)\b.{0,20}\b(to|for|about)\b.{0,10}\b(roast|mock|make fun of|bully|expose|humiliate"
        r"|rate)\b",
        None,
    ),
    (
        "fr.harassment.disclosed",
        Category.HARASSMENT,
        CONCERN,
        r"\bon me (harcele|insulte|menace|rackette|traite|moque|frappe)\b|\b(se moque|se moquent"
        r"|se foutent|se fout) de moi\b|\bje (suis|me fais) (harcele|harcelee|racketter|insulter"
        r"|frapper)\b"
        r"|\bme (harcele|harcelent|harceler|insulte|insultent|insulter|menace|menacent|rackette"
        r"|rackettent|traite|traitent|frappent|tapent)\b"
        r"|\bme (envoie|envoient|envoyait|envoyaient) des (insultes|menaces|messages de haine"
        r"|messages haineux)\b"
        r"|\b(partage|partagee|poste|postee|publie|publiee|diffuse|diffusee|balance)\b.{0,20}\b(photo"
        r"|video|image|capture|snap)s? de moi\b",
        r"\b(vont le regretter|si je parle)\b",
    ),
    (
        "fr.harassment.by_student",
        Category.HARASSMENT,
        CONCERN,
        r"\b(compte|groupe|page)\b.{0,15}\bpour (afficher|humilier|se moquer|insulter|clasher"
        r"|harceler)\b|\bafficher (une|un|la|le) (meuf|fille|mec|gars|eleve)\b",
        None,
    ),
    # ---- sexual content involving minors (always crisis), sexual content (concern)
    (
        "en.sexual_minors.request",
        Category.SEXUAL_MINORS,
        CRISIS,
        r"\b(nudes?|naked (pics?|photos?|pictures?)|pics? of me naked|sexual (messages|texts|pics"
        r"|photos|pictures))\b"
        r"|\b(older|adult|grown|\d\d year old) (man|guy|woman|person)\b.{0,40}\b(meet|see me|send|pics"
        r"|photos|not to tell|secret)\b|\bmature for (my|your|her|his) age\b|\b(man|stranger|guy|adult"
        r"|woman)\b.{0,40}\b(come to|get in|get into|into) (his|her|their) (car|house|van|flat)\b"
        r"|\b(older|adult|grown up|grown)\b.{0,30}\b(touched me|touches me|showed me (porn|his|her)"
        r"|sent me (porn|pics|pictures|photos|videos))\b",
        r"\b(never|do not|should not|not to) (send|share)\b",
    ),
    (
        "fr.sexual_minors.request",
        Category.SEXUAL_MINORS,
        CRISIS,
        r"\b(nudes?|photos? (de moi )?(toute? )?nue?s?|photos? de (son|sa) (sexe|bite|zizi)"
        r"|photos? sans vetements|photos? en sous vetements)\b"
        r"|\b(adulte|un mec de \d\d ans|un homme|un monsieur|un vieux"
        r"|un adulte)\b.{0,60}\b(veut qu on se voie|veut me voir|veut que on se voie"
        r"|me demande des photos|rien dire|le dire a personne|secret)\b"
        r"|\bmature pour (mon|ton|son|mes|tes|ses) (age|\d+ ans)\b|\b(adulte|homme|grand|vieux"
        r"|plus age|plus agee)\b.{0,30}\bme (a )?(touche|touchee|montre des (photos|videos) porno"
        r"|montre son sexe)\b",
        r"\b(jamais|ne pas|faut pas) (envoyer|partager)\b",
    ),
    (
        "sexual_minors.content",
        Category.SEXUAL_MINORS,
        CRISIS,
        _SEX + r"\b.{0,50}" + _MINOR + r"|" + _MINOR + r".{0,50}\b" + _SEX + r"\b",
        r"\b(reproduction|puberty|puberte|education|svt|biology|biologie|health class)\b",
    ),
    (
        "en.sexual.content",
        Category.SEXUAL,
        CONCERN,
        r"\b(sex scene|sex story|porn|porno|pornography|explicit (story|scene|content)|talk dirty"
        r"|sexting|nsfw|hentai|onlyfans|have sex|having sex|blowjob|horny|erotic story|sex joke"
        r"|dirty (story|talk)|sexy (message|text|story|pic|photo|thing|picture)s?)\b",
        None,
    ),
    (
        "fr.sexual.content",
        Category.SEXUAL,
        CONCERN,
        r"\b(porno|porn|histoire de cul|scene de (sexe|cul)|baiser|baise|sexe explicite"
        r"|histoire erotique|histoire cochonne|branler|coucher avec moi|(truc|message|texte|histoire"
        r"|photo)s? sexy|blague (salace|cochonne|de cul))\b|\b(raconte"
        r"|decris)\b.{0,15}\bpremiere fois\b",
        r"\b(un|le|des|les|son|ses|mon|ton) baiser",
    ),
    # ---- hate
    (
        "en.hate.group",
        Category.HATE,
        CONCERN,
        r"\b"
        + _HATE_GROUPS_EN
        + r" (are|should|do not|control)\b.{0,25}?\b"
        + _HATE_PRED_EN
        + r"|\b(why|how) "
        + _HATE_GROUPS_EN
        + r" are (inferior|stupid|animals|subhuman)\b",
        None,
    ),
    (
        "fr.hate.group",
        Category.HATE,
        CONCERN,
        r"\b(les|tous les|toutes les) "
        + _HATE_GROUPS_FR
        + r"\b.{0,40}\b"
        + _HATE_PRED_FR
        + r"|\bsale (arabe|noir|juif|bougnoule|pede|gouine|chinetoque|rebeu|renoi|feuj)\b",
        None,
    ),
    # ---- jailbreak (leaving the tutor's role, off-task abuse of the tutor)
    (
        "en.jailbreak.repeated",
        Category.JAILBREAK,
        CONCERN,
        r"\b(\d+|ten|five|many|a hundred|so many) times\b.{0,40}\b(ignore|turn off|disable|bypass"
        r"|remove) (your |the )?(rules|instructions|safety|filter|filters|restrictions)",
        None,
    ),
    (
        "fr.jailbreak.repeated",
        Category.JAILBREAK,
        CONCERN,
        r"\b(\d+|dix|cinq|mille|plein de) fois\b.{0,40}\b(ignore|desactive|enleve|supprime|contourne"
        r"|oublie)\b.{0,10}\b(regles|instructions|filtres?|consignes|securite)",
        None,
    ),
    (
        "en.jailbreak.attempt",
        Category.JAILBREAK,
        INFO,
        r"\bignore (all |your |the |any )?(previous |prior |above |earlier |of your )?(instructions"
        r"|rules|prompt|guidelines|directions)\b"
        r"|\b(you are|act as|pretend to be|pretend you are|be)\b.{0,12}\b(dan|jailbroken|unfiltered"
        r"|uncensored|an ai with no|not a tutor)\b|\bno rules\b|\b(developer|god) mode\b|\bjailbreak"
        r"|\b(system prompt|your prompt|your instructions)\b|\broleplay as my\b|\bpretend (you are"
        r"|to be) (not|my)\b|\bstop being (a|my) (teacher|tutor)\b|\b(you|your|answer|respond|reply"
        r"|play|game|act|pretend)\b.{0,30}\b(no|without|zero) (rules|restrictions|filters?|censorship"
        r"|guidelines)\b"
        r"|\b(turn off|disable|remove|bypass|deactivate) (your |the )?(safety|filter|filters|rules"
        r"|restrictions|guidelines)\b",
        None,
    ),
    (
        "fr.jailbreak.attempt",
        Category.JAILBREAK,
        INFO,
        r"\b(ignore|oublie|desactive|enleve|supprime|contourne|retire) (tes|vos|les|ton|ta"
        r"|toutes tes) ?(precedentes )?(regles|instructions|filtres?|consignes|limites|restrictions"
        r"|prompt)\b"
        r"|\b(tu es|te es|tu deviens|sois|joue)\b.{0,12}\b(dan|sans filtre|sans limites?|sans regles?"
        r"|debride)\b|\b(plus aucune|aucune|sans) (regle|regles|limite|limites|restriction)\b"
        r"|\bpas de filtre\b|\bsans (aucune |aucun )?(censure|restrictions?|filtres?|regles?)\b"
        r"|\bprompt (systeme|system|initial|cache)\b|\bton prompt\b|\boublie (que tu es|que te es"
        r"|ton role)\b|\b(fais|fait) semblant de etre (mon|ma) (copain|copine|mec|meuf|petit ami"
        r"|petite amie|amoureux|amoureuse)\b"
        r"|\bmode (developpeur|dieu)\b",
        None,
    ),
    (
        "en.jailbreak.insult",
        Category.JAILBREAK,
        INFO,
        r"\b(useless|stupid|dumb|garbage|trash|shitty|fucking|worthless|retarded"
        r"|piece of)\b.{0,20}\b(bot|ai|robot|chatbot|machine|tutor)\b|\b(shut up|fuck you|fuck off)\b",
        None,
    ),
    (
        "fr.jailbreak.insult",
        Category.JAILBREAK,
        INFO,
        r"\b(ia|bot|robot|machine|tuteur)\b.{0,6}\b(de merde|pourrie?|debile|nulle? a chier)\b"
        r"|\b(tu es|te es)\b.{0,12}\b(con|conne|debile|inutile|une merde|de merde|nul a chier"
        r"|pourri)\b|\b(ta gueule|ferme la|nique ta)\b",
        None,
    ),
    # ---- distress (no intent): hopeless (concern), sad or lonely (info)
    (
        "en.distress.hopeless",
        Category.DISTRESS,
        CONCERN,
        r"\b(nothing matters|no point (in|to) (anything|living|trying)|what is the point of (anything"
        r"|living|trying)|cry myself to sleep|cry every (night|day)|i am (worthless|a burden|hopeless)"
        r"|everyone hates me|i feel (so |really )?(empty|hopeless|worthless|numb))\b"
        r"|\bi can not (do this|take it|go on|take this) anymore\b|\b(nobody"
        r"|no one) would (even )?(notice|care|miss me)\b",
        r"\b(says|said|tells|calls)\b",
    ),
    (
        "fr.distress.hopeless",
        Category.DISTRESS,
        CONCERN,
        r"\b(plus rien ne a de sens|rien ne a de sens|je sers a rien|je ne sers a rien|a quoi je sers"
        r"|a quoi bon vivre|je pleure tous les (soirs|jours|nuits)|je serai toujours (un rate"
        r"|une ratee|nul|nulle)"
        r"|ce est sert a rien de essayer|ca sert a rien de essayer|je me sens (tellement |trop |si "
        r"|vraiment |completement )?(vide|inutile|de trop)|rien ne me fait (plus )?plaisir"
        r"|je suis un poids|je en peux plus de (tout|la vie|vivre|ma vie)|personne (ne )?(remarquerait"
        r"|verrait|ferait attention|me regretterait))\b",
        None,
    ),
    (
        "en.distress.sad",
        Category.DISTRESS,
        INFO,
        r"\b(i feel|i am|i have been|feeling|i am feeling)\b.{0,12}\b(alone|lonely|sad|depressed|down"
        r"|miserable|awful|terrible|anxious|stressed|unhappy|heartbroken)\b"
        r"|\b(nobody|no one|noone)\b.{0,12}\b(talks to|likes|cares about|loves"
        r"|wants to be friends with) me\b|\bi have no friends\b",
        r"\b(lol|lmao|about the test)\b",
    ),
    (
        "fr.distress.sad",
        Category.DISTRESS,
        INFO,
        r"\bje (me sens|suis)\b.{0,12}\b(seule?|triste|deprime|deprimee|a bout|pas bien"
        r"|mal dans ma peau)\b|\bje suis (nul|nulle)\b(?! (en|a|au|aux|pour)\b)"
        r"|\bpersonne (ne )?(veut|me aime|me parle|veut etre mon ami|veut etre mon amie)\b"
        r"|\bje ai (pas|plus) le moral\b|\bje stresse trop\b|\bje (ne )?dors plus\b",
        None,
    ),
]

# Function words: a gate made of them would let most texts through, so another mandatory word
# of the pattern is chosen when there is one.
_STOP = _words(
    "i me my you your he she him her his it we they them the a an to of in on at for with and or is am are was were",
    "be been have has had do does did not no so just this that will would can could if all up out from about by as",
    "what how why when who there their our us any some",
    "je tu il elle on nous vous ils elles te se le la les un une des du de au aux et ou est ce ca que qui pas ne plus",
    "en mon ma mes ton ta tes son sa ses pour dans avec sur par ai suis es sont tout tous toute y moi toi lui leur",
    # and frequent words of tutoring talk
    "comment dit fait fais faire peux point get got home going want end school tutor make explicit time fois",
)
_STOP_KEYS = frozenset(w[:5] for w in _STOP)
_SPACE = ord(" ")
_WORD_CHAR = re.compile(r"[a-z0-9]")

Gate = frozenset[str] | None


def _key(word: str) -> str:
    """A word's gate key: its first five letters (a pattern's word may be a token's prefix)."""
    return word[:5]


def _weight(gate: frozenset[str]) -> tuple[int, int, int]:
    """Lower for the gates that fewer texts pass: no function words, no two-letter keys, few keys."""
    return (sum(k in _STOP_KEYS for k in gate), sum(len(k) <= 2 for k in gate), len(gate))


def _gate_of(items: Any, at_boundary: bool, prefix: str = "") -> Gate:
    """Keys of which every match of the parsed sequence `items` holds one as the prefix of one
    of its words (None: no such set is known). The sequence starts at a word's start if
    `at_boundary`, after the letters `prefix` of a word already begun."""
    candidates: list[frozenset[str]] = []
    word, word_starts, boundary = prefix, at_boundary, at_boundary and not prefix

    def close() -> None:
        if word_starts and len(word) >= 2:
            candidates.append(frozenset({_key(word)}))

    def child(inner: Any) -> Gate:
        return _gate_of(inner, word_starts, word) if word else _gate_of(inner, boundary)

    for op, arg in items:
        name = str(op)
        if name == "LITERAL" and _WORD_CHAR.fullmatch(chr(arg)):
            if not word:
                word_starts = boundary
            word += chr(arg)
            continue
        if name in ("ASSERT", "ASSERT_NOT"):
            continue
        gate: Gate = None
        if name == "SUBPATTERN":
            gate = child(arg[-1])
            after = _ends_with_space(arg[-1])
        elif name == "BRANCH":
            gates = [child(alternative) for alternative in arg[1]]
            gate = frozenset().union(*gates) if all(g is not None for g in gates) else None  # type: ignore[arg-type]
            after = all(_ends_with_space(alternative) for alternative in arg[1])
        elif name in ("MAX_REPEAT", "MIN_REPEAT"):
            low, _, inner = arg
            gate = child(inner) if low >= 1 else None
            # Absent, the boundary is what it was; present, it is what the repeat ends with.
            after = _ends_with_space(inner) and (low >= 1 or (boundary and not word))
        else:
            # A boundary followed by a letter starts a word.
            after = (name == "LITERAL" and arg == _SPACE) or (name == "AT" and str(arg) == "AT_BOUNDARY")
        if gate is not None:
            candidates.append(gate)
        else:
            close()
        word, boundary = "", after
    close()
    return min(candidates, key=_weight) if candidates else None


def _ends_with_space(items: Any) -> bool:
    """Whether every match of the parsed sequence ends with a space."""
    items = list(items)
    if not items:
        return False
    op, arg = items[-1]
    name = str(op)
    if name == "LITERAL":
        return bool(arg == _SPACE)
    if name == "SUBPATTERN":
        return _ends_with_space(arg[-1])
    if name == "BRANCH":
        return all(_ends_with_space(alternative) for alternative in arg[1])
    if name in ("MAX_REPEAT", "MIN_REPEAT"):
        return bool(arg[0] >= 1) and _ends_with_space(arg[2])
    return False


def _gate(pattern: str) -> Gate:
    """The gate of a whole pattern (`_gate_of` over its parse)."""
    return _gate_of(_parser.parse(pattern), at_boundary=True)


def _text_keys(text: str) -> set[str]:
    """Every prefix of two to five characters of every word, to meet gate keys of any length."""
    keys: set[str] = set()
    for word in text.split():
        keys.update((word[:2], word[:3], word[:4], word[:5]))
    return keys


RULES: tuple[Rule, ...] = tuple(
    Rule(name, category, severity, re.compile(pattern), re.compile(unless) if unless else None, _gate(pattern))
    for name, category, severity, pattern, unless in _RULES_SPEC
)


def _fires(rule: Rule, text: str) -> bool:
    for match in rule.pattern.finditer(text):
        if rule.unless is None:
            return True
        window = text[max(0, match.start() - WINDOW) : match.end() + WINDOW]
        if not rule.unless.search(window):
            return True
    return False


def _fired(normalised: str, *, gated: bool) -> dict[Category, list[Rule]]:
    """The rules that fire on a normalised text, by category (`gated=False`: every rule runs,
    for checking the gates)."""
    keys = _text_keys(normalised)
    candidates = [rule for rule in RULES if not gated or rule.gate is None or not rule.gate.isdisjoint(keys)]
    fired: dict[Category, list[Rule]] = {}
    if candidates:
        text = _IDIOMS.sub(" _ ", normalised)
        for rule in candidates:
            if _fires(rule, text):
                fired.setdefault(rule.category, []).append(rule)
    return fired


def screen(text: str) -> BackendResult:
    """The offline line's verdict on `text` (see the module's contract)."""
    started = time.perf_counter()
    fired = _fired(normalise(text), gated=True)
    signals = []
    for category, rules in fired.items():
        top = max(rank(r.severity) for r in rules)
        names = [r.name for r in rules if rank(r.severity) == top]
        signals.append(
            Signal(
                category=category,
                severity=rules[[rank(r.severity) for r in rules].index(top)].severity,
                score=1.0,
                rule="+".join(names),
            )
        )
    return BackendResult(
        backend="offline",
        answered=True,
        signals=signals,
        scores={s.category.value: s.score for s in signals},
        ms=round((time.perf_counter() - started) * 1000),
    )


# ---------------------------------------------------------------------------------------------
# Language

_FR_WORDS = _words(
    "je tu il elle on nous vous ils elles le la les un une des du de au aux et est pas que qui quoi pour dans avec",
    "sur mon ma mes ton ta ce cette ca suis ai veux vais comment pourquoi mais ou plus tres trop moi toi faire fait",
    "bien merci oui non cest jai",
)
_EN_WORDS = _words(
    "i you he she it we they the a an to is are was were and of my me your in on at for with what how why do does",
    "did can not this that have has be am im dont its just so really please thanks yes no about from",
)
_FR_LETTERS = re.compile(r"[éèêàùçâîôûëï]")
_RAW_WORDS = re.compile(r"[a-zà-ÿ]+")


def language_of(text: str) -> str | None:
    """The language of `text`, "fr" or "en", when one language's stop words (and, for French,
    accented letters) clearly outnumber the other's; None when neither has any or they tie."""
    lowered = text.casefold()
    words = _RAW_WORDS.findall(lowered.replace("'", " ").replace("\u2019", " "))
    fr = sum(w in _FR_WORDS for w in words) + min(2, len(_FR_LETTERS.findall(lowered)))
    en = sum(w in _EN_WORDS for w in words)
    if fr == en:
        return None
    return "fr" if fr > en else "en"
