-- Firebase (/v0) raw uploads of 1 KiB, each to a new name (per thread and counter), as the
-- Firebase SDKs send them.
local counter = 0
local payload = string.rep("x", 1024)
local id = 0
setup = function(thread)
  id = id + 1
  thread:set("id", id)
end
request = function()
  counter = counter + 1
  local path = "/v0/b/bench/o?name=fb%2F" .. wrk.thread:get("id") .. "-" .. counter
  return wrk.format("POST", path, {["Content-Type"] = "application/octet-stream",
    ["X-Goog-Upload-Protocol"] = "raw"}, payload)
end
