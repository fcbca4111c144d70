-- Uploads of 1 KiB, each to a new name (per thread and counter). UPLOAD_KIND picks the protocol:
-- media (default: uploadType=media), multipart (metadata + data, uploadType=multipart) or
-- firebase (a /v0 raw upload, as the Firebase SDKs send it).
local kind = os.getenv("UPLOAD_KIND") or "media"
local counter = 0
local payload = string.rep("x", 1024)
local id = 0
setup = function(thread)
  id = id + 1
  thread:set("id", id)
end
request = function()
  counter = counter + 1
  local unique = wrk.thread:get("id") .. "-" .. counter
  if kind == "multipart" then
    local body = "--b\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"mp/" .. unique
      .. "\",\"metadata\":{\"k\":\"v\"}}\r\n--b\r\nContent-Type: application/octet-stream\r\n\r\n" .. payload .. "\r\n--b--\r\n"
    return wrk.format("POST", "/upload/storage/v1/b/bench/o?uploadType=multipart",
      {["Content-Type"] = "multipart/related; boundary=b"}, body)
  elseif kind == "firebase" then
    return wrk.format("POST", "/v0/b/bench/o?name=fb%2F" .. unique, {["Content-Type"] = "application/octet-stream",
      ["X-Goog-Upload-Protocol"] = "raw"}, payload)
  end
  return wrk.format("POST", "/upload/storage/v1/b/bench/o?uploadType=media&name=up%2F" .. unique,
    {["Content-Type"] = "application/octet-stream"}, payload)
end
