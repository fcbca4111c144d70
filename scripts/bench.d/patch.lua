-- PATCH metadata with a changing custom value.
local counter = 0
request = function()
  counter = counter + 1
  local body = '{"metadata":{"bench":"' .. counter .. '"}}'
  return wrk.format("PATCH", nil, {["Content-Type"] = "application/json"}, body)
end
