-- wrk script: cycles through the requests of a file, one per line:
--   METHOD<TAB>PATH<TAB>HEADERS<TAB>BODY     (HEADERS as "k: v|k: v"; `{n}` in BODY becomes a
--   per-request counter, so bodies can be unique), and prints one JSON line when done.
local requests = {}
local counter = 0
local thread_id = 0
local threads = {}

function setup(thread)
  thread_id = thread_id + 1
  thread:set("id", thread_id)
  table.insert(threads, thread)
end

-- With WRK_DELAY_MS set, each request waits a random 0 to twice that many milliseconds before it
-- is sent: a paced load of about connections / WRK_DELAY_MS * 1000 requests a second, spread in
-- time, instead of a closed loop at saturation.
local pause = tonumber(os.getenv("WRK_DELAY_MS") or "")
if pause then
  function delay()
    return math.floor(math.random() * 2 * pause)
  end
end

function init(args)
  math.randomseed(id * 7919 + os.time())
  for line in io.lines(os.getenv("WRK_REQUESTS")) do
    local method, path, headers, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t?(.*)$")
    local parsed = {["Content-Type"] = "application/json"}
    for pair in string.gmatch(headers, "[^|]+") do
      local key, value = pair:match("^%s*([^:]+):%s*(.*)$")
      parsed[key] = value
    end
    table.insert(requests, {method = method, path = path, headers = parsed, body = body})
  end
end

-- Each thread walks its own slice of the file, so a request (a listing to buy, say) is sent
-- once until the slice wraps around.
function request()
  local threads_total = tonumber(os.getenv("WRK_THREADS") or "1")
  local slice = math.max(1, math.floor(#requests / threads_total))
  local r = requests[((id - 1) * slice + counter) % #requests + 1]
  counter = counter + 1
  local body = nil
  if r.body ~= "" then
    body = r.body:gsub("{n}", tostring(id * 10000000 + counter))
  end
  return wrk.format(r.method, r.path, r.headers, body)
end

function done(summary, latency, requests_)
  -- Socket errors only: answers outside 2xx are "non_2xx" (the report adds the two).
  local errors = summary.errors.connect + summary.errors.read + summary.errors.write
    + summary.errors.timeout
  io.write(string.format(
    '{"requests": %d, "seconds": %.3f, "rps": %.1f, "p50_ms": %.2f, "p95_ms": %.2f, '
      .. '"p99_ms": %.2f, "max_ms": %.2f, "non_2xx": %d, "errors": %d}\n',
    summary.requests, summary.duration / 1e6, summary.requests / (summary.duration / 1e6),
    latency:percentile(50) / 1000, latency:percentile(95) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, summary.errors.status, errors))
end
