-- writes.lua: producers inserting one item at a time into random lists, as fast as the server acknowledges.
--
--   wrk -t2 -c64 -d10s -s bench/writes.lua http://127.0.0.1:8080 -- [lists] [prefix] [id prefix]
--
-- Every request is POST /v1/lists/{prefix}{k}/ops with one insertItems of a fresh id, k uniform in
-- 0..lists-1 (1,000 lists named w0.. by default: create them first). Ids are {id prefix}{thread}-{n} (id prefix
-- "t" by default: give each run on the same lists its own). Every answer must be 200; anything else is counted
-- and printed at the end as `writes: unexpected=… statuses=…`.

local lists = 1000
local prefix = "w"
local id_prefix = "t"
local counter = 0
local thread_id = 0
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

function init(args)
  lists = tonumber(args[1] or lists)
  prefix = args[2] or prefix
  id_prefix = args[3] or id_prefix
  thread_id = id
  unexpected = 0
  statuses = {}
  math.randomseed(os.time() + thread_id)
end

function request()
  counter = counter + 1
  local list = math.random(0, lists - 1)
  local body = '{"ops":[{"op":"insertItems","section":"s","items":[{"id":"' .. id_prefix .. thread_id .. '-' .. counter ..
      '","type":"row","data":{"n":' .. counter .. '}}]}]}'
  return wrk.format("POST", "/v1/lists/" .. prefix .. list .. "/ops", { ["Content-Type"] = "application/json" }, body)
end

function response(status, headers, body)
  if status ~= 200 then
    unexpected = unexpected + 1
    statuses[status] = (statuses[status] or 0) + 1
  end
end

function done(summary, latency, requests)
  local total = 0
  local seen = {}
  for _, thread in ipairs(threads) do
    total = total + thread:get("unexpected")
    for status, count in pairs(thread:get("statuses")) do seen[status] = (seen[status] or 0) + count end
  end
  local parts = {}
  for status, count in pairs(seen) do table.insert(parts, status .. ":" .. count) end
  io.write(string.format("writes: unexpected=%d statuses=%s\n", total, table.concat(parts, ",")))
end
