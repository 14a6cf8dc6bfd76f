#!/usr/bin/env python3
"""e2e-flame-browser.py - drives an ember flame SVG in headless Chromium
through the DevTools protocol (a minimal client on the standard library):
a click on a frame zooms, Ctrl-F searches, Reset Zoom restores.

  e2e-flame-browser.py CHROMIUM SVG SCREENSHOT.png REGEX PERCENT
The SVG must hold frames mid_ab, leaf_b and leaf_c (leaf_c outside mid_ab);
REGEX is searched and PERCENT is the share it must show ("80.8").
Prints PASS:/FAIL: lines (tests/run.sh protocol); exits 1 on a failure.
"""
import base64
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--remote-debugging-port=0", "--window-size=1200,400"]


class Socket:
    """Just enough of RFC 6455 for one client talking JSON to DevTools."""

    def __init__(self, url):
        m = re.match(r"ws://([^:/]+):(\d+)(/.*)", url)
        self.s = socket.create_connection((m.group(1), int(m.group(2))), timeout=30)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall((f"GET {m.group(3)} HTTP/1.1\r\nHost: {m.group(1)}\r\n"
                        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                        f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
        head = b""
        while b"\r\n\r\n" not in head:
            head += self.s.recv(1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise OSError("websocket handshake refused")

    def send(self, text):
        data, mask = text.encode(), os.urandom(4)
        n = len(data)
        hdr = bytes([0x81]) + (bytes([0x80 | n]) if n < 126 else
                               bytes([0x80 | 126]) + n.to_bytes(2, "big") if n < 65536 else
                               bytes([0x80 | 127]) + n.to_bytes(8, "big"))
        self.s.sendall(hdr + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def _exact(self, n):
        buf = b""
        while len(buf) < n:
            chunk = self.s.recv(n - len(buf))
            if not chunk:
                raise OSError("connection closed")
            buf += chunk
        return buf

    def recv(self):
        msg = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7F
            if n == 126:
                n = int.from_bytes(self._exact(2), "big")
            elif n == 127:
                n = int.from_bytes(self._exact(8), "big")
            msg += self._exact(n)
            if b0 & 0x80:
                return msg.decode()


class Page:
    def __init__(self, ws):
        self.ws, self.next_id, self.events = ws, 0, []

    def call(self, method, on_event=None, **params):
        self.next_id += 1
        my = self.next_id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == my:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if on_event:
                on_event(m)

    def js(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True)
        return r.get("result", {}).get("value")

    def click(self, x, y):
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left",
                      clickCount=1)


FRAME_BOX = """(function (name) {
  var ts = document.querySelectorAll('#frames title');
  for (var i = 0; i < ts.length; i++) if (ts[i].textContent.indexOf(name + ' (') === 0) {
    var g = ts[i].parentNode, r = g.querySelector('rect'), b = r.getBoundingClientRect();
    return {x: b.x + b.width / 2, y: b.y + b.height / 2, w: +r.getAttribute('width'),
            hidden: g.classList.contains('hide')};
  }
  return null; })"""


def report(ok, name, why=""):
    print(f"PASS: {name}" if ok else f"FAIL: {name}: {why}", flush=True)
    return bool(ok)


def drive(page, svg, shot, regex, want):
    page.call("Page.enable")
    page.call("Page.navigate", url="file://" + os.path.abspath(svg))
    for _ in range(100):
        if page.js("document.readyState") == "complete":
            break
        time.sleep(0.1)
    box = lambda n: page.js(f"{FRAME_BOX}({json.dumps(n)})")
    before_b, mid = box("leaf_b"), box("mid_ab")
    ok = report(before_b and mid, "frames found", "no leaf_b or mid_ab frame")
    if not ok:
        return False
    page.click(mid["x"], mid["y"])
    after_b, c = box("leaf_b"), box("leaf_c")
    ok &= report(after_b["w"] > before_b["w"] * 1.2 and c["hidden"],
                 "click on mid_ab zooms: leaf_b grows, leaf_c hides",
                 f"leaf_b {before_b['w']} -> {after_b['w']}, leaf_c hidden {c['hidden']}")

    # Ctrl-F opens the search prompt; answer it as a user would.
    def answer(m):
        if m.get("method") == "Page.javascriptDialogOpening":
            page.ws.send(json.dumps({"id": 10**6, "method": "Page.handleJavaScriptDialog",
                                     "params": {"accept": True, "promptText": regex}}))
    for kind in ("keyDown", "keyUp"):
        page.call("Input.dispatchKeyEvent", on_event=answer, type=kind, key="f", code="KeyF",
                  windowsVirtualKeyCode=70, modifiers=2)
    time.sleep(0.2)
    matched = page.js("document.getElementById('matched').textContent")
    ok &= report(matched == f"Matched: {want}%",
                 f"Ctrl-F search counts nested matches once ({matched})", f"want {want}%")

    png = page.call("Page.captureScreenshot")["data"]
    with open(shot, "wb") as f:
        f.write(base64.b64decode(png))

    reset = page.js("(function () { var b = document.getElementById('unzoom')"
                    ".getBoundingClientRect(); return {x: b.x + b.width / 2, y: b.y + b.height / 2}; })()")
    page.click(reset["x"], reset["y"])
    back_b, c = box("leaf_b"), box("leaf_c")
    ok &= report(abs(back_b["w"] - before_b["w"]) < 0.05 and not c["hidden"],
                 "Reset Zoom restores the view", f"leaf_b {back_b['w']} vs {before_b['w']}")
    return ok


def main():
    chromium, svg, shot, regex, want = sys.argv[1:6]
    profile = tempfile.mkdtemp(prefix="ember-chromium.")
    proc = subprocess.Popen([chromium, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        deadline = time.time() + 30
        while time.time() < deadline and not url:
            line = proc.stderr.readline()
            m = re.search(r"DevTools listening on (ws://\S+)", line)
            url = m and m.group(1)
            if not line and proc.poll() is not None:
                break
        if not url:
            print("FAIL: chromium: no DevTools endpoint")
            return 1
        port = re.match(r"ws://[^:]+:(\d+)/", url).group(1)
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list"))
        page_url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        return 0 if drive(Page(Socket(page_url)), svg, shot, regex, want) else 1
    finally:
        proc.kill()
        proc.wait()
        subprocess.run(["rm", "-rf", profile])


if __name__ == "__main__":
    sys.exit(main())
