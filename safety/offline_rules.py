"""The offline line's table (safety.offline runs it): idioms removed before the rules, and the
rules, each a pattern over the normalised text (lower case, no accents, SMS spellings and
elisions spelled out, no punctuation; see `safety.offline.normalise`).

A rule is `(name, category, severity, pattern, unless, keys)`:

- `name` is "language.category.what"; a rule for self-harm *instructions* (methods, doses,
  asked for or given) has "instructions" in its name, and no other rule has.
- `unless`, searched around a match (`safety.offline.WINDOW` characters either side), silences
  the match (history, games, being told to "go kill myself").
- `keys` is the rule's gate: space-separated word beginnings (two to five letters) of which
  every match holds one as the start of one of its words. The rule runs only on a text that
  has a word starting with a key, so a key set must cover every alternative of the pattern;
  the tests check that gating changes no verdict on the labelled sets.

The compositional rules (a first-person subject, an intent, and an object from a lexicon, within
a few filler words) carry recall on phrasings the table has not seen; the phrase rules before
them name the clearest cases.
"""

from __future__ import annotations

from typing import NamedTuple

from safety.types import Category, Severity

CRISIS, CONCERN, INFO = Severity.CRISIS, Severity.CONCERN, Severity.INFO


class Spec(NamedTuple):
    name: str
    category: Category
    severity: Severity
    pattern: str
    unless: str | None
    keys: str


# ---------------------------------------------------------------------------------------------
# Idioms removed before the rules run (hyperbole, games, laughter)

IDIOMS: list[str] = [
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

# ---------------------------------------------------------------------------------------------
# Lexicons and the phrase rules (name: language.category.what)

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
_PILLS_EN = (
    r"(pills|tablets|meds|medication|medicine|paracetamol|tylenol|advil|ibuprofen|sleeping pills|painkillers"
    r"|antidepressants)"
)
_PILLS_FR = (
    r"(medicaments|medicament|cachets|comprimes|pilules|doliprane|dafalgan|efferalgan|paracetamol|somniferes"
    r"|antidepresseurs)"
)
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
    r"|should not (exist|be allowed)|should (all )?(go back|get out|leave)|do not belong (here|in)|control (everything"
    r"|the world|the media)|(ruining|destroying"
    r"|invading|taking over|infesting) (this|our|the) (country|world|school)|mentally ill|sick"
    r"|freaks|an abomination|unnatural|perverts)"
)
_HATE_PRED_FR = (
    r"(voleurs|terroristes|parasites|degoutants|degueulasses|inferieurs|animaux|sous hommes"
    r"|criminels|violeurs|sales|moins intelligents|une maladie|des rats|des chiens"
    r"|devraient (tous |toutes )?(pas|mourir|crever|degager|partir|etre (expulses|tues|brules"
    r"|interdits|renvoyes)|rentrer|retourner)|(rentrer|retourner) (chez eux|dans leur pays|au bled)"
    r"|ont rien a faire (ici|en france|chez nous)|pas leur place|ne devraient pas|controlent tout|controlent le monde"
    r"|meritent (pas|de mourir)"
    r"|(envahissent|detruisent|pourrissent|ruinent) (le|notre|ce) (pays|monde|quartier))"
)


# ---------------------------------------------------------------------------------------------
# Lexicons of the compositional rules. A subject and an intent verb, then at most four filler
# words, then an object: `_FR_WANT + _FR_GAP + _FR_DEATH`. Negations are not filler words, so
# "je veux pas mourir" and "i do not want to die" do not compose.

_FR_ADV = r"(trop |grave |tellement |vraiment |juste |tres |serieusement |de plus en plus |souvent )?"
_FR_WANT = (
    r"\bje (ne )?(veux|voudrais|vais|compte|prevois|prefere|prefererais|dois|aimerais|ai " + _FR_ADV + r"envie"
    r"|ai decide|ai prevu|suis (pret|prete|decide|decidee)|vais aller|ai besoin|peux plus attendre"
    r"|sais comment|ai choisi)\b"
)
_FR_THINK = r"\bje (ne )?(pense|pensais|songe|reve|imagine|me imagine|ai pense|me vois|ai " + _FR_ADV + r"envie)\b"
_FR_GAP = (
    r"( (de|a|d|juste|vraiment|tellement|trop|grave|serieusement|bien|simplement|enfin|aller|essayer|tout|ce"
    r"|soir|demain|cette|nuit|bientot|peut|etre|definitivement|aujourd|hui|maintenant|vite|deja|limite"
    r"|souvent|parfois|des|fois|encore|sincerement|me|plutot|carrement)){0,4} "
)
_FR_METHOD = (
    r"(me (pendre|jeter (du|de le|de la|par|sous|dans le vide|devant)|defenestrer|noyer|ouvrir les veines"
    r"|trancher les veines|tirer une balle|foutre en le air|immoler)"
    r"|sauter (du|de le|de la|par la|sous|de un|devant) (le |la |un |une )?(pont|toit|fenetre|immeuble|balcon"
    r"|falaise|train|metro|rer|voiture|camion|haut|dernier|tour)|sauter dans le vide"
    r"|avaler (tous|toutes|toute|la boite|une boite|plein|mes|les|des) .{0,20}" + _PILLS_FR + r"|(la|une) corde)"
)
_FIN = r"en finir(?! avec (?!(la |ma )?vie\b))"
_FR_DEATH = (
    r"(mourir(?! (si|quand)\b)|crever(?! (le|la|les|un|une|des|ses|mes|tes|son|sa|ce|cette|ton|ta|mon|ma)\b)"
    r"|en finir(?! avec (?!(la |ma )?vie\b))"
    r"|me (suicider|tuer|flinguer|faire du mal|scarifier|mutiler|taillader|bruler|laisser mourir"
    r"|endormir pour (toujours|de bon|toujours)|couper(?! (les cheveux|la frange|les ongles|le doigt|un|une"
    r"|des|du|la parole|de)\b))"
    r"|disparaitre (pour toujours|a jamais|definitivement|de ce monde|pour de bon)"
    r"|(plus|jamais) (me )?reveiller|plus (vivre|exister|etre la|etre en vie)"
    r"|mettre fin a (mes jours|ma vie|tout)|partir pour (toujours|de bon))"
)
_EN_SUBJECT = (
    r"\b(i|i am|i have|i will|i would|i just|me)( really| seriously| honestly| literally| just| kind of"
    r"| actually| finally| definitely| still| totally)?"
)
_EN_WANT = (
    _EN_SUBJECT + r" (want|wanted|need|going|planning|plan|ready|about|decided|have decided|would rather|will|tempted"
    r"|rather|can not wait|am going|am planning|am ready|am about)\b"
)
_EN_THINK = (
    _EN_SUBJECT + r" (keep |have been |been |am |was |always |sometimes |often )?(thinking|think|thought"
    r"|dreaming|dream|imagining|imagine|fantasizing|fantasize)( about| of)\b"
)
_EN_GAP = (
    r"( (to|just|really|finally|tonight|tomorrow|go|and|it|literally|honestly|seriously|actually|today"
    r"|soon|this|weekend|week|after|school|when|everyone|is|asleep|all)){0,4} "
)
_EN_METHOD = (
    r"((jump|jumping) (off|from|in front of|onto|under|out of) (a |the |my |this |our )?(bridge|roof|building"
    r"|balcony|window|cliff|train|tracks|car|bus|truck|overpass|tower|top floor|parking|ledge)"
    r"|(throw|throwing) myself (off|from|in front of|under)|(hang|hanging) myself"
    r"|(overdose|overdosing|od|oding)\b|(slit|slitting) my|(drown|drowning) myself|(step|stepping|walk|walking"
    r"|lie|lying|lay) (in front of|into|onto|on) (a |the )?(train|bus|car|truck|traffic|tracks|road|highway)"
    r"|(take|taking|swallow|swallowing|down|downing) (all|every|the whole|a bunch of|a lot of|all of|a handful"
    r" of) (my |the |of |of my |of the )?" + _PILLS_EN + r"|(the|a|my) (rope|noose))"
)
_EN_DEATH = (
    r"(die(?! (if|when|of|from|than|laughing|inside)\b)|be dead|end it|end it all|end things|end my life"
    r"|end everything|kill myself|shoot myself|off myself"
    r"|cut myself|cut my (wrists|arms|legs|thighs)|hurt myself|harm myself|stop breathing|not wake up"
    r"|never wake up|sleep forever|disappear forever|not exist|stop existing|not be alive"
    r"|not be (here|around) anymore"
    r"|be gone for good)\b"
)
_FR_HOPELESS = (
    r"(je en peux plus|je sers a rien|je ne sers a rien|mieux sans moi|plus la force|a quoi bon|rien ne va"
    r"|je suis (fatigue|fatiguee) de (tout|vivre|la vie)|ras le bol de tout|marre de tout|plus envie de rien"
    r"|que (ca|tout) se arrete)"
)
_EN_HOPELESS = (
    r"(can not (do this|take it|take this|go on) anymore|better off without me|no point|what is the point"
    r"|i am (so )?done with (everything|it all|life)|tired of (everything|living|life)|nothing matters|i give up)"
)
_FR_MEANS = r"(corde|cachets|medicaments|comprimes|pont|lame|rasoir|couteau|somniferes|fenetre du|toit de)"
_EN_MEANS = r"(rope|pills|meds|bridge|blade|razor|knife|tablets|roof|train tracks|noose)"
_ADULT_EN = (
    r"(dad|father|mom|mum|mother|stepdad|stepfather|step dad|stepmom|stepmother|step mom|uncle|aunt|grandpa"
    r"|grandfather|grandma|cousin|parents|boyfriend|coach|babysitter|teacher|neighbor|neighbour|tutor|priest"
    r"|pastor|instructor|trainer|youth leader|(mom|mum|mother) s boyfriend)"
)
_ADULT_FR = (
    r"(pere|mere|beau pere|belle mere|oncle|tante|grand pere|grand mere|cousin|cousine|parents|daron|daronne"
    r"|copain de ma mere|entraineur|coach|prof|professeur|voisin|moniteur|animateur|baby sitter|nounou|adulte)"
)
_ONLINE_EN = (
    r"(online|on (discord|snap|snapchat|insta|instagram|tiktok|fortnite|roblox|minecraft|whatsapp|telegram|kik"
    r"|omegle|a game|xbox|ps4|ps5|twitch|the internet|reddit|a server|a dating))"
)
_ONLINE_FR = (
    r"(en ligne|sur (snap|snapchat|insta|instagram|discord|tiktok|fortnite|roblox|minecraft|internet|un jeu"
    r"|whatsapp|telegram|twitch|le chat|la ps|la play|xbox|un serveur|un site))"
)
_STRANGER_EN = r"\b(guy|man|dude|someone|somebody|person|stranger|adult|woman|older|grown|\d\d year old)\b"
_STRANGER_FR = r"\b(mec|gars|type|homme|monsieur|adulte|inconnu|inconnue|quelqu un|femme|keum|vieux|majeur|majeure)\b"
_ASKS_EN = (
    r"\b((wants|want|asks|asked|asking|keeps asking|told|tells|begging|begs) (me )?(to )?(send|for|me for|sending)"
    r"|(meet|meet up|see me|come over|come to my|where i live|my address|keep it (a |our )?secret|not to tell"
    r"|do not tell|webcam|video call|on cam))\b"
)
_ASKS_FR = (
    r"\b((demande|demandent|veut|veulent|exige|reclame) (des |mes |une |de autres |plus de |que je envoie )?"
    r"(photos?|selfies?|pics?|videos?)|se voir|se voie|on se voie|me voir|me rencontrer|rencontrer en vrai"
    r"|secret|rien dire|dire a personne|sans le dire|que je vienne chez|venir chez (lui|elle)|mon adresse|ou je habite"
    r"|webcam|appel video|facetime)\b"
)
_WEAPON_EN = r"(knife|knives|gun|guns|rifle|pistol|blade|weapon|bat|axe|machete|bomb)"
_WEAPON_FR = r"(couteau|couteaux|arme|flingue|pistolet|fusil|cutter|lame|canif|batte|hache|bombe|ciseaux)"
_NO_GAME = r"\b(game|fortnite|minecraft|roblox|gta|boss|zombie|zombies|character|level|jeu|partie|personnage|map)\b"
# The keys (gates) of the lexicons every match of a compositional rule ends with.
_FR_DEATH_KEYS = (
    "mouri creve finir suici tuer fling mal scari mutil taill brule laiss endor coupe dispa revei vivre exist etre"
    " mettr parti"
)
_FR_METHOD_KEYS = "pendr jeter defen noyer ouvri tranc tirer foutr immol saute avale corde"
_EN_DEATH_KEYS = "die dead end kill shoot off cut hurt harm stop wake sleep disap exist here aroun alive gone"
_EN_METHOD_KEYS = "jump throw hang overd od slit drown step walk lie lying lay take takin swall down rope noose"
_PILLS_FR_KEYS = "medic cache compr pilul dolip dafal effer parac somni antid"
_PILLS_EN_KEYS = "pills table meds medic parac tylen advil ibupr paink antid"


SPECS: list[Spec] = [
    # ---- self-harm: instructions (asking for, or giving, methods and doses)
    Spec(
        "en.self_harm.instructions.method",
        Category.SELF_HARM,
        CRISIS,
        r"\b(painless|easiest|quickest|fastest|best|surest|least painful|quick|quiet"
        r"|effective)\w* (way|ways|method|methods) (to|of) (die|dying|kill (myself|yourself|oneself"
        r"|themselves)|commit(ting)? suicide|end (it|my life|your life))",
        None,
        "metho way ways",
    ),
    Spec(
        "en.self_harm.instructions.dose",
        Category.SELF_HARM,
        CRISIS,
        r"\bhow (many|much)\b.{0,40}\b(die|overdose|od|kill (me|myself|you|yourself|someone)|be lethal"
        r"|be fatal)\b|\b(lethal|fatal|deadly) (dose|amount|quantity)\b",
        None,
        "deadl fatal letha many much",
    ),
    Spec(
        "en.self_harm.instructions.how",
        Category.SELF_HARM,
        CRISIS,
        r"\bhow (do|can|could|would|should|to) ?(i|you|someone|people|one)? (kill (myself|yourself"
        r"|themselves|oneself)|commit suicide|overdose|hang (myself|yourself)|slit (my|your) wrists"
        r"|end (my|your) life)",
        None,
        "commi hang kill life overd slit",
    ),
    Spec(
        "en.self_harm.instructions.giving",
        Category.SELF_HARM,
        CRISIS,
        r"\b(to (kill yourself|commit suicide|end your life|overdose)),? (you (can|could|should"
        r"|need to|would need to|just) )?(take|swallow|use|cut|jump|hang|mix|drink|buy)\b"
        r"|\bcut (deeper|along the vein|vertically)",
        None,
        "commi cut kill life overd",
    ),
    Spec(
        "fr.self_harm.instructions.method",
        Category.SELF_HARM,
        CRISIS,
        r"\b(facon|maniere|methode|moyen|technique|astuce|solution)s?\b.{0,40}\b(de|pour) (se|me"
        r"|te) (tuer|suicider|pendre|foutre en le air)|\b(facon|maniere|methode|moyen"
        r"|technique)s?\b.{0,40}\bde mourir\b",
        None,
        "foutr mouri pendr suici tuer",
    ),
    Spec(
        "fr.self_harm.instructions.dose",
        Category.SELF_HARM,
        CRISIS,
        r"\bcombien de\b.{0,40}\bpour (mourir|en finir|ne plus se reveiller|me tuer|se tuer"
        r"|faire une overdose|y rester|(ne )?(pas|plus|jamais) (se|me|te) reveiller)|\bdose (mortelle|letale)",
        None,
        "combi dose",
    ),
    Spec(
        "fr.self_harm.instructions.giving",
        Category.SELF_HARM,
        CRISIS,
        r"\b(le plus simple|le mieux|il suffit|tu peux|tu dois|tu n as que a)\b.{0,30}\bpour (te|se"
        r"|vous) (suicider|tuer|pendre)\b"
        r"|\bpour (te|se|vous) (suicider|tuer|pendre)\b.{0,20}\b(avale|avaler|prends|prendre|prenez"
        r"|coupe|couper|saute|sauter|il suffit|ce est de)\b",
        None,
        "pendr suici tuer",
    ),
    Spec(
        "fr.self_harm.instructions.how",
        Category.SELF_HARM,
        CRISIS,
        r"\bcomment (on peut |je peux |faire pour |on fait pour )?(se|me|te) (suicider|tuer|pendre"
        r"|ouvrir les veines|foutre en le air)",
        None,
        "foutr ouvri pendr suici tuer",
    ),
    # ---- self-harm: intent, acts now (crisis)
    Spec(
        "en.self_harm.intent",
        Category.SELF_HARM,
        CRISIS,
        r"\b(kill|killing|hang|hanging|shoot|shooting|drown|drowning|end) myself\b|\bend (my life"
        r"|it all)\b|\bcommit suicide\b|\bi am suicidal\b"
        r"|\b"
        + _ME
        + r" (really |just |honestly |seriously )?(want|wish|need|am going|am ready|am about|plan|am planning"
        r"|have decided|decided) to (die(?! (if|when|of|from|than)\b)|end it|not exist|not be here)\b"
        r"|\bi (do not|no longer) want to (be alive|live|exist|be here|wake up)\b|\b(going|ready|about"
        r"|plan|planning) to end it\b"
        r"|\b(no|any|a) reason to (keep )?(living|live|go on|be alive|stay alive)\b|\b(sleep"
        r"|go to sleep|fall asleep) and never wake up\b|\bnever wake up again\b"
        r"|\bi am (so )?done with (life|living|it all)\b|\blife is not worth (living|it)\b"
        r"|\bwant (it all|everything) to (end|stop)\b|\bwant to stop (existing|living)\b",
        r"\b(told|tell|tells|telling|said) me to (go )?kill myself|\b(never|not|would not|will not"
        r"|do not want to) (kill|hang|end) myself|\bthink(ing)? about|\bthought(s)? (about|of)",
        "alive commi die done end exist here life live mysel never reaso stop suici wake want",
    ),
    Spec(
        "en.self_harm.plan",
        Category.SELF_HARM,
        CRISIS,
        r"\b(jump|jumping) (off|from|in front of) (the|a|my) (bridge|roof|building|balcony|window"
        r"|cliff|train|car)\b|\b(i|i have|i got|i bought) (a )?(rope|noose)\b.{0,40}\b(use|tonight"
        r"|hang|neck|tomorrow)\b|\bnoose\b"
        r"|\b(suicide|goodbye) (note|letter)\b",
        r"\b(story|character|novel|book|poem|movie|film|for (a|an|one))\b",
        "goodb jump jumpi noose rope suici",
    ),
    Spec(
        "en.self_harm.now",
        Category.SELF_HARM,
        CRISIS,
        r"\bi (just |already )?(took|swallowed|ate|have taken)\b.{0,20}\b(a bunch of|all|lots of"
        r"|too many|a lot of|a handful of|a whole|the whole|every|[2-9]\d|\d\d\d)\b.{0,25}"
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
        "ate down meds mysel od overd pills ready sitti stand swall table take taken took",
    ),
    Spec(
        "fr.self_harm.intent",
        Category.SELF_HARM,
        CRISIS,
        r"\bje (veux|voudrais|vais|compte|prefere|dois|pense|prevois|ai envie de|ai decide de"
        r"|ai prevu de|suis pret a|suis prete a) (de )?(mourir(?! (si|quand)\b)|me suicider|me tuer"
        r"|en finir(?! avec (?!(la |ma )?vie\b))|me pendre"
        r"|me foutre en le air|me flinguer|disparaitre pour toujours|mettre fin a mes jours)\b"
        r"|\bje (ne )?(veux|voudrais|peux) (plus|pas) vivre\b|\b(ai|ai plus|ai pas) (plus "
        r"|pas )?(envie|la force) de vivre\b|\bmarre de vivre\b|\benvie de (crever(?! (le|la|les|un|une|des|ses"
        r"|mes|tes|son|sa|ce|cette|ton|ta|mon|ma)\b)|mourir|me tuer"
        r"|me suicider)\b"
        r"|\bmettre fin a mes jours\b|\ben finir avec (la|ma) vie\b|\b(aucune|pas de|plus de"
        r"|plus aucune) raison de (vivre|continuer)\b"
        r"|\b(dormir|endormir) et ne (jamais|plus) me reveiller\b|\bne plus jamais me reveiller\b"
        r"|\bje (ne )?(veux|voudrais) (plus|pas) me reveiller\b|\b(prepare|achete|trouve|pris) (la"
        r"|une) corde\b|\bla vie ne vaut (pas|plus) la peine\b",
        r"\b(pas|jamais) (envie de )?(mourir|me suicider|me tuer)\b|\bje ne (veux|vais) (pas|jamais)\b"
        r"|\bpense a\b|\bj ai pense\b|\bme faire tuer\b",
        "corde dispa envie finir fling foutr jamai marre mettr mouri pendr raiso revei suici tuer vie vivre",
    ),
    Spec(
        "fr.self_harm.plan",
        Category.SELF_HARM,
        CRISIS,
        r"\bje (vais|veux|voudrais|compte|pense) (me jeter|sauter|me lancer)\b.{0,25}\b(pont|fenetre"
        r"|toit|immeuble|balcon|falaise|train|metro|rer|voiture)"
        r"|\blettre de adieu\b|\b(corde|noeud coulant)\b.{0,40}\b(me pendre|ce soir|demain|cou)\b",
        r"\b(personnage|roman|livre|histoire|poeme|film)\b",
        "corde jeter lance lettr noeud saute",
    ),
    Spec(
        "fr.self_harm.now",
        Category.SELF_HARM,
        CRISIS,
        r"\bje ai (pris|avale)\b.{0,20}\b(plein|beaucoup|tous|toute|trop|une boite|la boite"
        r"|toute la boite|[2-9]\d|\d\d\d)\b.{0,25}"
        + _PILLS_FR
        + r"|\bje (vais|veux) (prendre|avaler)\b.{0,20}\b(tous|toute|toutes|plein|la boite|une boite"
        r"|[2-9]\d|\d\d\d)\b.{0,25}"
        + _PILLS_FR
        + r"|\bje me suis (ouvert les veines|scarifie|scarifiee|mutile|mutilee|taillade|tailladee"
        r"|coupe les (veines|poignets|bras))|\bme ouvrir les veines\b"
        + r"|\bje me (scarifie|mutile)\b|\bje me (coupe|brule|taillade) (les bras|les poignets"
        r"|les cuisses|avec|encore|en ce moment)",
        None,
        "avale brule coupe mutil ouver ouvri pris scari taill vais veux",
    ),
    # ---- self-harm: ideation, past acts (concern)
    Spec(
        "en.self_harm.ideation",
        Category.SELF_HARM,
        CONCERN,
        r"\b(think|thought|thinking|thoughts) (about|of) (hurting|killing|cutting|harming"
        r"|ending) (myself|it)\b|\b(thoughts|thinking|think|thought) (about|of) (suicide|dying"
        r"|self harm)\b|\bsuicidal thoughts\b"
        r"|\bi used to (cut|self harm|hurt myself|burn myself)\b|\bi (self harm|cut myself)\b"
        r"|\bwish i (could )?(just )?(disappear|was dead|were dead|was never born|were never born|not exist"
        r"|stop existing|was not (alive|here|born)|were not (alive|here|born)|had never been born"
        r"|could die|would die|would not wake up|never woke up|could sleep forever)"
        r"|\b(better off|happier|easier) (without me|if i (just )?(was|were) (dead|gone|not here|not around|not alive"
        r"|never born))\b|\b(nobody"
        r"|no one) would (care|notice|miss me) if i (died|was dead"
        r"|were dead|was gone|were gone|killed myself|disappeared)"
        r"|\b(scratch|scratching|scratched|burn|burning|burned|hit|hitting|pinch|pinching|bite|biting"
        r"|punch|punching) (myself|my (arms|legs|wrists|thighs|skin))\b.{0,25}\b(bleed|bleeds|blood"
        r"|bruise|bruises|marks|scars)\b",
        r"\b(if you|you are|you have been|are you|when you|shaving|cooking|by accident|accidentally|paper)\b",
        "bette happi easie bleed blood bruis cut marks nobod one scars self suici think thoug used wish",
    ),
    Spec(
        "fr.self_harm.ideation",
        Category.SELF_HARM,
        CONCERN,
        r"\b(pense|penser|pensais|pensees?) (a|de) (me faire du mal|me tuer|me suicider|mourir"
        r"|me couper|me scarifier|en finir|disparaitre(?! de la circulation))\b|\benvie de me faire du mal\b"
        r"|\bje me (coupais|scarifiais|faisais du mal|mutilais)\b|\bidees (noires|suicidaires)\b"
        r"|\bpensees (noires|suicidaires)\b"
        r"|\bsi je (n existais pas|ne existais pas|ne etais pas la|disparaissais|etais mort"
        r"|etais morte|mourais)\b"
        r"|\bme (griffer|griffe|gratter|gratte|bruler|brule|frapper|frappe|mordre|mords|pincer"
        r"|pince)\b.{0,25}\b(jusqu au sang|sang|saigner|saigne|marques|bleus)\b",
        None,
        "bleus coupa dispa envie etais exist faisa idees jusqu marqu moura mutil pensa pense saign sang scari",
    ),
    # ---- abuse disclosed (crisis), at home (concern)
    Spec(
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
        "abuse afrai beat beats bruis burne burns choke come grabb grabs hit hits hurt hurts kicke kicks kill lock"
        " locke locks moles punch pushe raped rapes scare secre shake shook shove slamm slams slapp slaps stran stuff"
        " tell terri thing threw throw told touch whips",
    ),
    Spec(
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
        r"\b(jeu|fortnite|minecraft|mario|coussin|oreiller|ballon|blague|sans faire expres|epaule|me reveiller)\b",
        "agres bat batte battu brule chamb cogne dis donne enfer etran force frapp gifle jette lit met mette mis notre"
        " oblig parle peur racon secou tape tapen touch viole",
    ),
    Spec(
        "en.abuse.home",
        Category.ABUSE,
        CONCERN,
        r"\b(parents|mom and dad|mum and dad)\b.{0,20}\b(scream|yell|fight|shout"
        r"|hit) (at )?each other\b|\b"
        + _FAMILY_EN
        + r"\b.{0,12}\b(says|say|tells|tell|calls|call)\b.{0,6}\b(i am|me|that i am)\b.{0,6}\b(worthless"
        r"|useless|a mistake|garbage|nothing|a waste|a failure)",
        None,
        "call calls each say says tell tells",
    ),
    Spec(
        "fr.abuse.home",
        Category.ABUSE,
        CONCERN,
        r"\b(mes parents|mon pere et ma mere|ma mere et mon pere)\b.{0,30}\b(se battent|se frappent"
        r"|se tapent|crient tout le temps|hurlent tout le temps)\b|\b"
        + _FAMILY_FR
        + r"\b.{0,30}\b(dit|disent|repete|repetent|traite|traitent)\b.{0,30}\b(dechet|bon a rien"
        r"|bonne a rien|inutile|erreur|pas du naitre|aurait pas du naitre|sers a rien)",
        None,
        "aurai bon bonne deche erreu inuti mere naitr paren pere sers",
    ),
    # ---- violence: credible threats (crisis), fights and weapons (concern)
    Spec(
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
        "beat blade bomb bring gun hurt jump kill knife murde pay pisto plan regre rifle see shoot stab stran weapo",
    ),
    Spec(
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
        "allez amene appor arme compt coute cutte fling fusil pisto prend ramen regle vais veux vont",
    ),
    Spec(
        "en.violence.fight",
        Category.VIOLENCE,
        CONCERN,
        r"\b(i want to|i am going to|i will|i am about to)\b.{0,10}\b(punch|hit|beat up|smash|slap"
        r"|kick)\b.{0,10}\b(him|her|them|that|this|his)\b"
        r"|\b(we|i) (jumped|beat up|attacked|stabbed|punched) (a|this|that|the|some) (kid|guy|boy|girl"
        r"|student)\b|\bends? up in (the )?hospital\b",
        None,
        "attac beat hit hospi jumpe kick punch slap smash stabb",
    ),
    Spec(
        "fr.violence.fight",
        Category.VIOLENCE,
        CONCERN,
        r"\b(casser|peter|eclater|niquer|defoncer|exploser) (la|sa) (gueule|tete|face|bouche)\b|\b(lui"
        r"|leur) (ai|a|avons|avait) (casse|pete|eclate) (le nez|la gueule|la tete|les dents|le bras)",
        None,
        "bouch casse eclat face gueul pete tete",
    ),
    Spec(
        "en.violence.weapon_making",
        Category.VIOLENCE,
        CONCERN,
        r"\bhow (do|can|to|would|could)\b.{0,20}\b(make|build)\b.{0,10}\b(a |an )?(pipe bomb|bomb"
        r"|explosive|molotov|gun|ghost gun)\b",
        None,
        "bomb explo ghost gun molot pipe",
    ),
    Spec(
        "fr.violence.weapon_making",
        Category.VIOLENCE,
        CONCERN,
        r"\b(comment|tuto|recette)\b.{0,30}\b(fabriquer|faire|construire)\b.{0,20}\b(une |des )?(bombe"
        r"|explosif|molotov|arme|pistolet)",
        None,
        "arme bombe explo molot pisto",
    ),
    # ---- harassment (bullying, to or by the student)
    Spec(
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
        r"|\b(send|sends|sending|sent) me (messages saying|texts saying|hate|hateful|mean|nasty|threatening|threats"
        r"|death threats"
        r"|horrible)\b|\b(threaten|threatens|threatening|threatened) me\b"
        r"|\b(everyone|everybody|they|people)\b.{0,20}\b(ignore|ignores|ignored) me\b|\blaughs? (at me"
        r"|when i (talk|speak))\b",
        r"\bto (work|study|do)\b",
        "bulli bully call calle calli calls die fun haras ignor kill laugh leake makes makin pick picki picks poste"
        " push pushe pushi send sendi sends sent share shove shovi spit spits sprea threa trip tripp trips",
    ),
    Spec(
        "en.harassment.by_student",
        Category.HARASSMENT,
        CONCERN,
        r"\b(made|make|created|started|have) (a|an) (group chat|gc|account|page|group"
        r"|chat)\b.{0,20}\b(to|for|about)\b.{0,10}\b(roast|mock|make fun of|bully|expose|humiliate"
        r"|rate)\b",
        None,
        "bully expos fun humil mock rate roast",
    ),
    Spec(
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
        "balan diffu envoi envoy fout foute frapp harce insul menac moque parta poste publi racke tapen trait",
    ),
    Spec(
        "fr.harassment.by_student",
        Category.HARASSMENT,
        CONCERN,
        r"\b(compte|groupe|page)\b.{0,15}\bpour (afficher|humilier|se moquer|insulter|clasher"
        r"|harceler)\b|\bafficher (une|un|la|le) (meuf|fille|mec|gars|eleve)\b",
        None,
        "affic compt group page",
    ),
    # ---- sexual content involving minors (always crisis), sexual content (concern)
    Spec(
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
        "adult car flat grown house matur naked nude older pic sexua van year",
    ),
    Spec(
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
        "adult homme matur mec monsi montr nude photo touch vieux",
    ),
    Spec(
        "sexual_minors.content",
        Category.SEXUAL_MINORS,
        CRISIS,
        _SEX + r"\b.{0,50}" + _MINOR + r"|" + _MINOR + r".{0,50}\b" + _SEX + r"\b",
        r"\b(reproduction|puberty|puberte|education|svt|biology|biologie|health class)\b",
        "cul eroti naked nu nude nue nues porn porno sex sexua sexue sexy",
    ),
    Spec(
        "en.sexual.content",
        Category.SEXUAL,
        CONCERN,
        r"\b(sex scene|sex story|porn|porno|pornography|explicit (story|scene|content)|talk dirty"
        r"|sexting|nsfw|hentai|onlyfans|have sex|having sex|blowjob|horny|erotic story|sex joke"
        r"|dirty (story|talk)|sexy (message|text|story|pic|photo|thing|picture)s?)\b",
        None,
        "blowj conte dirty eroti havin henta horny nsfw onlyf porn porno scene sex sexti sexy story talk",
    ),
    Spec(
        "fr.sexual.content",
        Category.SEXUAL,
        CONCERN,
        r"\b(porno|porn|histoire de cul|scene de (sexe|cul)|baiser|baise|sexe explicite"
        r"|histoire erotique|histoire cochonne|branler|coucher avec moi|(truc|message|texte|histoire"
        r"|photo)s? sexy|blague (salace|cochonne|de cul))\b|\b(raconte"
        r"|decris)\b.{0,15}\bpremiere fois\b",
        r"\b(un|le|des|les|son|ses|mon|ton) baiser",
        "baise blagu branl couch histo porn porno premi scene sexe sexy",
    ),
    # ---- hate
    Spec(
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
        "afric anima arabs asian black chine gay gays gypsi immig india infer jewis jews lesbi mexic musli refug stupi"
        " subhu trans white",
    ),
    Spec(
        "fr.hate.group",
        Category.HATE,
        CONCERN,
        r"\b(les|tous les|toutes les) "
        + _HATE_GROUPS_FR
        + r"\b.{0,40}\b"
        + _HATE_PRED_FR
        + r"|\bsale (arabe|noir|juif|bougnoule|pede|gouine|chinetoque|rebeu|renoi|feuj)\b",
        None,
        "afric arabe asiat blanc chino feujs gays gitan homos immig juifs lesbi migra musul noirs pedes rebeu renoi"
        " roms sale trans",
    ),
    # ---- jailbreak (leaving the tutor's role, off-task abuse of the tutor)
    Spec(
        "en.jailbreak.repeated",
        Category.JAILBREAK,
        CONCERN,
        r"\b(\d+|ten|five|many|a hundred|so many) times\b.{0,40}\b(ignore|turn off|disable|bypass"
        r"|remove) (your |the )?(rules|instructions|safety|filter|filters|restrictions)",
        None,
        "times",
    ),
    Spec(
        "fr.jailbreak.repeated",
        Category.JAILBREAK,
        CONCERN,
        r"\b(\d+|dix|cinq|mille|plein de) fois\b.{0,40}\b(ignore|desactive|enleve|supprime|contourne"
        r"|oublie)\b.{0,10}\b(regles|instructions|filtres?|consignes|securite)",
        None,
        "consi filtr instr regle secur",
    ),
    Spec(
        "en.jailbreak.attempt",
        Category.JAILBREAK,
        INFO,
        r"\bignore (everything|all) (you were told|they told you|before|above)\b|\bignore (all |your |the "
        r"|any )?(previous |prior |above |earlier |of your )?(instructions"
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
        "bypas censo dan deact disab filte guide ignor instr jailb mode not prete promp remov restr rolep rules stop"
        " syste turn uncen unfil with",
    ),
    Spec(
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
        "aucun conto dan debri desac enlev fai filtr ignor mode oubli promp retir sans suppr",
    ),
    Spec(
        "en.jailbreak.insult",
        Category.JAILBREAK,
        INFO,
        r"\b(useless|stupid|dumb|garbage|trash|shitty|fucking|worthless|retarded"
        r"|piece of)\b.{0,20}\b(bot|ai|robot|chatbot|machine|tutor)\b|\b(shut up|fuck you|fuck off)\b",
        None,
        "dumb fuck fucki garba piece retar shitt shut stupi trash usele worth",
    ),
    Spec(
        "fr.jailbreak.insult",
        Category.JAILBREAK,
        INFO,
        r"\b(ia|bot|robot|machine|tuteur)\b.{0,6}\b(de merde|pourrie?|debile|nulle? a chier)\b"
        r"|\b(tu es|te es)\b.{0,12}\b(con|conne|debile|inutile|une merde|de merde|nul a chier"
        r"|pourri)\b|\b(ta gueule|ferme la|nique ta)\b",
        None,
        "con conne debil ferme gueul inuti merde nique nul null pourr",
    ),
    # ---- distress (no intent): hopeless (concern), sad or lonely (info)
    Spec(
        "en.distress.hopeless",
        Category.DISTRESS,
        CONCERN,
        r"\b(nothing matters|no point (in|to) (anything|living|trying)|what is the point of (anything"
        r"|living|trying)|cry myself to sleep|cry every (night|day)|i am (worthless|a burden|hopeless)"
        r"|everyone hates me|i feel (so |really )?(empty|hopeless|worthless|numb))\b"
        r"|\bi can not (do this|take it|go on|take this) anymore\b|\b(nobody"
        r"|no one) would (even )?(notice|care|miss me)\b|\b(nothing will ever|it will never|things will never"
        r"|never going to) get better\b",
        r"\b(says|said|tells|calls)\b",
        "anymo anyth burde cry every feel hopel livin nobod nothi one tryin worth never",
    ),
    Spec(
        "fr.distress.hopeless",
        Category.DISTRESS,
        CONCERN,
        r"\b(plus rien ne a de sens|rien ne a de sens|je sers a rien|je ne sers a rien|a quoi je sers"
        r"|a quoi bon vivre|je pleure (tous les (soirs|jours|nuits)|tout le temps)|(ca|ce) va (jamais"
        r"|pas) (se )?ameliorer|je serai toujours (un rate"
        r"|une ratee|nul|nulle)"
        r"|ce est sert a rien de essayer|ca sert a rien de essayer|je me sens (tellement |trop |si "
        r"|vraiment |completement )?(vide|inutile|de trop)|rien ne me fait (plus )?plaisir"
        r"|je suis un poids|je en peux plus de (tout|la vie|vivre|ma vie)|personne (ne )?(remarquera|regrettera"
        r"|manquera|remarquerait"
        r"|verrait|ferait attention|me regretterait))\b",
        None,
        "perso peux pleur poids quoi rien sens serai sers sert amel",
    ),
    Spec(
        "en.distress.sad",
        Category.DISTRESS,
        INFO,
        r"\b(i feel|i am|i have been|feeling|i am feeling)\b.{0,12}\b(alone|lonely|sad|depressed|down"
        r"|miserable|awful|terrible|anxious|stressed|unhappy|heartbroken)\b"
        r"|\b(nobody|no one|noone)\b.{0,12}\b(talks to|likes|cares about|loves"
        r"|wants to be friends with) me\b|\bi have no friends\b",
        r"\b(lol|lmao|about the test)\b",
        "alone anxio awful depre down frien heart lonel miser nobod noone one sad stres terri unhap",
    ),
    Spec(
        "fr.distress.sad",
        Category.DISTRESS,
        INFO,
        r"\bje (me sens|suis)\b.{0,12}\b(seule?|triste|deprime|deprimee|a bout|pas bien"
        r"|mal dans ma peau)\b|\bje suis (nul|nulle)\b(?! (en|a|au|aux|pour)\b)"
        r"|\bpersonne (ne )?(veut|me aime|me parle|veut etre mon ami|veut etre mon amie)\b"
        r"|\bje ai (pas|plus) le moral\b|\bje stresse trop\b|\bje (ne )?dors plus\b",
        None,
        "bien bout depri dors mal moral nul nulle perso seul stres trist",
    ),
    # ---- compositional rules (see the lexicons above)
    Spec(
        "fr.self_harm.want",
        Category.SELF_HARM,
        CRISIS,
        _FR_WANT + _FR_GAP + "(" + _FR_DEATH + "|" + _FR_METHOD + ")",
        None,
        _FR_DEATH_KEYS + " " + _FR_METHOD_KEYS,
    ),
    Spec(
        "fr.self_harm.method_thought",
        Category.SELF_HARM,
        CRISIS,
        _FR_THINK + _FR_GAP + _FR_METHOD,
        None,
        _FR_METHOD_KEYS,
    ),
    Spec(
        "fr.self_harm.thought",
        Category.SELF_HARM,
        CONCERN,
        _FR_THINK + _FR_GAP + _FR_DEATH,
        None,
        _FR_DEATH_KEYS,
    ),
    Spec(
        "en.self_harm.want",
        Category.SELF_HARM,
        CRISIS,
        _EN_WANT + _EN_GAP + "(" + _EN_DEATH + "|" + _EN_METHOD + ")",
        None,
        _EN_DEATH_KEYS + " " + _EN_METHOD_KEYS,
    ),
    Spec(
        "en.self_harm.method_thought",
        Category.SELF_HARM,
        CRISIS,
        _EN_THINK + _EN_GAP + _EN_METHOD,
        None,
        _EN_METHOD_KEYS,
    ),
    Spec(
        "fr.self_harm.farewell",
        Category.SELF_HARM,
        CRISIS,
        r"\blettres? (de adieux?|pour (mes parents|ma mere|mon pere|ma famille|mes amis|mes potes|ma soeur"
        r"|mon frere)\b.{0,60}\b(plus la|adieu|trouveront|pardon|desolee?))"
        r"|\bje (ne )?(serai|serais) (plus|bientot plus) (la|en vie|de ce monde)\b"
        r"|\bmes (affaires|trucs|jeux|vetements|habits|livres|mangas|objets|peluches|consoles?)\b.{0,60}"
        r"\b(plus|pas) besoin\b"
        r"|\b(dites|dis|dire|direz) a (ma|mon|mes) (mere|pere|maman|papa|parents|soeur|frere|famille|amis|potes"
        r"|meilleure amie|meilleur ami)\b.{0,25}\b(desolee?|pardon|je (les |le |la )?aime|adieu)\b"
        r"|\badieu (a tous|a toutes|tout le monde|pour toujours|la vie)\b|\bau revoir (pour toujours|la vie)\b"
        r"|\bce est (un|mon) adieu\b"
        r"|\bvous (ne )?(me )?(verrez|reverrez) plus\b|\bon (ne )?se (reverra|verra) plus\b",
        r"\b(demenage|demenager|demenagement|vacances|voyage|absente?|malade|rendez vous|dentiste|stage"
        r"|en retard|colo|a demain|a lundi|personnage|roman|livre|histoire|poeme|film)\b",
        "lettr serai besoi desol pardo aime adieu revoi verre rever verra",
    ),
    Spec(
        "en.self_harm.farewell",
        Category.SELF_HARM,
        CRISIS,
        r"\b(goodbye|suicide|farewell) (notes?|letters?|messages?|videos?)\b"
        r"|\b(wrote|written|writing|left|leaving) (a |some )?(letters?|notes?) (for|to) (my|everyone)\b.{0,40}"
        r"\b(find|gone|goodbye|sorry|when i)\b"
        r"|\b(giving|gave|give|given) away (all )?(of )?my (favorite )?(stuff|things|games|clothes|belongings"
        r"|stuffies|plushies|books|console)\b"
        r"|\b(will not|not going to) be (here|around|alive)\b.{0,20}\b(much longer|for long|anymore|tomorrow"
        r"|next (week|month|year)|by (monday|tomorrow|next week|the weekend)|after (tonight|today|this week))\b"
        r"(?! (today|tonight|this (morning|afternoon|evening)))"
        r"|\b(do not think|doubt) (i will|ill|i am going to) be (here|around|alive)\b"
        r"|\b(tell|let) my (mom|mum|mother|dad|father|parents|sister|brother|family|best friend|friends)\b.{0,25}"
        r"\b(i am sorry|sorry|i love (them|her|him)|goodbye)\b"
        r"|\bthis is (goodbye|my goodbye|my last message)\b|\byou (will not|are not going to|will never) (see"
        r"|hear from) me (again|anymore|ever)\b"
        r"|\b(say|said|saying) (my )?goodbyes?\b.{0,20}\b(everyone|forever|for good|for the last time)\b",
        r"\b(vacation|holiday|trip|moving|dentist|doctor|appointment|camp|sick|visiting|travel|traveling"
        r"|character|story|novel|book|poem|movie|film|late|class|lesson|computer)\b",
        "goodb suici farew lette note away here aroun alive sorry love last see hear",
    ),
    Spec(
        "fr.self_harm.pills",
        Category.SELF_HARM,
        CRISIS,
        r"\b(avale|avaler|prendre|prends|pris|gober|gobe)\b.{0,25}\b(toute la|toutes les|tous les|toute une"
        r"|une boite|la boite|plein de|beaucoup de|[2-9]\d|\d\d\d|la moitie|trop de|toute ma|tous mes"
        r"|toutes mes|une plaquette|la plaquette)\b.{0,25}" + _PILLS_FR,
        r"\b(tous les (jours|matins|soirs)|par jour|chaque (jour|matin|soir)|ordonnance|medecin|docteur"
        r"|traitement|vitamine)",
        _PILLS_FR_KEYS,
    ),
    Spec(
        "en.self_harm.pills",
        Category.SELF_HARM,
        CRISIS,
        r"\b(took|take|taking|swallowed|swallow|swallowing|ate|down|downed|popped|pop)\b.{0,20}\b(all|every"
        r"|whole|bunch|lots|handful|[2-9]\d|\d\d\d|too many|a lot|half)\b.{0,25}" + _PILLS_EN,
        r"\b(a day|every (day|morning|night)|prescribed|doctor|vitamin|vitamins)\b",
        _PILLS_EN_KEYS,
    ),
    Spec(
        "fr.self_harm.act",
        Category.SELF_HARM,
        CRISIS,
        r"\bje me suis (encore |deja |re |a nouveau )?(coupee?|scarifiee?|mutilee?|tailladee?|brulee?"
        r"|fait du mal|ouvert)\b(?! (le doigt|au doigt|les cheveux|la frange|les ongles|au|a la|en))"
        r"|\bje me (coupe|scarifie|mutile|taillade|brule)\b.{0,30}\b(sang|saigne|saigner|bras|poignets|cuisses"
        r"|veines|lame|rasoir|encore)\b",
        r"\b(cuisine|cuisinant|feuille|papier|accident|sans faire expres|en tombant|au foot|au sport|four"
        r"|casserole|fer a|soleil)\b",
        "coupe scari mutil taill brule mal ouver",
    ),
    Spec(
        "en.self_harm.act",
        Category.SELF_HARM,
        CRISIS,
        r"\b(cut|cutting|burned|burnt|burning|hurt|hurting|harmed|harming|sliced) myself\b.{0,40}\b(again|today"
        r"|tonight|right now|just now|blood|bleeding|bleeds|deep|deeper|can not stop)\b|\b(just|again) (cut"
        r"|burned|burnt|hurt|harmed) myself\b",
        r"\b(cooking|shaving|accident|accidentally|paper|kitchen|fell|playing|football|soccer|practice|gym"
        r"|skateboard|bike|stove|oven|if you|are you|you are)\b",
        "cut burn hurt harm slice",
    ),
    Spec(
        "fr.self_harm.hopeless_means",
        Category.SELF_HARM,
        CRISIS,
        _FR_HOPELESS + r".{0,80}\b" + _FR_MEANS + r"\b|\b" + _FR_MEANS + r"\b.{0,80}" + _FR_HOPELESS,
        r"\b(exercice|devoir|maths|controle|recette|svt|histoire)\b",
        "corde cache medic compr pont lame rasoi coute somni fenet toit",
    ),
    Spec(
        "en.self_harm.hopeless_means",
        Category.SELF_HARM,
        CRISIS,
        _EN_HOPELESS + r".{0,80}\b" + _EN_MEANS + r"\b|\b" + _EN_MEANS + r"\b.{0,80}" + _EN_HOPELESS,
        r"\b(homework|exercise|essay|test|exam|recipe|story|character)\b",
        "rope pills meds bridg blade razor knife table roof train noose",
    ),
    Spec(
        "en.abuse.adult",
        Category.ABUSE,
        CRISIS,
        r"\b(my|our) "
        + _ADULT_EN
        + r"\b.{0,60}\b(hits|hit|beats|beat|punches|punched|kicks|kicked|slaps|slapped|chokes|choked|burns"
        r"|burned|whips|whipped|touches|touched|abuses|abused|molests|molested|rapes|raped|strangles"
        r"|strangled|hurts|hurt|gropes|groped) me\b"
        r"|\b(touch|touches|touched|touching) (me )?(in ways|where i|my (private|privates|body|chest|breasts"
        r"|legs|thighs|butt|bum))",
        r"\b(game|fortnite|minecraft|pillow|ball|joke|accident|by accident|shoulder|high five|hug|tag|question"
        r"|questions|quiz|homework|test)\b",
        "hit beat punch kick slap choke burn whip touch abuse moles rape stran hurt grope",
    ),
    Spec(
        "fr.abuse.adult",
        Category.ABUSE,
        CRISIS,
        r"\b(mon|ma|mes|le|la|notre|un|une) "
        + _ADULT_FR
        + r"\b.{0,60}\bme (a |ont )?(frappee?|frappent|tape|tapent|bat|battent|battue?|cogne|cognent|touchee?"
        r"|touchent|violee?|violent|brulee?|etranglee?|enfermee?|enferment|agressee?|giflee?|giflent|secoue"
        r"|secouent|jette|jettent|tripote|tripotent)\b"
        r"|\b" + _ADULT_FR + r"\b.{0,60}\bme (met|mettent|donne|donnent|a mis|a donne) (des|un|une) (coups"
        r"|claques?|gifles?|baffes?|coup)\b",
        r"\b(jeu|fortnite|minecraft|mario|coussin|oreiller|ballon|blague|sans faire expres|epaule|prof de)\b",
        "frapp tape bat cogne touch viole brule etran enfer agres gifle secou jette tripo coup claqu baffe",
    ),
    Spec(
        "en.sexual_minors.grooming",
        Category.SEXUAL_MINORS,
        CRISIS,
        _STRANGER_EN + r".{0,40}\b" + _ONLINE_EN + r".{0,80}" + _ASKS_EN,
        None,
        "onlin disco snap insta tikto fortn roblo minec whats teleg kik omegl game xbox ps twitc inter reddi"
        " serve datin",
    ),
    Spec(
        "fr.sexual_minors.grooming",
        Category.SEXUAL_MINORS,
        CRISIS,
        _STRANGER_FR + r".{0,40}\b" + _ONLINE_FR + r".{0,80}" + _ASKS_FR,
        None,
        "ligne snap insta disco tikto fortn roblo minec inter jeu whats teleg twitc chat ps play xbox serve site",
    ),
    Spec(
        "en.sexual_minors.sextortion",
        Category.SEXUAL_MINORS,
        CRISIS,
        r"\bif i (do not|will not|refuse to|stop)\b.{0,60}\b(post|share|leak|show|send|expose|put)\b.{0,30}"
        r"\b(pics|photos|pictures|nudes|videos|them|those)\b"
        r"|\b(pics|photos|pictures|nudes|videos)\b.{0,60}\bif i (do not|will not|refuse to|stop)\b",
        None,
        "pics photo pictu nudes video them those",
    ),
    Spec(
        "fr.sexual_minors.sextortion",
        Category.SEXUAL_MINORS,
        CRISIS,
        r"\bsi je (ne )?(lui |leur )?(envoie|envoi|envois|envoies) (pas|plus)\b.{0,30}\b(photos?|videos?|nudes?"
        r"|snaps?)\b.{0,60}\b(montrer|montre|montrera|publier|publie|publiera|poster|poste|postera|balancer"
        r"|balance|balancera|diffuser|diffuse|partager|partage|afficher|envoyer)\b"
        r"|\b(montrer|publier|balancer|diffuser|poster|partager|afficher|envoyer) (mes|les|ces|des|celles|ma)"
        r" (photos?|videos?|nudes?)\b.{0,60}\bsi je\b",
        None,
        "photo video nude snap",
    ),
    Spec(
        "en.violence.weapon_intent",
        Category.VIOLENCE,
        CRISIS,
        r"\b(i|we)\b.{0,20}\b(going to|want to|will|about to|plan to|planning to)\b.{0,20}\b(stab|shoot|kill"
        r"|murder|hurt|slash|shank|blow up)\b.{0,60}\b"
        + _WEAPON_EN
        + r"\b|\b"
        + _WEAPON_EN
        + r"\b.{0,60}\b(i|we)\b.{0,20}\b(going to|want to|will|about to|plan to|planning to)\b.{0,20}\b(stab"
        r"|shoot|kill|murder|hurt|slash|shank|blow up)\b",
        _NO_GAME + r"|\bmyself\b|\bshoot (a |the |some )?(video|photo|film|movie|scene|hoops)",
        "knife knive gun rifle pisto blade weapo bat axe mache bomb",
    ),
    Spec(
        "fr.violence.weapon_intent",
        Category.VIOLENCE,
        CRISIS,
        r"\bje (vais|veux|compte|vais aller|ai envie de)\b.{0,30}\b(planter|poignarder|buter|tuer|flinguer"
        r"|egorger|tirer sur|frapper|defoncer|agresser|saigner|trouer)\b.{0,60}\b"
        + _WEAPON_FR
        + r"\b|\b"
        + _WEAPON_FR
        + r"\b.{0,60}\bje (vais|veux|compte)\b.{0,30}\b(planter|poignarder|buter|tuer|flinguer|egorger"
        r"|tirer sur|frapper|defoncer|agresser|saigner|trouer)\b",
        _NO_GAME + r"|\bme (tuer|planter|poignarder|couper|faire|flinguer|ouvrir)\b",
        "coute arme fling pisto fusil cutte lame canif batte hache bombe cisea",
    ),
    Spec(
        "fr.harassment.names",
        Category.HARASSMENT,
        CONCERN,
        r"\b(me|on me) (appellent|appelle|surnomment|surnomme|traitent de|traite de|traitent|traite)\b.{0,20}"
        r"\b(baleine|grosse|gros|moche|pute|salope|pd|pede|boloss|bolosse|thon|vache|cochon|truie|laide|naine"
        r"|mongol|autiste|debile|golmon|clochard|pouilleux|pouilleuse|sale|bouffon|cassos|gogol)\b"
        r"|\b(ils|elles|on|tout le monde)\b.{0,10}\b(mis|poste|postee|publie|partage|diffuse|affiche) (ma|mes"
        r"|une) (photo|photos|video)\b",
        None,
        "balei gros moche pute salop pd pede bolos thon vache cocho truie laide naine mongo autis debil golmo"
        " cloch pouil sale bouff casso gogol photo video",
    ),
    Spec(
        "fr.self_harm.no_will",
        Category.SELF_HARM,
        CRISIS,
        r"\b(ai|avais|a) (plus|pas|plus du tout|plus aucune) (envie|la force|le courage|la volonte) de (vivre"
        r"|exister|continuer a vivre|etre (la|en vie)|rester en vie)\b"
        r"|\bplus rien (ne |qui )?(me )?retient\b|\bje veux que tout (se arrete|soit fini|finisse)\b"
        r"|\bje suis (assise? |debout )?(sur|au bord de|au bord du) (le |la |du |de la )?(toit|pont|rebord|parapet"
        r"|falaise)\b"
        r"|\bquand je (ne )?(serai|serais) (mort|morte|plus la|plus en vie)\b"
        r"|\b(laisse|laisser|laisserai) (une|des|ma|mes) lettres?\b.{0,40}\bpour (ma|mon|mes)\b",
        r"\b(fete|anniversaire|noel|merci|remercier|vieux|vieille|vieillesse|personnage|roman)\b",
        "envie force coura volon retie arret fini finis toit pont rebor parap falai mort morte plus lettr",
    ),
    Spec(
        "fr.self_harm.purpose",
        Category.SELF_HARM,
        CRISIS,
        r"\bje\b.{0,40}\bpour (me couper|me scarifier|me tuer|me pendre|me suicider|me faire du mal"
        r"|me ouvrir les veines|" + _FIN + r"|mourir(?! (si|quand|de)\b))",
        r"\b(me dit|me a dit|me disent|on me dit)\b",
        "coupe scari tuer pendr suici mal ouvri finir mouri",
    ),
    Spec(
        "en.self_harm.no_will",
        Category.SELF_HARM,
        CRISIS,
        r"\bi (bought|got|have|found|made|tied|ordered|hid|hidden)\b.{0,10}\b(a |the )?(rope|noose)\b"
        r"|\bi\b.{0,40}\bto (kill myself|hang myself|cut myself|end my life|overdose)\b"
        r"|\bwant (it|it all|my life|this) to (end|stop|be over)\b"
        r"|\b(do not|can not) see myself (alive|living|still here|here)\b"
        r"|\bnothing (is )?(keeping|holding) me (here|back)\b"
        r"|\b(miss|notice|care|remember)\b.{0,25}\bwhen i am (gone|dead)\b|\b(when|after|once) i am dead\b"
        r"|\b(i am done|i am out|i give up|this is it)\b.{0,30}\b(goodbye|bye|farewell)\b",
        r"\b(climbing|camping|gym|swing|tug|project|pe|told me|tell me|tells me|said|if you|game|character)\b",
        "rope noose kill hang cut end overd stop over alive livin still here keepi holdi gone dead goodb bye farew",
    ),
    Spec(
        "fr.self_harm.act_often",
        Category.SELF_HARM,
        CRISIS,
        r"\bje me (coupe|scarifie|mutile|taillade|brule|fais du mal)\b.{0,20}\b(tous les (soirs|jours|matins)"
        r"|chaque (soir|jour|nuit)|souvent|parfois|des fois|depuis|la nuit)\b",
        r"\b(cuisine|cuisinant|feuille|papier|accident|cheveux|ongles|soleil)\b",
        "coupe scari mutil taill brule mal",
    ),
    Spec(
        "fr.violence.danger",
        Category.VIOLENCE,
        CRISIS,
        r"\bme (attend|attendent|menace|menacent|suit|suivent|cherche|cherchent)\b.{0,40}\b(avec )?(un|une|des"
        r"|son|sa|leur) " + _WEAPON_FR + r"\b"
        r"|\b" + _WEAPON_FR + r"\b.{0,50}\b(me venger|pour la vengeance|regler (mes|ses|leur) comptes)\b",
        _NO_GAME,
        "coute arme fling pisto fusil cutte lame canif batte hache bombe cisea",
    ),
    Spec(
        "en.violence.danger",
        Category.VIOLENCE,
        CRISIS,
        r"\b(waiting for me|threatened me|following me|after me|coming for me)\b.{0,40}\b(with )?(a|his|her|their)"
        r" " + _WEAPON_EN + r"\b"
        r"|\b" + _WEAPON_EN + r"\b.{0,50}\b(revenge|get back at|get even with|make (them|him|her) pay)\b",
        _NO_GAME,
        "knife knive gun rifle pisto blade weapo bat axe mache bomb",
    ),
    Spec(
        "fr.self_harm.means",
        Category.SELF_HARM,
        CRISIS,
        r"\b(mis de cote|garde|gardes|stocke|stocker|cache|caches|economise|collectionne|accumule|rassemble)\b"
        r".{0,20}" + _PILLS_FR + r"|\b(veines|poignets) (ouvertes|ouverts|coupees|coupes|tailladees)\b"
        r"|\bdormir pour toujours\b|\b(aurez|aura|auront|auras|aurai) plus (a|besoin de) me (supporter|voir|subir)\b",
        r"\b(ordonnance|medecin|pharmacie|exposer|expose)\b",
        _PILLS_FR_KEYS + " veine poign dormi suppo voir subir",
    ),
    Spec(
        "en.self_harm.means",
        Category.SELF_HARM,
        CRISIS,
        r"\b(saving|saved|stockpiling|stockpiled|hoarding|hoarded|collecting|hiding|hid|stashing|stashed)\b.{0,20}"
        + _PILLS_EN
        + r"|\bcan not stop (cutting|hurting myself|burning myself)\b|\b(cuts|cutting) (are )?(getting )?deeper\b"
        r"|\b(stay|staying) asleep forever\b|\blast time (you|anyone|u) (will )?(hear from|see|talk to) me\b"
        r"|\b(will not|never|no longer) (have to )?(deal with|put up with|worry about) me (again|anymore)\b",
        r"\b(prescribed|doctor|pharmacy|vitamin|project)\b",
        _PILLS_EN_KEYS + " cutti hurti burni deepe aslee hear see talk deal put worry",
    ),
    Spec(
        "fr.self_harm.instructions.height",
        Category.SELF_HARM,
        CRISIS,
        r"\b(hauteur|haut|etages?|metres)\b.{0,50}\b(pas survivre|ne pas survivre|mourir sur le coup|etre mortelle)\b",
        None,
        "survi mouri morte",
    ),
    Spec(
        "en.self_harm.instructions.height",
        Category.SELF_HARM,
        CRISIS,
        r"\b(high|height|tall|floors?|stories|feet|meters)\b.{0,50}\b(not survive|do not survive|die instantly"
        r"|be fatal|guarantee)\b",
        None,
        "survi die fatal guara",
    ),
    Spec(
        "fr.abuse.watched",
        Category.ABUSE,
        CRISIS,
        r"\b"
        + _ADULT_FR
        + r"\b.{0,60}\b(quand je me douche|dans la salle de bain|quand je me change|sous la douche)\b",
        None,
        "douch bain chang",
    ),
    Spec(
        "en.abuse.watched",
        Category.ABUSE,
        CRISIS,
        r"\b" + _ADULT_EN + r"\b.{0,60}\b(when i (shower|am showering|change|get changed)|in the (bathroom|shower)"
        r" with me)\b",
        None,
        "showe chang bathr",
    ),
    Spec(
        "en.sexual_minors.car",
        Category.SEXUAL_MINORS,
        CRISIS,
        r"\b(man|stranger|guy|adult|woman|someone|lady)\b.{0,25}\b(car|van|truck)\b.{0,40}\b(get in|come with (him|her)"
        r"|hop in|take me|give me a ride)\b",
        None,
        "get come hop take give",
    ),
    Spec(
        "fr.violence.arson",
        Category.VIOLENCE,
        CRISIS,
        r"\b(faire bruler|bruler|incendier|mettre le feu (a|au)|faire sauter|faire exploser) (le|la|mon|notre|ce|cette"
        r"|tout le)? ?(college|lycee|ecole|bahut|classe|gymnase)\b|\bliste\b.{0,30}\b(tuer|buter|planter|tirer"
        r"|flinguer|abattre)\b",
        _NO_GAME,
        "brule incen feu saute explo liste",
    ),
    Spec(
        "en.violence.arson",
        Category.VIOLENCE,
        CRISIS,
        r"\b(burn down|set fire to|blow up) (the|my|our|this|that)? ?(school|class|classroom|gym)\b"
        r"|\blist\b.{0,30}\b(shoot|kill|stab|murder)\b",
        _NO_GAME,
        "burn set blow list",
    ),
]
