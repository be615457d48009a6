#!/bin/sh
# Makes the `linux` benchmark corpus: the Linux 6.12 tree from Debian's
# linux-source-6.12, unpacked outside any git checkout, with Debian's packaging
# block removed from the root .gitignore so the tree behaves like a kernel
# checkout (Debian appends a `/*` line that marks every top-level entry ignored,
# which made earlier figures measure the all-ignored path).
#
# Idempotent: an existing, already-fixed tree is left alone; a tree whose
# .gitignore still carries the block is fixed in place.
#
#   sh bench/corpus-linux.sh            # -> ~/.cache/pi-utils-bench/linux-source-6.12
#   PI_UTILS_CORPUS=/some/dir sh bench/corpus-linux.sh
set -eu

tarball=/usr/src/linux-source-6.12.tar.xz
corpus=${PI_UTILS_CORPUS:-$HOME/.cache/pi-utils-bench/linux-source-6.12}
parent=$(dirname "$corpus")

if [ ! -d "$corpus" ]; then
  if [ ! -f "$tarball" ]; then
    echo "missing $tarball: apt-get install linux-source-6.12" >&2
    exit 2
  fi
  mkdir -p "$parent"
  # Unpack beside the target and rename, so an interrupted run never leaves
  # a half tree at the corpus path.
  tmp=$(mktemp -d "$parent/.unpack.XXXXXX")
  tar xJf "$tarball" -C "$tmp"
  mv "$tmp/linux-source-6.12" "$corpus"
  rmdir "$tmp"
fi

# Debian's block starts at a line that is exactly `/*` and runs to the end of
# the file (the `/*` line plus its `!`-exceptions). Cut from that line on.
gi="$corpus/.gitignore"
if grep -qx '/\*' "$gi"; then
  line=$(grep -nx '/\*' "$gi" | head -n 1 | cut -d: -f1)
  # Also drop the comment lines and blank lines directly above it that belong
  # to the block.
  start=$line
  while [ "$start" -gt 1 ]; do
    prev=$(sed -n "$((start - 1))p" "$gi")
    case "$prev" in
      '#'* | '') start=$((start - 1)) ;;
      *) break ;;
    esac
  done
  head -n "$((start - 1))" "$gi" > "$gi.tmp"
  mv "$gi.tmp" "$gi"
fi

# Refuse a corpus inside a git checkout: rg and we would apply its ignores.
if (cd "$corpus" && git rev-parse --show-toplevel >/dev/null 2>&1); then
  echo "warning: $corpus is inside a git checkout; results will be skewed" >&2
fi

files=$(find "$corpus" -type f | wc -l)
echo "corpus ready: $corpus ($files files)"
