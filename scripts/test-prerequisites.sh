#!/usr/bin/env bash
# First step of `npm test`: the Debian packages the system tests drive for
# real. Present: nothing happens. Missing, as root (or with password-less
# sudo) and with apt-get: they are installed, and the line before says which.
# Otherwise: one line naming the exact apt-get command, and npm test stops.
set -euo pipefail

# command the tests run -> the Debian package that provides it
needed=(
  "chromium:chromium"               # the dashboard, driven by playwright-core
  "bwrap:bubblewrap"                # the skill sandbox
  "tmux:tmux"                       # cli approval mode, on a real terminal
  "systemd-analyze:systemd"         # deploy/systemd units, verified offline
  "softhsm2-util:softhsm2"          # a PKCS#11 token for signer keys
)

missing=()
for entry in "${needed[@]}"; do
  command -v "${entry%%:*}" >/dev/null 2>&1 || missing+=("${entry#*:}")
done
[ ${#missing[@]} -eq 0 ] && exit 0

install=(apt-get install -y -q --no-install-recommends "${missing[@]}")
if command -v apt-get >/dev/null 2>&1; then
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo=(sudo -n); else sudo=(); fi
  fi
  if [ "$(id -u)" -eq 0 ] || [ ${#sudo[@]} -gt 0 ]; then
    echo "npm test: installing the Debian packages the system tests need: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -q
    "${sudo[@]}" "${install[@]}"
    exit 0
  fi
fi
echo "npm test needs Debian packages that are missing; install them with: sudo ${install[*]}" >&2
exit 1
