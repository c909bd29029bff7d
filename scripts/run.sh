#!/usr/bin/env bash
# Installs everything, prepares the SQLite database, loads demo data, creates an admin and serves
# the app on http://127.0.0.1:5000.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh

export FLASK_APP=wsgi
flask=.venv/bin/flask
echo "==> database"
$flask db upgrade
$flask demo load --if-empty

# The instance folder is the app's (GPUVET_INSTANCE_PATH, default ./instance; app/core/config.py): private.
instance_dir=${GPUVET_INSTANCE_PATH:-instance}
mkdir -p -m 700 "$instance_dir"
admin_file=$instance_dir/admin-password
if [[ ! -s $admin_file ]]; then
  # umask 077: the file is never readable by others, not even before a chmod.
  (umask 077 && .venv/bin/python -c "import secrets; print(secrets.token_urlsafe(12))" > "$admin_file")
  $flask users create admin --role admin --password-stdin < "$admin_file"
fi
echo
echo "  gpuvet: http://127.0.0.1:5000"
echo "  log in as: admin / $(cat "$admin_file")"
echo
# The background job worker (Huey consumer: SQLite queue under instance/, or Redis when REDIS_URL is set)
# runs beside the web server and stops with it (SIGINT: it finishes the jobs it is running first).
$flask worker &
worker_pid=$!
trap 'kill -INT "$worker_pid" 2>/dev/null || true; wait "$worker_pid" 2>/dev/null || true' EXIT
.venv/bin/gunicorn -c gunicorn.conf.py --bind 127.0.0.1:5000 --workers 2 --access-logfile - wsgi:app
