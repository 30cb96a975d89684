"""The held-out half of the "changed facts" set (people.py says the shape). All invented."""

from __future__ import annotations

from typing import Any

HANA: dict[str, Any] = {
    "namespace": "hana",
    "split": "test",
    "name": "Hana",
    "pronouns": "she/her/her",
    "persona": "Hana Sato, 38, a pharmacist in Tokyo who moves to Fukuoka to run a pharmacy and takes up new routines.",
    "facts": [
        (
            "job",
            "work",
            [
                ("2025-06-02", "Hana is a hospital pharmacist at St. Luke's International Hospital in Tokyo."),
                ("2026-04-06", "event", "Hana took over as manager of Sakura Pharmacy in Tenjin, Fukuoka."),
            ],
        ),
        (
            "city",
            "place",
            [
                ("2025-06-02", "Hana lives in Setagaya, Tokyo, near Sangenjaya station."),
                ("2026-03-29", "event", "Hana relocated to Fukuoka; her apartment is in Chuo-ku, near Ohori Park."),
            ],
        ),
        (
            "diet",
            "preference",
            [
                ("2025-07-14", "Hana doesn't eat red meat; chicken and fish are fine."),
                ("2026-05-30", "Hana has gone pescatarian: no chicken any more either, fish only."),
            ],
        ),
        (
            "phone",
            "tooling",
            [
                ("2025-06-19", "Hana uses a Sony Xperia 10."),
                ("2026-02-11", "event", "Hana switched to an iPhone SE to match her mother's phone."),
            ],
        ),
        (
            "commute",
            "work",
            [
                ("2025-06-02", "Hana takes the Hibiya line to Tsukiji, about 35 minutes."),
                ("2026-04-06", "Hana walks to the pharmacy now; it is 12 minutes from her flat."),
            ],
        ),
        (
            "manager",
            "work person",
            [
                ("2025-06-10", "Hana's supervisor is the chief pharmacist, Mr. Kondo."),
                ("2026-04-06", "At Sakura Pharmacy Hana reports to the owner, Dr. Yoshida."),
            ],
        ),
        (
            "exercise",
            "health",
            [
                ("2025-06-21", "Hana practises kyudo (archery) at a dojo in Setagaya on Sundays."),
                ("2026-06-07", "Hana joined a running club that meets around Ohori Park on Wednesday evenings."),
            ],
        ),
        (
            "medication",
            "health",
            [
                ("2025-08-25", "Hana takes levothyroxine 50 µg every morning."),
                ("2026-02-18", "Hana's levothyroxine dose went up to 75 µg after her blood test."),
                ("2026-09-09", "Hana's doctor lowered the levothyroxine back to 62.5 µg a day."),
            ],
        ),
        (
            "language",
            "profile",
            [
                ("2025-07-03", "Hana takes English conversation lessons twice a week."),
                ("2026-07-01", "Hana stopped English and is learning Korean with an app."),
            ],
        ),
        (
            "pet",
            "profile",
            [
                ("2025-06-05", "Hana has no pets; her building in Tokyo doesn't allow them."),
                ("2026-08-16", "event", "Hana adopted a Shiba Inu puppy called Kinako."),
            ],
        ),
        (
            "bank",
            "profile",
            [
                ("2025-09-11", "Hana's salary goes to her MUFG account."),
                ("2026-04-20", "Hana opened an account at Fukuoka Bank and moved her salary there."),
            ],
        ),
    ],
    "near": [
        ("2026-05-12", "event", "person place", "Hana's sister Yui moved from Osaka to Kyoto."),
        ("2026-07-22", "fact", "person", "Hana's mother Keiko uses an iPhone SE too and calls every Sunday."),
        ("2026-09-20", "fact", "work", "Sakura Pharmacy has three staff and opens at 9 on weekdays."),
        ("2026-06-28", "fact", "person", "Hana's friend Emi is a vegetarian and runs a café in Daimyo."),
        ("2026-10-04", "event", "person work", "Mr. Kondo retired from St. Luke's and sent Hana a letter."),
        ("2026-11-10", "event", "health", "Hana has a thyroid blood test booked for 3 December."),
        ("2026-10-18", "fact", "profile", "Kinako needs her second vaccination in December."),
        ("2026-08-30", "fact", "person", "Hana's cousin Daiki drives a Toyota Prius and lends it to her."),
    ],
    "details": {
        "hometown": "Sendai",
        "birthday": "1987-12-03",
        "rel": "sister",
        "sib": "Yui",
        "sibjob": "graphic designer",
        "degree": "pharmacy",
        "university": "Tohoku University",
        "languages": "Japanese and basic English",
        "music": "city pop",
        "band": "Yoasobi",
        "restaurant": "a small ramen shop called Ichiran Nakasu",
        "club": "the Fukuoka SoftBank Hawks",
        "book": "a Keigo Higashino mystery",
        "trip": "Kanazawa",
        "tripmonth": "November 2025",
        "friend": "Emi",
        "flumonth": "January",
        "holiday": "Okinawa",
        "friendbday": "2 May",
        "passport": "October 2028",
        "volunteer": "a local clinic's health fair",
        "goal": "her own pharmacy",
        "nephews": "Sota and Mei",
        "show": "Midnight Diner",
        "renewal": "residence registration",
        "renewdate": "the end of April",
        "listof": "onsen day trips from Fukuoka",
        "listdate": "Golden Week",
        "concert": "Aimyon",
        "concertmonth": "September 2026",
        "neighbour": "Mr. Tanaka",
        "cuisine": "Italian",
    },
}

LUKAS: dict[str, Any] = {
    "namespace": "lukas",
    "split": "test",
    "name": "Lukáš",
    "pronouns": "he/him/his",
    "persona": "Lukáš Novák, 44, a civil engineer in Brno who moves to Prague, changes teams and gets a dog.",
    "facts": [
        (
            "job",
            "work",
            [
                ("2025-06-06", "Lukáš is a structural engineer at Skanska in Brno."),
                ("2026-01-12", "event", "Lukáš joined Metrostav in Prague as a project manager for the D line."),
            ],
        ),
        (
            "city",
            "place",
            [
                ("2025-06-06", "Lukáš lives in Brno-Žabovřesky with his wife Petra and their two boys."),
                ("2026-01-03", "event", "The Nováks moved to Prague; they rent a house in Řevnice, outside the city."),
            ],
        ),
        (
            "team",
            "work",
            [
                ("2025-06-20", "Lukáš is on the bridges team at Skanska Brno."),
                ("2026-01-19", "Lukáš is on the metro D tunnelling team at Metrostav."),
                ("2026-08-31", "Lukáš moved to Metrostav's tender and bidding team."),
            ],
        ),
        (
            "car",
            "profile",
            [
                ("2025-06-13", "Lukáš drives a 2016 Škoda Octavia estate."),
                ("2026-05-04", "event", "Lukáš traded the Octavia for a Škoda Enyaq, an electric SUV."),
            ],
        ),
        (
            "number",
            "profile",
            [
                ("2025-06-06", "Lukáš's mobile is +420 603 555 218."),
                ("2026-01-12", "Lukáš uses his work mobile for everything now: +420 731 882 904."),
            ],
        ),
        (
            "school",
            "person",
            [
                ("2025-09-01", "The boys, Jakub and Ondra, go to ZŠ Sirotkova in Brno."),
                ("2026-01-07", "event", "Jakub and Ondra started at the primary school in Řevnice after the move."),
            ],
        ),
        (
            "exercise",
            "health",
            [
                ("2025-06-15", "Lukáš plays ice hockey in an amateur league on Thursday nights."),
                ("2026-02-26", "Lukáš cycles to the train every day and does a long road ride on Saturdays."),
            ],
        ),
        (
            "doctor",
            "health",
            [
                ("2025-10-09", "Lukáš's GP is MUDr. Svobodová in Brno."),
                ("2026-02-10", "Lukáš registered with MUDr. Kratochvíl, a GP in Řevnice."),
            ],
        ),
        (
            "pet",
            "profile",
            [
                ("2025-06-06", "The Nováks don't have any pets; Petra is allergic to cats."),
                ("2026-04-25", "event", "Lukáš and the boys got a border collie puppy named Bára."),
            ],
        ),
        (
            "coffee",
            "preference",
            [
                ("2025-06-11", "Lukáš drinks strong black Turkish-style coffee, two or three a day."),
                ("2026-06-15", "Lukáš has switched to decaf after his blood pressure check."),
            ],
        ),
        (
            "hobby",
            "profile",
            [
                ("2025-07-05", "Lukáš builds model railways in the garage in his free time."),
                ("2026-03-15", "Lukáš sold the model railway and has taken up beekeeping at the new house."),
            ],
        ),
        (
            "internet",
            "profile",
            [
                ("2025-06-20", "The Nováks' internet at home is O2 DSL."),
                ("2026-01-10", "The house in Řevnice has Starlink because there is no fibre."),
            ],
        ),
    ],
    "near": [
        ("2026-02-14", "event", "person work", "Petra started teaching at the gymnasium in Černošice."),
        ("2026-05-20", "fact", "person", "Petra drives the old family Fabia to school and work."),
        ("2026-09-05", "event", "person place", "Lukáš's brother Martin moved from Ostrava to Vienna."),
        ("2026-10-12", "fact", "work", "Metrostav's bids team is preparing the Brno high-speed rail tender."),
        ("2026-06-02", "fact", "health", "Lukáš's blood pressure was 150/95 at the check; the GP wants a recheck."),
        ("2026-07-19", "fact", "person", "Ondra plays ice hockey for the Řevnice under-12 team."),
        ("2026-11-03", "event", "task", "Lukáš wants to order winter tyres for the Enyaq before December."),
        ("2026-08-08", "fact", "profile", "Bára goes to puppy school in Dobřichovice on Saturday mornings."),
    ],
    "details": {
        "hometown": "Olomouc",
        "birthday": "1981-07-29",
        "rel": "brother",
        "sib": "Martin",
        "sibjob": "IT consultant",
        "degree": "civil engineering",
        "university": "Brno University of Technology",
        "languages": "Czech, German and English",
        "music": "Czech rock",
        "band": "Lucie",
        "restaurant": "a pub called U Kroka",
        "club": "HC Kometa Brno",
        "book": "a Jo Nesbø thriller",
        "trip": "the Krkonoše mountains",
        "tripmonth": "February 2026",
        "friend": "Tomáš",
        "flumonth": "November",
        "holiday": "Croatia",
        "friendbday": "14 June",
        "passport": "May 2030",
        "volunteer": "the village fire brigade",
        "goal": "a bigger garden",
        "nephews": "Eliška and Filip",
        "show": "Chernobyl",
        "renewal": "motorway vignette",
        "renewdate": "the end of February",
        "listof": "summer camps for the boys",
        "listdate": "March",
        "concert": "Chinaski",
        "concertmonth": "April 2026",
        "neighbour": "Mr. Dvořák",
        "cuisine": "Vietnamese",
        "k": "Jakub",
    },
}

GRACE: dict[str, Any] = {
    "namespace": "grace",
    "split": "test",
    "name": "Grace",
    "pronouns": "she/her/her",
    "persona": "Grace Liu, 27, a software engineer who moves from Vancouver to Seattle and changes teams and habits.",
    "facts": [
        (
            "job",
            "work",
            [
                ("2025-06-09", "Grace is a backend developer at Hootsuite in Vancouver."),
                ("2025-10-27", "event", "Grace accepted an offer from Amazon in Seattle, starting in November."),
            ],
        ),
        (
            "city",
            "place",
            [
                ("2025-06-09", "Grace lives in Mount Pleasant, Vancouver, with two roommates."),
                ("2025-11-08", "event", "Grace moved to Seattle; she has a studio in Capitol Hill."),
                ("2026-08-15", "event", "Grace moved to a one-bedroom in Fremont, closer to her partner."),
            ],
        ),
        (
            "team",
            "work",
            [
                ("2025-06-09", "Grace works on the scheduling service team at Hootsuite."),
                ("2025-11-17", "Grace is on the AWS Lambda runtime team."),
                ("2026-06-22", "Grace transferred internally to the Amazon Bedrock inference team."),
            ],
        ),
        (
            "manager",
            "work person",
            [
                ("2025-06-12", "Grace's manager at Hootsuite is Priyanka Rao."),
                ("2025-11-17", "Grace's manager on the Lambda team is Tom Becker."),
                ("2026-06-22", "Grace reports to Alicia Moreno since her transfer."),
            ],
        ),
        (
            "partner",
            "person",
            [
                ("2025-06-14", "Grace is single and focused on work."),
                ("2026-02-20", "Grace is dating Sam, a high-school chemistry teacher in Seattle."),
            ],
        ),
        (
            "phone",
            "tooling",
            [
                ("2025-06-09", "Grace uses a Pixel 7a."),
                ("2026-03-03", "Grace switched to an iPhone 16 because everyone at work uses iMessage."),
            ],
        ),
        (
            "car",
            "profile",
            [
                ("2025-06-09", "Grace has no car and uses the SkyTrain and Evo car share."),
                ("2026-09-06", "event", "Grace bought a used 2020 Honda Civic for weekend hiking trips."),
            ],
        ),
        (
            "diet",
            "health",
            [
                ("2025-06-26", "Grace eats everything; she loves dim sum and spicy hot pot."),
                ("2026-04-08", "Grace is avoiding spicy food and caffeine on her doctor's advice (acid reflux)."),
            ],
        ),
        (
            "exercise",
            "health",
            [
                ("2025-06-17", "Grace does hot yoga at a studio on Main Street three times a week."),
                ("2026-01-25", "Grace joined Seattle Bouldering Project and climbs after work."),
            ],
        ),
        (
            "email",
            "profile",
            [
                ("2025-06-09", "Grace's personal email is grace.liu.dev@outlook.com."),
                ("2026-05-14", "Grace moved her personal mail to gliu@fastmail.com; the Outlook one is closed."),
            ],
        ),
        (
            "dentist",
            "health",
            [
                ("2025-08-28", "Grace's dentist is Dr. Chan at Main Street Dental in Vancouver."),
                ("2026-02-02", "Grace found a dentist in Seattle: Dr. Okafor at Fremont Smiles."),
            ],
        ),
    ],
    "near": [
        ("2026-07-09", "fact", "person", "Sam drives an old Subaru Forester and does the mountain driving."),
        ("2026-04-28", "event", "person place", "Grace's roommate Jenny moved from Vancouver to Toronto."),
        ("2026-09-18", "fact", "person work", "Sam teaches chemistry at Ballard High School."),
        ("2026-10-07", "fact", "work", "The Bedrock inference team is on call one week in six."),
        ("2026-05-03", "event", "person", "Grace's mum switched to an iPhone and keeps sending voice notes."),
        ("2026-08-24", "fact", "health", "Sam is vegetarian; Grace cooks tofu dishes when he comes over."),
        ("2026-03-21", "event", "work person", "Priyanka Rao, Grace's old manager, moved to Shopify."),
        ("2026-11-05", "event", "task", "Grace needs to get Washington plates and a licence for the Civic."),
    ],
    "details": {
        "hometown": "Richmond, BC",
        "birthday": "1998-10-11",
        "rel": "brother",
        "sib": "Kevin",
        "sibjob": "medical student",
        "degree": "computer science",
        "university": "UBC",
        "languages": "English, Cantonese and some Mandarin",
        "music": "K-pop and lo-fi",
        "band": "NewJeans",
        "restaurant": "Kirin Seafood for dim sum",
        "club": "the Vancouver Canucks",
        "book": "a Tana French novel",
        "trip": "Portland",
        "tripmonth": "September 2025",
        "friend": "Jenny",
        "flumonth": "December",
        "holiday": "Hong Kong",
        "friendbday": "23 January",
        "passport": "July 2031",
        "volunteer": "a coding club for girls",
        "goal": "a down payment",
        "nephews": "none",
        "show": "Severance",
        "renewal": "work visa",
        "renewdate": "October",
        "listof": "hikes within two hours of Seattle",
        "listdate": "June",
        "concert": "Mitski",
        "concertmonth": "August 2025",
        "neighbour": "Mrs. Nguyen",
        "cuisine": "Sichuan",
    },
}

OMAR: dict[str, Any] = {
    "namespace": "omar",
    "split": "test",
    "name": "Omar",
    "pronouns": "he/him/his",
    "persona": "Omar Haddad, 33, an architect who moves from Amman to Dubai, gets engaged, and changes routines.",
    "facts": [
        (
            "job",
            "work",
            [
                ("2025-06-01", "Omar is an architect at Dar Al-Handasah's Amman office."),
                ("2025-12-01", "event", "Omar joined Zaha Hadid Architects in Dubai as a senior architect."),
            ],
        ),
        (
            "city",
            "place",
            [
                ("2025-06-01", "Omar lives with his parents in Jabal Amman."),
                ("2025-11-24", "event", "Omar moved to Dubai and rents a flat in Jumeirah Lake Towers."),
            ],
        ),
        (
            "number",
            "profile",
            [
                ("2025-06-01", "Omar's mobile number is +962 79 555 3141."),
                ("2025-12-03", "Omar's UAE number is +971 50 555 2718; the Jordanian one is off."),
            ],
        ),
        (
            "status",
            "person",
            [
                ("2025-06-18", "Omar is single; his mother keeps suggesting people."),
                ("2026-06-12", "event", "Omar got engaged to Lina, a dentist he met in Dubai."),
            ],
        ),
        (
            "car",
            "profile",
            [
                ("2025-06-08", "Omar drives his father's old Hyundai Elantra."),
                ("2026-01-15", "event", "Omar leased a white Nissan Patrol in Dubai."),
            ],
        ),
        (
            "exercise",
            "health",
            [
                ("2025-06-10", "Omar plays padel with friends in Abdoun on Friday mornings."),
                ("2026-02-07", "Omar swims laps at the JLT community pool at 6 a.m. before work."),
            ],
        ),
        (
            "manager",
            "work person",
            [
                ("2025-06-15", "Omar's team leader at Dar is Eng. Rami Khoury."),
                ("2025-12-08", "Omar reports to Sophie Lambert, associate director at ZHA Dubai."),
            ],
        ),
        (
            "language",
            "profile",
            [
                ("2025-07-20", "Omar is learning Italian for a planned master's in Milan."),
                ("2026-01-10", "Omar shelved the Milan plan and is learning French with a tutor, for work."),
            ],
        ),
        (
            "diet",
            "health",
            [
                ("2025-06-22", "Omar has a sweet tooth and eats knafeh every week."),
                ("2026-03-30", "Omar was told he's prediabetic; no sugar, low carbs from now on."),
            ],
        ),
        (
            "commute",
            "work",
            [
                ("2025-06-01", "Omar drives 20 minutes to the Dar office in Shmeisani."),
                ("2025-12-08", "Omar takes the Dubai Metro red line from JLT to the office, 25 minutes."),
                ("2026-01-20", "Omar drives the Patrol to work on Sheikh Zayed Road now that he has a car."),
            ],
        ),
        (
            "bank",
            "profile",
            [
                ("2025-07-01", "Omar banks with Arab Bank in Amman."),
                ("2025-12-10", "Omar's salary goes to his new Emirates NBD account."),
            ],
        ),
    ],
    "near": [
        ("2026-07-04", "fact", "person work", "Lina works at a dental clinic in Dubai Marina."),
        ("2026-03-11", "event", "person place", "Omar's sister Dana moved from Amman to Berlin for a master's."),
        ("2026-05-26", "fact", "person", "Omar's father sold the Hyundai Elantra and bought a Kia Sportage."),
        ("2026-08-19", "fact", "person", "Lina's number is +971 55 555 1618."),
        ("2026-09-27", "fact", "work", "Omar's team at ZHA is designing a metro station in Riyadh."),
        ("2026-10-21", "event", "person task", "Omar wants ideas for the engagement party in Amman in December."),
        ("2026-04-14", "fact", "health", "Omar's HbA1c was 5.9 %; recheck in three months."),
        ("2026-06-30", "fact", "person", "Rami Khoury, Omar's old team leader, asked about jobs in Dubai."),
    ],
    "details": {
        "hometown": "Irbid",
        "birthday": "1992-03-21",
        "rel": "sister",
        "sib": "Dana",
        "sibjob": "pharmacist",
        "degree": "architecture",
        "university": "the University of Jordan",
        "languages": "Arabic, English and a little French",
        "music": "oud music and 80s pop",
        "band": "Mashrou' Leila",
        "restaurant": "Hashem in downtown Amman",
        "club": "Al-Faisaly",
        "book": "a Naguib Mahfouz novel",
        "trip": "Wadi Rum",
        "tripmonth": "October 2025",
        "friend": "Karim",
        "flumonth": "February",
        "holiday": "Istanbul",
        "friendbday": "9 September",
        "passport": "January 2027",
        "volunteer": "a refugee tutoring programme",
        "goal": "the wedding",
        "nephews": "Yazan and Tala",
        "show": "Jinn",
        "renewal": "UAE residence visa",
        "renewdate": "November",
        "listof": "venues for the engagement dinner",
        "listdate": "December",
        "concert": "Cairokee",
        "concertmonth": "January 2026",
        "neighbour": "Mr. Saleh",
        "cuisine": "Lebanese",
    },
}

TEST_PEOPLE = [HANA, LUKAS, GRACE, OMAR]
