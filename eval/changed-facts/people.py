"""The people of the "changed facts" set, as plain data (generate.py expands them). All invented.

A fact is (kind, tags, versions[, own questions...]); a version is (date, content) or (date, memory_type, content),
oldest first. `near` holds memories close to a fact that are not versions of it (someone else's job, phone or city;
a related fact of the person's own), some written after the fact's newest version. `details` fill generate.GENERIC.
"""

from __future__ import annotations

from typing import Any

LENA: dict[str, Any] = {
    "namespace": "lena",
    "split": "dev",
    "name": "Lena",
    "pronouns": "she/her/her",
    "persona": "Lena Vogel, 31, a product designer who moves from Hamburg to Munich for a new job in early 2026.",
    "facts": [
        (
            "job",
            "work",
            [
                ("2025-06-12", "Lena works as a UX designer at Otto Group in Hamburg, mostly on the checkout flow."),
                ("2026-02-23", "event", "Lena started at Celonis in Munich this week as a senior product designer."),
            ],
        ),
        (
            "city",
            "place",
            [
                ("2025-06-05", "Lena lives in Hamburg-Ottensen, in a flat on Bahrenfelder Straße."),
                ("2026-02-14", "event", "Moved to Munich for the new job; new address is Herzogstraße 61, Schwabing."),
            ],
        ),
        (
            "manager",
            "work person",
            [
                ("2025-06-20", "Lena's manager at Otto is Kai Brandt; they have a weekly 1:1 on Thursdays."),
                ("2026-03-05", "At Celonis Lena reports to Ana Ruiz, the head of design."),
                ("2026-09-10", "After the reorg Lena's new manager is Felix Hahn (design platform)."),
            ],
        ),
        (
            "diet",
            "preference",
            [
                ("2025-07-02", "Lena eats meat and fish but avoids pork."),
                ("2026-01-15", "Lena has been vegetarian since New Year; eggs and cheese are fine."),
            ],
        ),
        (
            "phone",
            "tooling",
            [
                ("2025-06-08", "Lena uses an iPhone 12 mini."),
                ("2026-05-20", "event", "Lena's iPhone broke and she replaced it with a Google Pixel 8."),
            ],
        ),
        (
            "number",
            "profile",
            [
                ("2025-06-08", "Lena's mobile number is +49 151 2345 8870."),
                ("2026-03-01", "Lena has a new Munich number with her new contract: +49 176 4410 2093."),
            ],
        ),
        (
            "car",
            "profile",
            [
                ("2025-08-11", "Lena doesn't own a car; she cycles everywhere in Hamburg."),
                ("2026-04-18", "event", "Lena bought a used 2019 VW ID.3 to visit her parents in Rosenheim."),
            ],
        ),
        (
            "exercise",
            "health",
            [
                ("2025-06-25", "Lena plays beach volleyball with a club in Altona on Monday evenings."),
                ("2026-03-20", "Lena gave up volleyball after the move and boulders at Boulderwelt München Ost."),
            ],
        ),
        (
            "partner",
            "person",
            [
                ("2025-06-05", "Lena's boyfriend is Jan, a nurse at the UKE hospital."),
                ("2025-12-02", "event", "Lena and Jan broke up in November; she is single now."),
                ("2026-07-14", "Lena is dating Marco, an architect she met at a climbing course."),
            ],
        ),
        (
            "dentist",
            "health",
            [
                ("2025-09-03", "Lena's dentist is Dr. Petersen in Ottensen."),
                ("2026-06-11", "Lena's new dentist in Munich is Dr. Ayşe Demir at Zahnarztpraxis Schwabing."),
            ],
        ),
        (
            "commute",
            "work",
            [
                ("2025-06-12", "Lena takes the S-Bahn to the Otto campus in Bramfeld, about 40 minutes each way."),
                ("2026-03-02", "Lena now rides the U6 to the office, 20 minutes door to door."),
            ],
        ),
        (
            "coffee",
            "preference",
            [
                ("2025-07-10", "Lena drinks flat whites with oat milk."),
                ("2026-08-03", "Lena has cut out coffee and has a matcha latte in the mornings instead."),
            ],
        ),
    ],
    "near": [
        ("2026-04-02", "event", "person work", "Lena's brother Tim started a new job at Airbus in Finkenwerder."),
        ("2026-05-28", "event", "person place", "Lena's best friend Nora moved from Hamburg to Copenhagen."),
        ("2026-10-05", "fact", "person", "Marco drives an old red Fiat 500."),
        ("2026-09-12", "event", "person task", "Lena's mum got an iPhone 15 and wants help setting it up."),
        ("2026-06-30", "fact", "person", "Lena's flatmate Sarah is vegan and cooks on Sundays."),
        ("2025-11-20", "fact", "work person", "Kai Brandt, Lena's colleague at Otto, is leaving for Zalando."),
        ("2026-10-20", "event", "health", "Lena had a filling done; the tooth still aches when she drinks cold water."),
        ("2026-05-02", "fact", "work", "Lena's design team at Celonis works on the process-mining dashboards."),
    ],
    "details": {
        "hometown": "Rosenheim",
        "birthday": "1994-09-17",
        "rel": "brother",
        "sib": "Tim",
        "sibjob": "aircraft engineer",
        "degree": "communication design",
        "university": "HAW Hamburg",
        "languages": "German, English and some Spanish",
        "music": "indie pop",
        "band": "Alvvays",
        "restaurant": "Café Nova in Ottensen",
        "club": "FC St. Pauli",
        "book": "a Nele Neuhaus novel",
        "trip": "Copenhagen",
        "tripmonth": "October 2025",
        "friend": "Nora",
        "flumonth": "January",
        "holiday": "Lisbon",
        "friendbday": "12 March",
        "passport": "August 2027",
        "volunteer": "a food bank",
        "goal": "a trip to Japan",
        "nephews": "none yet",
        "show": "Dark",
        "renewal": "BahnCard",
        "renewdate": "the end of January",
        "listof": "gift ideas for her parents' anniversary",
        "listdate": "May",
        "concert": "Florence + the Machine",
        "concertmonth": "July 2025",
        "neighbour": "Mrs. Albers",
        "cuisine": "Korean",
    },
}

DANIEL: dict[str, Any] = {
    "namespace": "daniel",
    "split": "dev",
    "name": "Daniel",
    "pronouns": "he/him/his",
    "persona": "Daniel Okafor, 29, a London data scientist who changes jobs twice, gets married and moves east.",
    "facts": [
        (
            "job",
            "work",
            [
                ("2025-06-03", "Daniel is a data analyst at Monzo in London."),
                ("2025-11-17", "event", "Daniel moved to Deliveroo as a senior data scientist."),
                ("2026-08-24", "event", "Daniel left Deliveroo and joined the NHS AI Lab as lead data scientist."),
            ],
        ),
        (
            "city",
            "place",
            [
                ("2025-06-03", "Daniel lives in a shared house in Peckham, south London."),
                ("2026-05-09", "event", "Daniel and Chioma bought a flat in Walthamstow and moved in last weekend."),
            ],
        ),
        (
            "status",
            "person",
            [
                ("2025-06-15", "Daniel's girlfriend is Chioma, a pharmacist; they've been together three years."),
                ("2026-02-14", "event", "Daniel proposed to Chioma on Valentine's Day; they're engaged."),
                ("2026-09-19", "event", "Daniel and Chioma got married at Hackney Town Hall."),
            ],
        ),
        (
            "intolerance",
            "health",
            [
                ("2025-07-01", "Daniel is lactose intolerant: no milk in his tea, no cheese."),
                ("2026-01-22", "Daniel was retested: he is not lactose intolerant after all, dairy is fine."),
            ],
        ),
        (
            "phone",
            "tooling",
            [
                ("2025-06-20", "Daniel uses a Samsung Galaxy S21."),
                ("2026-01-06", "event", "Daniel got an iPhone 15 for Christmas and switched from Android."),
            ],
        ),
        (
            "car",
            "profile",
            [
                ("2025-06-28", "Daniel drives a 2012 Toyota Yaris he inherited from his uncle."),
                ("2026-06-02", "event", "Daniel sold the Yaris; he uses a Zipcar membership when he needs a car."),
            ],
        ),
        (
            "manager",
            "work person",
            [
                ("2025-06-10", "Daniel's line manager at Monzo is Rachel Ames."),
                ("2025-11-20", "At Deliveroo Daniel reports to Sanjay Patel, head of analytics."),
                ("2026-08-28", "Daniel's manager at the NHS AI Lab is Dr. Helen Cho."),
            ],
        ),
        (
            "exercise",
            "health",
            [
                ("2025-06-14", "Daniel plays five-a-side football on Wednesday nights at Peckham Rye."),
                ("2026-05-30", "Daniel joined PureGym Walthamstow and lifts weights four mornings a week."),
            ],
        ),
        (
            "email",
            "profile",
            [
                ("2025-06-03", "Daniel prefers his personal email daniel.okafor@gmail.com for anything non-work."),
                ("2026-04-01", "Daniel set up dan@okafor.family and wants the old Gmail address retired."),
            ],
        ),
        (
            "doctor",
            "health",
            [
                ("2025-09-15", "Daniel is registered with the Peckham Road GP surgery."),
                ("2026-06-20", "Daniel registered with Forest Road Medical Centre in Walthamstow."),
            ],
        ),
        (
            "commute",
            "work",
            [
                ("2025-06-03", "Daniel takes the Overground from Peckham Rye to Shoreditch for work."),
                ("2025-11-17", "Daniel cycles to Deliveroo's office near Cannon Street, 25 minutes."),
                ("2026-08-24", "Daniel mostly works from home; he goes into the NHS AI Lab office on Tuesdays."),
            ],
        ),
        (
            "language",
            "profile",
            [
                ("2025-08-01", "Daniel is learning Spanish on Duolingo, a 200-day streak."),
                ("2026-03-12", "Daniel dropped Spanish and takes Yoruba lessons online with a tutor."),
            ],
        ),
    ],
    "near": [
        ("2026-03-20", "event", "person work", "Chioma moved from Boots to the hospital pharmacy at Whipps Cross."),
        ("2026-07-11", "event", "person place", "Daniel's brother Emeka moved to Manchester for a PhD."),
        ("2026-09-30", "fact", "person", "Daniel's friend Tunde bought a Tesla Model Y."),
        ("2026-10-14", "event", "person task", "Daniel's dad needs help moving photos from his old Android phone."),
        ("2026-10-02", "event", "person", "Daniel's sister Ada is getting married in Lagos next April."),
        ("2026-09-03", "fact", "work", "The NHS AI Lab team Daniel leads works on radiology triage models."),
        ("2026-02-02", "fact", "health", "Chioma is gluten-free, so Daniel cooks with rice and plantain at home."),
        ("2026-11-02", "event", "person", "Sanjay Patel, Daniel's old boss, asked him to speak at a meetup."),
    ],
    "details": {
        "hometown": "Croydon",
        "birthday": "1996-02-08",
        "rel": "sister",
        "sib": "Ada",
        "sibjob": "lawyer in Lagos",
        "degree": "economics",
        "university": "the University of Warwick",
        "languages": "English and some Igbo",
        "music": "afrobeats and grime",
        "band": "Burna Boy",
        "restaurant": "Chuku's in Tottenham",
        "club": "Arsenal",
        "book": "a Chigozie Obioma novel",
        "trip": "Edinburgh",
        "tripmonth": "August 2025",
        "friend": "Tunde",
        "flumonth": "December",
        "holiday": "Lagos",
        "friendbday": "4 July",
        "passport": "March 2028",
        "volunteer": "a youth football club",
        "goal": "the wedding",
        "nephews": "Kelechi and Amara",
        "show": "Top Boy",
        "renewal": "railcard",
        "renewdate": "September",
        "listof": "restaurants for his parents' visit",
        "listdate": "Easter",
        "concert": "Little Simz",
        "concertmonth": "March 2026",
        "neighbour": "Mr. Osei",
        "cuisine": "Nigerian",
    },
}

SOFIA: dict[str, Any] = {
    "namespace": "sofia",
    "split": "dev",
    "name": "Sofía",
    "pronouns": "she/her/her",
    "persona": "Sofía Márquez, 41, a maths teacher and single mother who moves from Valencia to Barcelona in 2026.",
    "facts": [
        (
            "job",
            "work",
            [
                ("2025-06-07", "Sofía teaches maths at IES Lluís Vives, a secondary school in Valencia."),
                ("2026-09-01", "event", "Sofía is now deputy head at Institut Montjuïc in Barcelona."),
            ],
        ),
        (
            "city",
            "place",
            [
                ("2025-06-07", "Sofía lives in Ruzafa, Valencia, with her daughter Lucía."),
                ("2026-07-25", "event", "Sofía moved to Barcelona at the end of July; they rent a flat in Gràcia."),
            ],
        ),
        (
            "school",
            "person",
            [
                ("2025-09-08", "Lucía is in third grade at Colegio Cervantes in Valencia."),
                ("2026-09-10", "event", "Lucía started at Escola Virolai in Gràcia this September."),
            ],
        ),
        (
            "diet",
            "preference",
            [
                ("2025-06-18", "Sofía is vegan: no meat, fish, eggs or dairy."),
                ("2026-02-02", "Sofía eats eggs and dairy again; vegetarian now, not vegan."),
            ],
        ),
        (
            "number",
            "profile",
            [
                ("2025-06-07", "Sofía's phone number is +34 611 28 45 90."),
                ("2026-08-02", "Sofía changed carrier and number: +34 644 90 12 37."),
            ],
        ),
        (
            "car",
            "profile",
            [
                ("2025-06-30", "Sofía drives a grey Seat Ibiza."),
                (
                    "2026-07-15",
                    "event",
                    "Sofía sold the Ibiza before the move; in Barcelona she uses Bicing and the metro.",
                ),
            ],
        ),
        (
            "exercise",
            "health",
            [
                ("2025-07-12", "Sofía swims at the Benimaclet municipal pool three mornings a week."),
                ("2026-08-20", "Sofía does yoga at a studio on Carrer de Verdi instead of swimming."),
            ],
        ),
        (
            "manager",
            "work person",
            [
                ("2025-06-07", "Sofía's head of department at IES Lluís Vives is Javier Ortega."),
                ("2026-09-01", "Sofía reports to the headteacher of Institut Montjuïc, Montserrat Puig."),
            ],
        ),
        (
            "partner",
            "person",
            [
                ("2025-06-07", "Sofía is divorced and not looking for a relationship."),
                ("2026-04-11", "Sofía has been seeing Andreu, a journalist from Barcelona, since March."),
            ],
        ),
        (
            "doctor",
            "health",
            [
                ("2025-10-01", "Sofía's family doctor is Dr. Ferrer at the Ruzafa health centre."),
                ("2026-08-05", "Sofía is registered at CAP Vila de Gràcia now; her doctor is Dr. Soler."),
            ],
        ),
        (
            "internet",
            "profile",
            [
                ("2025-06-20", "Sofía's home internet is Movistar fibre."),
                ("2026-07-28", "The new flat in Gràcia has Digi fibre, 1 Gb."),
            ],
        ),
        (
            "coffee",
            "preference",
            [
                ("2025-06-07", "Sofía takes her coffee as a cortado with soy milk."),
                ("2026-02-02", "Sofía has her cortado with ordinary milk again."),
            ],
        ),
    ],
    "near": [
        ("2026-06-03", "event", "person place", "Sofía's ex-husband Raúl moved to Sevilla with his new partner."),
        ("2026-05-19", "fact", "person", "Sofía's sister Carmen bought a Toyota C-HR hybrid."),
        ("2026-09-25", "fact", "person", "Sofía's friend Marta is vegan and runs a bakery in Ruzafa."),
        ("2026-10-08", "fact", "person", "Lucía's best friend Pau goes to the same school and lives two streets away."),
        ("2026-10-15", "event", "person work", "Andreu switched from El Periódico to a job at Catalunya Ràdio."),
        ("2026-09-14", "fact", "work", "Sofía's new school has 900 pupils and a strong robotics club."),
        ("2026-08-12", "event", "health", "Lucía's new paediatrician is Dr. Vidal at the same CAP."),
        ("2026-10-28", "fact", "person", "Andreu's phone number is +34 622 11 80 45."),
    ],
    "details": {
        "hometown": "Albacete",
        "birthday": "1985-04-23",
        "rel": "sister",
        "sib": "Carmen",
        "sibjob": "nurse in Madrid",
        "degree": "mathematics",
        "university": "the University of Valencia",
        "languages": "Spanish, Valencian, some Catalan and English",
        "music": "flamenco and jazz",
        "band": "Rosalía",
        "restaurant": "Casa Carmela for paella",
        "club": "Valencia CF",
        "book": "a Dolores Redondo thriller",
        "trip": "Granada",
        "tripmonth": "November 2025",
        "friend": "Marta",
        "flumonth": "February",
        "holiday": "Menorca",
        "friendbday": "30 October",
        "passport": "June 2029",
        "volunteer": "a literacy charity",
        "goal": "Lucía's summer camp",
        "nephews": "Hugo and Alba",
        "show": "La casa de papel",
        "renewal": "car insurance",
        "renewdate": "the end of June",
        "listof": "museums to visit with Lucía",
        "listdate": "the Christmas holidays",
        "concert": "Vetusta Morla",
        "concertmonth": "May 2026",
        "neighbour": "Doña Pilar",
        "cuisine": "Japanese",
        "k": "Lucía",
    },
}

BEN: dict[str, Any] = {
    "namespace": "ben",
    "split": "dev",
    "name": "Ben",
    "pronouns": "he/him/his",
    "persona": "Ben Carter, 35, a Denver cook who becomes a sous chef, then opens a food truck, and moves to Aurora.",
    "facts": [
        (
            "job",
            "work",
            [
                ("2025-06-04", "Ben is a line cook at Root Down in Denver."),
                ("2025-12-09", "event", "Ben was promoted to sous chef at Root Down."),
                ("2026-07-06", "event", "Ben opened his own food truck, Mile High Tacos, and left the restaurant."),
            ],
        ),
        (
            "city",
            "place",
            [
                ("2025-06-04", "Ben rents an apartment in Capitol Hill, Denver."),
                ("2026-03-01", "event", "Ben moved to a cheaper place in Aurora to save for the truck."),
            ],
        ),
        (
            "car",
            "profile",
            [
                ("2025-06-16", "Ben drives a 2009 Ford Ranger pickup."),
                ("2026-01-12", "event", "Ben's Ranger died; he bought a 2018 Subaru Outback."),
            ],
        ),
        (
            "phone",
            "tooling",
            [
                ("2025-06-22", "Ben's phone is an old iPhone 8 with a cracked screen."),
                ("2026-06-18", "Ben upgraded to an iPhone 15 Pro Max for taking food photos."),
            ],
        ),
        (
            "partner",
            "person",
            [
                ("2025-06-09", "Ben is single and on Hinge, not very hopeful."),
                ("2025-10-21", "Ben's girlfriend is Kayla, a vet tech he met at a barbecue."),
            ],
        ),
        (
            "diet",
            "health",
            [
                ("2025-06-30", "Ben eats anything and loves barbecue and fresh bread."),
                ("2026-04-15", "Ben was diagnosed with coeliac disease; strictly gluten-free from now on."),
            ],
        ),
        (
            "exercise",
            "health",
            [
                ("2025-07-07", "Ben runs along the Cherry Creek Trail most mornings."),
                ("2026-05-11", "Ben hurt his knee and switched to spin classes at CycleBar Aurora."),
            ],
        ),
        (
            "manager",
            "work person",
            [
                ("2025-06-04", "Ben's boss at Root Down is chef Marco Ruiz."),
                ("2026-02-03", "Tasha Bell took over as head chef at Root Down after Marco left; she is Ben's boss."),
                ("2026-07-06", "Ben has no boss any more: he runs Mile High Tacos himself with his cousin Luis."),
            ],
        ),
        (
            "dentist",
            "health",
            [
                ("2025-08-19", "Ben's dentist is Dr. Kim at Capitol Hill Dental."),
                ("2026-04-02", "Ben switched to Aurora Family Dentistry, Dr. Alvarez."),
            ],
        ),
        (
            "bank",
            "profile",
            [
                ("2025-06-25", "Ben banks with Wells Fargo."),
                ("2026-05-05", "Ben moved his accounts to Ent Credit Union, which gave him the truck loan."),
            ],
        ),
        (
            "pet",
            "profile",
            [
                ("2025-06-12", "Ben has a tabby cat named Biscuit."),
                ("2026-01-20", "event", "Biscuit died at 16; Ben is heartbroken."),
                ("2026-03-28", "event", "Ben adopted a pit bull mix called Pepper from the Denver shelter."),
            ],
        ),
        (
            "hobby",
            "profile",
            [
                ("2025-07-19", "Ben plays bass in a garage band called The Stale Bagels."),
                ("2026-02-22", "The Stale Bagels split up; Ben is learning pedal steel guitar."),
            ],
        ),
    ],
    "near": [
        ("2026-08-01", "fact", "person", "Kayla drives a blue Honda Fit."),
        ("2026-07-30", "event", "person work", "Ben's cousin Luis quit his warehouse job to work on the truck."),
        ("2026-06-09", "fact", "person", "Kayla is vegetarian, so the truck now has a jackfruit taco."),
        ("2026-09-17", "event", "person place", "Ben's sister Jess moved to Boulder with her kids."),
        ("2026-10-11", "fact", "work", "Mile High Tacos parks at the Aurora farmers market on Saturdays."),
        ("2026-05-23", "fact", "person", "Kayla has two cats, Mochi and Bean, who hate Pepper."),
        ("2026-10-26", "event", "person", "Marco Ruiz opened a new restaurant in Boulder and invited Ben."),
        ("2026-11-08", "event", "task", "Ben wants to upgrade the truck's card reader before the winter season."),
    ],
    "details": {
        "hometown": "Pueblo, Colorado",
        "birthday": "1990-11-02",
        "rel": "sister",
        "sib": "Jess",
        "sibjob": "physical therapist",
        "degree": "culinary arts",
        "university": "Johnson & Wales in Denver",
        "languages": "English and kitchen Spanish",
        "music": "punk and old country",
        "band": "Turnpike Troubadours",
        "restaurant": "Hop Alley",
        "club": "the Denver Broncos",
        "book": "a Craig Johnson Longmire novel",
        "trip": "Moab",
        "tripmonth": "September 2025",
        "friend": "Devin",
        "flumonth": "March",
        "holiday": "Oaxaca",
        "friendbday": "19 August",
        "passport": "December 2026",
        "volunteer": "a community kitchen",
        "goal": "a second truck",
        "nephews": "Mason and Lily",
        "show": "The Bear",
        "renewal": "food truck permit",
        "renewdate": "January 15",
        "listof": "local suppliers for tortillas",
        "listdate": "the spring",
        "concert": "Tyler Childers",
        "concertmonth": "June 2026",
        "neighbour": "Mrs. Gutierrez",
        "cuisine": "Thai",
    },
}

from people_test import TEST_PEOPLE  # noqa: E402  # the held-out half, written apart

PEOPLE = [LENA, DANIEL, SOFIA, BEN, *TEST_PEOPLE]
