"""Compares the VTODOs of two iCalendar files with the `icalendar` library.

Usage: compare.py ORIGINAL EXPORTED. Every property and subcomponent of each original VTODO
must be in the exported one with the same value; DUE and DTSTART are compared as instants;
DTSTAMP and LAST-MODIFIED may differ (the exporter sets them). Prints each difference and
exits 1 when there is one.
"""
import sys
import icalendar

IGNORED = {"DTSTAMP", "LAST-MODIFIED"}
TIMES = {"DUE", "DTSTART", "COMPLETED", "CREATED", "RECURRENCE-ID"}


def todos(path):
    with open(path, "rb") as f:
        cal = icalendar.Calendar.from_ical(f.read())
    out = {}
    for c in cal.walk("VTODO"):
        key = (str(c["UID"]), str(c.get("RECURRENCE-ID", "")))
        out[key] = c
    return out


def value(name, v):
    if name in TIMES:
        d = v.dt
        return d.isoformat() if not hasattr(d, "tzinfo") or d.tzinfo is None else d.timestamp()
    if name == "CATEGORIES":
        cats = v if isinstance(v, list) else [v]
        return sorted(str(x) for c in cats for x in c.cats)
    return v.to_ical() if hasattr(v, "to_ical") else str(v)


def props(c):
    out = {}
    for name, v in c.property_items(recursive=False):
        if name in IGNORED or name in ("BEGIN", "END"):
            continue
        vals = v if isinstance(v, list) and name != "CATEGORIES" else [v]
        out.setdefault(name, []).extend(value(name, x) for x in vals)
    return out


def main():
    original, exported = todos(sys.argv[1]), todos(sys.argv[2])
    problems = []
    for key, todo in original.items():
        if key not in exported:
            problems.append(f"{key}: missing from the export")
            continue
        a, b = props(todo), props(exported[key])
        for name, vals in a.items():
            if sorted(map(str, vals)) != sorted(map(str, b.get(name, []))):
                problems.append(f"{key} {name}: {vals} became {b.get(name)}")
        subs_a = [s.to_ical() for s in todo.subcomponents]
        subs_b = [s.to_ical() for s in exported[key].subcomponents]
        if subs_a != subs_b:
            problems.append(f"{key}: subcomponents differ")
    for p in problems:
        print(p)
    sys.exit(1 if problems else 0)


main()
