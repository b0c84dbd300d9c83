-- write-and-poll.lua: a producer writing at a steady rate while every other connection long-polls a session.
--
--   wrk -t2 -c64 -d30s --timeout 40s --latency -s bench/write-and-poll.lua http://127.0.0.1:8080 -- [list] [writes/s] [wait] [limit]
--
-- Arguments after `--` (all optional): the list (`demo`), the write rate (20 writes/s), the long-poll `wait`
-- (10 s) and the session page size (20). Give wrk a --timeout longer than `wait`: wrk counts a request still
-- open after --timeout (2 s by default) as a timeout error.
--
-- The producer: the first wrk thread holds one write token. Whichever of its connections asks for a request
-- when the token is free takes it and sends, at the next slot of the rate (wrk's delay()), one atomic write:
--   POST /v1/lists/{list}/ops  {"ops":[{"op":"insertItems","section":"day-0","before":"m-1","items":[load-…]},
--                                      {"op":"updateItems","items":[m-2 edited]},
--                                      {"op":"removeItems","ids":[the load item written 50 writes ago]}]}
-- so the list keeps its size (the demo list's `day-0` starts with m-1; m-2 is a message; pass another list
-- only if it has those ids). One write is in flight at a time: writes are serialised by the server anyway,
-- and the producer knows which items exist. The rate holds while a write takes less than 1/rate.
--
-- The pollers: every other request belongs to a client that creates a session
-- (POST /v1/lists/{list}/sessions {"limit":N}) and then long-polls it forever,
-- GET /v1/sessions/{id}/changes?since=V&wait=W, taking each answer's `version` as the next `since`. Each write
-- wakes every waiting poll. Clients are found again by the session id in each answer (wrk does not say which
-- connection answered), queued, and the next request pops one (or creates a new client when none is due).
--
-- Expected statuses: 200 (writes, polls), 201 (session creation). Anything else counts as an error; a poller
-- that gets one is replaced by a new client, the producer goes on with its next write. At the end a line
-- `write-and-poll: writes=… creates=… wakes=… timeouts=… unexpected=… statuses=… wake-lag-ms p50=… p99=…`
-- sums the threads (wakes: polls answered with a newer version; timeouts: polls answered after `wait` with
-- nothing new; wake-lag: from sending a write to a poll answering with its version, measured by the first
-- thread's pollers, which share the producer's clock and state). wrk's own latency figures mix writes with
-- polls held until the next write, so they show the write interval rather than the server's speed.

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } quire_timespec;
  int clock_gettime(int clock, quire_timespec *ts);
]]
local timespec = ffi.new("quire_timespec")
local function now_ms()
  ffi.C.clock_gettime(1, timespec) -- CLOCK_MONOTONIC
  return tonumber(timespec.tv_sec) * 1000 + tonumber(timespec.tv_nsec) / 1e6
end

local list, rate, wait, limit = "demo", 20, 10, 20
local clients = {}                 -- session id -> version
local queue, head, tail = {}, 1, 0 -- session ids whose next poll is due
local create_body
local json_headers = { ["Content-Type"] = "application/json" }

-- The producer (thread 1 only): token "ready" -> "scheduled" (a delay() took it) -> "inflight" -> "ready".
producer = false
local token, next_write_at, sent_at = "ready", 0, 0
local prefix, written, keep = "", 0, 50
local live, live_head, live_tail = {}, 1, 0 -- load items written and confirmed, oldest first
local pending_insert, pending_remove
local sent_times = {}  -- version written -> when its write was sent (ms)
lags = {}              -- producer thread: ms from a write being sent to a poll answering with its version

writes, creates, wakes, timeouts, unexpected, statuses = 0, 0, 0, 0, 0, {}

local threads = {}
function setup(thread)
  thread:set("producer", #threads == 0)
  table.insert(threads, thread)
end

function init(args)
  list = args[1] or list
  rate = tonumber(args[2]) or rate
  wait = tonumber(args[3]) or wait
  limit = tonumber(args[4]) or limit
  create_body = '{"limit":' .. limit .. '}'
  -- ids unique to this run, so that runs against the same server never collide
  prefix = string.format("load-%x-%d-", math.floor(now_ms()) % 0x10000000, math.random(1000000))
  next_write_at = now_ms()
end

function delay()
  if producer then
    local now = now_ms()
    if token == "inflight" and now - sent_at > (wait + 30) * 1000 then
      token = "ready" -- its answer was lost (e.g. counted as some other request's error): write again
    end
    if token == "ready" then
      token = "scheduled"
      -- wrk's timers have millisecond steps and may fire up to 1 ms early: round up, so that the request()
      -- that follows finds the write due (otherwise it polls, and the write waits for another request)
      return math.max(0, math.ceil(next_write_at - now) + 1)
    end
  end
  return 0
end

local function write_request()
  token, sent_at = "inflight", now_ms()
  next_write_at = math.max(next_write_at + 1000 / rate, sent_at - 1000) -- steady slots, no catch-up burst
  written = written + 1
  pending_insert = prefix .. written
  local ops = {
    '{"op":"insertItems","section":"day-0","before":"m-1","items":[{"id":"' .. pending_insert ..
    '","type":"message","data":{"from":"wrk","text":"Load ' .. written .. '"}}]}',
    '{"op":"updateItems","items":[{"id":"m-2","type":"message","data":{"from":"Grace","text":"Edited ' ..
    written .. '"}}]}',
  }
  pending_remove = nil
  if live_tail - live_head + 1 >= keep then
    pending_remove = live[live_head]
    live[live_head] = nil
    live_head = live_head + 1
    table.insert(ops, '{"op":"removeItems","ids":["' .. pending_remove .. '"]}')
  end
  return wrk.format("POST", "/v1/lists/" .. list .. "/ops", json_headers, '{"ops":[' .. table.concat(ops, ",") .. ']}')
end

function request()
  if producer and token == "scheduled" and now_ms() >= next_write_at - 1 then
    return write_request()
  end
  while head <= tail do
    local id = queue[head]
    queue[head] = nil
    head = head + 1
    local version = clients[id]
    if version then
      return wrk.format("GET", "/v1/sessions/" .. id .. "/changes?since=" .. version .. "&wait=" .. wait)
    end
  end
  return wrk.format("POST", "/v1/lists/" .. list .. "/sessions", json_headers, create_body)
end

local function failed(status)
  unexpected = unexpected + 1
  statuses[status] = (statuses[status] or 0) + 1
end

function response(status, headers, body)
  local id = (status == 200 or status == 201) and body:match('"session":"([^"]+)"')
  if id then
    local version = body:match('"version":(%d+)')
    local previous = clients[id]
    if previous == nil then
      creates = creates + 1
    elseif previous == version then
      timeouts = timeouts + 1
    else
      wakes = wakes + 1
      if producer and #lags < 200000 then
        -- a waiter may be answered before the writer: then the write in flight is the one it saw
        local sent = sent_times[version] or (token == "inflight" and sent_at)
        if sent then lags[#lags + 1] = now_ms() - sent end
      end
    end
    clients[id] = version
    tail = tail + 1
    queue[tail] = id
    return
  end
  if status == 200 then
    -- only a write is answered 200 without a session (even one whose token was given back after an error
    -- that looked like its answer)
    if token == "inflight" then token = "ready" end
    writes = writes + 1
    local version = body:match('"version":(%d+)')
    if version then sent_times[version] = sent_at end
    if pending_insert then
      live_tail = live_tail + 1
      live[live_tail] = pending_insert
      pending_insert = nil
    end
    return
  end
  if producer and token == "inflight" and not body:find("since-mismatch", 1, true) and
      not body:find("session-not-found", 1, true) then
    -- the write's answer, or maybe a poller's (503 overloaded, 500 internal look the same): the producer goes on
    token = "ready"
    pending_insert = nil -- the removed item may still be there; it is left behind rather than removed twice
    failed(status)
    return
  end
  failed(status) -- a poller's error: that client ends, a new one is created by the next request
end

function done(summary, latency, requests)
  local total = { writes = 0, creates = 0, wakes = 0, timeouts = 0, unexpected = 0 }
  local s = {}
  for _, thread in ipairs(threads) do
    for name in pairs(total) do total[name] = total[name] + thread:get(name) end
    for status, n in pairs(thread:get("statuses")) do s[status] = (s[status] or 0) + n end
  end
  local counts = {}
  for status, n in pairs(s) do table.insert(counts, status .. ":" .. n) end
  local l = threads[1] and threads[1]:get("lags") or {}
  table.sort(l)
  local function percentile(p) return #l > 0 and l[math.max(1, math.ceil(#l * p / 100))] or 0 end
  io.write(string.format("write-and-poll: writes=%d creates=%d wakes=%d timeouts=%d unexpected=%d statuses=%s " ..
    "wake-lag-ms p50=%.2f p99=%.2f max=%.2f (%d samples, first thread's pollers)\n",
    total.writes, total.creates, total.wakes, total.timeouts, total.unexpected,
    #counts > 0 and table.concat(counts, ",") or "-", percentile(50), percentile(99), percentile(100), #l))
end
