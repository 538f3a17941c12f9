"""Drives the page of a running `tasklog serve` in headless Chromium and checks every action
with `tasklog list --json`. Prints `ok <step>` per step; exits non-zero on the first failure.

    page_test.py --tasklog BIN --store DIR --url URL --pid PID [--token T | --guest]
"""
import argparse
import datetime
import json
import subprocess
import sys
import time

from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys

from browser import TaskLog, chromium, close, row, row_titles, wait

HOSTILE = '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>&amp; "quoted"'


def step(name):
    print("ok", name, flush=True)


def sign_in(d, args):
    d.get(args.url + "/")
    if args.guest:
        wait(d, lambda d: d.find_element(By.ID, "app").is_displayed(), what="guest mode to open the list")
        assert d.find_element(By.ID, "mode").text == "guest"
        step("guest mode opens the list without a token")
        return
    wait(d, lambda d: d.find_element(By.ID, "signin").is_displayed(), what="the sign-in form")
    field = d.find_element(By.ID, "token")
    field.send_keys("not-the-token", Keys.ENTER)
    wait(d, lambda d: "refused" in d.find_element(By.ID, "signin-error").text, what="the wrong token's message")
    assert not d.find_element(By.ID, "app").is_displayed()
    step("a wrong token is refused with a message")
    field.clear()
    field.send_keys(args.token, Keys.ENTER)
    wait(d, lambda d: d.find_element(By.ID, "app").is_displayed(), what="the list after signing in")
    assert "token" not in d.current_url
    step("the right token signs in")


def add_edit_complete(d, tl):
    d.find_element(By.TAG_NAME, "body").send_keys("n")
    d.switch_to.active_element.send_keys("Buy milk", Keys.ENTER)
    wait(d, lambda d: tl.titled("Buy milk"), what="the added task in the store")
    wait(d, lambda d: row(d, "Buy milk"), what="the added row")
    step("add")
    row(d, "Buy milk").find_element(By.CSS_SELECTOR, ".edit").click()
    form = d.find_element(By.CSS_SELECTOR, "form.editor")
    for name, value in (("title", "Buy oat milk"), ("due", "2030-01-02"), ("tags", "shop, home")):
        f = form.find_element(By.NAME, name)
        f.clear()
        f.send_keys(value)
    form.find_element(By.CSS_SELECTOR, "select[name=priority] option[value='2']").click()
    form.find_element(By.NAME, "title").send_keys(Keys.ENTER)
    edited = wait(d, lambda d: tl.titled("Buy oat milk"), what="the edit in the store")[0]
    assert edited["due"] == "2030-01-02" and edited["priority"] == 2 and sorted(edited["tags"]) == ["home", "shop"], edited
    assert not tl.titled("Buy milk")
    step("edit every field inline")
    row(d, "Buy oat milk").find_element(By.CSS_SELECTOR, ".tick").click()
    wait(d, lambda d: tl.titled("Buy oat milk")[0]["done"], what="done in the store")
    wait(d, lambda d: row(d, "Buy oat milk") is None, what="the done task to leave the open view")
    step("tick completes")


def delete_undo_restore(d, tl):
    d.find_element(By.ID, "new").send_keys("Throw away", Keys.ENTER)
    wait(d, lambda d: row(d, "Throw away") and tl.titled("Throw away"), what="the second task")
    row(d, "Throw away").find_element(By.CSS_SELECTOR, ".delete").click()
    wait(d, lambda d: not tl.titled("Throw away") and tl.titled("Throw away", "--deleted"), what="the delete in the store")
    d.find_element(By.ID, "undo").click()
    wait(d, lambda d: tl.titled("Throw away"), what="undo to restore the task")
    wait(d, lambda d: row(d, "Throw away"), what="the restored row")
    step("delete, then undo from the toast")
    row(d, "Throw away").find_element(By.CSS_SELECTOR, ".delete").click()
    wait(d, lambda d: not tl.titled("Throw away"), what="the second delete")
    d.find_element(By.CSS_SELECTOR, "#views [data-status=deleted]").click()
    wait(d, lambda d: row(d, "Throw away"), what="the deleted view")
    row(d, "Throw away").find_element(By.CSS_SELECTOR, ".restore").click()
    wait(d, lambda d: tl.titled("Throw away"), what="restore from the deleted view")
    d.find_element(By.CSS_SELECTOR, "#views [data-status=open]").click()
    wait(d, lambda d: row(d, "Throw away"), what="the open view again")
    step("restore from the deleted view")


def live(d, tl, args):
    start = time.monotonic()
    tl.run("add", "Written by the CLI")
    wait(d, lambda d: row(d, "Written by the CLI"), timeout=1, what="the CLI's task on the page within a second")
    cli_ms = (time.monotonic() - start) * 1000
    auth = ["-H", "Authorization: Bearer " + args.token] if args.token else []
    start = time.monotonic()
    subprocess.run(["curl", "-sf", "-o", "/dev/null", "-X", "PUT", *auth, "-H", "Content-Type: application/json", "--data",
                    json.dumps({"title": "Written with curl"}), args.url + "/v1/tasks/from-curl"], check=True)
    wait(d, lambda d: row(d, "Written with curl"), timeout=1, what="curl's task on the page within a second")
    step(f"live: CLI add in {cli_ms:.0f} ms, curl PUT in {(time.monotonic() - start) * 1000:.0f} ms")
    tl.run("add", HOSTILE)
    wait(d, lambda d: HOSTILE in row_titles(d), what="the hostile title")
    assert d.execute_script("return window.pwned === undefined && !document.querySelector('#tasks img, #tasks script')")
    step("a hostile title stays text")


def offline(d, tl, args):
    d.execute_async_script("navigator.serviceWorker.ready.then(() => arguments[0]())")
    wait(d, lambda d: d.execute_script("return !!navigator.serviceWorker.controller"), what="the service worker")
    tl.stop()
    wait(d, lambda d: "cannot be reached" in d.find_element(By.ID, "banner").text, what="the offline banner")
    d.find_element(By.ID, "new").send_keys("Added offline", Keys.ENTER)
    row(d, "Written with curl").find_element(By.CSS_SELECTOR, ".tick").click()
    row(d, "Written by the CLI").find_element(By.CSS_SELECTOR, ".edit").click()
    title = d.find_element(By.CSS_SELECTOR, "form.editor [name=title]")
    title.clear()
    title.send_keys("Edited offline", Keys.ENTER)
    wait(d, lambda d: "3 changes wait" in d.find_element(By.ID, "banner").text, what="the banner counting three writes")
    d.refresh()
    wait(d, lambda d: row(d, "Edited offline") and row(d, "Added offline"), what="the last tasks after an offline reload")
    wait(d, lambda d: "3 changes wait" in d.find_element(By.ID, "banner").text, what="the count after reloading")
    step("offline: three writes queued, shown after a reload")
    tl.serve(args.port)
    wait(d, lambda d: not d.find_element(By.ID, "banner").is_displayed(), timeout=10, what="the queue to drain")
    assert len(tl.titled("Added offline")) == 1, tl.titled("Added offline")
    assert len(tl.titled("Edited offline")) == 1 and not tl.titled("Written by the CLI")
    assert tl.titled("Written with curl")[0]["done"]
    assert len(tl.tasks()) == 6, [t["title"] for t in tl.tasks()]
    step("the server is back: each offline write landed once")


def keyboard(d, tl):
    body = d.find_element(By.TAG_NAME, "body")
    body.send_keys("?")
    wait(d, lambda d: d.find_element(By.ID, "keys").is_displayed(), what="the keys dialog")
    d.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(d, lambda d: not d.find_element(By.ID, "keys").is_displayed(), what="the dialog to close")
    d.find_elements(By.CSS_SELECTOR, "#tasks .task .title")[0].click()
    d.switch_to.active_element.send_keys("j")
    chosen = d.execute_script("return document.querySelector('#tasks .task.selected .title').textContent")
    assert chosen == row_titles(d)[1], (chosen, row_titles(d))
    d.switch_to.active_element.send_keys("e")
    wait(d, lambda d: d.find_element(By.CSS_SELECTOR, "form.editor [name=title]") == d.switch_to.active_element,
         what="e to open the editor")
    d.switch_to.active_element.send_keys(Keys.ESCAPE)
    wait(d, lambda d: not d.find_elements(By.CSS_SELECTOR, "form.editor"), what="Esc to close the editor")
    d.switch_to.active_element.send_keys("x")
    wait(d, lambda d: tl.titled(chosen)[0]["done"], what="x to complete the selected task")
    d.find_elements(By.CSS_SELECTOR, "#tasks .task .title")[0].click()
    doomed = row_titles(d)[0]
    d.switch_to.active_element.send_keys(Keys.DELETE)
    wait(d, lambda d: not tl.titled(doomed) and tl.titled(doomed, "--deleted"), what="Delete to delete the selected task")
    step("keyboard: ? lists keys, j selects, e edits, x completes, Delete deletes")


def chips(d):
    return d.execute_script(
        "return Array.from(document.querySelectorAll('#preview .chip'), e => e.dataset.field + ' ' + e.textContent)")


def tomorrow():
    """Tomorrow's date where the server runs (the test gives it TZ=UTC)."""
    return (datetime.datetime.now(datetime.timezone.utc).date() + datetime.timedelta(days=1)).isoformat()


def quick_add(d, tl):
    field = d.find_element(By.ID, "new")
    field.send_keys("Call !9")
    wait(d, lambda d: "no priority" in d.find_element(By.ID, "preview").text, what="the refusal under the field")
    field.send_keys(Keys.ENTER)
    assert field.get_attribute("value") == "Call !9" and not tl.titled("Call !9")
    field.clear()
    step("a line the grammar refuses is told and kept in the field")
    field.send_keys("<img src=x onerror=window.pwned=1> every week")
    wait(d, lambda d: chips(d) == ["title <img src=x onerror=window.pwned=1>", "recur every week"], what="the hostile preview")
    assert d.execute_script("return window.pwned === undefined && !document.querySelector('#preview img, #today img, #today script')")
    field.clear()
    step("the preview shows a hostile line as text, and a rule as said")
    field.send_keys("Buy milk tomorrow #shop !2")
    wanted = ["title Buy milk", "due due " + tomorrow(), "priority !2", "tag #shop"]
    wait(d, lambda d: chips(d) == wanted, what=f"the preview chips {wanted}")
    field.send_keys(Keys.ENTER)
    milk = wait(d, lambda d: tl.titled("Buy milk"), what="the quick add in the store")[0]
    assert milk["due"] == tomorrow() and milk["tags"] == ["shop"] and milk["priority"] == 2, milk
    assert field.get_attribute("value") == "" and not chips(d)
    step("quick add: the preview shows due, priority and tag; the task lands with them")


def today_and_urgency(d, tl):
    tl.run("add", "Pay the rent", "--due", "2020-01-01")
    overdue = "#today [data-section=overdue] .today-title"
    wait(d, lambda d: [e.text for e in d.find_elements(By.CSS_SELECTOR, overdue)] == ["Pay the rent"],
         what="the overdue task in the today panel")
    assert d.find_element(By.CSS_SELECTOR, "#today [data-section=overdue] h3").text == "Overdue (1)"
    step("the today panel lists an overdue task live, with its section's count")
    assert d.find_element(By.ID, "sort").get_attribute("value") == "urgency"
    wait(d, lambda d: row_titles(d)[:2] == ["Pay the rent", "Buy milk"], what="the urgency order")
    d.find_element(By.CSS_SELECTOR, "#sort option[value=created]").click()
    wait(d, lambda d: row_titles(d)[-2:] == ["Buy milk", "Pay the rent"], what="the created order")
    d.find_element(By.CSS_SELECTOR, "#sort option[value=urgency]").click()
    wait(d, lambda d: row_titles(d)[:2] == ["Pay the rent", "Buy milk"], what="the urgency order again")
    step("sort by urgency (the default): overdue first, then due soon with priority")


def offline_quick_add(d, tl, args):
    tl.stop()
    wait(d, lambda d: "cannot be reached" in d.find_element(By.ID, "banner").text, what="the offline banner")
    field = d.find_element(By.ID, "new")
    field.send_keys("Water plants tomorrow #home !1")
    wait(d, lambda d: "when it is sent" in d.find_element(By.ID, "preview").text, what="the offline preview note")
    field.send_keys(Keys.ENTER)
    wait(d, lambda d: row(d, "Water plants tomorrow #home !1"), what="the queued add as typed")
    field.send_keys("Call !9", Keys.ENTER)
    wait(d, lambda d: row(d, "Call !9"), what="the queued line the server will refuse")
    tl.serve(args.port)
    wait(d, lambda d: not d.find_element(By.ID, "banner").is_displayed(), timeout=5, what="the queue to drain without a reload")
    plants = wait(d, lambda d: tl.titled("Water plants"), what="the offline quick add in the store")
    assert len(plants) == 1 and not tl.titled("Water plants tomorrow #home !1"), plants
    assert plants[0]["due"] == tomorrow() and plants[0]["tags"] == ["home"] and plants[0]["priority"] == 1, plants
    wait(d, lambda d: row(d, "Water plants"), what="the parsed row")
    assert len(tl.titled("Call !9")) == 1, tl.titled("Call !9")
    assert "!9" in d.find_element(By.ID, "toast-text").text
    step("an offline quick add lands parsed, once, when the server is back; a refused one lands as typed")


def main():
    p = argparse.ArgumentParser()
    for name in ("--tasklog", "--store", "--url"):
        p.add_argument(name, required=True)
    p.add_argument("--pid", type=int, required=True)
    p.add_argument("--token")
    p.add_argument("--guest", action="store_true")
    args = p.parse_args()
    args.port = int(args.url.rsplit(":", 1)[1])
    tl = TaskLog(args.tasklog, args.store, args.token)
    tl.adopt(args.pid, args.port)
    d = chromium()
    try:
        sign_in(d, args)
        add_edit_complete(d, tl)
        delete_undo_restore(d, tl)
        live(d, tl, args)
        offline(d, tl, args)
        keyboard(d, tl)
        quick_add(d, tl)
        today_and_urgency(d, tl)
        offline_quick_add(d, tl, args)
    finally:
        close(d)
        tl.stop()


if __name__ == "__main__":
    sys.exit(main())
