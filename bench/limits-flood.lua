-- limits-flood.lua: one producer flooding one list with one-item writes, as fast as the server answers, under rate
-- limits (scripts/bench.py limits).
--
--   wrk -t2 -c64 -d10s -s bench/limits-flood.lua http://127.0.0.1:8080 -- <token> [list]
--
-- Every request is POST /v1/lists/{list}/ops ("flood" by default: create it first, with a section "s") with one
-- insertItems of a fresh id, carrying `Authorization: Bearer <token>`: one client, whatever the connection. Each
-- answer is counted: 200 (committed), 429 with a whole `Retry-After` of at least 1 (refused as API.md §6c says), or
-- anything else (unexpected, a 429 without its `Retry-After` included). The run ends with the line
-- `limits-flood: ok=N limited=M unexpected=K`.

local token = ""
local list = "flood"
local counter = 0
local threads = {}
-- Globals, not locals: `done` reads each thread's through `thread:get`.
ok, limited, unexpected = 0, 0, 0

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  token = args[1] or token
  list = args[2] or list
end

function request()
  counter = counter + 1
  local body = '{"ops":[{"op":"insertItems","section":"s","items":[{"id":"f' .. id .. '-' .. counter ..
      '","type":"row","data":{"n":' .. counter .. '}}]}]}'
  return wrk.format("POST", "/v1/lists/" .. list .. "/ops",
    { ["Content-Type"] = "application/json", ["Authorization"] = "Bearer " .. token }, body)
end

function response(status, headers, body)
  if status == 200 then
    ok = ok + 1
  elseif status == 429 then
    local retry = tonumber(headers["Retry-After"] or headers["retry-after"] or "")
    if retry and retry >= 1 and math.floor(retry) == retry then
      limited = limited + 1
    else
      unexpected = unexpected + 1
    end
  else
    unexpected = unexpected + 1
  end
end

function done(summary, latency, requests)
  local totals = { ok = 0, limited = 0, unexpected = 0 }
  for _, thread in ipairs(threads) do
    for name, _ in pairs(totals) do totals[name] = totals[name] + (thread:get(name) or 0) end
  end
  io.write(string.format("limits-flood: ok=%d limited=%d unexpected=%d\n", totals.ok, totals.limited,
    totals.unexpected))
end
