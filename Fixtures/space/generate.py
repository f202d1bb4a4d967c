#!/usr/bin/env python3
"""Writes the Trailhead Outfitters test space: one Contentful Delivery API collection response per
entry (as `GET /entries?sys.id=<id>&include=10&locale=en-US` answers, links unresolved) in
`entries/`, and an Experience API response for a first-time visitor in `experience/`.

The JSON files are committed; run this script again only to change the space:
    python3 Fixtures/space/generate.py
Every id, title and text here is written for this project.
"""

import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
SPACE_ID = "trailhead-space"
ENTRIES = {}   # id -> entry object
ORDER = []     # ids in creation order (the order of the space)


def link(entry_id):
    return {"sys": {"type": "Link", "linkType": "Entry", "id": entry_id}}


def entry(entry_id, content_type, fields, revision=1, day=1):
    created = "2026-09-%02dT09:%02d:00.000Z" % (day, len(ORDER) % 60)
    updated = "2026-09-%02dT10:%02d:30.000Z" % (day + revision - 1, len(ORDER) % 60)
    ENTRIES[entry_id] = {
        "metadata": {"tags": [], "concepts": []},
        "sys": {
            "space": {"sys": {"type": "Link", "linkType": "Space", "id": SPACE_ID}},
            "id": entry_id,
            "type": "Entry",
            "createdAt": created,
            "updatedAt": updated,
            "environment": {"sys": {"id": "master", "type": "Link", "linkType": "Environment"}},
            "publishedVersion": 2 * revision + 1,
            "revision": revision,
            "contentType": {"sys": {"type": "Link", "linkType": "ContentType", "id": content_type}},
            "locale": "en-US",
        },
        "fields": fields,
    }
    ORDER.append(entry_id)


def audience(audience_id, name, description, rule):
    entry(audience_id, "nt_audience", {
        "nt_name": name,
        "nt_description": description,
        "nt_rules": {"any": [{"all": [rule]}]},
        "nt_audience_id": audience_id,
        "nt_metadata": {"type": "origin"},
    })


def experience(experience_id, name, kind, baseline, variants, audience_id=None, sticky=None, hidden=()):
    config = {
        "traffic": 1,
        "components": [{
            "baseline": {"id": baseline},
            "variants": [{"id": v, "hidden": v in hidden} for v in variants],
        }],
        "distribution": [round(1 / (len(variants) + 1), 4)] * (len(variants) + 1),
        "primaryMetric": "",
    }
    if sticky is not None:
        config["sticky"] = sticky
    fields = {"nt_name": name, "nt_type": kind, "nt_config": config}
    if audience_id:
        fields["nt_audience"] = link(audience_id)
    fields["nt_variants"] = [link(v) for v in variants]
    fields["nt_experience_id"] = experience_id
    fields["nt_metadata"] = {"type": "origin"}
    entry(experience_id, "nt_experience", fields, revision=2, day=3)


def content(entry_id, title, text, experiences=(), revision=1):
    fields = {"internalTitle": title, "text": text}
    if experiences:
        fields["nt_experiences"] = [link(e) for e in experiences]
    entry(entry_id, "content", fields, revision=revision, day=2)


def nested(entry_id, title, items, experiences=()):
    fields = {"internalTitle": title, "items": [link(i) for i in items]}
    if experiences:
        fields["nt_experiences"] = [link(e) for e in experiences]
    entry(entry_id, "nestedContent", fields, day=4)


def text_node(value):
    return {"nodeType": "text", "value": value, "marks": [], "data": {}}


# Audiences (seven: the CDA paging tests skip and limit over them).
audience("aud-europe", "Visitors in Europe", "Located on the European continent",
         {"key": "continent", "type": "location", "count": "1", "value": "EU", "operator": "equal", "conditions": []})
audience("aud-north-america", "Visitors in North America", "Located on the North American continent",
         {"key": "continent", "type": "location", "count": "1", "value": "NA", "operator": "equal", "conditions": []})
audience("aud-first-visit", "First visit", "No earlier session",
         {"key": "isReturningVisitor", "type": "session", "count": "1", "value": False, "operator": "equal", "conditions": []})
audience("aud-returning", "Returning visitors", "At least one earlier session",
         {"key": "isReturningVisitor", "type": "session", "count": "1", "value": True, "operator": "equal", "conditions": []})
audience("aud-newsletter", "Newsletter readers", "Signed up for the trail newsletter",
         {"key": "newsletter", "type": "trait", "count": "1", "value": "subscribed", "operator": "equal", "conditions": []})
audience("aud-mobile", "Phones", "Browsing on a phone",
         {"key": "type", "type": "device", "count": "1", "value": "mobile", "operator": "equal", "conditions": []})
audience("aud-frequent-buyer", "Frequent buyers", "Three or more orders",
         {"key": "ordersPlaced", "type": "trait", "count": "1", "value": 3, "operator": "greaterOrEqual", "conditions": []})

# Variants (entries that only experiences link to).
content("hero-home-europe", "[Variant] Home hero for Europe", "Autumn routes through the Alps, shipped from Lyon.")
content("hero-home-returning", "[Variant] Home hero for returning visitors", "Welcome back: your saved routes are waiting.")
content("promo-strip-b", "[Variant] Promo strip B", "Free trail map with every backpack.")
content("holiday-banner-b", "[Variant] Holiday banner B", "Gift cards for every summit, delivered today.")
content("holiday-banner-c", "[Variant] Holiday banner C", "Wrap up warm: winter layers from 29 EUR.")
content("shipping-note-eu", "[Variant] Shipping note for Europe", "Free shipping across the EU over 60 EUR.")
content("store-hours-mobile", "[Variant] Store hours on phones", "Open today 9-18. Tap to call.")
nested("gear-grid-compact", "[Variant] Gear grid, compact", ["card-stoves", "card-tents"])

# Product cards and the footer's links.
content("card-boots", "Card: boots", "Waterproof boots for wet trails.")
content("card-tents", "Card: tents", "Two-person tents under two kilograms.")
content("card-stoves", "Card: stoves", "Stoves that light in the wind.")
content("link-returns", "Footer link: returns", "Returns within 60 days.")
content("link-contact", "Footer link: contact", "Write to us, we answer within a day.")

# Experiences.
experience("exp-hero-europe", "[Personalization] Home hero for Europe", "nt_personalization",
           "hero-home", ["hero-home-europe"], audience_id="aud-europe")
experience("exp-hero-returning", "[Personalization] Home hero for returning visitors", "nt_personalization",
           "hero-home", ["hero-home-returning"], audience_id="aud-returning")
experience("exp-promo-ab", "[Experiment] Promo strip copy", "nt_experiment",
           "promo-strip", ["promo-strip-b"], audience_id="aud-first-visit")
experience("exp-holiday-copy", "[Experiment] Holiday banner copy", "nt_experiment",
           "holiday-banner", ["holiday-banner-b", "holiday-banner-c"], sticky=True)
experience("exp-shipping-eu", "[Personalization] Shipping note for Europe", "nt_personalization",
           "shipping-note", ["shipping-note-eu"], audience_id="aud-europe")
experience("exp-gear-layout", "[Experiment] Gear grid layout", "nt_experiment",
           "gear-grid", ["gear-grid-compact"])
experience("exp-store-hours-mobile", "[Personalization] Store hours on phones", "nt_personalization",
           "store-hours", ["store-hours-mobile"], audience_id="aud-mobile")

# Optimized baselines.
content("hero-home", "[Baseline] Home hero", "Gear for every trail, tested on ours.",
        experiences=["exp-hero-europe", "exp-hero-returning"], revision=3)
content("promo-strip", "[Baseline] Promo strip", "Ten percent off your first order.", experiences=["exp-promo-ab"])
content("holiday-banner", "[Baseline] Holiday banner", "Holiday hours: open every day in December.",
        experiences=["exp-holiday-copy"])
content("shipping-note", "[Baseline] Shipping note", "Free shipping over 75 USD.", experiences=["exp-shipping-eu"])
content("store-hours", "[Baseline] Store hours", "Open Monday to Saturday, 9 to 18.",
        experiences=["exp-store-hours-mobile"])
nested("gear-grid", "[Baseline] Gear grid", ["card-boots", "card-tents", "card-stoves"], experiences=["exp-gear-layout"])

# Not optimized: nesting three levels deep, and rich text with an embedded merge tag.
nested("footer-columns", "Footer column: help", ["link-returns", "link-contact"])
nested("footer", "Footer", ["footer-columns", "card-boots"])
entry("mergetag-first-name", "nt_mergetag", {
    "nt_name": "First name",
    "nt_mergetag_id": "traits.firstName",
    "nt_fallback": "explorer",
}, day=5)
entry("welcome-message", "mergeTagContent", {
    "internalTitle": "Welcome message",
    "text": {
        "nodeType": "document", "data": {},
        "content": [{
            "nodeType": "paragraph", "data": {},
            "content": [
                text_node("Good to see you, "),
                {"nodeType": "embedded-entry-inline", "data": {"target": link("mergetag-first-name")}, "content": []},
                text_node(". Your next trail starts here."),
            ],
        }],
    },
}, day=5)


def links_in(value):
    if isinstance(value, list):
        for element in value:
            yield from links_in(element)
    elif isinstance(value, dict):
        sys = value.get("sys")
        if isinstance(sys, dict) and sys.get("type") == "Link" and sys.get("linkType") == "Entry":
            yield sys["id"]
            return
        for member in value.values():
            yield from links_in(member)


def includes(item_id, depth=10):
    """Entries linked from the item, breadth first, `depth` levels deep, never the item itself."""
    seen, included, frontier = {item_id}, [], [item_id]
    for _ in range(depth):
        following = []
        for current in frontier:
            for target in links_in(ENTRIES[current]["fields"]):
                if target not in seen:
                    seen.add(target)
                    included.append(ENTRIES[target])
                    following.append(target)
        frontier = following
        if not frontier:
            break
    return included


def write(path, document):
    with open(path, "w") as handle:
        json.dump(document, handle, indent=2, ensure_ascii=False)
        handle.write("\n")


def main():
    entries_dir = os.path.join(HERE, "entries")
    os.makedirs(entries_dir, exist_ok=True)
    for name in os.listdir(entries_dir):
        os.remove(os.path.join(entries_dir, name))
    for entry_id in ORDER:
        collection = {"sys": {"type": "Array"}, "total": 1, "skip": 0, "limit": 100, "items": [ENTRIES[entry_id]]}
        included = includes(entry_id)
        if included:
            collection["includes"] = {"Entry": included}
        write(os.path.join(entries_dir, entry_id + ".json"), collection)

    selections = [
        {"experienceId": "exp-hero-europe", "variantIndex": 1, "variants": {"hero-home": "hero-home-europe"}},
        {"experienceId": "exp-promo-ab", "variantIndex": 1, "variants": {"promo-strip": "promo-strip-b"}},
        {"experienceId": "exp-holiday-copy", "variantIndex": 2, "variants": {"holiday-banner": "holiday-banner-c"},
         "sticky": True},
        {"experienceId": "exp-shipping-eu", "variantIndex": 1, "variants": {"shipping-note": "shipping-note-eu"}},
        {"experienceId": "exp-gear-layout", "variantIndex": 0, "variants": {"gear-grid": "gear-grid"}},
        # Experiences of pages this space export does not hold.
        {"experienceId": "exp-checkout-trust", "variantIndex": 1, "variants": {"checkout-badge": "checkout-badge-b"}},
        {"experienceId": "exp-sidebar-hidden", "variantIndex": 1, "variants": {"sidebar-ad": ""}},
        {"experienceId": "exp-nav-order", "variantIndex": 0, "variants": {"nav-main": "nav-main"}},
    ]
    envelope = {
        "data": {
            "profile": {
                "id": "5d1c2b7e9a40f3c8e6b1d2a4f7c9e0b3a5d8f1e2c4b6a9d0e3f5a7c1b8d2e4f6",
                "stableId": "5d1c2b7e9a40f3c8e6b1d2a4f7c9e0b3a5d8f1e2c4b6a9d0e3f5a7c1b8d2e4f6",
                "random": 0.4183,
                "audiences": ["aud-europe", "aud-first-visit"],
                "traits": {},
                "location": {
                    "coordinates": {"latitude": 45.7640, "longitude": 4.8357},
                    "countryCode": "FR", "city": "Lyon", "continent": "EU",
                    "postalCode": "69002", "region": "Auvergne-Rhone-Alpes",
                },
                "session": {
                    "id": "8f3e2d1c-4b5a-4c6d-9e8f-7a6b5c4d3e2f",
                    "count": 1,
                    "isReturningVisitor": False,
                    "landingPage": {"path": "/", "query": {}, "referrer": "", "search": "",
                                    "url": "https://trailhead.example/"},
                    "activeSessionLength": 5,
                    "averageSessionLength": 5,
                },
            },
            "experiences": selections,
            "changes": [],
        },
        "error": None,
        "message": "ok",
    }
    os.makedirs(os.path.join(HERE, "experience"), exist_ok=True)
    write(os.path.join(HERE, "experience", "new-visitor.json"), envelope)


if __name__ == "__main__":
    main()
