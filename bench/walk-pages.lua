-- walk-pages.lua: clients walking a list page by page, statelessly, with the `page.next` cursor.
--
--   wrk -t2 -c64 -d30s --latency -s bench/walk-pages.lua http://127.0.0.1:8080 -- [list] [limit]
--
-- Arguments after `--`: the list (default `demo`) and the page size (default 20).
--
-- Every connection is one walker: it asks for the first page (`GET /v1/lists/{list}?limit=N`), then for
-- `?limit=N&after=<page.next>` until `page.next` is null, then starts again from the first page. wrk does not
-- say which connection a response belongs to, so each thread keeps a queue of cursors to follow: a 200 pushes
-- its `next` cursor, the next request of the thread pops one (or starts a new walk when there is none). Every
-- walk therefore has exactly one request in flight, whatever -c is.
--
-- Expected status: 200. Anything else (and wrk's socket errors and timeouts) is an error; the walk that got it
-- restarts from the first page. At the end a line `walk-pages: pages=… walks=… unexpected=… statuses=…` sums
-- the threads (scripts/bench.py parses it).

local list, limit = "demo", 20
local queue, head, tail = {}, 1, 0
pages, walks, unexpected, statuses = 0, 0, 0, {}

local threads = {}
function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  list = args[1] or list
  limit = tonumber(args[2]) or limit
end

local function escape(s)
  return (s:gsub("[^%w%-%._~]", function(c) return string.format("%%%02X", string.byte(c)) end))
end

function request()
  local path = "/v1/lists/" .. list .. "?limit=" .. limit
  if head <= tail then
    path = path .. "&after=" .. escape(queue[head])
    queue[head] = nil
    head = head + 1
  end
  return wrk.format("GET", path)
end

function response(status, headers, body)
  if status ~= 200 then
    unexpected = unexpected + 1
    statuses[status] = (statuses[status] or 0) + 1
    return -- this walk ends; the next request starts a new one from the first page
  end
  pages = pages + 1
  -- `page` is the last member of the document: look for its `next` near the end of the body.
  local at = body:find('"page":{', math.max(1, #body - 4096), true) or 1
  local next = body:match('"next":"([^"]+)"', at)
  if next then
    tail = tail + 1
    queue[tail] = next
  else
    walks = walks + 1
  end
end

function done(summary, latency, requests)
  local p, w, u, s = 0, 0, 0, {}
  for _, thread in ipairs(threads) do
    p = p + thread:get("pages")
    w = w + thread:get("walks")
    u = u + thread:get("unexpected")
    for status, n in pairs(thread:get("statuses")) do s[status] = (s[status] or 0) + n end
  end
  local counts = {}
  for status, n in pairs(s) do table.insert(counts, status .. ":" .. n) end
  io.write(string.format("walk-pages: pages=%d walks=%d unexpected=%d statuses=%s\n", p, w, u,
    #counts > 0 and table.concat(counts, ",") or "-"))
end
