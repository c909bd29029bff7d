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

# Two passes: the tests that need no real network, sshd or browser run on every CPU (pytest-xdist);
# the slow ones (real sshd / iperf3 / fio / shaped links / Chromium) run one at a time, as their timings need.
cores=$(nproc 2>/dev/null || echo 2)
workers=$((cores < 2 ? 2 : cores > 8 ? 8 : cores))
statuses=()
set +e
echo "==> pytest: tests without real network or browser, ${workers} workers"
.venv/bin/python -m pytest -n "$workers" -m "not slow and not browser" "$@"
statuses+=($?)
echo "==> pytest: real sshd / iperf3 / fio / shaped links / Chromium, one at a time"
.venv/bin/python -m pytest -m "slow or browser" "$@"
statuses+=($?)
set -e
# pytest exits 5 when a pass selects no test: one empty pass is fine (a path given on the command line
# may hold only fast or only slow tests); both empty means nothing ran, which must not pass silently.
if ((statuses[0] == 5 && statuses[1] == 5)); then
  echo "pytest collected no tests: failing on purpose" >&2
  exit 1
fi
for status in "${statuses[@]}"; do
  if ((status != 0 && status != 5)); then
    exit "$status"
  fi
done
