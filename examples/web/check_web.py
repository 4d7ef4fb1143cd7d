#!/usr/bin/env python3
# examples/web/check_web.py - runs the web example's page in headless Chromium and compares its hash sequence with the native program's.
# SPDX-License-Identifier: MIT
#
# check_web.py --page DIR --native EXE --chromium PATH [--units N]
#              [--frames N] [--threads N] [--isolated] [--out DIR]
#
# Serves DIR (index.html, weft_example_web.js/.wasm, and for the -pthread
# build its .worker.js) on 127.0.0.1 with the headers that make the page
# cross-origin isolated (COOP same-origin, COEP require-corp), opens
# index.html?units=..&frames=..&threads=..&report=/report in headless
# Chromium, and waits for the page to POST its result. The page's hashes
# (frame 0 = the world as created, then one per frame) must equal the lines
# "frame <n> hash <h>" of `EXE units frames threads`. With --isolated the
# page must also report crossOriginIsolated and run on more than one
# thread. The result, the page's step and draw timings and a screenshot
# (when Chromium can take one) go to --out. Exit 0 when equal, 1 otherwise.
import argparse
import http.server
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time


def serve(page_dir, got):
    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *a, **k):
            super().__init__(*a, directory=page_dir, **k)

        def end_headers(self):
            self.send_header("Cross-Origin-Opener-Policy", "same-origin")
            self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
            self.send_header("Cache-Control", "no-store")
            super().end_headers()

        def do_POST(self):
            n = int(self.headers.get("Content-Length", "0"))
            body = self.rfile.read(n)
            self.send_response(204)
            self.end_headers()
            if self.path == "/report":
                got["result"] = json.loads(body)
                got["event"].set()

        def log_message(self, fmt, *args):
            pass

    Handler.extensions_map = dict(http.server.SimpleHTTPRequestHandler.extensions_map)
    Handler.extensions_map[".wasm"] = "application/wasm"
    Handler.extensions_map[".js"] = "text/javascript"
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def native_hashes(exe, units, frames, threads):
    out = subprocess.run([exe, str(units), str(frames), str(threads)], check=True,
                         capture_output=True, text=True, timeout=600).stdout
    return re.findall(r"^frame \d+ hash ([0-9a-f]{16})$", out, re.M), out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--page", required=True)
    ap.add_argument("--native", required=True)
    ap.add_argument("--chromium", required=True)
    ap.add_argument("--units", type=int, default=4000)
    ap.add_argument("--frames", type=int, default=120)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--isolated", action="store_true")
    ap.add_argument("--timeout", type=float, default=180)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()

    for f in ("index.html", "weft_example_web.js", "weft_example_web.wasm"):
        if not os.path.exists(os.path.join(a.page, f)):
            print(f"check_web: {f} is missing from {a.page} (was the page built?)")
            return 1
    want, native_out = native_hashes(a.native, a.units, a.frames, a.threads)
    if len(want) != a.frames + 1:
        print("check_web: the native program printed %d hashes, expected %d:\n%s"
              % (len(want), a.frames + 1, native_out))
        return 1

    got = {"event": threading.Event()}
    srv = serve(a.page, got)
    url = "http://127.0.0.1:%d/index.html?units=%d&frames=%d&threads=%d&report=/report" % (
        srv.server_address[1], a.units, a.frames, a.threads)
    profile = tempfile.mkdtemp(prefix="weft-web-chromium-")
    cmd = [a.chromium, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
           "--no-default-browser-check", "--disable-extensions", "--mute-audio",
           "--user-data-dir=" + profile, "--window-size=800,900", url]
    t0 = time.monotonic()
    # its own process group: the browser's helpers end with it
    browser = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    ok = got["event"].wait(a.timeout)
    elapsed = time.monotonic() - t0
    try:
        os.killpg(browser.pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    try:
        _, err = browser.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(browser.pid, signal.SIGKILL)
        _, err = browser.communicate()
    srv.shutdown()
    if not ok:
        print("check_web: the page reported nothing within %.0f s; chromium said:\n%s"
              % (a.timeout, err.decode(errors="replace")[-3000:]))
        return 1
    res = got["result"]
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "page_result.json"), "w") as f:
            json.dump(res, f)
    if res.get("error"):
        print("check_web: the page failed: %s" % res["error"])
        return 1
    page = res["hashes"]
    mode = "%d thread(s)%s" % (res["threads"], ", cross-origin isolated" if res["isolated"] else "")
    steps = res["step_ms"]
    mean = sum(steps) / len(steps) if steps else 0.0
    draws = res["draw_ms"]
    print("check_web: page ran %d frames of %d units on %s in %.1f s; step mean %.3f ms, "
          "draw mean %.3f ms" % (len(page) - 1, a.units, mode, elapsed, mean,
                                  sum(draws) / len(draws) if draws else 0.0))
    if a.isolated and (not res["isolated"] or res["threads"] < 2):
        print("check_web: expected a cross-origin isolated page on several threads, got %s"
              % mode)
        return 1
    if page != want:
        first = next((i for i, (x, y) in enumerate(zip(page, want)) if x != y),
                     min(len(page), len(want)))
        print("check_web: the hash sequences differ from frame %d: page %s, native %s "
              "(page %d hashes, native %d)" % (first, page[first] if first < len(page) else "-",
                                               want[first] if first < len(want) else "-",
                                               len(page), len(want)))
        return 1
    print("check_web: %d hashes equal the native build's (last %s)" % (len(page), page[-1]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
