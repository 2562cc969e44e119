#!/usr/bin/env bash
# Hostile input and faults: each case is one defect found by attacking the
# binary as a hostile user would, kept fixed. Cases run the real lumen
# binary (and `lumen serve` on loopback where the defect is the server's).
# Usage: hardening_test.sh LUMEN JSON_GET SHARED_DIR TEST_NAME [KEPT_DAMAGE]
# (KEPT_DAMAGE: tests/integration/kept_damage, for kept_damaged)
set -u
LUMEN=$1
JSON_GET=$2
SHARED=$3
NAME=$4
KEPT_DAMAGE=${5:-}
WL=$SHARED/workloads
TMP=$(mktemp -d /tmp/lumen-hd-XXXXXX)
PIDS=""
cleanup() {
  for p in $PIDS; do kill "$p" 2>/dev/null; done
  wait 2>/dev/null
  chmod -R u+w "$TMP" 2>/dev/null
  rm -rf "$TMP"
}
trap cleanup EXIT
cd "$TMP" || exit 1

SRCDIR=$(cd "$(dirname "$0")" && pwd)
. "$SRCDIR/lib.sh"
. "$SRCDIR/../../scripts/serve-lib.sh"

# run_t ARGS...: run, but a command that should refuse at once and does not
# fails after 10 s instead of hanging the suite.
run_t() {
  timeout 10 "$LUMEN" "$@" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
}
copy_wl() { cp -r "$WL/$1" "$TMP/$2"; chmod -R u+w "$TMP/$2"; }
body_lacks() { ! grep -qF -- "$1" "$TMP/body" || fail "body holds '$1'"; }
# A secret outside every workload folder, one column-name-like line.
make_secret() { printf 'SECRET_root_hash_x1,SECRET_two\n1,2\n' >"$TMP/secret.csv"; }

case $NAME in
symlink_cli)
  # 12.1: a roofline.csv that links out of the folder is refused, and its
  # content never reaches the output; a link inside the folder still works.
  make_secret
  copy_wl vcopy/MI200 wl
  ln -sf "$TMP/secret.csv" "$TMP/wl/roofline.csv"
  run analyze -w "$TMP/wl" --format json
  expect_status 1
  expect_err "roofline.csv"
  expect_err "outside its folder"
  one_line_err
  ! grep -q SECRET "$TMP/out" "$TMP/err" || fail "the linked file's content was read"
  # A sysinfo.csv, SQ table or pmc_perf.csv linking out: the same refusal.
  copy_wl vcopy/MI200 wl2
  ln -sf "$TMP/secret.csv" "$TMP/wl2/SQ_LEVEL_WAVES.csv" 2>/dev/null || true
  sq=$(cd "$TMP/wl2" && ls SQ*.csv | head -1)
  rm -f "$TMP/wl2/$sq" && ln -s "$TMP/secret.csv" "$TMP/wl2/$sq"
  run analyze -w "$TMP/wl2"
  expect_status 1
  expect_err "outside its folder"
  # A link to a file inside the same folder is followed.
  copy_wl vcopy/MI200 wl3
  mv "$TMP/wl3/sysinfo.csv" "$TMP/wl3/sysinfo.real.csv"
  ln -s sysinfo.real.csv "$TMP/wl3/sysinfo.csv"
  run analyze -w "$TMP/wl3" -b 2.1.1
  expect_status 0
  expect_out "VALU IOPs"
  # A relative link that climbs out with ../ is refused too.
  copy_wl vcopy/MI200 wl4
  rm "$TMP/wl4/roofline.csv" 2>/dev/null
  ln -s ../secret.csv "$TMP/wl4/roofline.csv"
  run analyze -w "$TMP/wl4"
  expect_status 1
  expect_err "outside its folder"
  ;;
symlink_serve)
  # 12.1 in the server: the linked file's line never reaches an HTTP client.
  make_secret
  copy_wl vcopy/MI200 good
  copy_wl vcopy/MI200 evil
  ln -sf "$TMP/secret.csv" "$TMP/evil/roofline.csv"
  # 12.16: the server starts and serves the other folder, saying which one
  # it refused and why.
  start_server -w "$TMP/evil" -w "$TMP/good"
  grep -q "not serving $TMP/evil" "$TMP/serve.err" || fail "the refused folder is not reported: $(cat "$TMP/serve.err")"
  grep -q "outside its folder" "$TMP/serve.err" || fail "the reason is not reported"
  get "api/workloads"
  expect_code 200 "workloads"
  body_lacks SECRET
  grep -q '"f1"' "$TMP/body" || fail "the good folder is not listed: $(cat "$TMP/body")"
  ! grep -q '"f0"' "$TMP/body" || fail "the refused folder is listed"
  get "api/analysis?w=f0"
  [ "$CODE" -ge 400 ] || fail "the evil workload was served (HTTP $CODE)"
  body_lacks SECRET
  get "api/roofline?w=f0"
  body_lacks SECRET
  get "api/analysis?w=f1"
  expect_code 200 "the good workload"
  # Every folder unreadable: the server does not start, and says why.
  "$LUMEN" serve --listen 127.0.0.1:0 -w "$TMP/evil" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  expect_status 1
  expect_err "outside its folder"
  ;;
fifo)
  # 12.7: a FIFO under a workload file's or a metric file's name is refused
  # at once instead of blocking the reader (and the server's start).
  copy_wl vcopy/MI200 wl
  rm "$TMP/wl/sysinfo.csv" && mkfifo "$TMP/wl/sysinfo.csv"
  timeout 10 "$LUMEN" analyze -w "$TMP/wl" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  [ "$STATUS" -ne 124 ] || fail "analyze blocked on a FIFO sysinfo.csv"
  expect_status 1
  expect_err "sysinfo.csv"
  expect_err "FIFO"
  copy_wl vcopy/MI200 wl2
  sq=$(cd "$TMP/wl2" && ls SQ*.csv | head -1)
  rm "$TMP/wl2/$sq" && mkfifo "$TMP/wl2/$sq"
  timeout 10 "$LUMEN" analyze -w "$TMP/wl2" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  [ "$STATUS" -ne 124 ] || fail "analyze blocked on a FIFO $sq"
  expect_status 1
  expect_err "FIFO"
  mkdir -p "$TMP/defs"
  printf 'arch: gfx90a\ncounters: [SQ_WAVES]\n' >"$TMP/defs/arch.yaml"
  mkfifo "$TMP/defs/evil.yaml"
  timeout 10 "$LUMEN" analyze -w "$WL/vcopy/MI200" --metrics-dir "$TMP/defs" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  [ "$STATUS" -ne 124 ] || fail "analyze blocked on a FIFO in --metrics-dir"
  expect_status 1
  expect_err "evil.yaml"
  expect_err "FIFO"
  timeout 10 "$LUMEN" serve --listen 127.0.0.1:0 -w "$TMP/wl" -w "$WL/vcopy/MI200" >"$TMP/out" 2>"$TMP/err" &
  spid=$!
  PIDS="$PIDS $spid"
  ok=0
  for _ in $(seq 1 80); do
    grep -q 'http://' "$TMP/out" 2>/dev/null && ok=1 && break
    kill -0 "$spid" 2>/dev/null || break
    sleep 0.1
  done
  [ "$ok" = 1 ] || fail "serve did not start past a FIFO workload file: $(cat "$TMP/err")"
  ;;
not_regular)
  # 12.13: a pmc_perf.csv that is a folder or a FIFO is named for what it
  # is, not reported missing.
  copy_wl vcopy/MI200 wl
  rm "$TMP/wl/pmc_perf.csv" && mkdir "$TMP/wl/pmc_perf.csv"
  run analyze -w "$TMP/wl"
  expect_status 1
  expect_err "pmc_perf.csv"
  expect_err "a folder, not a regular file"
  one_line_err
  rmdir "$TMP/wl/pmc_perf.csv" && mkfifo "$TMP/wl/pmc_perf.csv"
  timeout 10 "$LUMEN" analyze -w "$TMP/wl" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  expect_status 1
  expect_err "FIFO"
  ! grep -q "cannot find" "$TMP/err" || fail "a FIFO reported as missing"
  ;;
term_json)
  # 12.4: escape sequences in a kernel name never reach the terminal raw,
  # and invalid UTF-8 in names still gives valid JSON (CLI and server).
  copy_wl vcopy/MI200 wl
  sed -i 's/vecCopy(/vec\x1b]0;pwned\x07\x1b[2JCopy\xff\xfe(/' "$TMP/wl/pmc_perf.csv"
  grep -q $'\x1b' "$TMP/wl/pmc_perf.csv" || fail "the test workload was not edited"
  run analyze -w "$TMP/wl"
  expect_status 0
  ! grep -q $'\x1b' "$TMP/out" || fail "an escape byte reached the terminal output"
  ! grep -q $'\x07' "$TMP/out" || fail "a BEL byte reached the terminal output"
  expect_out 'vec\x1b]0;pwned\x07\x1b[2JCopy\xff\xfe('
  run analyze -w "$TMP/wl" --format json
  expect_status 0
  iconv -f UTF-8 -t UTF-8 "$TMP/out" >/dev/null 2>&1 || fail "the CLI's JSON is not valid UTF-8"
  python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$TMP/out" || fail "the CLI's JSON does not parse"
  grep -q 'Copy\\ufffd\\ufffd(' "$TMP/out" || fail "invalid bytes are not replaced by U+FFFD"
  start_server -w "$TMP/wl"
  for path in "api/analysis?w=f0" "api/info?w=f0" "api/roofline?w=f0" "api/workloads"; do
    get "$path"
    expect_code 200 "$path"
    iconv -f UTF-8 -t UTF-8 "$TMP/body" >/dev/null 2>&1 || fail "$path: not valid UTF-8"
    python3 -c 'import json,sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$TMP/body" || fail "$path: not JSON"
  done
  ;;
wide_cells)
  # 12.10: a 5 MB host name does not make a 5 MB-wide table.
  copy_wl vcopy/MI200 wl
  python3 - "$TMP/wl/sysinfo.csv" <<'PY'
import csv, sys
p = sys.argv[1]
rows = list(csv.reader(open(p, newline="")))
rows[1][rows[0].index("hostname")] = "h" * (5 << 20)
csv.writer(open(p, "w", newline=""), lineterminator="\n").writerows(rows)
PY
  run analyze -w "$TMP/wl"
  expect_status 0
  size=$(stat -c %s "$TMP/out")
  [ "$size" -lt 2000000 ] || fail "text output is $size bytes"
  longest=$(wc -L <"$TMP/out")
  "$LUMEN" analyze -w "$WL/vcopy/MI200" >"$TMP/plain.out" 2>&1 || fail "analyze of the shared folder"
  plain=$(wc -L <"$TMP/plain.out")
  [ "$longest" -le "$plain" ] || fail "a line of $longest characters (the unedited folder's widest is $plain)"
  expect_out "hhhh…"
  # The data itself is kept: CSV and JSON still hold the whole name.
  run analyze -w "$TMP/wl" --format json -b 1
  expect_status 0
  [ "$(stat -c %s "$TMP/out")" -gt 5000000 ] || fail "JSON lost the long value"
  ;;
dns_rebinding)
  # 12.2: on loopback, a request for another host name (a page whose name
  # was rebound to 127.0.0.1) is refused; the machine's own names work.
  start_server -w "$WL/vcopy/MI200"
  port=${URL##*:}
  port=${port%/}
  get "api/workloads" -H "Host: attacker.example"
  expect_code 421 "a rebound host name"
  grep -q '"error"' "$TMP/body" || fail "421 without a JSON body"
  get "api/analysis?w=f0" -H "Host: attacker.example:$port"
  expect_code 421 "a rebound host name with the port"
  get "" -H "Host: 127.0.0.1.attacker.example"
  expect_code 421 "a look-alike name"
  for h in "127.0.0.1:$port" "localhost:$port" "localhost" "127.0.0.1" "[::1]:$port" "LOCALHOST:$port"; do
    get "api/workloads" -H "Host: $h"
    expect_code 200 "Host $h"
  done
  ;;
fifo_store)
  # A FIFO (or a folder) named as the store, as its journal, or as an MPI
  # rank part's database is refused at once, naming it, instead of
  # blocking SQLite's open.
  mkfifo "$TMP/store.db"
  for args in "db list --db $TMP/store.db" "analyze --db $TMP/store.db -w x" \
              "db import --db $TMP/store.db -w $WL/vcopy/MI200"; do
    # shellcheck disable=SC2086
    timeout 10 "$LUMEN" $args >"$TMP/out" 2>"$TMP/err"
    STATUS=$?
    [ "$STATUS" -ne 124 ] || fail "lumen $args blocked on a FIFO store"
    expect_status 1; one_line_err; expect_err "FIFO"
  done
  LUMEN_DB="$TMP/store.db" timeout 10 "$LUMEN" db list >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  [ "$STATUS" -ne 124 ] || fail "LUMEN_DB naming a FIFO blocked"
  expect_status 1; expect_err "FIFO"
  "$LUMEN" db import --db "$TMP/real.db" -w "$WL/vcopy/MI200" >/dev/null 2>&1 || fail "import"
  mkfifo "$TMP/real.db-journal"
  timeout 10 "$LUMEN" db list --db "$TMP/real.db" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  [ "$STATUS" -ne 124 ] || fail "a FIFO journal blocked"
  expect_status 1; expect_err "real.db-journal"; expect_err "FIFO"
  mkdir -p "$TMP/ranks/rank.0" "$TMP/dirdb"
  mkfifo "$TMP/ranks/rank.0/lumen.db"
  timeout 10 "$LUMEN" analyze -w "$TMP/ranks" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  [ "$STATUS" -ne 124 ] || fail "a FIFO rank part blocked"
  expect_status 1; expect_err "rank.0/lumen.db"; expect_err "FIFO"
  timeout 10 "$LUMEN" db list --db "$TMP/dirdb" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
  expect_status 1; expect_err "folder"
  ;;
host_headers)
  # A request must carry exactly one Host header (RFC 9112 3.2): none, two
  # (the second naming another host) or one with a control byte is refused
  # with 400, on loopback and on any other address alike.
  start_server -w "$WL/vcopy/MI200"
  port=${URL##*:}
  port=${port%/}
  python3 - "$port" <<'PY' || fail "Host headers"
import socket, sys
port = int(sys.argv[1])
def ask(raw):
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(raw)
    data = b""
    try:
        while True:
            d = s.recv(65536)
            if not d:
                break
            data += d
    except OSError:
        pass
    s.close()
    return data.split(b"\r\n")[0].decode()
cases = [
    (b"GET /api/workloads HTTP/1.1\r\nConnection: close\r\n\r\n", "400", "no Host (HTTP/1.1)"),
    (b"GET /api/workloads HTTP/1.0\r\n\r\n", "400", "no Host (HTTP/1.0)"),
    (b"GET /api/workloads HTTP/1.1\r\nHost: 127.0.0.1\r\nHost: attacker.example\r\nConnection: close\r\n\r\n",
     "400", "two Host headers"),
    (b"GET /api/workloads HTTP/1.1\r\nHost: 127.0.0.1\r\nhost: 127.0.0.1\r\nConnection: close\r\n\r\n",
     "400", "two Host headers, same name"),
    (b"GET /api/workloads HTTP/1.1\r\nHost: 127.0.0.1\x01x\r\nConnection: close\r\n\r\n", "400", "a control byte"),
    (b"GET /api/workloads HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", "200", "one Host"),
]
bad = 0
for raw, want, what in cases:
    got = ask(raw)
    if want not in got:
        print("%s: %r, expected %s" % (what, got, want))
        bad += 1
sys.exit(1 if bad else 0)
PY
  ;;
slow_clients)
  # 12.3: 64 connections that never finish their headers neither lock out
  # a well-behaved client from the same address nor stay open past the
  # header deadline.
  start_server -w "$WL/vcopy/MI200" --header-timeout 3
  port=${URL##*:}
  port=${port%/}
  timeout 60 python3 "$SRCDIR/slow_clients.py" "$port" 64 3 >"$TMP/slow.out" 2>&1 || fail "$(cat "$TMP/slow.out")"
  cat "$TMP/slow.out"
  get "api/health"
  expect_code 200 "after the slow clients"
  run_t serve --listen 127.0.0.1:0 -w "$WL/vcopy/MI200" --header-timeout 0
  expect_status 2
  expect_err "--header-timeout"
  # Numbers are read whole: 1e308 is not 1, 4x is not 4.
  for v in 1e308 4x 0 65 -3 ""; do
    run_t serve --listen 127.0.0.1:0 -w "$WL/vcopy/MI200" --threads "$v"
    expect_status 2
    one_line_err
    expect_err "--threads $v: expected a whole number, 1 to 64"
  done
  ;;
tokens)
  # 12.5: blank tokens and tokens with control characters are refused; the
  # token is not taken from the query string of API calls.
  printf '   \n' >"$TMP/blank"
  run_t serve -w "$WL/vcopy/MI200" --listen 127.0.0.1:0 --token-file "$TMP/blank"
  expect_status 2
  expect_err "--token-file"
  run_t serve -w "$WL/vcopy/MI200" --listen 127.0.0.1:0 --token "                    "
  expect_status 2
  expect_err "blank"
  run_t serve -w "$WL/vcopy/MI200" --listen 127.0.0.1:0 --token "$(printf 'abcdefgh\x01ijklmnopq')"
  expect_status 2
  expect_err "control character"
  printf 'abcdefghij\tklmnopq\n' >"$TMP/tab"
  run_t serve -w "$WL/vcopy/MI200" --listen 127.0.0.1:0 --token-file "$TMP/tab"
  expect_status 2
  expect_err "control character"
  run_t serve -w "$WL/vcopy/MI200" --listen 127.0.0.1:0 --token "abcdefgh;ijklmnopq"
  expect_status 2
  expect_err "cookie"
  token=0123456789abcdef-secret
  start_server -w "$WL/vcopy/MI200" --token "$token"
  get "api/workloads?token=$token"
  expect_code 401 "a token in an API call's query"
  get "api/analysis?w=f0&token=$token"
  expect_code 401 "a token in an API call's query"
  get "api/workloads" -H "Authorization: Bearer $token"
  expect_code 200 "the header"
  CODE=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "$URL?token=$token")
  expect_code 200 "a page opened with the token"
  grep -qi '^set-cookie: lumen_token=' "$TMP/headers" || fail "no cookie for the page"
  ;;
http_errors)
  # 12.11: every request that can be parsed gets an answer with a JSON
  # body and the security headers: many parameters, a long URI, large
  # headers, a method other than GET.
  start_server -w "$WL/vcopy/MI200"
  check_json_error() { # CODE WHAT
    expect_code "$1" "$2"
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert d["status"]==int(sys.argv[2]) and d["error"]' \
      "$TMP/body" "$1" || fail "$2: no JSON error body: $(head -c 300 "$TMP/body")"
    grep -qi '^x-content-type-options: nosniff' "$TMP/headers" || fail "$2: no security headers"
    grep -qi '^content-security-policy:' "$TMP/headers" || fail "$2: no CSP"
  }
  q=$(python3 -c "print('&'.join('x%d=1' % i for i in range(500)))")
  CODE=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "${URL}api/analysis?w=f0&$q")
  check_json_error 400 "500 query parameters"
  q=$(python3 -c "print('&'.join('a' for i in range(8190)))")
  CODE=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "${URL}api/analysis?$q")
  check_json_error 400 "8,190 empty parameters"
  q=$(head -c 20000 /dev/zero | tr '\0' a)
  CODE=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' "${URL}api/analysis?w=$q")
  check_json_error 414 "a 20 KB query"
  big=$(head -c 20000 /dev/zero | tr '\0' a)
  CODE=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' -H "X-Big: $big" "${URL}api/workloads")
  check_json_error 431 "20 KB of headers"
  CODE=$(curl -s -o "$TMP/body" -D "$TMP/headers" -w '%{http_code}' -X DELETE "${URL}api/workloads")
  check_json_error 405 "DELETE"
  grep -qi '^allow: GET, HEAD' "$TMP/headers" || fail "405 without Allow"
  get "api/health"
  expect_code 200 "the server still answers"
  ;;
regex_limits)
  # k= with a pattern that backtracks without end, against a long kernel
  # name: a 400 within seconds naming the pattern and the kernel, never a
  # selection silently missing the kernels PCRE2 gave up on.
  copy_wl vcopy/MI200 wl
  python3 -c 'import sys; p = sys.argv[1]; s = open(p).read().replace("vecCopy(double*, double*, double*, int, int) [clone .kd]", "a" * 40 + "b", 1); open(p, "w").write(s)' "$TMP/wl/pmc_perf.csv"
  start_server -w "$TMP/wl"
  long="'$(printf 'a%.0s' $(seq 40))b'"
  for ep in analysis summary rows; do
    for k in '(a%2B)%2B%24' '!(a%2B)%2B%24'; do
      CODE=$(curl -s --max-time 5 -o "$TMP/body" -w '%{http_code}' "${URL}api/$ep?w=f0&t=0.1&k=$k")
      expect_code 400 "api/$ep k=$k"
      grep -qF "gave up matching it against kernel name $long" "$TMP/body" || fail "$ep: $(head -c 300 "$TMP/body")"
      grep -qF "match limit exceeded" "$TMP/body" || fail "$ep: no reason: $(head -c 300 "$TMP/body")"
    done
  done
  get "api/analysis?w=f0&k=aaa"
  expect_code 200 "an ordinary pattern"
  ;;
deep_formulas)
  # 12.6: a flat chain of 200,000 terms and a chain of 20,000 quantities
  # are refused with a clear message (they crashed the compiler's stack).
  mkdir -p "$TMP/defs"
  printf 'arch: gfx90a\ncounters: [SQ_WAVES]\n' >"$TMP/defs/arch.yaml"
  cat >"$TMP/defs/02_mine.yaml" <<'YAML'
panel: 2
title: Mine
tables:
- id: '2.1'
  title: Waves
  columns: {Metric: name, Avg: mean}
  rows:
  - metric: chained
    expr: $q0
YAML
  python3 -c "print('quantities:\n  q0: ' + '+'.join(['SQ_WAVES'] * 200000))" >"$TMP/defs/quantities.yaml"
  run analyze -w "$WL/vcopy/MI200" --metrics-dir "$TMP/defs"
  [ "$STATUS" -lt 128 ] || fail "analyze died with signal $((STATUS - 128)) on a 200,000-term chain"
  expect_status 1
  one_line_err
  expect_err "quantities.yaml:2:"
  expect_err "formula too deep"
  python3 -c "
print('quantities:')
for i in range(20000): print('  q%d: \$q%d + 1' % (i, i + 1))
print('  q20000: SQ_WAVES')" >"$TMP/defs/quantities.yaml"
  run analyze -w "$WL/vcopy/MI200" --metrics-dir "$TMP/defs"
  [ "$STATUS" -lt 128 ] || fail "analyze died with signal $((STATUS - 128)) on 20,000 nested quantities"
  expect_status 1
  one_line_err
  expect_err "quantities nested more than 64 deep"
  # Deep but within the limits: 900 terms, 60 nested quantities compile.
  python3 -c "
print('quantities:')
for i in range(60): print('  q%d: \$q%d + 1' % (i, i + 1))
print('  q60: ' + '+'.join(['SQ_WAVES'] * 900))" >"$TMP/defs/quantities.yaml"
  run analyze -w "$WL/vcopy/MI200" --metrics-dir "$TMP/defs" --format csv -o "$TMP/o"
  expect_status 0
  waves=$(awk -F, 'NR == 2 { print $3 }' "$TMP/o/2.1.csv")
  [ "$waves" = "14745660.0" ] || fail "900 * SQ_WAVES + 60 is $waves, expected 14745660.0 (SQ_WAVES = 16384)"
  ;;
csv_malformed)
  # 12.9, 12.12, 12.13: malformed CSVs are errors naming file, line and
  # field, or warnings where the reference tool reads them with the same
  # numbers; none is accepted with changed numbers.
  edit() { # CASE PYTHON: a fresh copy of vcopy/MI200 in $TMP/CASE, edited
    rm -rf "$TMP/$1"
    copy_wl vcopy/MI200 "$1"
    (cd "$TMP/$1" && python3 -c "$2") || fail "could not build case $1"
  }
  "$LUMEN" analyze -w "$WL/vcopy/MI200" --format csv -o "$TMP/plain" >/dev/null 2>&1 || fail "plain"
  # A header of 70 MB with no comma: the limit is met inside the field.
  copy_wl vcopy/MI200 big
  head -c 70000000 /dev/zero | tr '\0' A >"$TMP/big/pmc_perf.csv"
  run analyze -w "$TMP/big"
  expect_status 1; one_line_err
  expect_err "pmc_perf.csv:1:1: header longer than 67108864 bytes"
  rm -rf "$TMP/big"
  # A second SQ_WAVES column: a warning, and the numbers of the first.
  edit dup "
import csv
rows = list(csv.reader(open('pmc_perf.csv', newline='')))
i = rows[0].index('SQ_WAVES')
rows[0].append('SQ_WAVES')
for r in rows[1:]: r.append(str(int(r[i]) * 7))
csv.writer(open('pmc_perf.csv', 'w', newline=''), lineterminator='\n').writerows(rows)"
  run analyze -w "$TMP/dup" --format csv -o "$TMP/dup.out"
  expect_status 0
  expect_err "pmc_perf.csv:1:"
  expect_err "field 'SQ_WAVES': a second column of this name; it is read as 'SQ_WAVES.1'"
  diff -r "$TMP/plain" "$TMP/dup.out" >/dev/null || fail "a duplicate column changed the tables: $(diff -r "$TMP/plain" "$TMP/dup.out" | head -5)"
  # A NUL inside a quoted kernel name.
  edit nul "
d = open('pmc_perf.csv', 'rb').read().split(b'\n')
d[2] = d[2].replace(b'vecCopy(', b'vec\x00Copy(')
open('pmc_perf.csv', 'wb').write(b'\n'.join(d))"
  run analyze -w "$TMP/nul"
  expect_status 1; one_line_err
  expect_err "pmc_perf.csv:3:2: field 'Kernel_Name': a NUL byte inside the field"
  # A quote inside an unquoted number field.
  edit quote "
d = open('pmc_perf.csv').read().split('\n')
d[1] = '0\"' + d[1][1:]
open('pmc_perf.csv', 'w').write('\n'.join(d))"
  run analyze -w "$TMP/quote"
  expect_status 1; one_line_err
  expect_err "pmc_perf.csv:2:1: field 'Dispatch_ID': a quote inside an unquoted field"
  # A bare quote inside a quoted field.
  edit quote2 "
d = open('pmc_perf.csv').read().split('\n')
d[1] = d[1].replace('\"vecCopy(', '\"vec\"Copy(', 1)
open('pmc_perf.csv', 'w').write('\n'.join(d))"
  run analyze -w "$TMP/quote2"
  expect_status 1; one_line_err
  expect_err "pmc_perf.csv:2:2: field 'Kernel_Name': text after a closing quote"
  # A sysinfo.csv with two data rows: a warning, the first row used.
  edit sys2 "
d = open('sysinfo.csv').read().rstrip('\n').split('\n')
open('sysinfo.csv', 'w').write('\n'.join(d + [d[1].replace('MI200', 'MI300X')]) + '\n')"
  run analyze -w "$TMP/sys2" --format csv -o "$TMP/sys2.out"
  expect_status 0
  expect_err "sysinfo.csv:3: sysinfo.csv holds 2 data rows"
  diff -r "$TMP/plain" "$TMP/sys2.out" >/dev/null || fail "a second sysinfo row changed the tables"
  # Numbers no double holds: both spellings are errors.
  for big in "$(printf '9%.0s' $(seq 400))" 1e309; do
    edit huge "
import csv
rows = list(csv.reader(open('pmc_perf.csv', newline='')))
rows[2][rows[0].index('SQ_WAVES')] = '$big'
csv.writer(open('pmc_perf.csv', 'w', newline=''), lineterminator='\n').writerows(rows)"
    run analyze -w "$TMP/huge"
    expect_status 1; one_line_err
    expect_err "pmc_perf.csv:3:"
    expect_err "field 'SQ_WAVES': number out of the range of a double"
  done
  # A long number that a double does hold is read (it was refused).
  edit long "
import csv
rows = list(csv.reader(open('pmc_perf.csv', newline='')))
for r in rows[1:]: r[rows[0].index('SQ_WAVES')] = '16384.' + '0' * 300
csv.writer(open('pmc_perf.csv', 'w', newline=''), lineterminator='\n').writerows(rows)"
  run analyze -w "$TMP/long" --format csv -o "$TMP/long.out"
  expect_status 0
  diff -r "$TMP/plain" "$TMP/long.out" >/dev/null || fail "16384.000... read differently: $(diff -r "$TMP/plain" "$TMP/long.out" | head -4)"
  # CR-only line endings and UTF-16 are named as such.
  edit cr "
d = open('pmc_perf.csv', 'rb').read()
open('pmc_perf.csv', 'wb').write(d.replace(b'\n', b'\r'))"
  run analyze -w "$TMP/cr"
  expect_status 1; one_line_err
  expect_err "lone CR"
  edit utf16 "
d = open('sysinfo.csv', encoding='utf-8').read()
open('sysinfo.csv', 'wb').write(d.encode('utf-16'))"
  run analyze -w "$TMP/utf16"
  expect_status 1; one_line_err
  expect_err "sysinfo.csv:1: the file is UTF-16"
  ;;
store_corrupt)
  # 12.13: a lumen database with impossible counts or another format is
  # named as such, not "out of memory" or a wrapped number.
  sq() { python3 -c "import sqlite3,sys; c=sqlite3.connect(sys.argv[1]); c.executescript(sys.argv[2]); c.commit()" "$@"; }
  for case in neg huge rows format blob unchecked flip codec; do
    rm -f "$TMP/s.db"
    "$LUMEN" db import --db "$TMP/s.db" -w "$WL/vcopy/MI200" -n v >/dev/null 2>&1 || fail "import"
    case $case in
    neg) sq "$TMP/s.db" "UPDATE workload SET n_dispatches = -5" ;;
    huge) sq "$TMP/s.db" "UPDATE workload SET n_dispatches = 400000000000" ;;
    rows) sq "$TMP/s.db" "UPDATE column_data SET n_rows = -1 WHERE name = 'SQ_WAVES'" ;;
    format) sq "$TMP/s.db" "UPDATE lumen_meta SET value = 'other' WHERE key = 'format'" ;;
    blob) sq "$TMP/s.db" "UPDATE column_data SET data = substr(data, 1, 5) WHERE name = 'SQ_WAVES'" ;;
    unchecked) sq "$TMP/s.db" "UPDATE column_data SET data = substr(data, 1, 5), checksum = NULL WHERE name = 'SQ_WAVES'" ;;
    flip)
      # one bit of the compressed data, its length kept (a bit flip on
      # disk or in a copy): before checksums, most such flips changed
      # numbers and exited 0
      python3 -c 'import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
d = bytearray(c.execute("SELECT data FROM column_data WHERE name = ?", ("SQ_WAVES",)).fetchone()[0])
d[len(d) // 2] ^= 4
c.execute("UPDATE column_data SET data = ? WHERE name = ?", (bytes(d), "SQ_WAVES"))
c.commit()' "$TMP/s.db" || fail "flip a bit" ;;
    codec) sq "$TMP/s.db" "UPDATE column_data SET codec = 9 WHERE name = 'SQ_WAVES'" ;;
    esac
    LUMEN_STORE_CACHE=off "$LUMEN" analyze --db "$TMP/s.db" -w v >"$TMP/out" 2>"$TMP/err"
    STATUS=$?
    [ "$STATUS" -lt 128 ] || fail "$case: died with signal $((STATUS - 128))"
    expect_status 1; one_line_err
    ! grep -q "out of memory\|18446744073709551615" "$TMP/err" || fail "$case: $(cat "$TMP/err")"
    case $case in
    neg) expect_err "n_dispatches" ; expect_err "-5 is not a dispatch count" ;;
    huge) expect_err "n_dispatches" ;;
    rows) expect_err "column_data.n_rows"; expect_err "-1 rows" ;;
    format) expect_err "format 'other': not a lumen database" ;;
    blob | flip) expect_err "column_data.checksum"; expect_err "workload 'v', column 'SQ_WAVES' of pmc_perf: its data does not match its checksum" ;;
    unchecked) expect_err "column_data.data"; expect_err "workload 'v', column 'SQ_WAVES' of pmc_perf" ;;
    codec) expect_err "column_data.codec"; expect_err "encoding 9" ;;
    esac
  done
  # A store cut short (a copy or download that stopped) is named truncated,
  # with the sizes, by every command that reads it; not "not a lumen
  # database".
  rm -f "$TMP/s.db"
  "$LUMEN" db import --db "$TMP/s.db" -w "$WL/vcopy/MI200" -n v >/dev/null 2>&1 || fail "import"
  size=$(stat -c %s "$TMP/s.db")
  for n in 40 4096 $((size / 2)); do
    head -c "$n" "$TMP/s.db" >"$TMP/cut.db"
    for cmd in "db list" "analyze -w v" "db export v -w $TMP/x"; do
      # shellcheck disable=SC2086
      "$LUMEN" $cmd --db "$TMP/cut.db" >"$TMP/out" 2>"$TMP/err"
      STATUS=$?
      [ "$STATUS" -ge 1 ] && [ "$STATUS" -lt 128 ] || fail "cut at $n, $cmd: status $STATUS"
      one_line_err
      expect_err "cut.db: truncated: the file holds $n bytes"
    done
  done
  grep -q "of the $size its header declares" "$TMP/err" || fail "declared size: $(cat "$TMP/err")"
  ;;
hot_journal)
  # 12.14: after a writer is killed mid-transaction (a hot journal), read-
  # only commands still read the intact store instead of calling it foreign.
  "$LUMEN" db import --db "$TMP/s.db" -w "$WL/vcopy/MI200" -n v >/dev/null 2>&1 || fail "import"
  python3 - "$TMP/s.db" <<'PY'
import os, sqlite3, sys
c = sqlite3.connect(sys.argv[1])
c.execute("pragma cache_size = 10")
c.execute("begin")
for i in range(3000):
    c.execute("insert into lumen_meta(key, value) values (?, hex(randomblob(3000)))", ("junk%d" % i,))
os._exit(0)  # no commit, no rollback: the journal stays hot
PY
  [ -s "$TMP/s.db-journal" ] || fail "no hot journal was left"
  run db list --db "$TMP/s.db"
  expect_status 0
  expect_out "v"
  ! grep -q "not a lumen database" "$TMP/err" || fail "an intact store was called foreign"
  start_server --db "$TMP/s.db"
  get "api/workloads"
  expect_code 200 "workloads"
  grep -q '"db:v"' "$TMP/body" || fail "the store's workload is not served: $(cat "$TMP/body")"
  run analyze --db "$TMP/s.db" -w v -b 2.1.1
  expect_status 0
  expect_out "VALU IOPs"
  ;;
pg_schema_race)
  # 12.15: concurrent first imports into a new PostgreSQL database all
  # succeed (schema creation raced on pg_type).
  if [ -z "${LUMEN_TEST_PG:-}" ]; then
    echo "skipped: LUMEN_TEST_PG names no PostgreSQL server"
    exit 77
  fi
  for i in 1 2 3 4 5 6; do
    db="race_$$_$i"
    psql -q "$LUMEN_TEST_PG/postgres" -c "CREATE DATABASE $db" >/dev/null || fail "createdb $db"
    pids=""
    for k in 1 2 3 4; do
      "$LUMEN" db import --db "$LUMEN_TEST_PG/$db" -w "$WL/vcopy/MI200" -n "w$k" >"$TMP/imp$k.out" 2>"$TMP/imp$k.err" &
      pids="$pids $!"
    done
    k=0
    for p in $pids; do
      k=$((k + 1))
      wait "$p" || fail "round $i: import $k failed: $(cat "$TMP/imp$k.err")"
    done
    # One copy: the others find it by its fingerprint.
    n=$("$LUMEN" db list --db "$LUMEN_TEST_PG/$db" --format csv | tail -n +2 | grep -c .)
    [ "$n" -eq 1 ] || fail "round $i: $n copies of one folder, expected 1"
    [ "$(cat "$TMP"/imp*.out | grep -c "imported as")" -eq 1 ] || fail "round $i: $(cat "$TMP"/imp*.out)"
    psql -q "$LUMEN_TEST_PG/postgres" -c "DROP DATABASE $db" >/dev/null
  done
  ;;
kept_damaged)
  # A kept analysis that is not a valid analysis of its workload (a table
  # without column titles or row ids, a null title or id, its bytes cut
  # short, a count past its bytes or past the workload's dispatches, a
  # table kind, definition, row id (a per-channel one too) or column role
  # out of range, a
  # top-kernels table without its name column) crashed analyze --db in
  # text, JSON and the summary, and lumen serve. It is discarded with one
  # warning naming the workload and what is wrong, and the view recomputed
  # from the stored columns: the same output as an undamaged store's. On
  # PostgreSQL too when LUMEN_TEST_PG names a server.
  [ -x "$KEPT_DAMAGE" ] || fail "kept_damaged needs the kept_damage helper (5th argument)"
  hows="null_titles null_row_ids null_title null_row_id truncated count_bytes count_workload selected_over
        calls_over kind_range def_range row_id_range channel_row_range role_range top_narrow"
  damage() { "$KEPT_DAMAGE" "$1" v "$2" || fail "cannot damage the kept analysis ($2)"; }
  fmt_args() { case $1 in text) ;; json) echo "--format json" ;; summary) echo "--summary" ;; esac; }
  kept_suite() { # DB
    local db=$1 fmt how
    "$LUMEN" db import --db "$db" -w "$WL/vcopy/MI200" -n v >/dev/null 2>&1 || fail "import"
    # What an undamaged store shows (the import kept the default view).
    for fmt in text json summary; do
      run analyze --db "$db" -w v $(fmt_args $fmt)
      expect_status 0
      [ ! -s "$TMP/err" ] || fail "an undamaged store: $(cat "$TMP/err")"
      cp "$TMP/out" "$TMP/want.$fmt"
    done
    start_server --db "$db"
    get "api/analysis?w=db:v"
    expect_code 200 "the undamaged analysis"
    cp "$TMP/body" "$TMP/want.api"
    kill "$SERVER"
    for how in $hows; do
      for fmt in text json summary; do
        damage "$db" "$how"
        run analyze --db "$db" -w v $(fmt_args $fmt)
        [ "$STATUS" -lt 128 ] || fail "$how, $fmt: died with signal $((STATUS - 128))"
        expect_status 0
        cmp -s "$TMP/out" "$TMP/want.$fmt" || fail "$how, $fmt: not what an undamaged store shows"
        expect_err "discarding the kept analysis of 'v' and recomputing it from the stored columns"
        expect_err "a stored analysis is damaged: "
        one_line_err
      done
      # The recomputed analysis took its place: read back without a word.
      run analyze --db "$db" -w v --format json
      expect_status 0
      [ ! -s "$TMP/err" ] || fail "$how: after the recomputation: $(cat "$TMP/err")"
      cmp -s "$TMP/out" "$TMP/want.json" || fail "$how: the recomputed analysis was not kept"
    done
    # The server opens the store read-only: it recomputes, says so once
    # however often it is asked, and stays up.
    for how in null_titles null_row_id kind_range top_narrow; do
      damage "$db" "$how"
      start_server --db "$db"
      for _ in 1 2; do
        get "api/analysis?w=db:v"
        expect_code 200 "$how: the analysis"
        cmp -s "$TMP/body" "$TMP/want.api" || fail "$how: the server's analysis is not the undamaged one"
        get "api/summary?w=db:v"
        expect_code 200 "$how: the summary"
      done
      kill -0 "$SERVER" 2>/dev/null || fail "$how: the server died"
      [ "$(grep -c "ignoring the kept analysis of 'v'" "$TMP/serve.err")" -eq 1 ] ||
        fail "$how: not one warning: $(cat "$TMP/serve.err")"
      kill "$SERVER"
      wait "$SERVER" 2>/dev/null
      # (a writable run puts the undamaged analysis back)
      run analyze --db "$db" -w v --format json
    done
  }
  KIND=sqlite
  kept_suite "$TMP/s.db"
  if [ -n "${LUMEN_TEST_PG:-}" ]; then
    KIND=postgresql
    pgdb="kept_$$"
    psql -q "$LUMEN_TEST_PG/postgres" -c "CREATE DATABASE $pgdb" >/dev/null || fail "createdb $pgdb"
    kept_suite "$LUMEN_TEST_PG/$pgdb"
    psql -q "$LUMEN_TEST_PG/postgres" -c "DROP DATABASE $pgdb" >/dev/null
  else
    echo "LUMEN_TEST_PG is not set: PostgreSQL part skipped"
  fi
  ;;
*)
  fail "unknown case $NAME"
  ;;
esac
exit 0
