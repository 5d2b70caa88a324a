#!/usr/bin/env python3
"""Known-item queries: how many results follow the one item a query names exactly.

  python3 evaluate_known_items.py --replica PATH [--replica PATH2 …]

A fresh store per binary holds 50 invoices (INV-2024-0901 … INV-2024-0950, one page of text each,
alike but for their customer, date, line and amount), 30 parcel notices with a tracking number
(JJD0001234560 …) and 10 short personal notes. Each invoice number and each tracking number is a query,
run through `replica search --json --limit 100` as typed: by the words and meaning (the default), by
meaning alone (--semantic) and by the words alone (--lexical). For each run: MRR@10 of the named item,
the share of queries that list it at all, and how many results are listed after it (the look-alikes a
model's page fills with), as a mean and as the share of queries with none. The texts are generated here (a fixed seed), not read from a package.
"""
import argparse, json, random, subprocess, tempfile

CUSTOMERS = ["Acme Hardware", "Blue River Bakery", "Northwind Traders", "Greenleaf Florist", "Harbor Marine Supply",
             "Summit Dental", "Oakwood Library", "Pine Street Cafe", "Riverside Garage", "Maple Print Shop"]
LINES = ["consulting hours", "replacement parts", "annual maintenance", "software licence", "delivery and installation",
         "printing of brochures", "cleaning services", "hardware upgrade", "training workshop", "spare tyres"]
TOWNS = ["Leeds", "Bristol", "York", "Bath", "Derby", "Exeter"]
NOTES = [
    ("Sourdough starter", "Feed the sourdough starter twice a day with equal weights of flour and water. The loaf needs a long cold proof overnight."),
    ("Garage", "Booked the garage for Friday: the winter tyres go on the car and the brakes get checked."),
    ("Vet visit for Biscuit", "Took the dog to the vet on Monday: vaccinations done, weight is fine, next check-up in spring."),
    ("Tax return", "Gather the receipts for the tax return before the end of April; the accountant needs the payslips too."),
    ("Summer holiday", "Train tickets to Lisbon are booked for the second week of August, hotel near the river."),
    ("Team meeting notes", "Discussed the release schedule, the open bugs in the importer and who reviews the new design."),
    ("Lentil soup", "Red lentils, onion, carrot and cumin; simmer for twenty minutes and blend half of it."),
    ("Books to read", "A novel by Ishiguro, the history of the Hanseatic league, and a field guide to mushrooms."),
    ("Running plan", "Three short runs a week and one long run on Sunday, building up to ten kilometres by June."),
    ("Plumber", "The kitchen tap drips; the plumber comes on Tuesday morning between eight and ten."),
]


def items_and_queries():
    rnd = random.Random(7)
    items, queries = [], []
    for i in range(50):
        number = f"INV-2024-{901 + i:04d}"
        text = (f"Invoice {number}\nBilled to: {CUSTOMERS[i % 10]}\nDate: 2024-{i % 12 + 1:02d}-{i % 27 + 1:02d}\n"
                f"Description: {LINES[i * 3 % 10]}\nAmount due: {rnd.randint(120, 9800)}.00 EUR, payable within 30 days.\n"
                "Thank you for your business.")
        items.append((f"invoice-{901 + i}", f"Invoice {number}", text))
        queries.append((number, f"invoice-{901 + i}"))
    for i in range(30):
        code = f"JJD{1234560 + i * 7919:010d}"
        text = (f"Your parcel {code} from {CUSTOMERS[(i * 7) % 10]} is on its way. It left the depot in {TOWNS[i % 6]} "
                f"and will be delivered on day {i % 5 + 1} of next week between 8:00 and 18:00.")
        items.append((f"parcel-{i}", "Parcel on its way", text))
        queries.append((code, f"parcel-{i}"))
    for i, (title, text) in enumerate(NOTES):
        items.append((f"note-{i}", title, text))
    return items, queries


def store_for(replica, items):
    store = tempfile.mkdtemp(prefix="replica-known-items-")
    run = lambda *args, **kw: subprocess.run([replica, "--store", store, *args], check=True, capture_output=True, text=True, **kw)
    run("accounts", "sign-in", "known")
    lines = "\n".join(json.dumps({"uniqueIdentifier": i, "expirationDate": "2999-01-01T00:00:00Z",
                                  "attributes": {"title": t, "textContent": x, "contentType": "public.plain-text"}})
                      for i, t, x in items)
    run("import", "--account", "known", "-", input=lines)
    return store


def evaluate(replica, store, queries, extra):
    mrr = after = none_after = listed = 0.0
    for text, wanted in queries:
        out = subprocess.run([replica, "--store", store, "search", "--json", "--limit", "100", *extra, "--", text],
                             capture_output=True, text=True)
        ids = [r["uniqueIdentifier"] for r in json.loads(out.stdout)["results"]] if out.returncode == 0 else []
        rank = ids.index(wanted) if wanted in ids else None
        listed += rank is not None
        mrr += 1 / (rank + 1) if rank is not None and rank < 10 else 0
        following = len(ids) - rank - 1 if rank is not None else len(ids)
        after += following
        none_after += following == 0
    n = len(queries)
    return mrr / n, listed / n, after / n, none_after / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--replica", action="append", required=True, help="a built replica binary (repeatable)")
    a = ap.parse_args()
    items, queries = items_and_queries()
    print(f"{len(items)} items, {len(queries)} known-item queries (50 invoice numbers, 30 tracking numbers)")
    print("| binary | run | MRR@10 | named item listed | results after it (mean; all results when it is not listed) | queries with none after it |")
    print("|---|---|---|---|---|---|")
    for replica in a.replica:
        store = store_for(replica, items)
        for name, extra in [("hybrid (the default)", []), ("--semantic", ["--semantic"]), ("--lexical", ["--lexical"])]:
            mrr, listed, after, none_after = evaluate(replica, store, queries, extra)
            print(f"| {replica} | {name} | {mrr:.3f} | {listed:.0%} | {after:.1f} | {none_after:.0%} |")


if __name__ == "__main__":
    main()
