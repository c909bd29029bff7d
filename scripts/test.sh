#!/usr/bin/env bash
# Installs everything plus the test tools, starts PostgreSQL, then runs ruff and the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install.sh --test

export GPUVET_TEST_POSTGRES_URL
GPUVET_TEST_POSTGRES_URL=$(bash scripts/postgres.sh)
# A test whose tool (PostgreSQL, Redis, poppler, ip netns, sshd, Chromium) is missing fails, never skips.
export GPUVET_REQUIRE_POSTGRES=1 GPUVET_REQUIRE_TOOLS=1
export PLAYWRIGHT_BROWSERS_PATH=0 PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1

echo "==> ruff"
.venv/bin/ruff check .
.venv/bin/ruff format --check .

echo "==> pytest"
set +e
.venv/bin/python -m pytest "$@"
status=$?
set -e
if ((status == 5)); then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
exit "$status"
