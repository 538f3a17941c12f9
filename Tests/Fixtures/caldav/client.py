"""One step of a CalDAV client session against a server, with the `caldav` library.

Usage: client.py URL PASSWORD STEP [ARGS…]; prints one JSON value. Each run discovers the
task lists from URL (the server's root) as a new client would.

Steps:
  lists                         the collections: [{"name", "url"}]
  todos LIST                    [{"uid", "summary", "status", "due", "url", "etag"}]
  create LIST SUMMARY DUE       a new task (DUE as YYYY-MM-DD): {"uid", "url"}
  complete LIST UID             marks it completed
  edit LIST UID SUMMARY         sets its summary
  delete LIST UID               deletes it
  sync LIST [TOKEN]             sync-collection: {"token", "changed": [summaries], "gone": [urls]}
  stale LIST UID                PUT with an ETag read before another write: {"first", "second"}
"""
import datetime
import json
import sys

import caldav

url, password, step, args = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
client = caldav.DAVClient(url=url, username="anyone", password=password)
calendars = client.principal().calendars()


def calendar(name):
    return next(c for c in calendars if c.name == name)


def summary(todo):
    return str(todo.icalendar_component.get("SUMMARY"))


def find(name, uid):
    return calendar(name).todo_by_uid(uid)


if step == "lists":
    out = [{"name": c.name, "url": str(c.url)} for c in calendars]
elif step == "todos":
    out = []
    for t in calendar(args[0]).todos(include_completed=True):
        c = t.icalendar_component
        due = c.get("DUE")
        out.append({"uid": str(c["UID"]), "summary": str(c["SUMMARY"]), "status": str(c.get("STATUS", "")),
                    "due": due.to_ical().decode() if due else None, "url": str(t.url)})
elif step == "create":
    y, m, d = map(int, args[2].split("-"))
    t = calendar(args[0]).save_todo(summary=args[1], due=datetime.date(y, m, d))
    out = {"uid": str(t.icalendar_component["UID"]), "url": str(t.url)}
elif step == "complete":
    find(args[0], args[1]).complete()
    out = "ok"
elif step == "edit":
    t = find(args[0], args[1])
    t.icalendar_component["SUMMARY"] = args[2]
    t.save()
    out = "ok"
elif step == "delete":
    find(args[0], args[1]).delete()
    out = "ok"
elif step == "sync":
    objects = calendar(args[0]).objects_by_sync_token(sync_token=args[1] if len(args) > 1 else None, load_objects=True)
    changed, gone = [], []
    for o in objects:
        if o.data is None:
            gone.append(str(o.url))
        else:
            changed.append(summary(o))
    out = {"token": objects.sync_token, "changed": sorted(changed), "gone": gone}
elif step == "stale":
    t = find(args[0], args[1])
    head = client.request(str(t.url), "GET")
    etag = head.headers["ETag"]
    body = head.raw if isinstance(head.raw, str) else head.raw.decode()
    first = client.request(str(t.url), "PUT", body.replace("SUMMARY:", "SUMMARY:First "),
                           {"If-Match": etag, "Content-Type": "text/calendar"}).status
    second = client.request(str(t.url), "PUT", body.replace("SUMMARY:", "SUMMARY:Second "),
                            {"If-Match": etag, "Content-Type": "text/calendar"}).status
    out = {"first": first, "second": second}
else:
    sys.exit(f"unknown step {step}")
print(json.dumps(out))
