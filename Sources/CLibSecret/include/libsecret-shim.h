// The C side of the keyring store and its change monitor: libsecret and the GLib it
// stands on, loaded on first use.
//
// libsecret is not linked: it is opened with dlopen(3) by the first keyring operation.
// Linked, it brought GIO, GObject, GLib and libgcrypt into every process at start-up
// (3.2 MiB of peak memory and 2.7 ms of the 6.7 ms of `tokenctl --version`, release build),
// even into commands that never reach the keyring (`--version`, `--help`, a client of the
// agent, which asks the agent instead).
//
// Nothing here includes <libsecret/secret.h>: its include paths come from pkg-config,
// which would add libsecret's link flags back, so libsecret-types.h declares the few types
// tokenctl uses. Swift calls these libraries only through the `tokenctl_` wrappers below;
// a call of a `secret_*` or `g_*` function itself would fail to link. The prefix matters:
// a wrapper named after the function it wraps would be exported from our executable
// (debug builds export every symbol) and interpose on libsecret's own calls to it.
#ifndef TOKENCTL_LIBSECRET_SHIM_H
#define TOKENCTL_LIBSECRET_SHIM_H

#include "libsecret-functions.h"
#include "libsecret-types.h"

// Opens GIO and resolves the functions of TOKENCTL_GIO_FUNCTIONS, once per process.
// Returns NULL when they are all ready, else why not (dlopen's or dlsym's message).
// Thread-safe; later calls return the first call's result.
const char *tokenctl_gio_load(void);

// The same for libsecret: every function of libsecret-functions.h, GIO's included.
const char *tokenctl_libsecret_load(void);

// The domain of libsecret's errors (SECRET_ERROR), or 0 while libsecret is not loaded,
// when no error can be in it.
GQuark tokenctl_secret_error_domain(void);

// The functions of libsecret-functions.h, as `tokenctl_` followed by each one's own name.
// Call only after tokenctl_libsecret_load returned NULL.
#define TOKENCTL_DECLARE_FUNCTION(type, name, parameters, arguments) type tokenctl_##name parameters;
#define TOKENCTL_DECLARE_PROCEDURE(name, parameters, arguments) void tokenctl_##name parameters;
TOKENCTL_LIBSECRET_FUNCTIONS(TOKENCTL_DECLARE_FUNCTION, TOKENCTL_DECLARE_PROCEDURE)
#undef TOKENCTL_DECLARE_FUNCTION
#undef TOKENCTL_DECLARE_PROCEDURE

// A new GHashTable of strings that frees its keys and values (g_str_hash, g_str_equal,
// g_free): GLib's functions as values, which Swift cannot pass from here.
GHashTable *tokenctl_g_hash_table_new_strings(void);

#endif
