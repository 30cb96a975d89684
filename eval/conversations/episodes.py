"""The development half's episodes and the small talk between them (generate.py expands them). All invented.

An episode: `topic`; `slots` (each conversation picks one value of each); `turns` as (role, text), T the one who tells
and L the one who listens; `answer` (indexes of the turns that answer the questions) and `context` (turns they need);
`notes` (what an agent would note, the first one answering the questions); `questions`. {T}, {L} and {month} are the
speakers and the session's month.
"""

from __future__ import annotations

from typing import Any

FILLER: dict[str, list[str]] = {
    "open": [
        "Hey {other}! How's your week going?",
        "Hi! Long time no talk.",
        "Morning! Did you sleep at all?",
        "Hey, got a minute to chat?",
        "Good to hear from you, {other}.",
        "Hi {other}, sorry I went quiet, work has been mad.",
        "Hey hey. Surviving the week?",
        "Evening! Just got home.",
    ],
    "between": [
        "Haha, that sounds about right.",
        "Oh wow, I didn't expect that.",
        "Totally get it.",
        "Ha! Classic.",
        "That's so good to hear.",
        "Ugh, I know the feeling.",
        "Makes sense.",
        "No way, really?",
        "I love that for you.",
        "Fair enough!",
    ],
    "close": [
        "Anyway, I should go and make dinner.",
        "Talk soon, {other}!",
        "Let's catch up properly next week.",
        "Okay, my battery is dying. Bye!",
        "Say hi to everyone from me.",
        "Gotta run, speak soon.",
        "Night night!",
        "Thanks for listening, {other}.",
    ],
    # What an agent notes of the small talk in a session: {A} and {B} are the speakers in either order.
    "notes": [
        "{A} said work has been hectic this month.",
        "{A} and {B} caught up in the evening; both were tired.",
        "{B} apologised for replying late.",
        "{A} and {B} want to meet up in person soon.",
        "{B} mentioned the weather has been miserable.",
        "{A} has been sleeping badly.",
        "{B} was cooking dinner while they chatted.",
        "{A} is trying to spend less time on the phone.",
        "{B} said the week went by quickly.",
        "{A} laughed about an old story from school.",
        "{B} is looking forward to the weekend.",
        "{A} had a long day and kept the chat short.",
        "{B} checked in on how {A} is doing.",
        "{A} and {B} joked about getting old.",
        "{B} is saving money this month.",
        "{A} has a busy few weeks ahead.",
    ],
}

EPISODES: list[dict[str, Any]] = [
    {
        "topic": "pet",
        "slots": {
            "pet": ["a beagle puppy", "a grey kitten", "a rescue greyhound", "two guinea pigs"],
            "petname": ["Biscuit", "Pepper", "Noodle", "Ziggy"],
            "shelter": ["the Dogs Trust centre", "a farm near the coast", "the city animal shelter"],
        },
        "turns": [
            ("T", "Guess what, we finally adopted {pet}!"),
            ("L", "Stop it, that's amazing. What's the name?"),
            ("T", "{petname}. We picked them up from {shelter} on Saturday."),
            ("L", "You have to send me pictures."),
        ],
        "answer": [0, 2],
        "context": [1],
        "notes": ["{T} adopted {pet} called {petname} from {shelter} in {month}."],
        "questions": ["What is the name of {T}'s new pet?"],
    },
    {
        "topic": "job",
        "slots": {
            "company": ["a small robotics startup", "the city council", "a big insurance firm", "a design studio"],
            "role": ["data engineer", "project coordinator", "UX researcher", "account manager"],
        },
        "turns": [
            ("L", "Any news on the job hunt?"),
            ("T", "Yes! I got an offer from {company} as a {role}, I start in three weeks."),
            ("L", "Congratulations!! That's huge."),
            ("T", "Thanks, I'm nervous but excited. The team seemed really kind."),
        ],
        "answer": [1],
        "context": [0],
        "notes": ["{T} accepted a job as a {role} at {company} ({month})."],
        "questions": ["What job offer did {T} accept?"],
    },
    {
        "topic": "trip",
        "slots": {
            "place": ["Porto", "the Scottish Highlands", "Kraków", "Sicily"],
            "highlight": ["the food markets", "a boat trip at sunset", "the old town at night", "a cooking class"],
        },
        "turns": [
            ("L", "How was the trip??"),
            ("T", "{place} was incredible. The best part was {highlight}."),
            ("L", "I'm so jealous. Would you go back?"),
            ("T", "In a heartbeat. Already looking at flights for next year."),
        ],
        "answer": [1],
        "context": [0],
        "notes": ["{T} travelled to {place} in {month}; the highlight was {highlight}."],
        "questions": ["Where did {T} go on holiday, and what was the best part?"],
    },
    {
        "topic": "injury",
        "slots": {
            "body": ["ankle", "wrist", "knee", "shoulder"],
            "how": [
                "slipped on ice outside the office",
                "fell off a ladder hanging curtains",
                "landed badly playing five-a-side",
                "tripped over the dog",
            ],
        },
        "turns": [
            ("T", "I'm typing one-handed, sorry for the typos."),
            ("L", "Oh no, what happened?"),
            ("T", "I hurt my {body}, I {how}. It's sprained, not broken."),
            ("L", "Ouch. Rest up and keep it elevated!"),
        ],
        "answer": [2],
        "context": [1],
        "notes": ["{T} sprained their {body} in {month} after they {how}."],
        "questions": ["How did {T} get injured?"],
    },
    {
        "topic": "book",
        "slots": {
            "book": ["Piranesi", "The Remains of the Day", "Project Hail Mary", "Homegoing"],
            "why": [
                "the ending wrecked me",
                "I read it in two days",
                "the writing is so quiet and sad",
                "it made me laugh out loud on the train",
            ],
        },
        "turns": [
            ("L", "I need something to read, I'm in a slump."),
            ("T", "Read {book}. Honestly {why}."),
            ("L", "Adding it to my list right now."),
        ],
        "answer": [1],
        "context": [0],
        "notes": ["{T} recommended the book {book} to {L}."],
        "questions": ["Which book did {T} recommend?"],
    },
    {
        "topic": "hobby",
        "slots": {
            "hobby": ["pottery", "bouldering", "salsa dancing", "watercolour painting"],
            "when": ["on Tuesday evenings", "every Sunday morning", "twice a week after work"],
        },
        "turns": [
            ("T", "I signed up for a {hobby} class, it's {when}."),
            ("L", "Since when are you into that?"),
            ("T", "I needed something that isn't a screen. First session was brilliant."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T} started a {hobby} class in {month}, {when}."],
        "questions": ["What class did {T} sign up for?"],
    },
    {
        "topic": "car",
        "slots": {
            "problem": [
                "the clutch went",
                "the battery died on the motorway",
                "a tyre blew out",
                "the gearbox started grinding",
            ],
            "cost": ["400", "650", "1,200", "900"],
        },
        "turns": [
            ("T", "Worst day. {problem} on the way to my parents'."),
            ("L", "Are you okay? Did you get home?"),
            ("T", "Yeah, got towed. The garage says it's {cost} euros to fix. Brilliant."),
        ],
        "answer": [0, 2],
        "context": [],
        "notes": ["{T}'s car broke down in {month} ({problem}); the repair costs {cost} euros."],
        "questions": ["How much will {T}'s car repair cost?"],
    },
    {
        "topic": "sibling",
        "slots": {
            "sibling": ["sister", "brother", "cousin"],
            "event": [
                "is getting married in June",
                "just had a baby girl",
                "is moving to Australia",
                "got into medical school",
            ],
        },
        "turns": [
            ("T", "Big family news: my {sibling} {event}!"),
            ("L", "No way! How is everyone taking it?"),
            ("T", "Mum cried for an hour. Happy tears, mostly."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T}'s {sibling} {event} (told in {month})."],
        "questions": ["What was {T}'s family news about their {sibling}?"],
    },
    {
        "topic": "allergy",
        "slots": {"food": ["shellfish", "sesame", "kiwi", "peanuts"]},
        "turns": [
            ("T", "So that rash last month? The allergist says I'm allergic to {food}."),
            ("L", "Scary. Do you have to carry an EpiPen?"),
            ("T", "Just antihistamines for now, but I have to read every label."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T} found out they are allergic to {food} ({month})."],
        "questions": ["What is {T} allergic to?"],
    },
    {
        "topic": "garden",
        "slots": {
            "veg": ["tomatoes", "courgettes", "chillies", "runner beans"],
            "place": ["the balcony", "an allotment near the station", "the back garden"],
        },
        "turns": [
            ("T", "I'm growing {veg} on {place} this year."),
            ("L", "Look at you! Any luck so far?"),
            ("T", "Loads of flowers, no fruit yet. Fingers crossed."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T} is growing {veg} on {place}."],
        "questions": ["What vegetables is {T} growing?"],
    },
    {
        "topic": "concert",
        "slots": {
            "artist": ["Arctic Monkeys", "Beyoncé", "a string quartet", "Fontaines D.C."],
            "venue": ["the O2", "an old church", "a tiny basement bar", "the football stadium"],
        },
        "turns": [
            ("L", "What did you get up to at the weekend?"),
            ("T", "Saw {artist} at {venue}. My ears are still ringing."),
            ("L", "Was it as good as you hoped?"),
            ("T", "Better. They played everything I wanted."),
        ],
        "answer": [1],
        "context": [0],
        "notes": ["{T} saw {artist} live at {venue} in {month}."],
        "questions": ["Which concert did {T} go to?"],
    },
    {
        "topic": "language",
        "slots": {
            "language": ["Japanese", "Portuguese", "Korean", "Greek"],
            "reason": ["for a trip next spring", "because of my partner's family", "just for fun"],
        },
        "turns": [
            ("T", "I've started learning {language}, {reason}."),
            ("L", "How's it going?"),
            ("T", "Slowly. I can order coffee and apologise, that's about it."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T} began learning {language} {reason} ({month})."],
        "questions": ["Which language is {T} learning and why?"],
    },
    {
        "topic": "move",
        "slots": {
            "area": ["a flat by the canal", "a house on the edge of town", "a studio near the park"],
            "reason": ["the old landlord sold up", "it's closer to work", "we needed a second bedroom"],
        },
        "turns": [
            ("L", "Is the move still happening?"),
            ("T", "Yep, we got {area}. {reason}."),
            ("L", "Need help carrying boxes?"),
            ("T", "Always. I'll pay in pizza."),
        ],
        "answer": [1],
        "context": [0],
        "notes": ["{T} moved to {area} in {month} because {reason}."],
        "questions": ["Why did {T} move house?"],
    },
    {
        "topic": "recipe",
        "slots": {
            "dish": ["a lentil dal", "shakshuka", "mushroom risotto", "a Thai green curry"],
            "secret": ["a spoon of miso", "brown butter", "lots of lime at the end", "smoked paprika"],
        },
        "turns": [
            ("L", "What was that thing you cooked last time? I still think about it."),
            ("T", "The {dish}! The trick is {secret}."),
            ("L", "Writing that down."),
        ],
        "answer": [1],
        "context": [0],
        "notes": ["{T}'s {dish} recipe uses {secret} as the trick."],
        "questions": ["What's the secret ingredient in {T}'s {dish}?"],
    },
    {
        "topic": "race",
        "slots": {"race": ["a half marathon", "a 10k", "a sprint triathlon"], "time": ["1:52", "48 minutes", "1:21"]},
        "turns": [
            ("T", "I did it! Finished {race} in {time}."),
            ("L", "You legend! Are your legs okay?"),
            ("T", "Can't walk down stairs, but worth it."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T} completed {race} in {time} in {month}."],
        "questions": ["What was {T}'s finishing time in the race?"],
    },
    {
        "topic": "phone",
        "slots": {
            "phone": ["an old iPhone", "a Pixel", "a Samsung"],
            "how": ["dropped it in the bath", "left it on the bus", "sat on it"],
        },
        "turns": [
            ("T", "If I don't reply it's because I {how}. RIP my phone."),
            ("L", "Not again! What are you using now?"),
            ("T", "My dad's spare, {phone} with a cracked screen."),
        ],
        "answer": [0, 2],
        "context": [1],
        "notes": ["{T}'s phone was ruined ({how}); they're using {phone} for now ({month})."],
        "questions": ["What happened to {T}'s phone?"],
    },
    {
        "topic": "volunteer",
        "slots": {
            "where": ["a food bank", "an animal shelter", "a refugee language café", "a hospice shop"],
            "day": ["Saturdays", "Wednesday evenings", "every other Sunday"],
        },
        "turns": [
            ("T", "I've started volunteering at {where} on {day}."),
            ("L", "That's lovely. How did you find it?"),
            ("T", "A friend from work roped me in and now I'm hooked."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T} volunteers at {where} on {day} (since {month})."],
        "questions": ["Where does {T} volunteer?"],
    },
    {
        "topic": "promotion",
        "slots": {"title": ["team lead", "senior analyst", "head of events", "principal engineer"]},
        "turns": [
            ("L", "How did the review go?"),
            ("T", "They made me {title}! Pay rise and everything."),
            ("L", "About time they noticed."),
        ],
        "answer": [1],
        "context": [0],
        "notes": ["{T} was promoted to {title} in {month}."],
        "questions": ["What was {T} promoted to?"],
    },
    {
        "topic": "camping",
        "slots": {
            "where": ["the Lake District", "a forest in the Ardennes", "the dunes near the coast"],
            "mishap": ["the tent flooded", "a fox stole our sausages", "we forgot the tent poles"],
        },
        "turns": [
            ("T", "We went camping in {where}. Disaster: {mishap}."),
            ("L", "Hahaha. Did you survive?"),
            ("T", "Barely. Slept in the car the second night."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T} went camping in {where} in {month}; {mishap}."],
        "questions": ["What went wrong on {T}'s camping trip?"],
    },
    {
        "topic": "guitar",
        "slots": {"song": ["Wonderwall", "Blackbird", "Hallelujah", "Wish You Were Here"]},
        "turns": [
            ("T", "Finally learned to play {song} on the guitar all the way through."),
            ("L", "Play it for me next time!"),
            ("T", "Only if you promise not to laugh at the F chord."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T} learned {song} on guitar ({month})."],
        "questions": ["What song did {T} learn on the guitar?"],
    },
    {
        "topic": "friend-visit",
        "slots": {"friend": ["Joanna", "Mehdi", "Clara", "Tunde"], "from": ["Lisbon", "Toronto", "Nairobi", "Seoul"]},
        "turns": [
            ("T", "{friend} is visiting from {from} next week, staying with us."),
            ("L", "Fun! Haven't seen them in ages, right?"),
            ("T", "Five years. I've planned way too much."),
        ],
        "answer": [0],
        "context": [],
        "notes": ["{T}'s friend {friend} visited from {from} ({month})."],
        "questions": ["Who came to stay with {T}, and from where?"],
    },
    {
        "topic": "dentist",
        "slots": {"treatment": ["a root canal", "two fillings", "a wisdom tooth out"]},
        "turns": [
            ("L", "You sound weird, are you okay?"),
            ("T", "Just back from the dentist, I had {treatment}. Face is still numb."),
            ("L", "Soup for dinner then."),
        ],
        "answer": [1],
        "context": [0],
        "notes": ["{T} had {treatment} at the dentist in {month}."],
        "questions": ["What did {T} have done at the dentist?"],
    },
]
