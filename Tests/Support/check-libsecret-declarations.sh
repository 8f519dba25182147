#!/bin/sh
# Compares Sources/CLibSecret's own declarations of libsecret and GLib with Debian's
# headers (libsecret-1-dev), which the build does not use (libsecret-shim.h says why):
# - every function of libsecret-functions.h has the type its header gives it, checked by
#   the compiler with the real headers in scope;
# - the structures, enumeration values and basic types of libsecret-types.h have the
#   sizes, offsets and values of the real ones: one program built against each, whose
#   outputs must be equal.
# A mismatch would compile and link, and then corrupt memory at run time.
#
# Usage: check-libsecret-declarations.sh   (from the package's root; CC defaults to clang)
set -eu
cc=${CC:-clang}
include=Sources/CLibSecret/include
command -v pkg-config >/dev/null || { echo "$0: pkg-config not found (apt-get install pkg-config)" >&2; exit 1; }
flags=$(pkg-config --cflags libsecret-1) || { echo "$0: apt-get install libsecret-1-dev" >&2; exit 1; }
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# secret-paths.h, whose D-Bus path functions the store reads with, comes only with
# libsecret's unstable API, which secret.h includes once it is acknowledged.
cat > "$scratch/functions.c" <<'EOF'
#define SECRET_API_SUBJECT_TO_CHANGE
#include <libsecret/secret.h>
#include "libsecret-functions.h"
#define CHECK(type, name, parameters, arguments) \
  _Static_assert(__builtin_types_compatible_p(__typeof__(&name), type(*) parameters), \
    #name " is declared differently in Debian's headers");
#define CHECK_PROCEDURE(name, parameters, arguments) CHECK(void, name, parameters, arguments)
TOKENCTL_LIBSECRET_FUNCTIONS(CHECK, CHECK_PROCEDURE)
EOF
# shellcheck disable=SC2086 # pkg-config's flags are words
"$cc" -std=gnu11 -fsyntax-only $flags -I "$include" "$scratch/functions.c"

cat > "$scratch/layout.c" <<'EOF'
#ifdef OURS
#include "libsecret-types.h"
#else
#include <libsecret/secret.h>
#endif
#include <stddef.h>
#include <stdio.h>
#define SIGNED(type) ((type)-1 < (type)0)
int main(void) {
  printf("gsize %zu %d, gssize %zu %d, gint %zu, guint %zu %d, gboolean %zu, guint64 %zu %d, GQuark %zu %d\n",
    sizeof(gsize), SIGNED(gsize), sizeof(gssize), SIGNED(gssize), sizeof(gint), sizeof(guint), SIGNED(guint),
    sizeof(gboolean), sizeof(guint64), SIGNED(guint64), sizeof(GQuark), SIGNED(GQuark));
  printf("GError %zu: domain %zu, code %zu, message %zu\n", sizeof(GError), offsetof(GError, domain),
    offsetof(GError, code), offsetof(GError, message));
  printf("GList %zu: data %zu, next %zu, prev %zu\n", sizeof(GList), offsetof(GList, data), offsetof(GList, next),
    offsetof(GList, prev));
  printf("GHashTableIter %zu\n", sizeof(GHashTableIter));
  printf("gint64 %zu %d, gint32 %zu %d, guint8 %zu %d\n", sizeof(gint64), SIGNED(gint64), sizeof(gint32),
    SIGNED(gint32), sizeof(guint8), SIGNED(guint8));
  printf("GDBusInterfaceVTable %zu: method_call %zu, get_property %zu, set_property %zu\n",
    sizeof(GDBusInterfaceVTable), offsetof(GDBusInterfaceVTable, method_call),
    offsetof(GDBusInterfaceVTable, get_property), offsetof(GDBusInterfaceVTable, set_property));
  printf("enums %zu %zu %zu %zu %zu %zu %zu %zu\n", sizeof(GBusType), sizeof(GDBusCallFlags), sizeof(GDBusSignalFlags),
    sizeof(SecretServiceFlags), sizeof(SecretCollectionFlags), sizeof(SecretItemCreateFlags),
    sizeof(SecretSearchFlags), sizeof(SecretItemFlags));
  printf("G_BUS_TYPE_SESSION %d, G_DBUS_CALL_FLAGS_NONE %d, G_DBUS_CALL_FLAGS_NO_AUTO_START %d, "
    "G_DBUS_SIGNAL_FLAGS_NONE %d\n", G_BUS_TYPE_SESSION, G_DBUS_CALL_FLAGS_NONE, G_DBUS_CALL_FLAGS_NO_AUTO_START,
    G_DBUS_SIGNAL_FLAGS_NONE);
  printf("SECRET_SERVICE_NONE %d, SECRET_COLLECTION_NONE %d, SECRET_ITEM_CREATE_NONE %d, SECRET_ITEM_NONE %d\n",
    SECRET_SERVICE_NONE, SECRET_COLLECTION_NONE, SECRET_ITEM_CREATE_NONE, SECRET_ITEM_NONE);
  printf("SECRET_SEARCH: NONE %d, ALL %d, UNLOCK %d, LOAD_SECRETS %d\n", SECRET_SEARCH_NONE, SECRET_SEARCH_ALL,
    SECRET_SEARCH_UNLOCK, SECRET_SEARCH_LOAD_SECRETS);
  printf("SECRET_ERROR_IS_LOCKED %d, SECRET_COLLECTION_DEFAULT %s\n", SECRET_ERROR_IS_LOCKED,
    SECRET_COLLECTION_DEFAULT);
  return 0;
}
EOF
# shellcheck disable=SC2086
"$cc" -std=gnu11 $flags -o "$scratch/theirs" "$scratch/layout.c"
"$cc" -std=gnu11 -DOURS -I "$include" -o "$scratch/ours" "$scratch/layout.c"
"$scratch/theirs" > "$scratch/theirs.txt"
"$scratch/ours" > "$scratch/ours.txt"
if ! diff -u "$scratch/theirs.txt" "$scratch/ours.txt"; then
  echo "$0: libsecret-types.h (+) differs from Debian's headers (-)" >&2
  exit 1
fi
echo "libsecret declarations: $(grep -c '^ *[FV](' "$include/libsecret-functions.h") functions and the types match Debian's headers"
