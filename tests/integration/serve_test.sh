#!/usr/bin/env bash
# API tests against a running `lumen serve` on loopback: answers equal the
# CLI's JSON, hostile requests get clear 4xx errors, limits hold, tokens are
# checked, and the same suite runs with a PostgreSQL store when
# LUMEN_TEST_PG names a server.
# Usage: serve_test.sh LUMEN JSON_GET SHARED_DIR TEST_NAME [SCALE_WORKLOAD]
set -u
LUMEN=$1
JSON_GET=$2
SHARED=$3
NAME=$4
SCALE=${5:-}
WL=$SHARED/workloads
TMP=$(mktemp -d /tmp/lumen-st-XXXXXX)
PIDS=""
cleanup() {
  for p in $PIDS; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
cd "$TMP" || exit 1

SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
. "$SRCDIR/../../scripts/serve-lib.sh"
KIND=sqlite

stop_server() {
  kill "$SERVER" 2>/dev/null
  wait "$SERVER" 2>/dev/null
}
body_has() { grep -qF -- "$1" "$TMP/body" || fail "body lacks '$1': $(head -c 300 "$TMP/body")"; }
# The CLI's JSON and the server's agree but for how the workload is named.
strip_names() { sed -e 's/"path":"[^"]*",//g' -e 's/"id":"[^"]*","arch"/"arch"/g' "$1"; }
same_json() { # SERVER_BODY CLI_ARGS...
  local body=$1
  shift
  "$LUMEN" analyze "$@" --format json >"$TMP/cli.json" 2>"$TMP/cli.err" || fail "cli: $(cat "$TMP/cli.err")"
  strip_names "$body" >"$TMP/a.json"
  strip_names "$TMP/cli.json" >"$TMP/b.json"
  cmp -s "$TMP/a.json" "$TMP/b.json" || fail "the API and \`lumen analyze $*\` differ: $(cmp "$TMP/a.json" "$TMP/b.json")"
}

api_suite() {
  local DB=$1
  "$LUMEN" db import --db "$DB" -w "$WL/_mix/mix_MI300X_A1" -n "mi300 mix" >/dev/null || fail "import"
  start_server -w "$WL/vcopy/MI200" -w "$WL/_mix/mix_MI200" --db "$DB"
  get /api/health
  expect_code 200 health
  get /api/workloads
  expect_code 200 workloads
  [ "$("$JSON_GET" workloads.0.id <"$TMP/body")" = f0 ] || fail "f0"
  [ "$("$JSON_GET" workloads.1.name <"$TMP/body")" = _mix/mix_MI200 ] || fail "f1 name"
  [ "$("$JSON_GET" workloads.2.id <"$TMP/body")" = "db:mi300 mix" ] || fail "store entry: $(cat "$TMP/body")"
  grep -q '/work\|/tmp' "$TMP/body" && fail "a server path leaks: $(cat "$TMP/body")"
  get "/api/analysis?w=f0"
  expect_code 200 analysis
  cp "$TMP/body" "$TMP/s0.json"
  same_json "$TMP/s0.json" -w "$WL/vcopy/MI200"
  get "/api/analysis?w=f1&k=vec&norm=per_kernel&d=0:30"
  expect_code 200 filtered
  cp "$TMP/body" "$TMP/s1.json"
  same_json "$TMP/s1.json" -w "$WL/_mix/mix_MI200" -k vec --norm per_kernel -d 0:30
  get "/api/analysis?w=f0&compat=3.3&b=10"
  expect_code 200 compat
  cp "$TMP/body" "$TMP/s33.json"
  same_json "$TMP/s33.json" -w "$WL/vcopy/MI200" --compat 3.3 -b 10
  grep -q "Instr per kernel" "$TMP/s33.json" || fail "3.3 default normalization through the server"
  get "/api/analysis?w=f0&compat=2.0"
  expect_code 400 "unknown compat"
  get "/api/analysis?w=f1&base=f0&b=2&b=10"
  expect_code 200 comparison
  cp "$TMP/body" "$TMP/s2.json"
  same_json "$TMP/s2.json" -w "$WL/vcopy/MI200" -w "$WL/_mix/mix_MI200" -b 2 -b 10
  get "/api/analysis?w=db:mi300%20mix&norm=per_cycle"
  expect_code 200 store
  cp "$TMP/body" "$TMP/s3.json"
  same_json "$TMP/s3.json" -w "$WL/_mix/mix_MI300X_A1" --norm per_cycle
  # An exact kernel name, with regex characters in it.
  name='void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>) [clone .kd]'
  enc=$(printf '%s' "$name" | od -An -tx1 | tr -d ' \n' | sed 's/../%&/g')
  get "/api/analysis?w=f1&kn=$enc&b=0"
  expect_code 200 "exact kernel"
  [ "$("$JSON_GET" workloads.0.dispatches_selected <"$TMP/body")" = 8 ] || fail "kn selects 8 dispatches"
  get "/api/info?w=f1"
  expect_code 200 info
  [ "$("$JSON_GET" kernels.0.count <"$TMP/body")" -gt 0 ] || fail "info kernels"
  [ "$("$JSON_GET" gpus.0 <"$TMP/body")" = 2 ] || fail "info gpus"
  get "/api/roofline?w=f0"
  expect_code 200 roofline
  [ "$("$JSON_GET" ceilings.HBM <"$TMP/body")" = 1389.0227 ] || fail "roofline ceiling: $(cat "$TMP/body")"
  [ "$("$JSON_GET" points.0.calls <"$TMP/body")" = 3 ] || fail "roofline point"
  # One metric per dispatch: each value is what `lumen analyze -d N` shows.
  get "/api/series?w=f1&m=2.1.1&k=block_reduce"
  expect_code 200 series
  cp "$TMP/body" "$TMP/series.json"
  "$LUMEN" analyze -w "$WL/_mix/mix_MI200" -k block_reduce -b 0.2 --format json >"$TMP/list.json" || fail "cli list"
  for d in $(python3 -c 'import json,sys; print(" ".join(str(r["cells"][1]) for p in json.load(open(sys.argv[1]))["panels"] for t in p["tables"] if t["id"] == "0.2" for r in t["rows"] if "block_reduce" in r["cells"][2]))' "$TMP/list.json"); do
    "$LUMEN" analyze -w "$WL/_mix/mix_MI200" -d "$d" -b 2.1 --format json >"$TMP/one.json" || fail "cli -d $d"
    python3 - "$TMP/series.json" "$TMP/one.json" "$d" <<'PY' || fail "/api/series differs from lumen analyze -d $d"
import json, sys
series = json.load(open(sys.argv[1]))
one = json.load(open(sys.argv[2]))
d = int(sys.argv[3])
row = [r for p in one["panels"] for t in p["tables"] if t["id"] == "2.1" for r in t["rows"] if r["id"] == "2.1.1"][0]
point = [p for p in series["points"] if p["d"] == d][0]
assert point["v"] == row["cells"][1], (point, row["cells"])
assert series["name"] == row["cells"][0] and series["column"] == "Avg" and not series["downsampled"]
PY
  done
  [ "$("$JSON_GET" dispatches <"$TMP/series.json")" = 8 ] || fail "series: the kernels' dispatches: $(head -c 300 "$TMP/series.json")"
  get "/api/series?w=f1"
  expect_code 400 "series without a metric"
  body_has "m: which metric row"
  get "/api/series?w=f1&m=2.1.999"
  expect_code 404 "series of an unknown row"
  get "/api/series?w=f1&m=2.1.1&k=no-such-kernel"
  expect_code 400 "series that selects nothing"
  body_has "no dispatch matches"
  # Concurrent clients all get answers.
  for i in 1 2 3 4 5 6 7 8; do
    curl -s -o "$TMP/par$i" -w '%{http_code}\n' "${URL}api/analysis?w=f1&norm=per_second&b=$((i % 4 + 2))" >"$TMP/code$i" &
  done
  wait $(jobs -p | grep -v "$SERVER") 2>/dev/null
  for i in 1 2 3 4 5 6 7 8; do [ "$(cat "$TMP/code$i")" = 200 ] || fail "parallel request $i: $(cat "$TMP/code$i")"; done
  stop_server
}

case $NAME in
api)
  api_suite "$TMP/store.db"
  if [ -n "${LUMEN_TEST_PG:-}" ]; then
    KIND=postgresql
    "$LUMEN" db rm --db "$LUMEN_TEST_PG/test_serve" "mi300 mix" >/dev/null 2>&1
    api_suite "$LUMEN_TEST_PG/test_serve"
  else
    echo "LUMEN_TEST_PG is not set: PostgreSQL part skipped"
  fi
  ;;
layout)
  # Each folder in the semantics of the rocprofiler-compute that wrote it,
  # as the CLI reads it: a 3.3 folder with no compat= (panels, summary
  # cards, series), and a 3.0 one beside it; through the store too.
  F33=$SHARED/formats/rocprofiler-compute/bmm1_3.3.0_MI300X
  "$LUMEN" db import --db "$TMP/l.db" -w "$F33" -n bmm >/dev/null || fail "import"
  start_server -w "$F33" -w "$WL/vcopy/MI200" --db "$TMP/l.db"
  get "/api/analysis?w=f0&b=2&b=10"
  expect_code 200 "3.3 folder"
  cp "$TMP/body" "$TMP/a33.json"
  # (the server pages the 301-dispatch list: compare the metric panels)
  "$LUMEN" analyze -w "$F33" -b 2 -b 10 --format json >"$TMP/cli.json" 2>/dev/null
  python3 -c 'import json, sys
a, b = (json.load(open(f)) for f in sys.argv[1:])
m = lambda d: [p for p in d["panels"] if p["id"] != 0]
sys.exit(m(a) != m(b) or a["workloads"][0]["normalization"] != b["workloads"][0]["normalization"])' \
    "$TMP/a33.json" "$TMP/cli.json" || fail "3.3 folder: the API's panels differ from the CLI's"
  grep -q "Instr per kernel" "$TMP/a33.json" || fail "3.3 folder: not in 3.3 semantics"
  get "/api/analysis?w=f1&b=10"
  expect_code 200 "3.0 folder"
  grep -q "Instr per wave" "$TMP/body" || fail "3.0 folder: not in 3.0 semantics"
  get "/api/analysis?w=db:bmm&b=10"
  expect_code 200 "3.3 folder from the store"
  grep -q "Instr per kernel" "$TMP/body" || fail "3.3 folder from the store: not in 3.3 semantics"
  get "/api/summary?w=f0"
  expect_code 200 "3.3 folder summary"
  "$LUMEN" analyze -w "$F33" --summary --format json >"$TMP/cli.json" 2>/dev/null
  [ "$("$JSON_GET" summary.kernels_total <"$TMP/body")" = "$("$JSON_GET" summary.kernels_total <"$TMP/cli.json")" ] ||
    fail "summary cards differ from the CLI"
  ;;
hostile)
  start_server -w "$WL/vcopy/MI200"
  get "/api/analysis?w=f0&zz=1"
  expect_code 400 "unknown parameter"
  body_has "unknown parameter 'zz'"
  get "/api/analysis?w=f0&k=%zz"
  expect_code 400 "bad escape"
  get "/api/analysis?w=f0&k=%0a"
  expect_code 400 "control character"
  get "/api/analysis?w=f0&norm=per_nothing"
  expect_code 400 "bad norm"
  body_has "norm=per_nothing: expected one of per_wave, per_cycle, per_second, per_kernel"
  get "/api/analysis?w=f0&weight=heavy"
  expect_code 400 "bad weight"
  body_has "weight=heavy: expected one of count, time"
  get "/api/analysis?w=f0&norm=per_wave&norm=per_cycle"
  expect_code 400 "repeated"
  get "/api/analysis?w=f0&d=1:x"
  expect_code 400 "bad spec"
  get "/api/analysis?w=f0&k=(unclosed"
  expect_code 400 "bad regex"
  get "/api/analysis?w=f9"
  expect_code 404 "unknown workload"
  get "/api/analysis?w=..%2F..%2Fetc%2Fpasswd"
  expect_code 404 "path as id"
  get "/api/analysis?w=db:x'%20OR%201=1%20--"
  expect_code 404 "sql in a store id without a store"
  get "/api/analysis"
  expect_code 400 "no workload"
  for p in "/../../etc/passwd" "/%2e%2e/%2e%2e/etc/passwd" "/api/../../etc/passwd" "/vendor/../../../etc/passwd" "/index.html/.." "/app.js%00.html"; do
    CODE=$(curl -s --path-as-is -o "$TMP/body" -w '%{http_code}' "$URL${p#/}")
    [ "$CODE" = 404 ] || [ "$CODE" = 400 ] || fail "$p: HTTP $CODE"
    grep -q 'root:' "$TMP/body" && fail "$p leaked a file"
  done
  get /api/workloads -X POST -d x
  [ "$CODE" = 413 ] || [ "$CODE" = 405 ] || fail "POST with a body: $CODE"
  get /api/workloads -X DELETE
  expect_code 405 DELETE
  get /api/workloads -I
  expect_code 200 HEAD
  long=$(head -c 70000 /dev/zero | tr '\0' 'a')
  get "/api/analysis?w=f0&k=$long"
  [ "$CODE" = 414 ] || [ "$CODE" = 400 ] || [ "$CODE" = 431 ] || fail "huge URL: $CODE"
  many=$(for i in $(seq 1 40); do printf '&k=a%d' "$i"; done)
  get "/api/analysis?w=f0$many"
  [ "$CODE" = 414 ] || [ "$CODE" = 400 ] || fail "too many filters: $CODE"
  big_header=$(head -c 60000 /dev/zero | tr '\0' 'h')
  get /api/health -H "X-Big: $big_header"
  [ "$CODE" = 431 ] || [ "$CODE" = 413 ] || [ "$CODE" = 400 ] || [ "$CODE" = 000 ] || fail "huge header: $CODE"
  # A client that sends half a request and stalls holds only its connection.
  port=${URL##*:}
  port=${port%/}
  exec 3<>"/dev/tcp/127.0.0.1/$port"
  printf 'GET /api/health HTTP/1.1\r\nHost: x\r\n' >&3
  t0=$(date +%s%N)
  get /api/workloads
  expect_code 200 "next to a stalled client"
  t1=$(date +%s%N)
  [ $(((t1 - t0) / 1000000)) -lt 2000 ] || fail "a stalled client slowed others down"
  exec 3>&-
  # Garbage on the wire is answered or dropped, and the server lives on.
  printf 'GARBAGE\r\n\r\n\x00\xff' | timeout 5 bash -c "cat > /dev/tcp/127.0.0.1/$port" 2>/dev/null
  get /api/health
  expect_code 200 "after garbage"
  stop_server
  ;;
limits)
  # Rate limit (forced on for loopback clients here).
  LUMEN_SERVE_RATE=5 start_server -w "$WL/vcopy/MI200"
  # A bucket of 10 requests refilled at 5 a second: of 30 requests sent
  # in T seconds at least 20 - 5 T are refused and at most 20 (a loaded
  # machine that takes long over them leaves fewer to refuse).
  limited=0
  t0=$(date +%s%N)
  for i in $(seq 1 30); do
    get /api/health
    [ "$CODE" = 429 ] && limited=$((limited + 1))
  done
  t1=$(date +%s%N)
  least=$((20 - 5 * (t1 - t0) / 1000000000 - 5))
  [ "$limited" -ge "$least" ] && [ "$limited" -ge 1 -o "$least" -lt 1 ] ||
    fail "rate limit: only $limited of 30 refused in $(((t1 - t0) / 1000000)) ms"
  [ "$limited" -le 20 ] || fail "rate limit: $limited of 30 refused, the burst of 10 not honoured"
  sleep 1.2
  get /api/health
  expect_code 200 "after the rate window"
  stop_server
  # Tokens.
  token=0123456789abcdef-secret
  start_server -w "$WL/vcopy/MI200" --token "$token"
  get /api/workloads
  expect_code 401 "no token"
  get / 
  expect_code 401 "page without a token"
  get /api/workloads -H "Authorization: Bearer wrong-token-0000000"
  expect_code 401 "wrong token"
  get /api/workloads -H "Authorization: Bearer $token"
  expect_code 200 "bearer token"
  CODE=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "$URL?token=$token")
  expect_code 200 "token in the page URL"
  grep -qi '^set-cookie: lumen_token=.*HttpOnly' "$TMP/headers" || fail "no cookie: $(cat "$TMP/headers")"
  get /api/workloads -H "Cookie: lumen_token=$token"
  expect_code 200 "cookie"
  stop_server
  # Other addresses need a token.
  run_err=$("$LUMEN" serve -w "$WL/vcopy/MI200" --listen 0.0.0.0:0 2>&1 >/dev/null)
  [ $? -eq 2 ] || fail "non-loopback without a token started"
  echo "$run_err" | grep -q "needs --token" || fail "message: $run_err"
  printf 'short\n' >"$TMP/tok"
  run_err=$("$LUMEN" serve -w "$WL/vcopy/MI200" --listen 0.0.0.0:0 --token-file "$TMP/tok" 2>&1 >/dev/null)
  [ $? -eq 2 ] || fail "a short token was accepted"
  run_err=$("$LUMEN" serve --listen nowhere:80 -w "$WL/vcopy/MI200" 2>&1 >/dev/null)
  [ $? -eq 2 ] || fail "bad address accepted"
  run_err=$("$LUMEN" serve -w "$TMP/none" 2>&1 >/dev/null)
  [ $? -ne 0 ] || fail "a missing folder was served"
  run_err=$("$LUMEN" serve 2>&1 >/dev/null)
  [ $? -eq 2 ] && echo "$run_err" | grep -q "nothing to serve" || fail "nothing to serve: $run_err"
  ;;
big)
  # A 100,000-dispatch workload: every answer of the GUI's opening view
  # stays under 1 MB (long tables come a page at a time), /api/rows pages
  # it, and the server's memory stays within --cache-mb.
  N=100000
  "$SCALE" "$WL/vcopy/MI200" "$N" "$TMP/big" || fail "scale_workload"
  # (the server reads the folder before it listens: slow in sanitizer builds)
  export SERVE_START_S=180
  start_server -w "$TMP/big" -w "$WL/_mix/mix_MI200"
  MB=1048576
  for p in "api/workloads" "api/info?w=f0" "api/analysis?w=f0" "api/summary?w=f0" "api/roofline?w=f0" \
    "api/analysis?w=f0&base=f1" "api/analysis?w=f0&norm=per_kernel" "api/rows?w=f0&t=0.2" "api/rows?w=f0&t=0.1" \
    "api/rows?w=f0&t=0.2&limit=1000"; do
    get "/$p"
    expect_code 200 "$p"
    size=$(stat -c %s "$TMP/body")
    [ "$size" -le "$MB" ] || fail "/$p answers $size bytes, over 1 MB"
    echo "/$p: $size bytes"
  done
  get "/api/analysis?w=f0"
  python3 - "$TMP/body" "$N" <<'PY' || fail "the dispatch list of /api/analysis"
import json, sys
doc = json.load(open(sys.argv[1]))
n = int(sys.argv[2])
t = [t for p in doc["panels"] for t in p["tables"] if t["id"] == "0.2"][0]
assert t["rows_total"] == n, t.get("rows_total")
assert len(t["rows"]) == 100, len(t["rows"])
assert [r["id"] for r in t["rows"]] == [str(i) for i in range(100)]
assert doc["workloads"][0]["dispatches_selected"] == n
PY
  # Pages, sorting, filtering and the selection, against the CLI's list.
  "$LUMEN" analyze -w "$TMP/big" -b 0.2 -d 500:90000 --format json >"$TMP/cli.json" || fail "cli"
  get "/api/rows?w=f0&t=0.2&d=500:90000&offset=1000&limit=7&sort=1&order=desc"
  expect_code 200 "a sorted page"
  python3 - "$TMP/body" "$TMP/cli.json" <<'PY' || fail "a sorted page differs from the CLI's rows"
import json, sys
page = json.load(open(sys.argv[1]))
cli = [t for p in json.load(open(sys.argv[2]))["panels"] for t in p["tables"] if t["id"] == "0.2"][0]
want = sorted(cli["rows"], key=lambda r: -r["cells"][1])[1000:1007]
assert page["rows_total"] == len(cli["rows"]) == 89500, page["rows_total"]
assert page["rows_matched"] == 89500 and page["offset"] == 1000 and page["limit"] == 7
assert [r["cells"] for r in page["rows"]] == [r["cells"] for r in want], page["rows"][:2]
PY
  get "/api/rows?w=f0&t=0.2&filter=no-such-kernel"
  expect_code 200 "a filter that matches nothing"
  [ "$("$JSON_GET" rows_matched <"$TMP/body")" = 0 ] || fail "filter: $(head -c 300 "$TMP/body")"
  get "/api/rows?w=f0&t=0.2&sort=9"
  expect_code 400 "a sort column that does not exist"
  body_has "no such column"
  get "/api/rows?w=f0"
  expect_code 400 "rows without a table"
  get "/api/rows?w=f0&t=0.2&limit=5000"
  expect_code 400 "a page over the limit"
  # A metric over many dispatches: even buckets keep the answer small.
  get "/api/series?w=f0&m=2.1.1&d=0:20000"
  expect_code 200 "a downsampled series"
  size=$(stat -c %s "$TMP/body")
  [ "$size" -le "$MB" ] || fail "/api/series answers $size bytes, over 1 MB"
  python3 - "$TMP/body" <<'PY' || fail "the buckets of /api/series"
import json, sys
s = json.load(open(sys.argv[1]))
assert s["downsampled"] and s["dispatches"] == 20000 and len(s["points"]) == 1000, (s["dispatches"], len(s["points"]))
assert sum(p["n"] for p in s["points"]) == 20000
assert all(p["min"] <= p["mean"] <= p["max"] for p in s["points"])
assert s["points"][0]["d"] == 0 and s["points"][-1]["last"] == 19999
PY
  stop_server
  # Memory: with a cache smaller than the workload, the server drops it
  # once the requests are answered; with the default it keeps it.
  start_server -w "$TMP/big" --cache-mb 256
  # (after the opening view is prepared: that evaluation holds it too)
  for _ in $(seq 1 600); do
    get /api/health
    grep -q '"warm":true' "$TMP/body" && break
    sleep 0.2
  done
  body_has '"warm":true'
  get "/api/analysis?w=f0"
  expect_code 200 "small cache"
  get "/api/rows?w=f0&t=0.2&offset=5000"
  expect_code 200 "small cache, a page"
  rss=$(($(ps -o rss= -p "$SERVER") / 1024))
  echo "server memory with --cache-mb 256: $rss MiB"
  # AddressSanitizer keeps freed memory in quarantine: no bound to check.
  if ldd "$LUMEN" 2>/dev/null | grep -q libasan; then
    echo "a sanitizer build: the memory bound is not checked"
  else
    [ "$rss" -le 320 ] || fail "the server holds $rss MiB with --cache-mb 256"
  fi
  stop_server
  ;;
*)
  fail "unknown test $NAME"
  ;;
esac
echo PASS
