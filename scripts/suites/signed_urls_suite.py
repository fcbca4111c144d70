"""The signed-URL suite (run by scripts/suites/signed-urls).

A throw-away 2048-bit RSA service-account key is made with `cryptography`; google-cloud-storage's
own signing code (`google.cloud.storage._signing`, `Client.generate_signed_post_policy_v4`) signs
URLs and POST policies with it. One emulator is started with that key's public half
(`--signing-key`, as a PEM public key) and an HMAC key (`--hmac-key`), another with no key. Real
HTTP requests (requests) then download, upload, start resumable uploads and post forms.

Prints one line per check and closes with `N passed, N failed`; exits non-zero on a failure.
"""

import base64
import datetime
import hashlib
import hmac
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

import requests
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth.credentials import AnonymousCredentials
from google.cloud import storage
from google.cloud.storage import _signing
from google.oauth2 import service_account

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EMAIL = "signer@signed-urls-suite.iam.gserviceaccount.com"
HMAC_ID, HMAC_SECRET = "GOOGSUITEACCESSID", "c3VpdGUtc2VjcmV0LXN1aXRlLXNlY3JldC0xMjM0NTY="
BUCKET = "signed-suite"
PASSED = 0
FAILED = 0


def check(name, condition, detail=""):
    global PASSED, FAILED
    if condition:
        PASSED += 1
        print(f"ok - {name}")
    else:
        FAILED += 1
        print(f"FAIL - {name}" + (f": {detail}" if detail else ""))
    return condition


def emulator_binary():
    binary = os.environ.get("STORAGE_EMULATOR_BINARY")
    if binary:
        return binary
    binary = os.path.join(ROOT, ".build", "release", "storage-emulator")
    if not os.path.exists(binary):
        subprocess.run(["swift", "build", "-c", "release", "--product", "storage-emulator"], cwd=ROOT, check=True)
    return binary


def start_emulator(binary, folder, *flags):
    log = open(folder + "-log", "w+")
    process = subprocess.Popen(
        [binary, "--port", "0", "--data-dir", folder, "--bucket", BUCKET, *flags], stdout=log, stderr=subprocess.STDOUT)
    for _ in range(100):
        log.seek(0)
        match = re.search(r"ready on http://127\.0\.0\.1:(\d+)", log.read())
        if match:
            return process, f"http://127.0.0.1:{match.group(1)}"
        if process.poll() is not None:
            break
        time.sleep(0.1)
    process.kill()
    log.seek(0)
    raise RuntimeError("the emulator did not start: " + log.read())


def make_key():
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()
    info = {
        "type": "service_account", "project_id": "signed-urls-suite", "private_key_id": "1",
        "private_key": private_pem, "client_email": EMAIL, "client_id": "1",
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return service_account.Credentials.from_service_account_info(info), public_pem


def object_path(prefix, name):
    return f"{prefix}/b/{BUCKET}/o/" + urllib.parse.quote(name, safe="")


def v4(credentials, base, resource, method="GET", **kwargs):
    return _signing.generate_signed_url_v4(
        credentials, resource, expiration=datetime.timedelta(minutes=10), api_access_endpoint=base, method=method,
        **kwargs)


def hmac_v4(base, resource, method="GET", query=None, expires=600, timestamp=None):
    """A GOOG4-HMAC-SHA256 URL by GCS's documented algorithm (the Python client signs only with RSA)."""
    now = datetime.datetime.now(datetime.timezone.utc)
    timestamp = timestamp or now.strftime("%Y%m%dT%H%M%SZ")
    scope = f"{timestamp[:8]}/auto/storage/goog4_request"
    params = dict(query or {})
    params.update({
        "X-Goog-Algorithm": "GOOG4-HMAC-SHA256", "X-Goog-Credential": f"{HMAC_ID}/{scope}",
        "X-Goog-Date": timestamp, "X-Goog-Expires": str(expires), "X-Goog-SignedHeaders": "host",
    })
    canonical_query = _signing._url_encode(params)
    host = urllib.parse.urlparse(base).netloc
    canonical = "\n".join([method, resource, canonical_query, f"host:{host}\n", "host", "UNSIGNED-PAYLOAD"])
    string_to_sign = "\n".join([
        "GOOG4-HMAC-SHA256", timestamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = ("GOOG4" + HMAC_SECRET).encode()
    for part in [timestamp[:8], "auto", "storage", "goog4_request"]:
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    signature = hmac.new(key, string_to_sign.encode(), hashlib.sha256).hexdigest()
    return f"{base}{resource}?{canonical_query}&X-Goog-Signature={signature}"


def tamper(url):
    head, signature = url.rsplit("=", 1)
    return head + "=" + ("0" if signature[0] != "0" else "1") + signature[1:]


def error_reason(response):
    try:
        return response.json()["error"]["errors"][0]["reason"]
    except (ValueError, KeyError, IndexError, TypeError):
        return None


def xml_code(response):
    match = re.search(r"<Code>([^<]*)</Code>", response.text)
    return match.group(1) if match else None


def with_keys(base, credentials):
    name = "dir/hello world+1.txt"
    body = b"signed hello"
    upload = requests.post(
        f"{base}/upload/storage/v1/b/{BUCKET}/o", params={"uploadType": "media", "name": name}, data=body,
        headers={"Content-Type": "text/plain"})
    check("setup: an unsigned upload still works", upload.status_code == 200, upload.text)

    for prefix, query in [("/download/storage/v1", None), ("/storage/v1", {"alt": "media"})]:
        url = v4(credentials, base, object_path(prefix, name), query_parameters=query)
        got = requests.get(url)
        check(f"V4 RSA download on {prefix}", got.status_code == 200 and got.content == body,
              f"{got.status_code} {got.text[:300]}")
        bad = requests.get(tamper(url))
        check(f"V4 tampered signature on {prefix} is 403 SignatureDoesNotMatch",
              bad.status_code == 403 and error_reason(bad) == "SignatureDoesNotMatch", f"{bad.status_code} {bad.text[:200]}")

    url = v4(credentials, base, object_path("/download/storage/v1", name))
    other = url.replace(urllib.parse.quote(name, safe=""), "other.txt")
    got = requests.get(other)
    check("a V4 URL replayed on another object is 403", got.status_code == 403, f"{got.status_code}")

    url = _signing.generate_signed_url_v2(
        credentials, object_path("/download/storage/v1", name),
        expiration=int(time.time()) + 600, api_access_endpoint=base, method="GET")
    got = requests.get(url)
    check("V2 download", got.status_code == 200 and got.content == body, f"{got.status_code} {got.text[:300]}")
    got = requests.get(url.replace("Signature=", "Signature=AAAA"))
    check("V2 tampered signature is 403 SignatureDoesNotMatch",
          got.status_code == 403 and error_reason(got) == "SignatureDoesNotMatch", f"{got.status_code} {got.text[:200]}")
    expired = _signing.generate_signed_url_v2(
        credentials, object_path("/download/storage/v1", name),
        expiration=int(time.time()) - 10, api_access_endpoint=base, method="GET")
    got = requests.get(expired)
    check("V2 expired URL is 400 ExpiredToken", got.status_code == 400 and error_reason(got) == "ExpiredToken",
          f"{got.status_code} {got.text[:200]}")

    past = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)).strftime("%Y%m%dT%H%M%SZ")
    expired = _signing.generate_signed_url_v4(
        credentials, object_path("/download/storage/v1", name), expiration=60, api_access_endpoint=base,
        method="GET", _request_timestamp=past)
    got = requests.get(expired)
    check("V4 expired URL is 400 ExpiredToken", got.status_code == 400 and error_reason(got) == "ExpiredToken",
          f"{got.status_code} {got.text[:200]}")

    url = hmac_v4(base, object_path("/download/storage/v1", name))
    got = requests.get(url)
    check("V4 HMAC download", got.status_code == 200 and got.content == body, f"{got.status_code} {got.text[:300]}")
    got = requests.get(tamper(url))
    check("V4 HMAC tampered signature is 403", got.status_code == 403, f"{got.status_code}")

    # Upload with a signed POST (media upload; the signed Content-Type must be sent).
    url = v4(credentials, base, f"/upload/storage/v1/b/{BUCKET}/o", method="POST", content_type="text/plain",
             query_parameters={"uploadType": "media", "name": "uploaded/ü.txt"})
    got = requests.post(url, data=b"uploaded through a signed URL", headers={"Content-Type": "text/plain"})
    check("V4 signed media upload (POST)", got.status_code == 200, f"{got.status_code} {got.text[:300]}")
    read = requests.get(object_path(base + "/download/storage/v1", "uploaded/ü.txt"))
    check("the signed upload stored its bytes", read.content == b"uploaded through a signed URL", read.text[:200])
    got = requests.post(url, data=b"x", headers={"Content-Type": "image/png"})
    check("a signed upload with another Content-Type is 403", got.status_code == 403, f"{got.status_code}")

    # Resumable start: google-cloud-storage's RESUMABLE method signs POST + x-goog-resumable: start.
    url = v4(credentials, base, f"/upload/storage/v1/b/{BUCKET}/o", method="RESUMABLE",
             query_parameters={"uploadType": "resumable", "name": "resumable.bin"})
    start = requests.post(url, headers={"x-goog-resumable": "start"})
    location = start.headers.get("Location", "")
    check("V4 signed resumable start", start.status_code in (200, 201) and "upload_id=" in location,
          f"{start.status_code} {start.text[:300]}")
    payload = os.urandom(300_000)
    if location:
        done = requests.put(location, data=payload)
        check("the session URL takes the data", done.status_code in (200, 201), f"{done.status_code} {done.text[:200]}")
        read = requests.get(object_path(base + "/download/storage/v1", "resumable.bin"))
        check("the resumable object has its bytes", read.content == payload)
    start = requests.post(url)
    check("a resumable start without x-goog-resumable is 403", start.status_code == 403, f"{start.status_code}")

    # POST policy documents (a browser form upload).
    client = storage.Client(project="signed-urls-suite", credentials=AnonymousCredentials(),
                            client_options={"api_endpoint": base})
    policy = client.generate_signed_post_policy_v4(
        BUCKET, "forms/${filename}", expiration=datetime.timedelta(minutes=10),
        conditions=[["content-length-range", 1, 64], ["starts-with", "$Content-Type", "text/"]],
        fields={"content-type": "text/plain", "success_action_status": "201", "x-goog-meta-origin": "form"},
        credentials=credentials)
    check("the policy posts to /<bucket>/", policy["url"] == f"{base}/{BUCKET}/", policy["url"])
    form = requests.post(policy["url"], data=policy["fields"], files={"file": ("note.txt", b"posted by a form")})
    check("POST policy form upload is 201", form.status_code == 201 and "<Key>forms/note.txt</Key>" in form.text,
          f"{form.status_code} {form.text[:300]}")
    meta = requests.get(object_path(base + "/storage/v1", "forms/note.txt")).json()
    check("the form's object has its type, metadata and bytes",
          meta.get("contentType") == "text/plain" and meta.get("metadata", {}).get("origin") == "form"
          and meta.get("size") == "16", json.dumps(meta)[:300])
    big = requests.post(policy["url"], data=policy["fields"], files={"file": ("big.txt", b"x" * 65)})
    check("a file over content-length-range is 400 EntityTooLarge",
          big.status_code == 400 and xml_code(big) == "EntityTooLarge", f"{big.status_code} {big.text[:300]}")
    fields = dict(policy["fields"], **{"content-type": "image/png"})
    changed = requests.post(policy["url"], data=fields, files={"file": ("note.txt", b"hi")})
    check("a form field changed from its policy value is 403 AccessDenied",
          changed.status_code == 403 and xml_code(changed) == "AccessDenied", f"{changed.status_code} {changed.text[:300]}")
    fields = dict(policy["fields"], **{"x-goog-meta-extra": "sneaked in"})
    extra = requests.post(policy["url"], data=fields, files={"file": ("note.txt", b"hi")})
    check("a form field the policy does not name is 403", extra.status_code == 403, f"{extra.status_code}")
    fields = dict(policy["fields"], **{"x-goog-signature": tamper("s=" + policy["fields"]["x-goog-signature"])[2:]})
    forged = requests.post(policy["url"], data=fields, files={"file": ("note.txt", b"hi")})
    check("a form with a tampered signature is 403 SignatureDoesNotMatch",
          forged.status_code == 403 and xml_code(forged) == "SignatureDoesNotMatch", f"{forged.status_code} {forged.text[:300]}")


def xml_paths(base, credentials):
    """The XML API paths, signed by blob.generate_signed_url itself."""
    client = storage.Client(project="signed-urls-suite", credentials=AnonymousCredentials(),
                            client_options={"api_endpoint": base})
    blob = client.bucket(BUCKET).blob("xml/photo 1+2.txt")
    body = b"through the XML API"
    url = blob.generate_signed_url(version="v4", expiration=datetime.timedelta(minutes=10), method="PUT",
                                   content_type="text/plain", credentials=credentials, api_access_endpoint=base)
    put = requests.put(url, data=body, headers={"Content-Type": "text/plain"})
    check("XML: V4 signed PUT upload (blob.generate_signed_url)", put.status_code == 200,
          f"{put.status_code} {put.text[:300]}")
    url = blob.generate_signed_url(version="v4", expiration=datetime.timedelta(minutes=10), credentials=credentials,
                                   api_access_endpoint=base)
    got = requests.get(url)
    check("XML: V4 signed GET download", got.status_code == 200 and got.content == body,
          f"{got.status_code} {got.text[:300]}")
    bad = requests.get(tamper(url))
    check("XML: a tampered signature is 403 with <Code>SignatureDoesNotMatch</Code>",
          bad.status_code == 403 and xml_code(bad) == "SignatureDoesNotMatch", f"{bad.status_code} {bad.text[:300]}")
    url = blob.generate_signed_url(version="v2", expiration=datetime.timedelta(minutes=10), credentials=credentials,
                                   api_access_endpoint=base)
    got = requests.get(url)
    check("XML: V2 signed GET download", got.status_code == 200 and got.content == body,
          f"{got.status_code} {got.text[:300]}")
    url = blob.generate_signed_url(version="v4", expiration=datetime.timedelta(minutes=10), credentials=credentials,
                                   api_access_endpoint=base, method="RESUMABLE")
    start = requests.post(url, headers={"x-goog-resumable": "start"})
    location = start.headers.get("Location", "")
    check("XML: V4 signed resumable start is 201 with a Location", start.status_code == 201 and location,
          f"{start.status_code} {start.text[:300]}")
    if location:
        payload = os.urandom(200_000)
        done = requests.put(location, data=payload)
        got = requests.get(object_path(base + "/download/storage/v1", "xml/photo 1+2.txt"))
        check("XML: the resumable session stores the data", done.status_code == 200 and got.content == payload,
              f"{done.status_code} {done.text[:200]}")
    past = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)).strftime("%Y%m%dT%H%M%SZ")
    expired = _signing.generate_signed_url_v4(
        credentials, f"/{BUCKET}/xml/photo%201%2B2.txt", expiration=60, api_access_endpoint=base, method="GET",
        _request_timestamp=past)
    got = requests.get(expired)
    check("XML: an expired URL is 400 with <Code>ExpiredToken</Code>",
          got.status_code == 400 and xml_code(got) == "ExpiredToken", f"{got.status_code} {got.text[:300]}")


def without_keys(base, credentials):
    name = "open.txt"
    requests.post(f"{base}/upload/storage/v1/b/{BUCKET}/o", params={"uploadType": "media", "name": name}, data=b"open")
    url = v4(credentials, base, object_path("/download/storage/v1", name))
    got = requests.get(tamper(url))
    check("with no key configured, a tampered signature is accepted (documented)",
          got.status_code == 200 and got.content == b"open", f"{got.status_code} {got.text[:200]}")
    past = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=2)).strftime("%Y%m%dT%H%M%SZ")
    expired = _signing.generate_signed_url_v4(
        credentials, object_path("/download/storage/v1", name), expiration=60, api_access_endpoint=base,
        method="GET", _request_timestamp=past)
    got = requests.get(expired)
    check("with no key configured, an expired URL is still 400 ExpiredToken",
          got.status_code == 400 and error_reason(got) == "ExpiredToken", f"{got.status_code}")


def main():
    binary = emulator_binary()
    credentials, public_pem = make_key()
    folder = tempfile.mkdtemp(prefix="signed-urls-suite-")
    processes = []
    try:
        key_file = os.path.join(folder, "signer.pem")
        with open(key_file, "w") as handle:
            handle.write(public_pem)
        process, base = start_emulator(
            binary, os.path.join(folder, "keyed"), "--signing-key", key_file, "--hmac-key", f"{HMAC_ID}:{HMAC_SECRET}")
        processes.append(process)
        with_keys(base, credentials)
        xml_paths(base, credentials)
        process, base = start_emulator(binary, os.path.join(folder, "open"))
        processes.append(process)
        without_keys(base, credentials)
    except Exception as error:  # a crash of the suite is a failed check, with the closing line
        check("the suite ran to the end", False, repr(error))
    finally:
        for process in processes:
            process.terminate()
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(folder, ignore_errors=True)
    print(f"{PASSED} passed, {FAILED} failed")
    return 1 if FAILED else 0


if __name__ == "__main__":
    sys.exit(main())
