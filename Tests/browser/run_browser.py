"""The emulator used from web pages in headless Chromium (Selenium, Debian's chromium-driver).

Starts the emulator binary (STORAGE_EMULATOR_BINARY) on a free loopback port and a static page
server on another, then:
- loads page.html from http://127.0.0.1:<page port>: the Firebase JS SDK's flows, request by
  request (replica.js), each step asserted by the page and reported here;
- loads hostile.html from http://evil.test:<page port> (Chromium maps evil.test to 127.0.0.1): a
  page of another site that tries to write, delete and read; the emulator's state is then checked
  directly;
- opens http://evil.test:<emulator port>/..., what a DNS-rebinding page would reach.
Screenshots go to test-artifacts/browser/. Prints one line per step and `browser: N passed, N failed`.
"""

import functools
import http.server
import os
import subprocess
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ARTIFACTS = os.path.join(ROOT, "test-artifacts", "browser")
BUCKET = "demo-web.appspot.com"
HOSTILE_HOST = "evil.test"


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def start_emulator(binary):
    process = subprocess.Popen(
        [binary, "--in-memory", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    line = process.stdout.readline()
    marker = "ready on http://127.0.0.1:"
    if marker not in line:
        process.kill()
        raise SystemExit(f"browser: the emulator did not start: {line!r}")
    port = int(line.split(marker, 1)[1].split()[0].rstrip("/"))
    return process, port


def start_page_server():
    handler = functools.partial(QuietHandler, directory=HERE)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


def make_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = os.environ.get("CHROMIUM_BINARY", "/usr/bin/chromium")
    for argument in [
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1100,900",
        f"--host-resolver-rules=MAP {HOSTILE_HOST} 127.0.0.1",
        "--disable-features=HttpsUpgrades,HttpsFirstBalancedModeAutoEnable",
        "--no-first-run",
        "--no-proxy-server",
    ]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = webdriver.ChromeService(os.environ.get("CHROMEDRIVER_BINARY", "/usr/bin/chromedriver"))
    return webdriver.Chrome(options=options, service=service)


def status_of(url):
    """The status of a direct GET (no Origin: what curl or an SDK outside a browser sees)."""
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as error:
        return error.code


def run_page(driver, url, screenshot):
    driver.get(url)
    WebDriverWait(driver, 90).until(lambda d: d.execute_script("return window.__done === true"))
    results = driver.execute_script("return window.__results")
    os.makedirs(ARTIFACTS, exist_ok=True)
    driver.save_screenshot(os.path.join(ARTIFACTS, screenshot))
    return results


def main():
    binary = os.environ.get("STORAGE_EMULATOR_BINARY")
    if not binary:
        raise SystemExit("browser: set STORAGE_EMULATOR_BINARY to the emulator binary")
    emulator, emulator_port = start_emulator(binary)
    server, page_port = start_page_server()
    driver = None
    passed = 0
    failed = 0

    def report(step, ok, detail):
        nonlocal passed, failed
        if ok:
            passed += 1
        else:
            failed += 1
        print(f"{'PASS' if ok else 'FAIL'} {step}: {detail}", flush=True)

    try:
        driver = make_driver()
        base = f"http://127.0.0.1:{emulator_port}/v0/b/{BUCKET}/o"

        # 1. The SDK's flows from a page on another loopback origin.
        flow = run_page(
            driver,
            f"http://127.0.0.1:{page_port}/page.html?emu={emulator_port}&bucket={BUCKET}",
            "web-app-flow.png",
        )
        expected = 14
        for result in flow:
            report(result["step"], result["ok"], result["detail"])
        if len(flow) != expected:
            report("web app flow", False, f"{len(flow)} steps reported, {expected} expected")

        # 2. A page of another site: its write is refused and changes nothing.
        victim = "web/big.bin"
        before = status_of(f"{base}/{urllib.parse.quote(victim, safe='')}")
        hostile = run_page(
            driver,
            f"http://{HOSTILE_HOST}:{page_port}/hostile.html?emu={emulator_port}&bucket={BUCKET}&victim={victim}",
            "hostile-page.png",
        )
        outcomes = {r["step"]: r["outcome"] for r in hostile}
        pwned = status_of(f"{base}/pwned.txt")
        report(
            "cross-site simple POST refused, nothing created",
            outcomes.get("simple POST") == "opaque" and pwned == 404,
            f"the page's no-cors POST was {outcomes.get('simple POST')}; pwned.txt then answers {pwned}",
        )
        after = status_of(f"{base}/{urllib.parse.quote(victim, safe='')}")
        report(
            "cross-site DELETE blocked, object still there",
            outcomes.get("DELETE") == "blocked" and before == 200 and after == 200,
            f"DELETE {outcomes.get('DELETE')}; {victim} answered {before} before and {after} after",
        )
        report(
            "cross-site read not readable by the page",
            outcomes.get("read") == "blocked",
            f"read {outcomes.get('read')}",
        )

        # 3. DNS rebinding: a name that resolves to 127.0.0.1 reaches the emulator as "same origin".
        driver.get(f"http://{HOSTILE_HOST}:{emulator_port}/v0/b/{BUCKET}/o")
        text = driver.find_element("tag name", "body").text
        driver.save_screenshot(os.path.join(ARTIFACTS, "dns-rebinding.png"))
        report(
            "DNS rebinding: Host evil.test refused",
            '"code":403' in text and "big.bin" not in text,
            text[:160],
        )
    except Exception as error:  # a broken browser set-up is a failure, not a crash
        report("browser session", False, f"{type(error).__name__}: {error}")
    finally:
        if driver is not None and failed:
            for entry in driver.get_log("browser"):
                print("  console:", entry.get("message"), flush=True)
        if driver is not None:
            driver.quit()
        server.shutdown()
        emulator.terminate()
        emulator.wait(timeout=10)
    print(f"browser: {passed} passed, {failed} failed", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
