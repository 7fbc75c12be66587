# Sourced by .ci/run: a throwaway PostgreSQL server for the Postgres store tests (issue 15). `pg_start`
# installs PostgreSQL from Debian's packages when its binaries are missing, starts a fresh cluster on a free
# loopback port (as the postgres user when run as root), creates a database and exports TEST_DATABASE_URL;
# `pg_stop` stops the server and removes its files. A developer can use it too:
#   . .ci/postgres.sh && pg_start && npx -y deno@2 task test; pg_stop
# PG_DURABLE=1 pg_start keeps PostgreSQL's own durability settings (fsync, synchronous_commit, full page writes
# on), for figures a production server would give (bench/shared_stores.ts: the settlement durability window).

pg_bin_dir() {
  local d
  for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
    if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then echo "$d"; return 0; fi
  done
  if command -v initdb >/dev/null && command -v pg_ctl >/dev/null; then dirname "$(command -v initdb)"; return 0; fi
  return 1
}

# Runs a command as the server's owner: the postgres user under root (initdb refuses root), else oneself.
pg_as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

pg_start() {
  if ! PG_BIN=$(pg_bin_dir); then
    echo "ci: PostgreSQL not found, installing it from Debian packages" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null &&
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null || return 1
    PG_BIN=$(pg_bin_dir) || return 1
  fi
  PG_DIR=$(mktemp -d /tmp/ci-postgres.XXXXXX) || return 1
  chmod 700 "$PG_DIR"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$PG_DIR"; fi
  local port pass
  port=$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})') || return 1
  pass=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
  echo "$pass" >"$PG_DIR/pwfile"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$PG_DIR/pwfile"; fi
  # A test server: no fsync (its data is thrown away) unless PG_DURABLE=1, password auth over TCP as in production.
  local durability="-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
  if [ "${PG_DURABLE:-}" = 1 ]; then durability=""; fi
  pg_as_owner "$PG_BIN/initdb" -D "$PG_DIR/data" -U postgres --pwfile="$PG_DIR/pwfile" \
    --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C --no-sync >"$PG_DIR/initdb.log" 2>&1 ||
    { cat "$PG_DIR/initdb.log" >&2; return 1; }
  pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $PG_DIR $durability -c max_connections=300" \
    start >/dev/null || { tail -n 20 "$PG_DIR/server.log" >&2; return 1; }
  PGPASSWORD=$pass "$PG_BIN/psql" -q -h 127.0.0.1 -p "$port" -U postgres -d postgres \
    -c "CREATE DATABASE gateway_test" || return 1
  export TEST_DATABASE_URL="postgres://postgres:$pass@127.0.0.1:$port/gateway_test"
  echo "ci: PostgreSQL $("$PG_BIN/postgres" --version | awk '{print $3}') on 127.0.0.1:$port, TEST_DATABASE_URL set" >&2
}

pg_stop() {
  if [ -n "${PG_DIR:-}" ] && [ -d "$PG_DIR/data" ]; then
    pg_as_owner "$PG_BIN/pg_ctl" -D "$PG_DIR/data" -m immediate -w stop >/dev/null 2>&1
  fi
  if [ -n "${PG_DIR:-}" ]; then rm -rf "$PG_DIR"; fi
  PG_DIR=
  unset TEST_DATABASE_URL
}
