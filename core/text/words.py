"""Every English word list the engine reads: question words, auxiliaries, pronouns, negations,
prepositions, the class nouns of answer types and the tokenizer's stopwords.

One module, so a list is written once and its variants stand side by side: where two readers
need different members (the planner's yes/no openers and the answer type's, the support check's
negations and the yes/no polarity's), both lists are here, named for what they do, with why
they differ. tests/unit/text/test_words.py fails when another core module defines its own list.
A new list is for what the tagger's UPOS tags, the noun-phrase chunks or the WordNet lexicon
cannot tell (ORDINALS: the tagger calls them ADJ, WordNet files them under no common class).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

# --- question words -------------------------------------------------------------------------------

WH_WORDS = frozenset("what which who whom whose when where why how".split())
# Opening a question, these ask for someone (answer_forms' entity form, a "who" lead without codes).
PERSON_WH = frozenset(("who", "whom", "whose"))
# Opening a question, these ask for one named thing (answer_forms' entity form).
ENTITY_WH = PERSON_WH | {"which"}
# The wh-words that stand for the subject or object of the question's verb (relation.py).
WH_ARGUMENTS = frozenset(("who", "whom", "what", "which"))
# Wh-words a question may ask in place, after the words the answer follows ("… and what other location?").
WH_IN_PLACE = frozenset(("what", "which", "who", "whom", "when", "where"))
# Words of a question that name nothing a follow-up could point back to (memory/entities.py).
WH_AND_QUANTIFIERS = WH_WORDS | {"many", "much"}
# A sentence opening with one of these is a question or a request (intent_cues.split_input).
QUESTION_OPENERS = frozenset(
    """what why how who whom whose which where when explain describe compare define tell list identify
    name evaluate assess recommend verify check show give summarize summarise diagnose troubleshoot""".split()
)
# Object pronouns a request verb may take before what it asks for ("tell *me* what ...").
OBJECT_PRONOUNS = frozenset("me us him her them".split())
# A sentence opening with one of these ("Answer yes or no.") shapes the question before it.
INSTRUCTION_OPENERS = frozenset("answer reply respond".split())
# Words that shape the question rather than name what it is about; they must not count as
# focus terms, or an answer would be judged on whether it repeats "explain" or "compare".
FORM_WORDS = """explain explained explanation describe description compare comparison define definition
    meaning mean means tell list identify name verify check whether evaluate evaluation assess assessment
    recommend recommendation suggest advise overview summarize summarise summary versus vs difference
    differences differ better worse best please give show let know want like exactly briefly detail
    details question answer word single yes reply respond happen happens happened besides""".split()
# "Besides X, what …?" asks for what the text lists beside X ("viniculture and | tourism").
BESIDE_OPENERS = (
    ("besides",),
    ("beside",),
    ("along", "with"),
    ("other", "than"),
    ("apart", "from"),
    ("aside", "from"),
    ("in", "addition", "to"),
)
# "how X" asks for a number when X is one of these ("how many", "how long").
HOW_MEASURES = frozenset("many much long old far large big tall high deep wide often fast heavy small short".split())

# --- verbs: be, do, the auxiliaries -----------------------------------------------------------------

BE_FORMS = frozenset("be is are was were been being".split())
# The finite forms: "What is the …?", "Who were the …?".
BE_TENSED = frozenset("is are was were".split())
DO_FORMS = frozenset("do does did".split())
# The words that open a yes/no question also front the auxiliary of a wh-question ("what fort did …").
AUXILIARIES = frozenset("is are was were does do did can could will would has have had should may must shall".split())
# The planner's yes/no cue (intent_cues.output_hint) was written without "had", and the answer
# type (answer_types.expected_type) with it: joining them would change the output sd-symbolic
# writes for "Had …?" questions, so both stay, the one defined by the other.
CUE_YES_NO_OPENERS = AUXILIARIES - {"had"}
# The SQuAD report's question types (squad.question_type) also count "am" and "might" as
# opening a yes/no question; the report's figures were measured with them.
QUESTION_TYPE_AUXILIARIES = AUXILIARIES | {"am", "might"}
# A question opening with one of these asks about an event ("Was …?", "Did …?").
PAST_AUXILIARIES = frozenset("was were did had".split())
# Verbs that carry tense or link, not a predicate of their own (the yes/no claim,
# core/answer/claim_alignment.py): "Does Jenny have a sister?" asks whether a sister is said.
LIGHT_VERBS = (
    BE_FORMS
    | DO_FORMS
    | frozenset("have has had having get gets got getting".split())
    | frozenset("become becomes became becoming seem seems seemed remain remains remained".split())
)
# A verb after these is offered, planned or asked for, not done: "offered to launch the lifeboat".
UNREALISED_MARKERS = frozenset("to would could should might may must can will shall".split())
# Opening a clause, these make it a question or a condition the sentence does not assert ("it was
# unclear whether he had an attorney", "if he had an attorney, …").
UNASSERTED_CLAUSE_OPENERS = frozenset(("whether", "if"))

# --- negation -----------------------------------------------------------------------------------------

# The support check's (support.negated): any of these near the words an answer rests on negates
# it. The yes/no polarity reads negation differently (below): a determiner such as "no" denies
# only its noun there, and verbs of refusal deny; one list for both would change both answers.
NEGATIONS = frozenset("not n't no never none neither nor without cannot nobody nothing".split())
# Words that deny what their clause states (polarity.py). A cue the question itself uses ("Was
# the claim denied?", "… without a reason?") is the thing asked about, not a denial.
DENIALS = frozenset("not never nobody nothing neither nor cannot without refused declined denied lacked".split())
# Determiners deny only the noun they stand before: "no ledger" denies a ledger, "at no charge"
# denies nothing the question asks about; so do the prepositions of exception ("open daily except
# on Sundays" denies Sundays, not every day).
NOUN_NEGATIONS = frozenset("no none except excluding".split())

# --- pronouns and references ----------------------------------------------------------------------------

PERSONAL_PRONOUNS = frozenset("he him his she her hers".split())
NEUTER_PRONOUNS = frozenset("it its".split())
PLURAL_PRONOUNS = frozenset("they them their theirs".split())
POSSESSIVES = frozenset("his her their its my our your".split())
RELATIVE_PRONOUNS = frozenset(("who", "which", "that"))
# Opening a sentence as its subject, these stand for all the sentence before says ("Cards are
# filled in. This is done by the manager"): coref.py's clausal reference.
CLAUSE_DEMONSTRATIVES = frozenset(("this", "that"))
# "the company", "the group": a definite class noun standing for a name said before.
REFERRING_NOUNS = frozenset(
    "company firm group organisation organization team city country town family band party agency".split()
)
# Of those, the places: never a name that acts ("founded by Agnes Pryor … left her savings to the
# town" is not Agnes Pryor's town), only one named where a place is ("settled in Oswick").
REFERRING_PLACES = frozenset("city country town".split())
# Words that open a sentence continuing the one before: pronouns, demonstratives, connectives.
REFERS_BACK = frozenset(
    "it its this that these those they their them he his she her so therefore thus hence because "
    "consequently then otherwise which as".split()
)

# --- prepositions ---------------------------------------------------------------------------------------

# A name after one of these is a place or a time, not who did something.
PLACE_PREPOSITIONS = frozenset(
    "in at near into from across throughout inside outside around within to along through past via onto toward "
    "towards".split()
)
# Prepositions that put what follows at a place ("kept in the reading room", "near the ford");
# "to" and "from" are left out: far more often they mark a recipient or a source than a place.
LOCATIVE_PREPOSITIONS = frozenset(
    "in at on inside near beside behind under beneath above below within outside into onto throughout across along "
    "opposite among between".split()
)
# Prepositions whose object can do what the verb says without being its subject: the agent of
# a passive ("repainted by the guild") and the instrument or partner ("the safe opens with 3318",
# "met with the envoy"). After the verb such a phrase can answer "What opens the safe?".
DOER_PREPOSITIONS = frozenset(("by", "with"))
# Words joining the parts of one name ("Duchy of Normandy", "Edward the Confessor", "van Gogh"):
# English's, and the particles of names in the languages of Europe ("Cabane des Aiguilles",
# "Isla del Sol", "Mies van der Rohe", "Palazzo della Ragione").
NAME_JOINERS = frozenset(
    (
        "of", "of the", "the",
        "de", "de la", "des", "du", "del", "della", "di", "da", "dos", "das",
        "van", "van der", "von", "von der", "der", "den",
    )
)  # fmt: skip

# --- class nouns of answer types ------------------------------------------------------------------------

# Class nouns of general English: "which X" with X one of these asks for a person, a place or a time.
PERSON_NOUNS = frozenset(
    """person people man men woman women who king queen emperor ruler leader president minister
    author writer scientist inventor founder general commander officer member group organisation
    organization company firm agency body team party family tribe dynasty army government church
    institution university college school individual scholar philosopher artist poet composer""".split()
)
PLACE_NOUNS = frozenset(
    """place country city town village region area state province continent island river lake sea
    ocean mountain location site capital port county district territory nation kingdom empire
    where street building""".split()
)
TIME_NOUNS = frozenset(
    "year years date day days month century centuries decade era period time age season hour when".split()
)
NUMBER_NOUNS = frozenset(
    """number amount percentage percent proportion share population size cost price rate length
    distance height weight temperature speed value total sum fraction ratio""".split()
)
PERCENT_HEADS = frozenset(("percentage", "percent", "proportion", "share"))
# "what type of X" asks for an X.
SORT_NOUNS = frozenset("type kind sort form class category".split())
# WordNet classes (of a noun's commonest senses) that make a phrase a person, a group, a
# relative, or a thing.
PERSON_CLASSES = frozenset(("person", "individual", "someone", "worker", "doer"))
GROUP_CLASSES = frozenset(("social group", "organization", "organisation"))
# The lexicon's classes of a verb only someone does: saying, thinking, feeling, perceiving.
PERSON_VERB_CLASSES = frozenset(("communicate", "cogitate", "think", "feel", "perceive", "express emotion"))
KIN_CLASSES = frozenset(("relative", "relation", "kin", "kinsperson", "family member", "offspring", "progeny"))
THING_CLASSES = frozenset(("object", "substance", "artifact", "artefact"))
# The question's words for each end of a life, as stems.
BORN_STEMS = frozenset(("born", "birth"))
DIED_STEMS = frozenset(("die", "di", "death"))

# --- numbers ---------------------------------------------------------------------------------------------

# In order: a word's place is its value (cardinals.py).
CARDINAL_UNITS = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
CARDINAL_TEENS = (
    "ten",
    "eleven",
    "twelve",
    "thirteen",
    "fourteen",
    "fifteen",
    "sixteen",
    "seventeen",
    "eighteen",
    "nineteen",
)
CARDINAL_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
# Years as tokens, in two readings. A bare number that is a year is no quantity (answer_types):
# 1000–2099 or a decade ("1920s"), so "450 tons" stays a quantity. Between a name's brackets
# ("Offa (757–796)") the years of a lifespan (lifespans.py): any three or four digits, since the
# brackets already say what they are.
YEAR_TOKEN = re.compile(r"^(?:1\d{3}|20\d{2})s?$")
LIFESPAN_YEAR = re.compile(r"^\d{3,4}$")

# --- the shape of written text ------------------------------------------------------------------------

# The tokenizer's stopwords (core/text/tokenizer.py): function words no unit is found by.
STOPWORDS = frozenset(
    """a an the and or but in on at to for of with is are was were be been being have has had do
    does did will would shall should may might must can could i me my we our you your he him his
    she her it its they them their this that these those am not no nor so if then than too very
    just about above after again all also any because before below between both by down during
    each few from further get got here how into more most now only other out over own same some
    such there through under until up what when where which while who whom why""".split()
)
# Word endings of a participle the tagger's rules read (nlp/tagger.py) and a date label's past form
# (cnl/permission_names.py: `Posted on` records a day).
PARTICIPLE_ENDINGS = ("ed", "ing", "en")
# Words a hard-wrapped line ends on mid-sentence; a heading does not end on them (cnl/plaintext.py).
GOES_ON = frozenset("a an the and or but nor of to in on at by for with from into as than that is are was were".split())
# Prepositions of time that bound a period (cnl/permission_names.py reads a date label from its
# words: `Embargoed until`, `Not before`, `Withdrawn after`): the first end it, the second start it.
# `since` dates a past start (`Member since 2015-03-01`), a record, not a period's bound.
PERIOD_ENDS = frozenset("until till til through thru before".split())
PERIOD_STARTS = frozenset(("from", "after"))
# Words of a state that keeps a text from its readers: a period they bound is the time the text is
# NOT shown (`Embargoed until` ends the embargo and starts the unit's period, `Withdrawn after` ends it).
CONCEALING = frozenset(
    "hidden embargoed withheld withdrawn removed restricted locked sealed suspended unpublished archived "
    "retired expired closed unavailable invisible private secret confidential".split()
)
# The levels of a confidentiality scale (ISO 27001's, government markings): after any field's name
# at a line start (`Sensitivity: Private`, `Classification: confidential`) they restrict the text
# as an Acl does, where another value is the field's own (`Sensitivity: 0.85`, `Classification:
# Mammalia`) (cnl/permission_notices.py).
CONFIDENTIALITY_LEVELS = frozenset(
    "confidential secret restricted internal private classified sensitive proprietary privileged".split()
)
# Words a confidentiality level or a restriction notice may carry around it (`Strictly confidential`,
# `Internal use only`, `For staff eyes only`).
LEVEL_DEGREES = frozenset("strictly highly top most very".split())
NOTICE_OBJECTS = frozenset("eyes use access viewing distribution circulation reading purposes".split())
# An adjective of access in a notice ends so (`Visible only to staff`, `Only shown to staff`,
# `Only restricted to staff`); `Only listen to music` does not.
ACCESS_ENDINGS = ("ble", "wn", "ed")
# What a notice that a text must not be released ends with (`Not for public release`).
RELEASE_NOUNS = frozenset("release distribution circulation publication disclosure".split())
# Words naming when a text goes live or is taken down (`Go-live date`, `Sunset: 2020-01-01`): a date
# field's name only before a date (cnl/permission_names.py).
GO_LIVE_NAMES = frozenset(("live", "golive", "goeslive", "livedate", "golivedate"))
SUNSET_NAMES = frozenset(("sunset", "sunsetdate", "sunsets", "sunsetting"))
# Endings of an agent noun, a person by what they do (`leader`, `supervisor`, `trainee`):
# `Group leader: John Smith` names a person, not a group (cnl/permission_names.py).
AGENT_ENDINGS = ("er", "or", "ist", "ee", "ant", "ent", "ian")
# Words a statement opens with and an instruction does not (articles, pronouns, determiners).
STATEMENT_OPENERS = frozenset(
    "the a an this that these those it its he she they we i his her their our my there".split()
)
# A phrase holding one of these is a clause, not a plain-text fact's subject or object
# (cnl/plain_facts.py).
CLAUSE_WORDS = frozenset(
    "that which who whom whose because although though while but if when whenever since unless whereas "
    "not never no nor will would could should can may might must shall do does did to".split()
)
# Words that cannot stand alone as a fact's subject: pronouns need context, and a lone article
# means the verb was matched inside a name ("The Uses section ...").
NOT_SUBJECTS = frozenset("it this that they he she we you i there these those one the a an".split())
# Trailing adverbs of a fact's subject belong to its verb ("Orion also uses ...", cnl/plain_facts.py).
FACT_ADVERBS = frozenset(
    "also only still now often usually always typically currently mostly mainly directly heavily internally "
    "primarily largely generally already actually really frequently indirectly partly fully exclusively".split()
)
# Words that open prose, not a field's value, after a label-like name: "Access: the north gate",
# "Expiry: the milk went off", "… tore his ACL - the season ended" (cnl/permissions.py).
PROSE_OPENERS = frozenset(
    "the a an this that these those some no his her its their our my your he she it they we i you there".split()
)
# Words before "acl:" or "region=" that make it prose, not a permission field (cnl/permissions.py).
PROSE_BEFORE_NAME = frozenset(
    "the a an this that these those each every any per by of in for to from with at on into within "
    "our your their its his her my one another same".split()
)
# A lead ends at its first sentence end, but not after an abbreviation or a capitalised initial.
# judge.py's own list and rule, not core/text/sentences.py's: both judges must cut a lead alike.
JUDGE_ABBREVIATIONS = frozenset("mr mrs ms dr st prof sr jr vs e.g i.e etc no c ca approx gen col lt rev fig".split())

# --- series and coordination ------------------------------------------------------------------

# Ordinals that pick one of a recurring series ("the second Tuesday", "the first Saturday of
# September"): the tagger calls them ADJ like any adjective, and WordNet files them under no
# common class.
ORDINALS = frozenset(
    """first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth last final next""".split()
)
# Words that join the items of a coordination ("£35 for full members and £15 for juniors").
COORDINATORS = frozenset(("and", "or"))

# Conversation references (core/memory/): the pronouns of each referent group, the words a
# follow-up's frame may open with, and the closed classes the mention finder reads around a
# noun phrase.
PRONOUN_GROUPS = {
    "he": frozenset("he him his himself".split()),
    "she": frozenset("she her hers herself".split()),
    "it": frozenset("it its itself".split()),
    "they": frozenset("they them their theirs themselves".split()),
}
# The possessives a referent group fills as a possessive ("her" is told apart by its next word).
UNAMBIGUOUS_POSSESSIVES = frozenset("his its their".split())
# A follow-up's frame reuses a yes/no question that opens with one of these (written without the
# modal "may", "must" and "shall" of AUXILIARIES: the referent rules were learned with this list).
FRAME_AUXILIARIES = AUXILIARIES - {"may", "must", "shall"}
# Verbs whose object is also the subject of the next verb ("made him leave"): that pronoun refers.
CAUSATIVES = frozenset("make makes made let lets help helps helped see sees saw watch watched hear heard bid".split())
ARTICLES = frozenset("a an the".split())
# Prepositions before a noun phrase that make it a place or time rather than a referent.
MENTION_PREPOSITIONS = frozenset(
    "of in at on from to near into across over inside outside above below beneath under behind beyond "
    "around through toward towards along within".split()
)
# Words that make a noun phrase a question about a thing, not a mention of it.
MENTION_WH = frozenset("what which whose how many much".split())
# WordNet classes of nouns that measure rather than name (never a referent).
MEASURE_CLASSES = frozenset(("time period", "time unit", "unit of time", "measure", "quantity", "amount"))

# --- words the answer's patterns are built from (compiled where they are read, by `any_of`) -------

# Connectives that give a reason inside a sentence: it explains itself (answer_forms).
REASON_CONNECTIVES = ("because", "due to", "owing to", "so that", "in order to", "as a result of")
# Openings that ask for one name ("Name the …", "What was the name …"): the entity form.
NAME_REQUESTS = ("name the", "what is the name", "what was the name")
# Words that open a list item written as its own sentence ("The second cause …", "Finally, …").
ITEM_OPENERS = ("first", "second", "third", "fourth", "fifth", "sixth", "next", "last", "finally")
# Conjunctions that start a new clause: a negation denies only its own clause (polarity).
CLAUSE_CONJUNCTIONS = ("but", "although", "though", "because", "while", "whereas", "yet")


def any_of(phrases: Iterable[str]) -> str:
    """A regular expression group matching any of the phrases, in their order."""
    return "(?:" + "|".join(re.escape(p) for p in phrases) + ")"
