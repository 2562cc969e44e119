# serve-lib.sh - start `lumen serve` on a free loopback port and learn its
# address; sourced by the server's tests, the browser test and the load
# benchmark.
#
# start_lumen_serve LUMEN LOG_DIR ARGS...: starts the server in the
# background with ARGS; sets SERVER (its pid) and URL (http://127.0.0.1:P/).
# Returns 1, with the server's error on stderr, if it does not come up
# within SERVE_START_S seconds (default 10; it reads every folder first).
start_lumen_serve() {
  local lumen=$1 logs=$2
  shift 2
  # The previous server's log goes first: the background shell may open
  # (and empty) the file only after the loop below has read the old URL.
  rm -f "$logs/serve.out" "$logs/serve.err"
  "$lumen" serve --listen 127.0.0.1:0 "$@" >"$logs/serve.out" 2>"$logs/serve.err" &
  SERVER=$!
  URL=""
  for _ in $(seq 1 $((${SERVE_START_S:-10} * 10))); do
    URL=$(grep -o 'http://[^ ]*' "$logs/serve.out" 2>/dev/null | head -1 || true)
    [ -n "$URL" ] && return 0
    kill -0 "$SERVER" 2>/dev/null || break
    sleep 0.1
  done
  echo "the server did not start: $(cat "$logs/serve.err")" >&2
  return 1
}
