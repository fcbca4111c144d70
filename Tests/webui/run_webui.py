"""The web UI at /ui/ in headless Chromium (Selenium, Debian's chromium-driver).

Starts the emulator binary (STORAGE_EMULATOR_BINARY) in memory on a free loopback port, then, as
a person would: is redirected from / to /ui/, sees the buckets, opens one, uploads a file by
picking it and another by dropping it, pages through a long folder, opens an object, edits
writable fields and custom metadata (metageneration rising), deletes a field with null, watches a
change made by an API client appear without reloading, downloads, and deletes. The emulator's
state is checked through the API after each step. Screenshots go to test-artifacts/webui/.
Prints one line per step and `webui: N passed, N failed`.
"""

import json
import os
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
import urllib.request

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ARTIFACTS = os.path.join(ROOT, "test-artifacts", "webui")
BUCKET = "demo-ui.appspot.com"


def start_emulator(binary):
    process = subprocess.Popen(
        [binary, "--in-memory", "--port", "0"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    line = process.stdout.readline()
    marker = "ready on http://127.0.0.1:"
    if marker not in line:
        process.kill()
        raise SystemExit(f"webui: the emulator did not start: {line!r}")
    return process, int(line.split(marker, 1)[1].split()[0].rstrip("/"))


def make_driver():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(argument)
    return webdriver.Chrome(service=webdriver.ChromeService("/usr/bin/chromedriver"), options=options)


class Client:
    """The API client that changes data behind the page's back."""

    def __init__(self, base):
        self.base = base

    def call(self, method, path, body=None, headers=None):
        data = body.encode() if isinstance(body, str) else body
        request = urllib.request.Request(self.base + path, data=data, method=method, headers=headers or {})
        try:
            with urllib.request.urlopen(request) as response:
                return response.status, response.read(), {k.lower(): v for k, v in response.headers.items()}
        except urllib.error.HTTPError as error:
            return error.code, error.read(), {k.lower(): v for k, v in error.headers.items()}

    def json(self, method, path, body=None):
        status, payload, _ = self.call(method, path, body, {"Content-Type": "application/json"})
        return status, (json.loads(payload) if payload else None)

    def upload(self, name, data, content_type="text/plain"):
        path = f"/upload/storage/v1/b/{BUCKET}/o?uploadType=media&name={urllib.parse.quote(name, safe='')}"
        status, _, _ = self.call("POST", path, data, {"Content-Type": content_type})
        assert status == 200, status

    def object(self, name):
        return self.json("GET", f"/storage/v1/b/{BUCKET}/o/{urllib.parse.quote(name, safe='')}")


def main():
    binary = os.environ.get("STORAGE_EMULATOR_BINARY") or os.path.join(ROOT, ".build", "release", "storage-emulator")
    os.makedirs(ARTIFACTS, exist_ok=True)
    for old in os.listdir(ARTIFACTS):
        if old.endswith(".png"):
            os.remove(os.path.join(ARTIFACTS, old))
    process, port = start_emulator(binary)
    base = f"http://127.0.0.1:{port}"
    api = Client(base)
    driver = make_driver()
    # The page re-renders when data changes: an element found a moment ago may be replaced.
    wait = WebDriverWait(driver, 10, ignored_exceptions=[StaleElementReferenceException])
    passed, failed = 0, 0
    scratch = tempfile.mkdtemp(prefix="webui-")

    def text(element_id):
        return driver.execute_script("const e = document.getElementById(arguments[0]); return e ? e.textContent : null;", element_id)

    def texts(selector):
        """The text of every element matching `selector`, read in one go."""
        return driver.execute_script("return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent);", selector)

    def value(element_id):
        return driver.execute_script("const e = document.getElementById(arguments[0]); return e ? e.value : null;", element_id)

    def shot(name):
        driver.save_screenshot(os.path.join(ARTIFACTS, f"{name}.png"))

    def step(name, body):
        nonlocal passed, failed
        try:
            body()
            passed += 1
            print(f"ok   {name}")
        except Exception:
            failed += 1
            print(f"FAIL {name}")
            traceback.print_exc()
            shot(f"failed-{name.replace(' ', '-')}")

    def redirect_and_buckets():
        status, _, headers = api.call("GET", "/", headers={"Accept": "application/json"})
        # An API client asking for / gets the XML API's ListBuckets; a browser goes to the UI.
        assert status == 200 and headers.get("content-type", "").startswith("application/xml"), (status, headers)
        api.json("POST", "/storage/v1/b?project=demo", json.dumps({"name": BUCKET}))
        driver.get(base + "/")
        wait.until(lambda d: d.current_url.startswith(base + "/ui/"))
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "a.bucket-link"))
        assert BUCKET in texts("a.bucket-link")
        shot("buckets")

    def upload_by_picking():
        driver.get(base + "/ui/#/")
        wait.until(lambda d: BUCKET in texts("a.bucket-link"))
        next(a for a in driver.find_elements(By.CSS_SELECTOR, "a.bucket-link") if a.text == BUCKET).click()
        wait.until(lambda d: d.find_elements(By.ID, "drop-zone"))
        path = os.path.join(scratch, "picked.txt")
        with open(path, "w") as file:
            file.write("picked by the file dialog")
        driver.find_element(By.ID, "file-input").send_keys(path)
        wait.until(lambda d: "picked.txt" in texts("a.object-link"))
        status, resource = api.object("picked.txt")
        assert status == 200 and resource["contentType"] == "text/plain" and resource["size"] == "25", resource

    def upload_by_dropping():
        # The drop event a person's drag of a file from the desktop produces.
        driver.execute_script(
            """
            const transfer = new DataTransfer();
            transfer.items.add(new File(["dropped bytes"], "dropped.json", { type: "application/json" }));
            const zone = document.getElementById("drop-zone");
            zone.dispatchEvent(new DragEvent("dragover", { dataTransfer: transfer, bubbles: true, cancelable: true }));
            zone.dispatchEvent(new DragEvent("drop", { dataTransfer: transfer, bubbles: true, cancelable: true }));
            """
        )
        wait.until(lambda d: "dropped.json" in texts("a.object-link"))
        status, resource = api.object("dropped.json")
        assert status == 200 and resource["contentType"] == "application/json", resource
        shot("folder")

    def folders_and_pages():
        for index in range(60):
            api.upload(f"many/item-{index:03d}.txt", b"x")
        driver.get(base + f"/ui/#/b/{BUCKET}?prefix=many%2F")
        wait.until(lambda d: len(texts("a.object-link")) == 50)
        assert text("page-number") == "page 1"
        driver.find_element(By.ID, "next-page").click()
        wait.until(lambda d: text("page-number") == "page 2")
        names = texts("a.object-link")
        assert names == [f"item-{i:03d}.txt" for i in range(50, 60)], names
        assert not driver.find_element(By.ID, "next-page").is_enabled()
        driver.find_element(By.ID, "prev-page").click()
        wait.until(lambda d: text("page-number") == "page 1")
        # The bucket's top level shows `many/` as a folder.
        driver.get(base + f"/ui/#/b/{BUCKET}")
        wait.until(lambda d: "many/" in texts("tr.folder a"))

    def edit_metadata():
        api.upload("photos/forest.jpg", b"not really a jpeg", "image/jpeg")
        driver.get(base + f"/ui/#/o/{BUCKET}/photos%2Fforest.jpg")
        wait.until(lambda d: d.find_elements(By.ID, "metageneration"))
        assert text("metageneration") == "1"
        # Both flavours are shown: the Firebase one has crc32c in decimal, the GCS one in base64.
        gcs_crc = texts("#gcs-table tr[data-key=crc32c] td.value")[0]
        firebase_crc = texts("#firebase-table tr[data-key=crc32c] td.value")[0]
        assert gcs_crc.endswith("==") and firebase_crc.isdigit(), (gcs_crc, firebase_crc)
        field = driver.find_element(By.ID, "field-cacheControl")
        field.clear()
        field.send_keys("public,max-age=300")
        driver.find_element(By.ID, "new-meta-key").send_keys("location")
        driver.find_element(By.ID, "new-meta-value").send_keys("Yosemite")
        driver.find_element(By.ID, "save").click()
        wait.until(lambda d: text("metageneration") == "2")
        _, resource = api.object("photos/forest.jpg")
        assert resource["cacheControl"] == "public,max-age=300" and resource["metadata"] == {"location": "Yosemite"}, resource
        assert resource["contentType"] == "image/jpeg"  # untouched fields stay
        shot("object")

    def null_delete():
        driver.find_element(By.ID, "remove-cacheControl").click()
        wait.until(lambda d: text("metageneration") == "3")
        assert value("field-cacheControl") == ""
        _, resource = api.object("photos/forest.jpg")
        assert "cacheControl" not in resource, resource
        driver.find_element(By.ID, "remove-meta-location").click()
        wait.until(lambda d: text("metageneration") == "4")
        _, resource = api.object("photos/forest.jpg")
        assert "metadata" not in resource or "location" not in resource["metadata"], resource

    def live_update_from_an_api_client():
        status, _ = api.json(
            "PATCH", f"/storage/v1/b/{BUCKET}/o/photos%2Fforest.jpg", json.dumps({"contentLanguage": "en", "metadata": {"by": "api"}})
        )
        assert status == 200
        wait.until(lambda d: text("metageneration") == "5")
        assert value("field-contentLanguage") == "en"
        assert value("meta-by") == "api"
        # And in a folder: an object uploaded by the API client appears.
        driver.get(base + f"/ui/#/b/{BUCKET}?prefix=photos%2F")
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, "a.object-link"))
        api.upload("photos/lake.jpg", b"lake", "image/jpeg")
        wait.until(lambda d: "lake.jpg" in texts("a.object-link"))
        shot("live-update")

    def download_and_delete():
        driver.get(base + f"/ui/#/o/{BUCKET}/photos%2Fforest.jpg")
        wait.until(lambda d: d.find_elements(By.ID, "download"))
        href = driver.find_element(By.ID, "download").get_attribute("href")
        status, body, _ = api.call("GET", href[len(base):])
        assert status == 200 and body == b"not really a jpeg", (status, body)
        driver.execute_script("window.confirm = () => true;")
        driver.find_element(By.ID, "delete").click()
        wait.until(lambda d: "#/b/" in d.current_url)
        wait.until(lambda d: "forest.jpg" not in texts("a.object-link"))
        status, _ = api.object("photos/forest.jpg")
        assert status == 404, status

    def deleted_elsewhere():
        driver.get(base + f"/ui/#/o/{BUCKET}/photos%2Flake.jpg")
        wait.until(lambda d: d.find_elements(By.ID, "metageneration"))
        status, _, _ = api.call("DELETE", f"/storage/v1/b/{BUCKET}/o/photos%2Flake.jpg")
        assert status == 204
        wait.until(lambda d: d.find_elements(By.ID, "deleted"))

    def hostile_names_stay_text():
        name = '<img src=x onerror="document.title=\'owned\'">.txt'
        api.upload(name, b"x")
        driver.get(base + f"/ui/#/b/{BUCKET}")
        wait.until(lambda d: name in texts("a.object-link"))
        assert driver.title != "owned"
        assert not driver.find_elements(By.CSS_SELECTOR, "#listing img")

    def create_bucket():
        driver.get(base + "/ui/#/")
        wait.until(lambda d: d.find_elements(By.ID, "new-bucket"))
        driver.find_element(By.ID, "new-bucket").send_keys("made-in-the-ui")
        driver.find_element(By.ID, "create-bucket").click()
        wait.until(lambda d: "made-in-the-ui" in texts("a.bucket-link"))
        status, _ = api.json("GET", "/storage/v1/b/made-in-the-ui")
        assert status == 200, status

    try:
        step("/ redirects a browser to /ui/ and lists buckets", redirect_and_buckets)
        step("create a bucket", create_bucket)
        step("upload by picking a file", upload_by_picking)
        step("upload by dropping a file", upload_by_dropping)
        step("folders and pagination", folders_and_pages)
        step("edit writable fields and custom metadata", edit_metadata)
        step("null deletes a field and a custom key", null_delete)
        step("a change by an API client appears live", live_update_from_an_api_client)
        step("download and delete", download_and_delete)
        step("an object deleted elsewhere is shown as gone", deleted_elsewhere)
        step("object names are shown as text, never markup", hostile_names_stay_text)
    finally:
        driver.quit()
        process.terminate()
        process.wait(timeout=10)
    print(f"webui: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
