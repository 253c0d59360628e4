"""A headless Chromium driven over the DevTools protocol on a pipe (standard library only).

``Browser.open(path)`` loads a local file and records what the page did: console
messages, uncaught exceptions, log entries (a Content-Security-Policy violation
is one) and every request.  ``evaluate`` runs an expression in the page and
returns its value; ``screenshot`` and ``pdf`` capture it.  The browser is
Debian's ``chromium`` (or ``$CHROMIUM``); :func:`find_chromium` returns None when
there is none, and the tests then skip with that reason.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

NAMES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
         "headless_shell")


def find_chromium() -> str | None:
    """The browser to run: ``$CHROMIUM``, else the first of :data:`NAMES` on the PATH."""
    chosen = os.environ.get("CHROMIUM")
    if chosen:
        return chosen if os.access(chosen, os.X_OK) else None
    for name in NAMES:
        found = shutil.which(name)
        if found:
            return found
    return None


class Browser:
    """One headless browser process with one page."""

    def __init__(self, binary: str, width: int = 1280, height: int = 900, timeout: float = 60):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="fastbleu-chromium-")
        to_child, self._write = os.pipe()
        self._read, from_child = os.pipe()

        def pipes():  # the protocol's pipe: the browser reads fd 3 and writes fd 4
            import fcntl

            high = [fcntl.fcntl(fd, fcntl.F_DUPFD, 10) for fd in (to_child, from_child)]
            os.dup2(high[0], 3)  # (through fds above 4: neither end is clobbered first)
            os.dup2(high[1], 4)

        flags = ["--headless", "--remote-debugging-pipe", "--no-first-run",
                 "--no-default-browser-check", "--disable-gpu", "--disable-extensions",
                 "--disable-background-networking", "--disable-sync", "--mute-audio",
                 "--disable-dev-shm-usage", f"--user-data-dir={self.profile}",
                 f"--window-size={width},{height}"]
        if os.geteuid() == 0:
            flags.append("--no-sandbox")  # Chromium refuses to run as root with its sandbox
        self.process = subprocess.Popen([binary, *flags, "about:blank"], pass_fds=(3, 4),
                                        preexec_fn=pipes, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child)
        os.close(from_child)
        self._buffer = b""
        self._id = 0
        self.events = []
        target = self._call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self._call("Target.attachToTarget", {"targetId": target,
                                                            "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable")
        self.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height,
                                                         "deviceScaleFactor": 1,
                                                         "mobile": False})

    # -- the protocol -------------------------------------------------------------------

    def _message(self, deadline: float) -> dict:
        while b"\0" not in self._buffer:
            if time.monotonic() > deadline:
                raise TimeoutError("Chromium did not answer in time")
            chunk = os.read(self._read, 1 << 16)
            if not chunk:
                raise RuntimeError("Chromium closed the protocol pipe")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def _call(self, method: str, params: dict | None = None, session: str | None = None):
        self._id += 1
        message = {"id": self._id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self._write, json.dumps(message).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            found = self._message(deadline)
            if found.get("id") == self._id:
                if "error" in found:
                    raise RuntimeError(f"{method}: {found['error']}")
                return found.get("result", {})
            if "method" in found:
                self.events.append(found)

    def send(self, method: str, params: dict | None = None):
        """Call ``method`` on the page; its result."""
        return self._call(method, params, self.session)

    def wait_for(self, method: str, after: int = 0) -> dict:
        """The first event ``method`` recorded after the first ``after`` events."""
        deadline = time.monotonic() + self.timeout
        while True:
            for event in self.events[after:]:
                if event["method"] == method:
                    return event
            found = self._message(deadline)
            if "method" in found:
                self.events.append(found)

    # -- what the tests use -------------------------------------------------------------

    def open(self, path: Path) -> None:
        """Load a local file and wait until it has loaded."""
        start = len(self.events)
        self.send("Page.navigate", {"url": Path(path).resolve().as_uri()})
        self.wait_for("Page.loadEventFired", start)
        self.evaluate("new Promise(r => requestAnimationFrame(() => setTimeout(r, 50)))",
                      await_promise=True)

    def evaluate(self, expression: str, await_promise: bool = False):
        result = self.send("Runtime.evaluate", {"expression": expression,
                                                "returnByValue": True,
                                                "awaitPromise": await_promise})
        if "exceptionDetails" in result:
            raise RuntimeError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def problems(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions and error log entries."""
        found = []
        for event in self.events:
            method, params = event["method"], event.get("params", {})
            if method == "Runtime.consoleAPICalled" and params.get("type") in ("error",
                                                                               "warning",
                                                                               "assert"):
                found.append(f"console.{params['type']}: {params.get('args')}")
            elif method == "Runtime.exceptionThrown":
                found.append(f"exception: {params.get('exceptionDetails')}")
            elif method == "Log.entryAdded" and params["entry"]["level"] in ("error",
                                                                              "warning"):
                found.append(f"log: {params['entry'].get('text')}")
        return found

    def requests(self) -> list[str]:
        """The URL of every request the page made."""
        return [event["params"]["request"]["url"] for event in self.events
                if event["method"] == "Network.requestWillBeSent"]

    def screenshot(self, path: Path) -> None:
        """A PNG of the whole page."""
        size = self.send("Page.getLayoutMetrics")["cssContentSize"]
        shot = self.send("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size["width"],
                     "height": min(size["height"], 16000), "scale": 1}})
        Path(path).write_bytes(base64.b64decode(shot["data"]))

    def pdf(self) -> bytes:
        """The page printed (what ``@media print`` makes of it)."""
        return base64.b64decode(self.send("Page.printToPDF", {"printBackground": False})["data"])

    def key(self, name: str, code: int) -> None:
        """Press and release one key (Tab: ``("Tab", 9)``)."""
        for kind in ("rawKeyDown", "keyUp"):
            self.send("Input.dispatchKeyEvent", {"type": kind, "key": name, "code": name,
                                                 "windowsVirtualKeyCode": code})

    def close(self) -> None:
        try:
            self._call("Browser.close")
        except (RuntimeError, TimeoutError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for fd in (self._read, self._write):
            try:
                os.close(fd)
            except OSError:
                pass
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
