-- Multipart (metadata + data) uploads of 1 KiB, each to a new name (per thread and counter).
local counter = 0
local payload = string.rep("x", 1024)
local id = 0
setup = function(thread)
  id = id + 1
  thread:set("id", id)
end
request = function()
  counter = counter + 1
  local name = "mp/" .. wrk.thread:get("id") .. "-" .. counter
  local body = "--b\r\nContent-Type: application/json; charset=UTF-8\r\n\r\n{\"name\":\"" .. name
    .. "\",\"metadata\":{\"k\":\"v\"}}\r\n--b\r\nContent-Type: application/octet-stream\r\n\r\n" .. payload .. "\r\n--b--\r\n"
  return wrk.format("POST", "/upload/storage/v1/b/bench/o?uploadType=multipart",
    {["Content-Type"] = "multipart/related; boundary=b"}, body)
end
