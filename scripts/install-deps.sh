#!/usr/bin/env bash
# Installs the Debian packages Quire needs that are missing, through apt-get (with sudo when not root).
#
#   scripts/install-deps.sh            build and test: libmicrohttpd-dev, libgnutls28-dev, libsqlite3-dev,
#                                      zlib1g-dev, pkg-config, curl, python3; for
#                                      the HTTPS tests openssl (test certificates), nginx (the deploy/nginx files)
#                                      and testssl.sh; for scripts/wire-test prometheus (its promtool lints
#                                      /metrics); for scripts/browser-test chromium, chromium-driver and a font
#                                      (fonts-dejavu-core); for scripts/cluster and scripts/cluster-test postgresql
#   scripts/install-deps.sh bench      also the load tools: wrk, apache2-utils (ab), hey; valgrind and binutils (strip)
#                                      for scripts/bench.py instructions
#   scripts/install-deps.sh cluster    only what runs a local cluster from a built quire (scripts/cluster,
#                                      scripts/pg-local): postgresql, nginx, curl, python3
set -euo pipefail

packages=(libmicrohttpd-dev libgnutls28-dev libsqlite3-dev zlib1g-dev pkg-config curl python3 openssl nginx testssl.sh prometheus
  chromium chromium-driver fonts-dejavu-core postgresql)
if [ "${1:-}" = "bench" ]; then
  packages+=(wrk apache2-utils hey valgrind binutils)
elif [ "${1:-}" = "cluster" ]; then
  packages=(postgresql nginx curl python3)
fi

# scripts/spec-test, scripts/browser-test and scripts/docs make virtual environments (schemathesis, Selenium, MkDocs):
# Debian's python3 needs python3-venv.
if [ "${1:-}" != "cluster" ] && { ! command -v python3 >/dev/null || ! python3 -c 'import ensurepip, venv' 2>/dev/null; }; then
  packages+=(python3-venv)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null; then
  echo "missing packages (${missing[*]}) and no apt-get: install them with your package manager" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null || { echo "installing ${missing[*]} needs root or sudo" >&2; exit 1; }
  sudo="sudo"
fi
echo "installing: ${missing[*]}"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# The tests start nginx themselves, on a loopback port; a system service started by the package is not theirs.
# Likewise Prometheus (only its promtool is used) and PostgreSQL (scripts/pg-local runs servers of its own).
for service in nginx prometheus prometheus-node-exporter postgresql; do
  if [[ " ${missing[*]} " == *" ${service%%-*} "* ]] && command -v systemctl >/dev/null \
    && systemctl is-active --quiet "$service" 2>/dev/null; then
    $sudo systemctl disable --now "$service" >/dev/null 2>&1 || true
  fi
done
# Without systemd (a container), the package's own cluster may have been started by its init script.
if [[ " ${missing[*]} " == *" postgresql "* ]] && command -v pg_lsclusters >/dev/null; then
  pg_lsclusters --no-header 2>/dev/null | while read -r version cluster _ status _; do
    if [ "$status" = "online" ]; then $sudo pg_ctlcluster "$version" "$cluster" stop >/dev/null 2>&1 || true; fi
  done
fi
