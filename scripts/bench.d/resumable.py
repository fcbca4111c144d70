"""Resumable uploads of SIZE MiB in CHUNK MiB chunks, one after another on one keep-alive
connection, for DURATION seconds (at least MIN_UPLOADS uploads).
Usage: resumable.py URL SIZE_MIB CHUNK_MIB DURATION [MIN_UPLOADS]
Prints, like parse_wrk.py: uploads/s p50_ms p99_ms MB/s failures uploads
(an upload's time runs from the session's start to the final answer)."""
import http.client
import os
import sys
import time
import urllib.parse

url, size_mib, chunk_mib, duration = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
minimum = int(sys.argv[5]) if len(sys.argv) > 5 else 3
parsed = urllib.parse.urlparse(url)
size, chunk = size_mib << 20, chunk_mib << 20
payload = memoryview(os.urandom(size))
connection = http.client.HTTPConnection(parsed.hostname, parsed.port)


def request(method, target, body=b"", headers=None):
    connection.request(method, target, body, headers or {})
    response = connection.getresponse()
    response.read()
    return response


times, failures, count = [], 0, 0
began = time.perf_counter()
while count < minimum or time.perf_counter() - began < duration:
    start = time.perf_counter()
    name = f"resumable-{os.getpid()}-{count}"
    response = request("POST", f"/upload/storage/v1/b/bench/o?uploadType=resumable&name={name}",
                       b"{}", {"Content-Type": "application/json", "X-Upload-Content-Length": str(size)})
    location = urllib.parse.urlparse(response.getheader("Location") or "")
    target = location.path + "?" + location.query
    ok = response.status == 200
    offset = 0
    while ok and offset < size:
        end = min(offset + chunk, size)
        response = request("PUT", target, payload[offset:end],
                           {"Content-Range": f"bytes {offset}-{end - 1}/{size}",
                            "Content-Type": "application/octet-stream"})
        ok = response.status in (200, 201) if end == size else response.status == 308
        offset = end
    failures += 0 if ok else 1
    times.append(time.perf_counter() - start)
    count += 1
elapsed = time.perf_counter() - began
times.sort()
p50 = times[len(times) // 2] * 1000
p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1000
print(f"{count / elapsed:.2f} {p50:.2f} {p99:.2f} {count * size / elapsed / 1e6:.0f} {failures} {count}")
