#!/usr/bin/env python3
"""Generate the synthetic sample corpus used by the README quick start.

Everything here is made up: the sentences come from hand-written templates
and a hand-written vocabulary (fictional organisations, invented events,
random numbers), so the corpus contains no third-party text.  The script
uses only the standard library and a fixed seed, so the output is the same
byte for byte on every run and platform.

How the four files are built
----------------------------
Each segment starts as a *frame*: an event type (earnings, a quote, a storm,
a poll …) with its slots filled in (who, where, how much, when).  A frame can
be written in two or three ways (templates), and many slots have several
surface forms ("4.5%" / "4.5 percent", "$3.5 million" / "3.5 million
dollars").

``sample.ref-A.en``
    One realisation of every frame.
``sample.ref-B.en``
    An independent paraphrase of the same frame: another template where the
    frame has one, other surface forms, and some synonyms ("said" ->
    "stated", "about" -> "roughly").
``sample.sys-A.en`` / ``sample.sys-B.en``
    Two "system outputs": a realisation of the same frame (usually, not
    always, worded like ref-A), then damaged with synonym substitutions,
    dropped words, swapped neighbouring words and stray inserted words.
    System B uses higher rates than system A, so it scores clearly lower.

Usage::

    python data/make_sample.py                 # writes data/sample.*.en
    python data/make_sample.py --out-dir DIR --segments 1000 --seed 20240521
"""

from __future__ import annotations

import argparse
import random
import re
from pathlib import Path

DEFAULT_SEED = 20240521
DEFAULT_SEGMENTS = 1000

# ---------------------------------------------------------------------------------------
# Vocabulary (hand-written, fictional where it names organisations)
# ---------------------------------------------------------------------------------------

FIRST_NAMES = [
    "Anna", "Ben", "Clara", "David", "Elena", "Farid", "Grace", "Hugo", "Ines", "Jonas",
    "Katarina", "Liam", "Maya", "Nikolai", "Olivia", "Pedro", "Quinn", "Rosa", "Samuel",
    "Tomás", "Ursula", "Viktor", "Wen", "Yusuf", "Zoë", "José", "Amara", "Henrik", "Leila",
    "Marcus",
]
LAST_NAMES = [
    "Adler", "Baker", "Castillo", "Dubois", "Eriksen", "Fischer", "Gallagher", "Hansen",
    "Ibrahim", "Jensen", "Kowalski", "Lindqvist", "Moreau", "Novak", "O'Brien", "Petrov",
    "Rahman", "Schneider", "Tanaka", "Underwood", "Vasquez", "Walsh", "Müller", "Yilmaz",
    "Zhang", "Álvarez", "Okafor", "Brennan", "Costa", "Haddad",
]
TITLES = [
    "Finance Minister", "Mayor", "Chief Executive", "spokeswoman", "spokesman",
    "Professor", "Health Minister", "union leader", "police chief", "coach",
    "Deputy Prime Minister", "chief economist",
]
CITIES = [
    "Lisbon", "Oslo", "Krakow", "Lyon", "Porto", "Tampere", "Graz", "Bilbao", "Ghent",
    "Aarhus", "Brno", "Turin", "Malmö", "Cork", "Leipzig", "Split", "Utrecht", "Tartu",
    "Valencia", "Salzburg", "Kaunas", "Bergen", "Nantes", "Plovdiv",
]
REGIONS = [
    "the north of the country", "the coastal region", "the southern provinces",
    "the capital region", "the eastern valleys", "the border area",
]
COMPANIES = [
    "Northbridge Energy", "Altavia Airlines", "Bramwell Foods", "Corvel Motors",
    "Delmont Bank", "Eastfield Telecom", "Fennick Pharma", "Greystone Mining",
    "Halvorsen Shipping", "Ivory Coast Textiles", "Juniper Retail", "Kestrel Software",
    "Larkspur Insurance", "Meridian Rail", "Nordvik Steel", "Orchard Media",
    "Pellham &amp; Sons", "Quayside Logistics", "Rowan Finch Partners", "Silverline Chemicals",
]
INSTITUTIONS = [
    "the Harlow Institute", "the University of Eastmere", "the National Statistics Office",
    "the Centre for Urban Studies", "the Westbrook Research Council",
    "the Institute for Climate Research", "the Marlow School of Medicine",
    "the Federal Audit Court",
]
TEAMS = [
    "Riverside United", "FC Northgate", "Harbour City", "Athletic Valemont",
    "Red Star Ostrava", "Sporting Caldera", "Olympic Brenford", "the Blue Falcons",
]
PRODUCTS = [
    "an electric delivery van", "a folding smartphone", "a low-cost laptop",
    "a hydrogen bus", "a home battery system", "a language-learning app",
    "a solar-powered ferry", "a budget e-reader",
]
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
MONTHS = [
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
]
CURRENCIES = ["euros", "dollars", "pounds", "kroner"]
CURRENCY_SIGNS = {"euros": "€", "dollars": "$", "pounds": "£"}
QUOTES = [
    "We will not accept these conditions",
    "This is a long-term problem that needs a long-term answer",
    "The figures speak for themselves",
    "Nobody expected the situation to change so quickly",
    "We are doing everything we can to help the families",
    "It is too early to say what caused the accident",
    "Our priority is to keep the prices stable",
    "The decision was not an easy one",
    "We have to be honest about the costs",
    "This is good news for the whole region",
    "I think the players showed real character today",
    "The so-called reform will hurt small businesses",
    "There is no quick fix for the housing crisis",
    "We expect a full recovery by the end of the year",
]
ISSUES = [
    "rising energy prices", "the shortage of nurses", "cross-border trade",
    "the new tax on fuel", "rents in the city centre", "cuts to public transport",
    "the closure of rural schools", "flood protection", "youth unemployment",
    "the state-owned railway",
]
EVENTS = [
    "a protest outside the parliament", "a fight at a football match",
    "a break-in at a jewellery shop", "a series of car thefts", "a fraud investigation",
    "clashes at a night-time demonstration",
]
FESTIVALS = [
    "the summer jazz festival", "the international film festival", "the book fair",
    "the food &amp; wine fair", "an exhibition of modern photography", "the street-art week",
]

# Synonym groups: every word in a group may replace any other.  Used for the
# paraphrased reference and for the system outputs' substitutions.
SYNONYM_GROUPS = [
    ["said", "stated", "added"],
    ["rose", "increased", "climbed", "grew"],
    ["fell", "dropped", "declined", "decreased"],
    ["about", "around", "roughly", "approximately"],
    ["company", "firm", "group"],
    ["announced", "unveiled", "presented"],
    ["plan", "proposal", "scheme"],
    ["people", "residents", "citizens"],
    ["big", "large", "major"],
    ["after", "following"],
    ["showed", "found", "suggested"],
    ["expects", "predicts", "forecasts"],
    ["cancelled", "scrapped", "called off"],
    ["visitors", "guests", "attendees"],
    ["strong", "solid", "robust"],
    ["warned", "cautioned"],
    ["arrested", "detained"],
    ["damaged", "destroyed", "hit"],
    ["city", "town"],
    ["agreed", "decided"],
    ["cost", "price"],
    ["start", "begin"],
    ["quickly", "rapidly", "fast"],
    ["reporters", "journalists"],
    ["also", "additionally"],
    ["despite", "in spite of"],
    ["injured", "hurt", "wounded"],
    ["workers", "employees", "staff"],
    ["new", "fresh"],
    ["record", "all-time high"],
]
SYNONYMS: dict[str, list[str]] = {}
for _group in SYNONYM_GROUPS:
    for _word in _group:
        SYNONYMS[_word] = [w for w in _group if w != _word]

FILLER_WORDS = ["also", "the", "reportedly", "however", "then", "a", "very", "still", "now"]

# ---------------------------------------------------------------------------------------
# Slot values with several surface forms
# ---------------------------------------------------------------------------------------


def thousands(n: int) -> str:
    """1200 -> '1,200'."""
    return f"{n:,}"


def percent(rng: random.Random, low: float = 0.5, high: float = 40.0) -> list[str]:
    value = round(rng.uniform(low, high), 1)
    text = f"{value:g}" if value != int(value) else f"{int(value)}"
    return [f"{text}%", f"{text} percent", f"{text} per cent"]


def money(rng: random.Random, large: bool = True) -> list[str]:
    """An amount of money: millions/billions if ``large``, else a price."""
    currency = rng.choice(CURRENCIES)
    if large:
        scale = rng.choice(["million", "million", "billion"])
        amount = f"{round(rng.uniform(1.1, 99.9), 1):g}"
        sign = CURRENCY_SIGNS.get(currency)
        forms = [f"{amount} {scale} {currency}"]
        if sign:
            forms.insert(0, f"{sign}{amount} {scale}")
        return forms
    amount = thousands(rng.randrange(120, 9800, 10))
    return [f"{amount} {currency}", f"{amount.replace(',', '')} {currency}"]


def count(rng: random.Random, low: int, high: int, approx: bool = False) -> list[str]:
    """A number of things; ``approx`` adds a rounded form ("more than 1,200")."""
    n = rng.randint(low, high)
    forms = [thousands(n)]
    if n >= 1000:
        forms.append(str(n))
        if approx:
            forms.append(f"more than {thousands(n - n % 100)}" if n % 100
                         else f"about {thousands(n)}")
    return forms


def year_range(rng: random.Random) -> list[str]:
    start = rng.randint(2003, 2021)
    end = start + rng.randint(1, 4)
    return [f"{start}-{end}", f"{start} to {end}"]


def person(rng: random.Random) -> dict[str, list[str]]:
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    return {"name": [f"{first} {last}"], "last": [last]}


def date_span(rng: random.Random) -> list[str]:
    """Two days of one month: 'between 3 and 14 March' / 'from March 3 to March 14'."""
    first = rng.randint(1, 20)
    last, month = first + rng.randint(2, 8), rng.choice(MONTHS)
    return [f"between {first} and {last} {month}", f"from {month} {first} to {month} {last}"]


# ---------------------------------------------------------------------------------------
# Frames: slot generators and their templates (two or three wordings each)
# ---------------------------------------------------------------------------------------


def frame_earnings(rng):
    up = rng.random() < 0.6
    slots = {
        "org": [rng.choice(COMPANIES)], "pct": percent(rng, 0.5, 35), "amount": money(rng),
        "dir": ["rose"] if up else ["fell"], "dirn": ["rise"] if up else ["drop"],
        "metric": [rng.choice(["revenue", "net profit", "sales", "operating profit"])],
        "period": [rng.choice(["the first quarter", "the second quarter", "the third quarter",
                               "the full year", "the first half of the year"])],
        "day": [rng.choice(WEEKDAYS)],
    }
    templates = [
        "{org} said on {day} that its {metric} {dir} {pct} to {amount} in {period}.",
        "On {day}, {org} reported a {pct} {dirn} in {metric} to {amount} for {period}.",
        "{metric_cap} at {org} {dir} by {pct} in {period}, reaching {amount}, the company "
        "said on {day}.",
    ]
    return slots, templates


def frame_quote(rng):
    p = person(rng)
    slots = {
        "quote": [rng.choice(QUOTES)], "title": [rng.choice(TITLES)], "name": p["name"],
        "city": [rng.choice(CITIES)], "issue": [rng.choice(ISSUES)],
    }
    templates = [
        "\"{quote},\" {title} {name} told reporters in {city} when asked about {issue}.",
        "Asked about {issue}, {title} {name} told reporters in {city}: \"{quote}.\"",
        "\"{quote},\" said {name}, the {title}, speaking in {city} about {issue}.",
    ]
    return slots, templates


def frame_storm(rng):
    slots = {
        "storm": [rng.choice(["A storm", "Heavy rain", "A powerful storm", "Flash flooding"])],
        "region": [rng.choice(REGIONS)], "dead": count(rng, 2, 19), "injured": count(rng, 10, 240),
        "homes": count(rng, 150, 4800, approx=True), "day": [rng.choice(WEEKDAYS)],
        "speed": [f"{rng.randint(90, 180)} km/h", f"{rng.randint(90, 180)} kilometres per hour"],
    }
    templates = [
        "{storm} killed {dead} people and injured {injured} in {region} on {day}, damaging "
        "{homes} homes.",
        "At least {dead} people were killed and {injured} injured when {storm_low} hit {region} "
        "on {day}, with winds of up to {speed}.",
    ]
    return slots, templates


def frame_sport(rng):
    home, away = rng.sample(TEAMS, 2)
    a, b = rng.randint(1, 5), rng.randint(0, 3)
    if b >= a:
        a, b = b + 1, a
    p = person(rng)
    slots = {
        "home": [home], "away": [away], "score": [f"{a}-{b}", f"{a}:{b}"],
        "name": p["name"], "minute": [f"{rng.randint(2, 90)}th minute"],
        "crowd": count(rng, 8000, 61000, approx=True),
    }
    templates = [
        "{home} beat {away} {score} on Saturday, with {name} scoring in the {minute} in front "
        "of {crowd} fans.",
        "{name} scored in the {minute} as {home} won {score} against {away}, watched by a crowd "
        "of {crowd}.",
    ]
    return slots, templates


def frame_policy(rng):
    p = person(rng)
    slots = {
        "title": [rng.choice(["Finance Minister", "Transport Minister", "Health Minister",
                              "Education Minister", "Mayor"])],
        "name": p["name"], "plan_what": [rng.choice([
            "build 40 new schools", "cut income tax for low earners", "expand the tram network",
            "hire 2,500 more nurses", "renovate social housing", "subsidise home insulation",
            "modernise the state-owned railway"])],
        "amount": money(rng), "years": year_range(rng),
    }
    templates = [
        "{title} {name} announced a plan to {plan_what}, which will cost {amount} over the "
        "period {years}.",
        "The government will spend {amount} in {years} to {plan_what}, {title} {name} "
        "announced.",
        "A new plan to {plan_what} was announced by {title} {name}; it is expected to cost "
        "{amount} ({years}).",
    ]
    return slots, templates


def frame_police(rng):
    slots = {
        "city": [rng.choice(CITIES)], "n": count(rng, 2, 48), "event": [rng.choice(EVENTS)],
        "day": [rng.choice(WEEKDAYS)], "age_low": [str(rng.randint(16, 25))],
        "age_high": [str(rng.randint(26, 61))],
    }
    templates = [
        "Police in {city} arrested {n} people after {event} on {day} night.",
        "{n_cap} people, aged between {age_low} and {age_high}, were arrested in {city} after "
        "{event} on {day}.",
    ]
    return slots, templates


def frame_poll(rng):
    slots = {
        "pct": percent(rng, 12, 78), "issue": [rng.choice(ISSUES)],
        "inst": [rng.choice(INSTITUTIONS)], "n": count(rng, 800, 3200),
        "dates": date_span(rng),
        "margin": [f"{rng.choice(['2.5', '3', '3.5', '1.8'])} percentage points"],
    }
    templates = [
        "According to a survey by {inst}, {pct} of people think {issue} is the country's "
        "biggest problem.",
        "{pct_cap} of the {n} people questioned by {inst} {dates} named "
        "{issue} as the biggest problem (margin of error: {margin}).",
    ]
    return slots, templates


def frame_science(rng):
    slots = {
        "inst": [rng.choice(INSTITUTIONS)], "n": count(rng, 300, 12000, approx=True),
        "topic": [rng.choice(["walking 30 minutes a day", "sleeping less than six hours",
                              "living near a busy road", "drinking two cups of coffee a day",
                              "working night shifts", "using a smartphone before bed"])],
        "effect": [rng.choice(["lowered the risk of heart disease",
                               "was linked to a higher risk of diabetes",
                               "had no measurable effect on memory",
                               "improved well-being"])],
        "years": year_range(rng),
    }
    templates = [
        "Researchers at {inst} found that {topic} {effect}, in a study of {n} adults.",
        "A study by {inst} of {n} adults followed in {years} showed that {topic} {effect}.",
    ]
    return slots, templates


def frame_transport(rng):
    slots = {
        "n": count(rng, 40, 1900, approx=True),
        "day": [rng.choice(WEEKDAYS)], "hours": [str(rng.choice([12, 24, 36, 48]))],
        "union": [rng.choice(["the drivers' union", "pilots", "cabin crew",
                              "ground-handling staff"])],
        "pay": percent(rng, 3, 15),
    }
    org, what = rng.choice([("Altavia Airlines", "flights"), ("Meridian Rail", "trains"),
                            ("the city's bus operator", "bus services"),
                            ("the national rail company", "trains"),
                            ("Quayside Logistics", "ferry crossings")])
    slots["org"], slots["what"] = [org], [what, "connections"]
    templates = [
        "{org_cap} cancelled {n} {what} on {day} because of a {hours}-hour strike by {union}, "
        "who are demanding a pay rise of {pay}.",
        "A {hours}-hour strike by {union} forced {org} to cancel {n} {what} on {day}; the "
        "workers want {pay} more pay.",
    ]
    return slots, templates


def frame_culture(rng):
    slots = {
        "fest": [rng.choice(FESTIVALS)], "city": [rng.choice(CITIES)],
        "n": count(rng, 4000, 250000, approx=True), "pct": percent(rng, 2, 30),
        "year": [str(rng.randint(2009, 2023))],
    }
    templates = [
        "{fest_cap} in {city} attracted {n} visitors this year, {pct} more than in {year}.",
        "With {n} visitors, {fest} in {city} had its best year since {year}, the organisers "
        "said.",
    ]
    return slots, templates


def frame_housing(rng):
    slots = {
        "city": [rng.choice(CITIES)], "pct": percent(rng, 1, 18),
        "price": [f"{thousands(rng.randrange(1800, 9800, 50))} euros"],
        "sqm": ["per square metre", "a square metre"],
        "quarter": [rng.choice(["the last quarter", "the past twelve months", "2022"])],
    }
    templates = [
        "House prices in {city} rose {pct} in {quarter}, to an average of {price} {sqm}.",
        "The average price of a flat in {city} is now {price} {sqm}, up {pct} in {quarter}.",
    ]
    return slots, templates


def frame_election(rng):
    p, q = person(rng), person(rng)
    share = round(rng.uniform(41, 62), 1)
    slots = {
        "name": p["name"], "rival": q["name"],
        "pct": [f"{share:g}%", f"{share:g} percent"],
        "rival_pct": [f"{round(100 - share - rng.uniform(2, 12), 1):g}%"],
        "city": [rng.choice(CITIES)], "turnout": percent(rng, 38, 74),
    }
    templates = [
        "{name} won the mayoral election in {city} with {pct} of the vote, ahead of {rival} "
        "({rival_pct}); turnout was {turnout}.",
        "With {pct} of the vote, {name} beat {rival} to become mayor of {city}, election "
        "officials said.",
    ]
    return slots, templates


def frame_product(rng):
    slots = {
        "org": [rng.choice(COMPANIES)], "product": [rng.choice(PRODUCTS)],
        "price": money(rng, large=False), "month": [rng.choice(MONTHS)],
        "n": count(rng, 5000, 90000, approx=True),
    }
    templates = [
        "{org} unveiled {product} on Wednesday, which will go on sale in {month} for {price}.",
        "{org} hopes to sell {n} units of its new product, {product}, priced at {price}, "
        "starting in {month}.",
    ]
    return slots, templates


def frame_energy(rng):
    mw = rng.randint(120, 2400)
    slots = {
        "org": [rng.choice(["Northbridge Energy", "Greystone Mining", "Nordvik Steel",
                            "Silverline Chemicals"])],
        "mw": [f"{thousands(mw)} megawatts", f"{thousands(mw)} MW"],
        "homes": count(rng, 20000, 900000, approx=True), "amount": money(rng),
        "years": year_range(rng),
        "kind": [rng.choice(["wind farm", "solar park", "gas-fired power plant",
                             "hydro-electric dam"])],
    }
    templates = [
        "{org} will build a {kind} with a capacity of {mw}, enough to supply {homes} homes.",
        "The new {kind} of {org} (capacity: {mw}) will cost {amount} and should be built in "
        "{years}.",
    ]
    return slots, templates


def frame_trade(rng):
    slots = {
        "what": [rng.choice(["Exports", "Imports", "Car exports", "Food exports",
                             "Industrial output"])],
        "pct": percent(rng, 0.4, 14), "dir": [rng.choice(["rose", "fell"])],
        "month": [rng.choice(MONTHS)], "inst": ["the National Statistics Office"],
        "amount": money(rng), "yoy": ["year-on-year", "compared with a year earlier"],
    }
    templates = [
        "{what} {dir} {pct} {yoy} in {month}, to {amount}, {inst} said.",
        "According to {inst}, {what_low} {dir} by {pct} {yoy} in {month}.",
    ]
    return slots, templates


def frame_court(rng):
    p = person(rng)
    slots = {
        "name": p["name"], "age": [str(rng.randint(23, 71))],
        "crime": [rng.choice(["fraud", "tax evasion", "bribery", "money laundering",
                              "dangerous driving"])],
        "years": [str(rng.randint(2, 12))], "city": [rng.choice(CITIES)],
        "fine": money(rng, large=False),
    }
    templates = [
        "A court in {city} sentenced {name}, {age}, to {years} years in prison for {crime}.",
        "{name} ({age}) was found guilty of {crime} by a court in {city} and fined {fine}.",
    ]
    return slots, templates


FRAMES = [
    frame_earnings, frame_quote, frame_storm, frame_sport, frame_policy, frame_police,
    frame_poll, frame_science, frame_transport, frame_culture, frame_housing,
    frame_election, frame_product, frame_energy, frame_trade, frame_court,
]

# Optional second sentences that make some segments longer (news segments often
# are): (frames it suits, ref-A wording, ref-B wording).
_NUMBERS = (frame_earnings, frame_poll, frame_trade, frame_housing)
_COMPANY = (frame_earnings, frame_product, frame_energy)
_INCIDENT = (frame_storm, frame_police, frame_court, frame_transport)
_DECISION = (frame_policy, frame_energy, frame_transport, frame_court)
TAILS = [
    (_NUMBERS, "The figures were published on {weekday}.",
     "The data were released on {weekday}."),
    (_NUMBERS, "Analysts had expected a smaller change.",
     "Economists had predicted a smaller change."),
    (_DECISION, "The opposition called the decision \"irresponsible\".",
     "Opposition parties said the decision was \"irresponsible\"."),
    (FRAMES, "More details are expected next week.", "Further details will follow next week."),
    (_INCIDENT, "It was the third such incident this year.",
     "This was the third incident of its kind this year."),
    (_COMPANY, "The R&amp;D department will move to {city} in {year}.",
     "Research &amp; development will be moved to {city} in {year}."),
    (FRAMES, "Local media reported the news first.",
     "The news was first reported by local media."),
    (_NUMBERS + _COMPANY, "A spokesman called the report &quot;misleading&quot;.",
     "A spokesman said the report was \"misleading\"."),
]


# ---------------------------------------------------------------------------------------
# Realisation and perturbation
# ---------------------------------------------------------------------------------------


def realise(template: str, slots: dict, pick) -> str:
    """Fill a template; ``pick(forms)`` chooses one surface form per slot.

    ``{slot_cap}`` capitalises the first letter, ``{slot_low}`` lower-cases it.
    """

    def fill(match: re.Match) -> str:
        key = match.group(1)
        suffix = None
        if key.endswith(("_cap", "_low")) and key not in slots:
            key, suffix = key[:-4], key[-3:]
        value = pick(slots[key])
        if suffix == "cap":
            value = value[:1].upper() + value[1:]
        elif suffix == "low":
            value = value[:1].lower() + value[1:]
        return value

    return re.sub(r"\{(\w+)\}", fill, template)


_WORD = re.compile(r"^([^\w]*)([\w'-]+)([^\w]*)$")


def substitute(word: str, rng: random.Random) -> str:
    """Replace a word by a synonym, keeping its punctuation and capitalisation."""
    m = _WORD.match(word)
    if not m:
        return word
    lead, core, trail = m.groups()
    options = SYNONYMS.get(core.lower())
    if not options:
        return word
    new = rng.choice(options)
    if core[:1].isupper():
        new = new[:1].upper() + new[1:]
    return lead + new + trail


def paraphrase_words(text: str, rng: random.Random, rate: float) -> str:
    return " ".join(substitute(w, rng) if rng.random() < rate else w for w in text.split(" "))


def perturb(text: str, rng: random.Random, rates: dict[str, float]) -> str:
    """Damage a sentence as a weak MT system would."""
    words = text.split(" ")
    out: list[str] = []
    for position, word in enumerate(words):
        # Never drop the last word: it carries the sentence's final punctuation.
        if rng.random() < rates["drop"] and len(words) > 4 and position < len(words) - 1:
            continue
        if rng.random() < rates["synonym"]:
            word = substitute(word, rng)
        out.append(word)
        if rng.random() < rates["insert"]:
            out.append(rng.choice(FILLER_WORDS))
    for i in range(len(out) - 1):
        if rng.random() < rates["swap"]:
            out[i], out[i + 1] = out[i + 1], out[i]
    if out and out[0][:1].islower() and text[:1].isupper():
        out[0] = out[0][:1].upper() + out[0][1:]
    return " ".join(out)


SYSTEMS = {
    # name: probability of keeping ref-A's template and of using the canonical
    # surface forms (as ref-A does), then the per-word damage rates
    "A": {"same_template": 0.5, "canonical_forms": 0.5,
          "rates": {"drop": 0.08, "synonym": 0.40, "swap": 0.08, "insert": 0.05}},
    "B": {"same_template": 0.3, "canonical_forms": 0.3,
          "rates": {"drop": 0.16, "synonym": 0.60, "swap": 0.12, "insert": 0.08}},
}


def generate(n_segments: int, seed: int) -> dict[str, list[str]]:
    """Return ``{"ref-A": [...], "ref-B": [...], "sys-A": [...], "sys-B": [...]}``."""
    rng = random.Random(seed)
    out: dict[str, list[str]] = {"ref-A": [], "ref-B": [], "sys-A": [], "sys-B": []}
    for _ in range(n_segments):
        frame = rng.choice(FRAMES)
        slots, templates = frame(rng)
        tail = None
        if rng.random() < 0.25:
            tail_pair = rng.choice([t[1:] for t in TAILS if frame in t[0]])
            tail_slots = {"weekday": [rng.choice(WEEKDAYS)], "city": [rng.choice(CITIES)],
                          "year": [str(rng.randint(2024, 2027))]}
            tail = (tail_pair, tail_slots)

        def first(forms):
            return forms[0]

        def any_form(forms):
            return rng.choice(forms)

        def add_tail(text: str, which: int) -> str:
            if tail is None:
                return text
            pair, tslots = tail
            return text + " " + realise(pair[which], tslots, first)

        # Reference A: a random template, canonical surface forms.
        t_a = rng.randrange(len(templates))
        ref_a = add_tail(realise(templates[t_a], slots, first), 0)
        # Reference B: another template if there is one, other surface forms, synonyms.
        others = [i for i in range(len(templates)) if i != t_a] or [t_a]
        t_b = rng.choice(others)
        ref_b = realise(templates[t_b], slots, lambda forms: forms[-1] if len(forms) > 1
                        else forms[0])
        ref_b = add_tail(paraphrase_words(ref_b, rng, 0.35), 1)
        out["ref-A"].append(ref_a)
        out["ref-B"].append(ref_b)

        for name, cfg in SYSTEMS.items():
            t_s = t_a if rng.random() < cfg["same_template"] else rng.randrange(len(templates))
            pick = first if rng.random() < cfg["canonical_forms"] else any_form
            hyp = realise(templates[t_s], slots, pick)
            if tail is not None:
                hyp = add_tail(hyp, rng.randrange(2))
            out[f"sys-{name}"].append(perturb(hyp, rng, cfg["rates"]))
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description="Write the synthetic sample corpus (two references, two systems).")
    parser.add_argument("--out-dir", type=Path, default=Path(__file__).resolve().parent,
                        help="directory for the sample.*.en files (default: this script's)")
    parser.add_argument("--segments", type=int, default=DEFAULT_SEGMENTS,
                        help=f"number of segments (default {DEFAULT_SEGMENTS})")
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED,
                        help=f"random seed (default {DEFAULT_SEED})")
    args = parser.parse_args(argv)

    corpus = generate(args.segments, args.seed)
    args.out_dir.mkdir(parents=True, exist_ok=True)
    for name, lines in corpus.items():
        path = args.out_dir / f"sample.{name}.en"
        with open(path, "w", encoding="utf-8", newline="\n") as f:
            f.write("\n".join(lines) + "\n")
        print(f"wrote {path} ({len(lines)} lines)")


if __name__ == "__main__":
    main()
