# lib.sh - helpers shared by the shell tests of the lumen binary. Source it
# after setting LUMEN and TMP; KIND (optional) labels failures, e.g. the
# store engine a suite runs on.

fail() {
  echo "FAIL${KIND:+ ($KIND)}: $*"
  exit 1
}
# run ARGS...: lumen's stdout, stderr and exit status into $TMP/out, $TMP/err, $STATUS
run() {
  "$LUMEN" "$@" >"$TMP/out" 2>"$TMP/err"
  STATUS=$?
}
expect_status() { [ "$STATUS" -eq "$1" ] || fail "exit status $STATUS, expected $1 (stderr: $(head -c 600 "$TMP/err"))"; }
expect_out() { grep -qF -- "$1" "$TMP/out" || fail "stdout lacks '$1' (stdout: $(head -c 600 "$TMP/out"))"; }
expect_err() { grep -qF -- "$1" "$TMP/err" || fail "stderr lacks '$1' (stderr: $(head -c 600 "$TMP/err"))"; }
one_line_err() { [ "$(grep -c . "$TMP/err")" -eq 1 ] || fail "error is not one line: $(cat "$TMP/err")"; }

# Server helpers (source scripts/serve-lib.sh first; PIDS collects the
# servers a cleanup trap kills).
# start_server ARGS...: lumen serve on a free loopback port; sets URL.
start_server() {
  start_lumen_serve "$LUMEN" "$TMP" "$@" 2>"$TMP/start.err"
  local ok=$?
  PIDS="$PIDS $SERVER"
  [ "$ok" -eq 0 ] || fail "$(cat "$TMP/start.err")"
}
# get PATH_AND_QUERY [curl args]: body to $TMP/body, status to $CODE
get() {
  local path=$1
  shift
  CODE=$(curl -s -o "$TMP/body" -w '%{http_code}' "$@" "$URL${path#/}")
}
expect_code() { [ "$CODE" = "$1" ] || fail "$2: HTTP $CODE, expected $1 ($(head -c 300 "$TMP/body"))"; }
