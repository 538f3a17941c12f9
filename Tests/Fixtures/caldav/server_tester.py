"""Runs caldav-server-tester (PyPI) against one CalDAV server; prints its per-feature verdicts as JSON.

    server_tester.py URL USERNAME PASSWORD

"vtodo" in the answer holds the verdicts of the features that apply to a VTODO-only server.

Two differences from the tester's own command line, both so that a VTODO-only server can be
measured at all: each check runs on its own, so one that raises does not end the run (its
features are then recorded as "crashed"); and while the tester lays out its fixtures, a VEVENT
or VJOURNAL the server refuses is kept client-side instead of ending the setup, as the tester
already does for servers that refuse VTODO. Nothing changes for a server that stores events.
"""
import inspect
import json
import logging
import sys

import caldav
from caldav.collection import Calendar
from caldav.lib.error import AuthorizationError, DAVError
from caldav_server_tester import checks
from caldav_server_tester.checker import ServerQuirkChecker
from caldav_server_tester.checks_base import Check

# The tester's features whose probes store or search VTODOs, or touch no calendar object
# (discovery, collections). The rest probe with VEVENTs, VJOURNALs, alarms, scheduling or
# principal search, or are gated on an event search, so a VTODO-only server cannot pass them.
VTODO_FEATURES = [
    "get-current-user-principal", "propfind", "propfind.allprop", "propfind.allprop.resourcetype",
    "propfind.displayname", "propfind.principal-depth-1", "auth.www-authenticate", "auth.www-authenticate.usable-scheme",
    "create-calendar", "create-calendar.set-displayname", "create-calendar.stable-url",
    "create-calendar.with-supported-component-types", "delete-calendar", "delete-calendar.free-namespace",
    "calendar-color", "calendar-color.name", "calendar-order", "synchronous-write.create-calendar", "synchronous-write.delete-calendar",
    "synchronous-write.proppatch", "non-existing-raises-not-found.collection", "non-existing-raises-not-found.object",
    "save-load.todo", "save-load.todo.mixed-calendar", "save-load.todo.recurrences",
    "save-load.todo.recurrences.count", "save-load.todo.uncomplete", "search.comp-type", "search.comp-type.optional",
    "search.time-range.todo", "search.time-range.todo.old-dates", "search.time-range.todo.no-dtstart",
    "search.time-range.todo.no-dtstart.no-due", "search.time-range.todo.strict", "search.time-range.open.start",
    "search.time-range.open.end", "search.time-range.open.start.duration",
]

refused = []
preparing = False
original_add_object = Calendar.add_object
original_prepare = checks.PrepareCalendar._run_check


def add_object(self, objclass, ical=None, **kwargs):
    try:
        return original_add_object(self, objclass, ical, **kwargs)
    except (AuthorizationError, DAVError):
        if not preparing or objclass.__name__ not in ("Event", "Journal"):
            raise
        data = self._use_or_create_ics(ical, objtype=f"V{objclass.__name__.upper()}", **kwargs)
        kept = objclass(self.client, data=data, parent=self)
        kept.load = lambda *args, **kw: kept
        kept.delete = lambda *args, **kw: None
        refused.append(objclass.__name__)
        return kept


def prepare(self):
    global preparing
    preparing = True
    try:
        return original_prepare(self)
    finally:
        preparing = False


def main():
    url, username, password = sys.argv[1:4]
    logging.basicConfig(level=logging.CRITICAL)
    Calendar.add_object = add_object
    checks.PrepareCalendar._run_check = prepare
    client = caldav.DAVClient(url=url, username=username, password=password)
    crashed = {}
    with client:
        checker = ServerQuirkChecker(client)
        classes = [c for _, c in inspect.getmembers(checks, inspect.isclass)
                   if c.__module__ == checks.__name__ and issubclass(c, Check) and c is not Check]
        for cls in classes:
            try:
                cls(checker).run_check(only_once=True)
            except Exception as e:
                crashed[cls.__name__] = f"{type(e).__name__}: {e}"[:300]
        try:
            checker.cleanup(force=True)
        except Exception as e:
            crashed["cleanup"] = f"{type(e).__name__}: {e}"[:300]
        features = checker.features_checked.dotted_feature_set_list(compact=False)
    vtodo = {f: features.get(f, {}).get("support", "missing") for f in VTODO_FEATURES}
    print(json.dumps({"caldav": caldav.__version__, "features": features, "vtodo": vtodo, "crashed": crashed,
                      "refused_fixtures": sorted(set(refused))}, indent=1, sort_keys=True, default=str))


if __name__ == "__main__":
    main()
