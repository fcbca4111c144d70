-- Fills bucket "scale" with OBJECTS tiny objects through the JSON API (media uploads), names
-- p/<4-digit thousand>/<7-digit n>; each wrk thread takes every THREADS-th n and stops once its
-- share is written. A failed upload stops the run with a message.
local threads = {}
setup = function(thread)
  table.insert(threads, thread)
  thread:set("index", #threads)
end
init = function(args)
  total = tonumber(os.getenv("OBJECTS") or "1000")
  step = tonumber(os.getenv("THREADS") or "2")
  next_n = wrk.thread:get("index") - 1
end
request = function()
  if next_n < total then
    local n = next_n
    next_n = next_n + step
    return wrk.format("POST", string.format(
      "/upload/storage/v1/b/scale/o?uploadType=media&name=p%%2F%04d%%2F%07d", math.floor(n / 1000), n), {}, "x")
  end
  return wrk.format("GET", "/storage/v1/b/scale")
end
response = function(status, headers, body)
  if status >= 300 then
    print("upload failed: " .. status .. " " .. body)
    wrk.thread:stop()
  end
  if next_n >= total then wrk.thread:stop() end
end
