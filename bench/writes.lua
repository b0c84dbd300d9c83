-- writes.lua: producers inserting one item at a time into random lists, as fast as the server acknowledges.
--
--   wrk -t2 -c64 -d10s -s bench/writes.lua http://127.0.0.1:8080 -- [lists] [prefix] [id prefix] [prepared]
--
-- Every request is POST /v1/lists/{prefix}{k}/ops with one insertItems of a fresh id, k uniform in
-- 0..lists-1 (1,000 lists named w0.. by default: create them first). Ids are {id prefix}{thread}-{n} (id prefix
-- "t" by default: give each run on the same lists its own). Every answer must be 200: wrk counts any other as
-- "Non-2xx or 3xx responses" (no Lua `response` callback, which would make wrk hand every answer's headers to
-- Lua).
--
-- `prepared` requests per thread are built in `init`, before wrk starts its clock, so that the load generator,
-- which shares the machine with the server, spends on a write about what plain wrk spends on a page read;
-- past them each request is built when sent.

local lists = 1000
local prefix = "w"
local id_prefix = "t"
local counter = 0
local thread_id = 0
local prepared = {}
local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local function build()
  counter = counter + 1
  local list = math.random(0, lists - 1)
  local body = '{"ops":[{"op":"insertItems","section":"s","items":[{"id":"' .. id_prefix .. thread_id .. '-' .. counter ..
      '","type":"row","data":{"n":' .. counter .. '}}]}]}'
  return wrk.format("POST", "/v1/lists/" .. prefix .. list .. "/ops", { ["Content-Type"] = "application/json" }, body)
end

function init(args)
  lists = tonumber(args[1] or lists)
  prefix = args[2] or prefix
  id_prefix = args[3] or id_prefix
  thread_id = id
  math.randomseed(os.time() + thread_id)
  for i = 1, tonumber(args[4] or 0) do prepared[i] = build() end
end

local sent = 0

function request()
  sent = sent + 1
  local ready = prepared[sent]
  if ready then
    prepared[sent] = nil
    return ready
  end
  return build()
end
