#!/usr/bin/env bash
# Throughput of POST /auth/authenticate-client: gunicorn on loopback, load from wrk.
#
#   bench/authenticate_client.sh                  # 30 s, 16 connections, 2 workers x 4 threads
#   WORKERS=4 THREADS=2 CONNECTIONS=32 DURATION=60s bench/authenticate_client.sh
#
# Needs PostgreSQL on 127.0.0.1:5432 (user postgres, trust), Redis on 127.0.0.1:6379, the
# project's .venv (bin/test creates it) and wrk. Uses the database trading_bench (created and
# migrated if absent) and Redis database 1. Logs go to bench/results/ (not committed).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

DURATION=${DURATION:-30s}
seconds=${DURATION%s}   # "30" or "30s"
DURATION=${seconds}s
CONNECTIONS=${CONNECTIONS:-16}
WRK_THREADS=${WRK_THREADS:-2}
WORKERS=${WORKERS:-2}
THREADS=${THREADS:-4}
PORT=${PORT:-8099}
CLIENTS=${CLIENTS:-10000}
PROFILE=${PROFILE:-}   # set to a file name to record a py-spy flame graph of one worker

export DATABASE_URL=${BENCH_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/trading_bench}
export REDIS_URL=${BENCH_REDIS_URL:-redis://127.0.0.1:6379/1}
export SECRET_KEY=${SECRET_KEY:-bench-only-insecure-secret-key}
export SANDBOX=true
export LOG_LEVEL=${LOG_LEVEL:-WARNING}
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
export CLIENTS

if ! command -v wrk >/dev/null; then
    echo "wrk is not installed; install it with: apt-get update && apt-get install -y wrk" >&2
    exit 1
fi
if [ ! -x .venv/bin/gunicorn ]; then
    echo "no .venv: run bin/test once (or python3 -m venv .venv && .venv/bin/pip install -e .)" >&2
    exit 1
fi
case "$DATABASE_URL" in
    postgres://*@127.0.0.1:*|postgres://*@localhost:*) ;;
    *) echo "the bench runs on loopback only: $DATABASE_URL" >&2; exit 1 ;;
esac

mkdir -p bench/results
log=bench/results/gunicorn-$(date +%Y%m%d-%H%M%S).log

db=${DATABASE_URL##*/}
if ! psql -h 127.0.0.1 -U postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$db'" | grep -q 1; then
    psql -h 127.0.0.1 -U postgres -qc "CREATE DATABASE $db"
fi
.venv/bin/python manage.py migrate --no-input -v 0
API_KEY=$(.venv/bin/python manage.py create_merchant --name bench --verified |
    .venv/bin/python -c 'import json, sys; print(json.load(sys.stdin)["apiKey"])')
export API_KEY

if curl -s -o /dev/null "http://127.0.0.1:$PORT/"; then
    echo "something already listens on 127.0.0.1:$PORT; set PORT" >&2
    exit 1
fi
others=$(pgrep -c -x wrk || true)
[ "$others" = 0 ] || echo "warning: $others other wrk process(es) running; figures will be shared" >&2

.venv/bin/gunicorn config.wsgi:application \
    --bind "127.0.0.1:$PORT" --workers "$WORKERS" --threads "$THREADS" --worker-class gthread \
    --backlog 2048 --log-level warning >"$log" 2>&1 &
gunicorn_pid=$!
stop() {
    kill "$gunicorn_pid" 2>/dev/null || true
    wait "$gunicorn_pid" 2>/dev/null || true
}
trap stop EXIT

for _ in $(seq 1 60); do
    curl -sf "http://127.0.0.1:$PORT/health" >/dev/null && break
    kill -0 "$gunicorn_pid" 2>/dev/null || { cat "$log"; echo "gunicorn exited" >&2; exit 1; }
    sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/health" >/dev/null || { cat "$log"; exit 1; }

# One call to check the key and body, then a short warm-up (imports, pools, caches).
check=$(curl -s -X POST "http://127.0.0.1:$PORT/auth/authenticate-client" \
    -H "api-key: $API_KEY" -H 'Content-Type: application/json' \
    -d '{"clientPlatformId":"76561197960265729","clientTradeUrl":"https://steamcommunity.com/tradeoffer/new/?partner=1&token=Ab3_x-Z9"}')
echo "$check" | grep -q '"success":true' || { echo "$check"; cat "$log"; exit 1; }
wrk -t "$WRK_THREADS" -c "$CONNECTIONS" -d 5s -s bench/authenticate_client.lua \
    "http://127.0.0.1:$PORT/auth/authenticate-client" >/dev/null

profiler_pid=
if [ -n "$PROFILE" ]; then
    worker=$(pgrep -P "$gunicorn_pid" | head -n1)
    py_spy=${PY_SPY:-py-spy}
    "$py_spy" record --pid "$worker" --duration 20 --rate 200 --output "$PROFILE" \
        --format "${PROFILE_FORMAT:-flamegraph}" >/dev/null 2>&1 &
    profiler_pid=$!
fi

echo "== $(date -u +%Y-%m-%dT%H:%M:%SZ) $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg);" \
    "gunicorn gthread ${WORKERS}x${THREADS}; wrk -t$WRK_THREADS -c$CONNECTIONS -d$DURATION;" \
    "$CLIENTS clients"
# CPU shares over the run, sampled from /proc 2 s before its end (while wrk is still running).
cpu_before=$(mktemp) cpu_after=$(mktemp)
.venv/bin/python bench/cpu_share.py snap "$cpu_before"
(sleep $((seconds - 2)) && .venv/bin/python bench/cpu_share.py snap "$cpu_after") &
sampler_pid=$!
wrk -t "$WRK_THREADS" -c "$CONNECTIONS" -d "$DURATION" --latency -s bench/authenticate_client.lua \
    "http://127.0.0.1:$PORT/auth/authenticate-client"
wait "$sampler_pid"
.venv/bin/python bench/cpu_share.py diff "$cpu_before" "$cpu_after" $((seconds - 2)) \
    "$gunicorn_pid" $$
rm -f "$cpu_before" "$cpu_after"
[ -z "$profiler_pid" ] || wait "$profiler_pid" || true
