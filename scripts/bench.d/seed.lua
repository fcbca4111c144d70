-- Seeds the list bucket: each thread uploads its share of LIST_OBJECTS tiny objects, then idles
-- on cheap GETs. Names: p/<5-digit n>, so prefix p/0001 selects 100 of them.
local threads = {}
local total = tonumber(os.getenv("LIST_OBJECTS") or "100000")
setup = function(thread)
  table.insert(threads, thread)
  thread:set("index", #threads)
end
init = function(args)
  count = tonumber(os.getenv("SEED_THREADS") or "2")
  next_n = wrk.thread:get("index") - 1
end
request = function()
  if next_n < total then
    local n = next_n
    next_n = next_n + count
    return wrk.format("POST", string.format("/upload/storage/v1/b/listb/o?uploadType=media&name=p%%2F%05d", n), {}, "x")
  end
  return wrk.format("GET", "/storage/v1/b/listb")
end
