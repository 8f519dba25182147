#include "libsecret-shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// libsecret's soname since 0.7 (2012), Debian's package libsecret-1-0. Opened by soname, so
// that the loader searches only the system's folders: the executables have no run path
// (Makefile, --disable-local-rpath), so nothing beside them can stand in for it.
#define LIBSECRET_SONAME "libsecret-1.so.0"

static struct {
#define FIELD(type, name, parameters, arguments) type(*name) parameters;
#define PROCEDURE_FIELD(name, parameters, arguments) void(*name) parameters;
  TOKENCTL_LIBSECRET_FUNCTIONS(FIELD, PROCEDURE_FIELD)
#undef FIELD
#undef PROCEDURE_FIELD
  // Passed to g_hash_table_new_full as values, never called from here.
  GHashTable *(*g_hash_table_new_full)(
    guint (*hash)(const void *), gboolean (*equal)(const void *, const void *), GDestroyNotify free_key,
    GDestroyNotify free_value);
  guint (*g_str_hash)(const void *);
  gboolean (*g_str_equal)(const void *, const void *);
} lib;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_failure;
// dlerror's text lives in a buffer the next dl call overwrites: keep a copy.
static char load_failure_text[512];

static int fail(const char *detail) {
  snprintf(load_failure_text, sizeof load_failure_text, "%s", detail ? detail : "unknown error");
  load_failure = load_failure_text;
  return 0;
}

static int resolve(void *library, void **slot, const char *name) {
  dlerror();
  *slot = dlsym(library, name);
  if (*slot == NULL) return fail(dlerror());
  return 1;
}

static void load(void) {
  // RTLD_LOCAL: GLib's symbols stay out of the global namespace, where they could
  // interpose on libcurl's dependencies. dlsym on libsecret's handle searches its
  // dependencies too, which is how GLib's, GObject's and GIO's functions are found: the
  // same copies libsecret itself calls.
  void *library = dlopen(LIBSECRET_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fail(dlerror());
    return;
  }
  // The library stays open for the rest of the process, as a linked one would: GLib
  // cannot be unloaded once its types are registered.
  // Stops at the first missing function, so that the message names it.
  int ok = 1;
#define RESOLVE(type, name, parameters, arguments) ok = ok && resolve(library, (void **)&lib.name, #name);
#define RESOLVE_PROCEDURE(name, parameters, arguments) ok = ok && resolve(library, (void **)&lib.name, #name);
  TOKENCTL_LIBSECRET_FUNCTIONS(RESOLVE, RESOLVE_PROCEDURE)
#undef RESOLVE
#undef RESOLVE_PROCEDURE
  ok = ok && resolve(library, (void **)&lib.g_hash_table_new_full, "g_hash_table_new_full")
    && resolve(library, (void **)&lib.g_str_hash, "g_str_hash")
    && resolve(library, (void **)&lib.g_str_equal, "g_str_equal");
}

const char *tokenctl_libsecret_load(void) {
  pthread_once(&load_once, load);
  return load_failure;
}

#define WRAPPER(type, name, parameters, arguments) \
  type tokenctl_##name parameters { return lib.name arguments; }
#define PROCEDURE_WRAPPER(name, parameters, arguments) \
  void tokenctl_##name parameters { lib.name arguments; }
TOKENCTL_LIBSECRET_FUNCTIONS(WRAPPER, PROCEDURE_WRAPPER)
#undef WRAPPER
#undef PROCEDURE_WRAPPER

GHashTable *tokenctl_g_hash_table_new_strings(void) {
  return lib.g_hash_table_new_full(lib.g_str_hash, lib.g_str_equal, lib.g_free, lib.g_free);
}
