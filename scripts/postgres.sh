#!/usr/bin/env bash
# Starts the local PostgreSQL 15 cluster and makes a gpuvet role and test database.
# Prints the SQLAlchemy URL of the test database on stdout.
set -euo pipefail
version=$(ls /usr/lib/postgresql | sort -n | tail -1)
if ! pg_lsclusters -h | grep -q "^$version main"; then
  pg_createcluster "$version" main >/dev/null
fi
pg_ctlcluster "$version" main start >/dev/null 2>&1 || true
for _ in $(seq 1 30); do
  pg_isready -q -h 127.0.0.1 && break
  sleep 1
done
pg_isready -q -h 127.0.0.1
run_sql() { su postgres -c "psql -q -v ON_ERROR_STOP=1 -tAc \"$1\""; }
[[ $(run_sql "SELECT 1 FROM pg_roles WHERE rolname='gpuvet'") == 1 ]] \
  || run_sql "CREATE ROLE gpuvet LOGIN PASSWORD 'gpuvet' CREATEDB"
# The tests drop their throw-away databases WITH (FORCE); an autovacuum worker busy in one may only be ended by a
# member of pg_signal_backend (otherwise: "must be a member of the role whose process is being terminated").
[[ $(run_sql "SELECT pg_has_role('gpuvet', 'pg_signal_backend', 'member')") == t ]] \
  || run_sql "GRANT pg_signal_backend TO gpuvet"
for db in gpuvet_test; do
  [[ $(run_sql "SELECT 1 FROM pg_database WHERE datname='$db'") == 1 ]] \
    || run_sql "CREATE DATABASE $db OWNER gpuvet"
done
echo "postgresql+psycopg://gpuvet:gpuvet@127.0.0.1:5432/gpuvet_test"
