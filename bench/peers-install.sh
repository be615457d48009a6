#!/bin/sh
# Installs the optional bench peers that are not dependencies of this repo
# (oh-my-pi's natives addon) outside any checkout, where bench/lib/peers.mjs
# looks for them. The bench skips a peer that is missing.
set -eu
dir=${PI_UTILS_BENCH_PEERS:-$HOME/.cache/pi-utils-bench/peers}
mkdir -p "$dir"
cd "$dir"
[ -f package.json ] || echo '{"name":"pi-utils-bench-peers","private":true}' > package.json
npm install --no-audit --no-fund --no-save @oh-my-pi/pi-natives-linux-x64
