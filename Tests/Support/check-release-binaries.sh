#!/bin/sh
# Checks the executables `make install` installs, from readelf's view of them:
# - no RPATH or RUNPATH at all. The loader searches a run path before the system's
#   folders, for the binary's own libraries and for every dlopen without a slash
#   (libcurl.so.4, libsecret): a `$ORIGIN` entry let a library dropped beside the
#   binary run its constructor in a process holding tokens. The static Swift runtime
#   needs none.
# - none of the libraries opened with dlopen on first use in DT_NEEDED: libcurl, and
#   libsecret with GLib, GIO, GObject and libgcrypt. Linked, they are loaded at every
#   start, by commands that never use them (Sources/CCurl, Sources/CLibSecret).
# - neither libstdc++ nor libgcc_s in DT_NEEDED: they are linked in (Makefile, STATIC_CXX),
#   and binding them was most of the loader's work at start.
# - position independent (ASLR), a GNU_RELRO segment and a stack that is not
#   executable, which the release flags must keep. (BIND_NOW, full RELRO, is not asked
#   for: it would bind every symbol at start, a cost `tokenctl token` has not measured.)
# - with --static BINARY (the front end, Sources/tokenctl-front-end): statically linked,
#   no program interpreter and no library at all, as Package.swift links it: a library
#   in it would bring back the start-up cost the front end exists to avoid. And built as
#   Embedded Swift (Package.swift): no swift5_* section, the metadata of the Swift runtime,
#   whose relocation and start were most of a static Swift program's.
# - with --startup-order FILE: at most a tenth of the functions FILE names missing from
#   the binary and the front end (--static) both, since the file orders the front end's
#   link too. lld skips the missing ones without a word, and a client's start then
#   touches code spread over the binary again (Makefile, RELEASE_FLAGS). And the code no
#   symbol names laid out before .text, in .text.private (Sources/tokenctl/startup-text.ld).
# Prints one line per binary and a summary line; exits 1 if any check fails.
#
# Usage: check-release-binaries.sh [--static BINARY] [--startup-order FILE] BINARY...
set -u
order=
static=
if [ "${1:-}" = --static ]; then
  static=${2:?--static needs a binary}
  shift 2
fi
if [ "${1:-}" = --startup-order ]; then
  order=${2:?--startup-order needs a file}
  shift 2
  [ -r "$order" ] || { echo "$0: cannot read $order" >&2; exit 1; }
  names=$(mktemp)
  ours=$(mktemp)
  trap 'rm -f "$names" "$ours"' EXIT
  grep -v '^#' "$order" > "$names"
  # The front end's functions count for every binary: the file orders its link too.
  [ -z "$static" ] || nm --defined-only "$static" | awk '{print $3}' > "$ours"
fi
[ $# -gt 0 ] || { echo "usage: $0 [--static BINARY] [--startup-order FILE] BINARY..." >&2; exit 64; }
command -v readelf >/dev/null || { echo "$0: readelf not found (apt-get install binutils)" >&2; exit 1; }
passed=0
failed=0
for binary in ${static:+"$static"} "$@"; do
  problems=
  dynamic=$(readelf -d "$binary" 2>&1) || { echo "$binary: not an ELF file: $dynamic"; failed=$((failed + 1)); continue; }
  headers=$(readelf -lW "$binary")
  paths=$(printf '%s\n' "$dynamic" | sed -n 's/.*(\(RPATH\|RUNPATH\)).*\[\(.*\)\].*/\1 [\2]/p' | tr '\n' ' ')
  [ -z "$paths" ] || problems="$problems run path: $paths;"
  needed=$(printf '%s\n' "$dynamic" | sed -n 's/.*(NEEDED).*\[\(.*\)\].*/\1/p')
  linked=$(printf '%s\n' "$needed" | grep -E '^lib(curl|secret-1|glib-2\.0|gio-2\.0|gobject-2\.0|gcrypt)\.so' | tr '\n' ' ')
  [ -z "$linked" ] || problems="$problems links $linked(opened on first use instead);"
  linked=$(printf '%s\n' "$needed" | grep -E '^lib(stdc\+\+|gcc_s)\.so' | tr '\n' ' ')
  [ -z "$linked" ] || problems="$problems links $linked(linked in statically instead: STATIC_CXX);"
  printf '%s\n' "$dynamic" | grep -q 'Flags:.*PIE' || problems="$problems not position independent;"
  printf '%s\n' "$headers" | grep -q 'GNU_RELRO' || problems="$problems no RELRO segment;"
  printf '%s\n' "$headers" | grep 'GNU_STACK' | grep -q 'RWE' && problems="$problems executable stack;"
  if [ "$binary" = "$static" ]; then
    linked=$(printf '%s\n' "$needed" | tr '\n' ' ')
    [ -z "${linked% }" ] || problems="$problems links $linked(must be static);"
    printf '%s\n' "$headers" | grep -q 'INTERP' && problems="$problems has a program interpreter (must be static);"
    readelf -SW "$binary" | grep -q ' swift5_' && problems="$problems has Swift runtime metadata (must be Embedded Swift);"
  elif [ -n "$order" ]; then
    named=$(wc -l < "$names")
    present=$({ nm --defined-only "$binary" | awk '{print $3}'; cat "$ours"; } | sort -u | grep -cFx -f "$names")
    [ $(( (named - present) * 10 )) -le "$named" ] \
      || problems="$problems $((named - present)) of the $named functions in $order are gone (run make startup-order);"
    readelf -SW "$binary" | awk '$2 == ".text.private" { private = NR } $2 == ".text" { text = NR }
      END { exit !(private && private < text) }' \
      || problems="$problems no .text.private before .text (the link did not use startup-text.ld);"
  fi
  if [ -n "$problems" ]; then
    echo "$binary: FAILED:$problems"
    failed=$((failed + 1))
  else
    if [ "$binary" = "$static" ]; then
      echo "$binary: ok (static, Embedded Swift, no run path, PIE, RELRO, no executable stack)"
    else
      echo "$binary: ok (no run path, no libcurl, libsecret or libstdc++ linked, PIE, RELRO, no executable stack${order:+, startup order current})"
    fi
    passed=$((passed + 1))
  fi
done
echo "release binaries: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
