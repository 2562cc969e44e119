#!/usr/bin/env bash
# A throwaway PostgreSQL server on loopback for the tests.
#   scripts/pg-server.sh start DIR   -> prints postgresql://lumen@127.0.0.1:PORT, a
#                                       server holding the empty databases
#                                       test_db, test_store, test_cli, test_serve
#   scripts/pg-server.sh stop DIR
# The cluster lives in DIR (created by start, removed by stop). As root,
# the server runs as the `postgres` user (PostgreSQL refuses to run as root).
set -euo pipefail
cmd=${1:?start or stop}
dir=${2:?folder}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -x "$bin/initdb" ] || { echo "pg-server: PostgreSQL server binaries not found" >&2; exit 1; }
as_pg() {
  if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
case $cmd in
start)
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres "$dir"
    chmod o+x "$(dirname "$dir")"
  fi
  as_pg "$bin/initdb" -D "$dir/data" -A trust -U lumen -E UTF8 >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  # A free port: try a few, from one that depends on this process.
  port=${LUMEN_PG_PORT:-$((40000 + $$ % 20000))}
  started=0
  for _ in 1 2 3 4 5 6 7 8; do
    if as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off" start >/dev/null 2>&1; then
      started=1
      break
    fi
    port=$((port + 1))
  done
  if [ "$started" -ne 1 ]; then
    echo "pg-server: the server did not start:" >&2
    tail -5 "$dir/server.log" >&2
    exit 1
  fi
  for db in test_db test_store test_cli test_serve; do
    as_pg "$bin/createdb" -h 127.0.0.1 -p "$port" -U lumen "$db"
  done
  echo "postgresql://lumen@127.0.0.1:$port"
  ;;
stop)
  [ -d "$dir/data" ] && as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
  ;;
*)
  echo "usage: pg-server.sh start|stop DIR" >&2
  exit 2
  ;;
esac
