#!/usr/bin/env bash
# Installs what gpuvet needs: Debian packages, a virtualenv with the pinned Python packages,
# compiled translations. Usage: scripts/install.sh [--test]  (--test adds the test tools).
set -euo pipefail
cd "$(dirname "$0")/.."

with_tests=0
[[ "${1:-}" == "--test" ]] && with_tests=1

apt_packages=(python3-venv iperf3 fio openssh-server iputils-ping iproute2 util-linux procps fonts-wqy-microhei
  poppler-utils libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0 postgresql redis-server)
((with_tests)) && apt_packages+=(chromium)

missing=()
for package in "${apt_packages[@]}"; do
  dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
  echo "==> apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if [[ ! -x .venv/bin/python ]]; then
  echo "==> creating .venv"
  python3 -m venv .venv
fi
echo "==> pip install"
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -r requirements.txt
((with_tests)) && .venv/bin/python -m pip install -q -r requirements-dev.txt

echo "==> compiling translations"
.venv/bin/pybabel compile -d app/translations >/dev/null
