"""Headless Chromium under Selenium, and the `tasklog` server and CLI, for the page's tests,
screenshots and benchmarks. Nothing here is skipped: a browser that cannot start is an error."""
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def chromium(width=1280, height=900, dark=False):
    """A headless Chromium with its own profile (removed with it), at `width` x `height`."""
    binary = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_path = shutil.which("chromedriver")
    if not binary or not driver_path:
        raise SystemExit("chromium and chromedriver are needed: run scripts/install-deps.sh")
    profile = tempfile.mkdtemp(prefix="tasklog-web-")
    options = webdriver.ChromeOptions()
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--no-first-run", "--disable-extensions", f"--user-data-dir={profile}",
                f"--window-size={width},{height}", "--hide-scrollbars"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    driver.profile_dir = profile
    driver.set_window_size(width, height)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {
        "features": [{"name": "prefers-color-scheme", "value": "dark" if dark else "light"}]})
    return driver


def close(driver):
    driver.quit()
    shutil.rmtree(driver.profile_dir, ignore_errors=True)


def wait(driver, condition, timeout=5, what="condition"):
    """Polls `condition(driver)` every 10 ms until it is truthy; raises naming `what`."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = condition(driver)
            if value:
                return value
        except Exception:  # an element replaced while read: try again
            pass
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.01)


def row_titles(driver):
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('#tasks .task .title'), e => e.textContent)")


def row(driver, title):
    for li in driver.find_elements(By.CSS_SELECTOR, "#tasks .task"):
        if li.find_element(By.CSS_SELECTOR, ".title").text == title:
            return li
    return None


class TaskLog:
    """The `tasklog` binary on one store, and its `serve` process (stopped by pid)."""

    def __init__(self, binary, store, token=None):
        self.binary, self.store, self.token = binary, store, token
        self.server = None

    def run(self, *args):
        r = subprocess.run([self.binary, "--store", self.store, *args], capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise AssertionError(f"tasklog {' '.join(args)} failed: {r.stderr}")
        return r.stdout

    def tasks(self, *flags):
        return json.loads(self.run("list", *(flags or ("--all",)), "--json"))

    def titled(self, title, *flags):
        return [t for t in self.tasks(*flags) if t["title"] == title]

    def serve(self, port=0):
        """Starts `serve` on 127.0.0.1:`port`; returns the port it listens on."""
        auth = ["--token", self.token] if self.token else ["--allow-guest"]
        self.server = subprocess.Popen(
            [self.binary, "--store", self.store, "serve", "--port", str(port), *auth],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        line = self.server.stdout.readline()
        if "127.0.0.1:" not in line:
            self.stop()
            raise AssertionError(f"tasklog serve did not start: {line}")
        self.port = int(line.rsplit(":", 1)[1].split()[0])
        return self.port

    def adopt(self, pid, port):
        """Takes over a server started by the caller, to stop it by its pid."""
        self.server, self.port = pid, port

    def stop(self):
        if self.server is None:
            return
        if isinstance(self.server, int):
            # The caller reaps it; it is gone once its port refuses connections.
            os.kill(self.server, signal.SIGTERM)
            for _ in range(1000):
                try:
                    socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
                except OSError:
                    break
                time.sleep(0.01)
        else:
            self.server.terminate()
            self.server.wait(timeout=10)
        self.server = None
