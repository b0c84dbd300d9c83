-- sessions.lua: clients creating sessions, extending their window and polling for changes.
--
--   wrk -t2 -c64 -d30s --latency -s bench/sessions.lua http://127.0.0.1:8080 -- [list] [limit] [extends] [polls] [keep]
--
-- Arguments after `--` (all optional): the list (`demo`), the page size (20), how many `extend=next` pages a
-- client loads after the first (4), how many plain change polls it then makes (4), and `keep` = 1 to leave the
-- session behind instead of deleting it (sessions then accumulate up to `sessions.capacity`).
--
-- One client's flow, one request in flight at a time:
--   POST /v1/lists/{list}/sessions {"limit":N}                       201, keeps `session` and `version`
--   GET  /v1/sessions/{id}/changes?since=V&extend=next&limit=N       200, `version` becomes the next `since`
--        (repeated `extends` times, or until `page.hasNext` is false)
--   GET  /v1/sessions/{id}/changes?since=V                           200 (repeated `polls` times)
--   DELETE /v1/sessions/{id}                                         204, then a new client starts
-- wrk does not say which connection a response belongs to; the session id in every answer does. Each thread
-- keeps its clients in a table keyed by session id and a queue of clients whose next step is due: a response
-- pushes its client, a request pops one (or creates a new session when the queue is empty). So each -c
-- connection drives one client at a time, and no session ever has two requests in flight.
--
-- Expected statuses: 201, 200, 204. Anything else is an error and ends that client (the next request creates a
-- new session): 409 since-mismatch and 404 session-not-found are handled that way, but they are not expected
-- here (versions are followed exactly, sessions are deleted by their client), so they count as errors too.
-- At the end a line `sessions: creates=… extends=… polls=… deletes=… unexpected=… statuses=…` sums the threads.

local list, limit, extends, polls, keep = "demo", 20, 4, 4, false
local clients = {}                 -- session id -> { version, extends, polls, hasNext }
local queue, head, tail = {}, 1, 0 -- session ids whose next step is due
local create_body
creates, extended, polled, deletes, unexpected, statuses = 0, 0, 0, 0, 0, {}

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  list = args[1] or list
  limit = tonumber(args[2]) or limit
  extends = tonumber(args[3]) or extends
  polls = tonumber(args[4]) or polls
  keep = args[5] == "1"
  create_body = '{"limit":' .. limit .. '}'
end

local json_headers = { ["Content-Type"] = "application/json" }

function request()
  while head <= tail do
    local id = queue[head]
    queue[head] = nil
    head = head + 1
    local client = clients[id]
    if client then
      local base = "/v1/sessions/" .. id
      if client.extends < extends and client.hasNext then
        client.extends = client.extends + 1
        return wrk.format("GET", base .. "/changes?since=" .. client.version .. "&extend=next&limit=" .. limit)
      elseif client.polls < polls then
        client.polls = client.polls + 1
        return wrk.format("GET", base .. "/changes?since=" .. client.version)
      end
      clients[id] = nil
      if not keep then
        return wrk.format("DELETE", base)
      end
    end
  end
  return wrk.format("POST", "/v1/lists/" .. list .. "/sessions", json_headers, create_body)
end

function response(status, headers, body)
  if status == 204 then
    deletes = deletes + 1
    return
  end
  local id = (status == 200 or status == 201) and body:match('"session":"([^"]+)"')
  local version = id and body:match('"version":(%d+)')
  if not version then
    unexpected = unexpected + 1
    statuses[status] = (statuses[status] or 0) + 1
    return -- that client ends; its entry in `clients` is forgotten with it (the id is unknown here)
  end
  local client = clients[id]
  if client == nil then
    client = { extends = 0, polls = 0 }
    clients[id] = client
    creates = creates + 1
  elseif client.polls > 0 then
    polled = polled + 1
  else
    extended = extended + 1
  end
  client.version = version
  local at = body:find('"page":{', math.max(1, #body - 512), true) or 1
  client.hasNext = body:find('"hasNext":true', at, true) ~= nil
  tail = tail + 1
  queue[tail] = id
end

function done(summary, latency, requests)
  local total = { creates = 0, extended = 0, polled = 0, deletes = 0, unexpected = 0 }
  local s = {}
  for _, thread in ipairs(threads) do
    for name in pairs(total) do total[name] = total[name] + thread:get(name) end
    for status, n in pairs(thread:get("statuses")) do s[status] = (s[status] or 0) + n end
  end
  local counts = {}
  for status, n in pairs(s) do table.insert(counts, status .. ":" .. n) end
  io.write(string.format("sessions: creates=%d extends=%d polls=%d deletes=%d unexpected=%d statuses=%s\n",
    total.creates, total.extended, total.polled, total.deletes, total.unexpected,
    #counts > 0 and table.concat(counts, ",") or "-"))
end
