#!/usr/bin/env bash
# Installs the Debian packages the test suites start for real (nats-server, nginx, chromium for the browser test of
# the shopper pages) and the tools the walkthrough script uses (curl, jq). Idempotent; quiet when present.
set -euo pipefail
need=()
command -v nats-server >/dev/null 2>&1 || need+=(nats-server)
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v jq >/dev/null 2>&1 || need+=(jq)
[ -x /usr/bin/chromium ] || need+=(chromium)
if [ ${#need[@]} -eq 0 ]; then exit 0; fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "installing system packages: ${need[*]}"
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
