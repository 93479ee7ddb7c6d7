-- wrk script: POST /auth/authenticate-client with the bench merchant's key (env API_KEY).
-- Each request names one of CLIENTS end users (env, default 10000), round robin, as a merchant's
-- traffic would; CLIENTS=1 sends every request for the same client (one hot row).

local api_key = os.getenv("API_KEY") or error("API_KEY is not set")
local clients = tonumber(os.getenv("CLIENTS") or "10000")
local counter = 0
local thread_offset = 0

-- Platform ids are 76561197960265728 + partner: past 2^53, so built as text.
local function body(partner)
  return string.format(
    '{"clientPlatformId":"765611979%08d",' ..
    '"clientTradeUrl":"https://steamcommunity.com/tradeoffer/new/?partner=%d&token=Ab3_x-Z9",' ..
    '"clientData":{"totalWager":1200.50,"kycLevel":2}}',
    60265728 + partner, partner)
end

local thread_count = 0
function setup(thread)
  thread:set("thread_offset", thread_count * 7919)
  thread_count = thread_count + 1
end

wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["api-key"] = api_key

function request()
  counter = counter + 1
  local partner = ((counter + thread_offset) % clients) + 1
  return wrk.format(nil, nil, nil, body(partner))
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local non2xx = summary.errors.status
  io.write(string.format(
    "RESULT requests=%d seconds=%.1f rps=%.1f p50_ms=%.2f p90_ms=%.2f p99_ms=%.2f " ..
    "p999_ms=%.2f max_ms=%.2f non2xx=%d socket_errors=%d\n",
    summary.requests, seconds, summary.requests / seconds,
    latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency:percentile(99.9) / 1000, latency.max / 1000,
    non2xx, summary.errors.connect + summary.errors.read + summary.errors.write +
    summary.errors.timeout))
end
