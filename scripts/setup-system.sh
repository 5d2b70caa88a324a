#!/usr/bin/env bash
# Installs the system packages replica builds and tests with (Debian 12). Needs root, or sudo.
# With --list, only prints them. PostgreSQL (its client library and the server, which the tests and
# benchmarks start themselves with scripts/postgres.sh) is for the PostgreSQL backend.
set -euo pipefail
# debian-reference-ja: the Debian Reference in Japanese, which the quick start indexes and searches in Japanese.
packages=(libsqlite3-dev libgit2-dev libopenblas-dev libpq-dev libicu-dev libstemmer-dev libcld2-dev postgresql pkg-config python3 python3-venv git strace
          debian-reference-ja)
if [[ ${1:-} == --list ]]; then
    echo "${packages[*]}"
    exit 0
fi
missing=()
for package in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
done
if ((${#missing[@]})); then
    sudo=""
    [[ $(id -u) -eq 0 ]] || sudo="sudo"
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
    echo "installed: ${missing[*]}"
fi
