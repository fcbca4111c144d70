-- Media uploads of 1 KiB, each to a new name (per thread and counter).
local counter = 0
local payload = string.rep("x", 1024)
local id = 0
setup = function(thread)
  id = id + 1
  thread:set("id", id)
end
request = function()
  counter = counter + 1
  local path = "/upload/storage/v1/b/bench/o?uploadType=media&name=up%2F" .. wrk.thread:get("id") .. "-" .. counter
  return wrk.format("POST", path, {["Content-Type"] = "application/octet-stream"}, payload)
end
