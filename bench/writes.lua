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
--
-- With WRK_SLOW_MS in the environment (wrk hands its arguments to each thread's `init`, not to `done`), the run
-- ends with a line `slow: N requests over T ms, slowest S ms`, counted from wrk's own latency record in `done`,
-- after the clock (nothing is spent on it during the run). Give such a run a `--timeout` above the threshold: wrk
-- counts a request still waiting after 2 s as a socket error.

local lists = 1000
local prefix = "w"
local id_prefix = "t"
local counter = 0
local thread_id = 0
local slow_ms = tonumber(os.getenv("WRK_SLOW_MS"))
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

function done(summary, latency, requests)
  local threshold = slow_ms
  if not threshold then return end
  local over = 0
  -- wrk's record holds each latency (µs) with how many requests took it.
  for i = 1, #latency do
    local value, count = latency(i)
    if value > threshold * 1000 then over = over + count end
  end
  io.write(string.format("slow: %d requests over %d ms, slowest %.1f ms\n", over, threshold, latency.max / 1000))
end
