#include "libsecret-shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// libsecret's soname since 0.7 (2012), Debian's package libsecret-1-0, and GIO's since GLib
// 2.0. Opened by soname, so that the loader searches only the system's folders: the
// executables have no run path (Makefile, --disable-local-rpath), so nothing beside them
// can stand in for them.
#define LIBSECRET_SONAME "libsecret-1.so.0"
#define GIO_SONAME "libgio-2.0.so.0"

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

// Each library is loaded once, and its failure kept: dlerror's text lives in a buffer the
// next dl call overwrites.
struct load_state {
  pthread_once_t once;
  const char *failure;
  char text[512];
};
static struct load_state gio_state = {PTHREAD_ONCE_INIT, NULL, {0}};
static struct load_state secret_state = {PTHREAD_ONCE_INIT, NULL, {0}};
// Set once every libsecret function is resolved; read by threads that did not load it.
static int secret_loaded;

static int fail(struct load_state *state, const char *detail) {
  snprintf(state->text, sizeof state->text, "%s", detail ? detail : "unknown error");
  state->failure = state->text;
  return 0;
}

static int resolve(struct load_state *state, void *library, void **slot, const char *name) {
  dlerror();
  *slot = dlsym(library, name);
  if (*slot == NULL) return fail(state, dlerror());
  return 1;
}

// RTLD_LOCAL: GLib's symbols stay out of the global namespace, where they could interpose
// on libcurl's dependencies. dlsym on a library's handle searches its dependencies too,
// which is how GLib's and GObject's functions are found through GIO's: the same copies
// libsecret calls, since a library is loaded once per process, whoever asks for it. Each
// library stays open for the rest of the process, as a linked one would: GLib cannot be
// unloaded once its types are registered. Resolving stops at the first missing function,
// so that the message names it.
static void load_gio(void) {
  struct load_state *state = &gio_state;
  void *library = dlopen(GIO_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fail(state, dlerror());
    return;
  }
  int ok = 1;
#define RESOLVE(type, name, parameters, arguments) ok = ok && resolve(state, library, (void **)&lib.name, #name);
#define RESOLVE_PROCEDURE(name, parameters, arguments) ok = ok && resolve(state, library, (void **)&lib.name, #name);
  TOKENCTL_GIO_FUNCTIONS(RESOLVE, RESOLVE_PROCEDURE)
  ok = ok && resolve(state, library, (void **)&lib.g_hash_table_new_full, "g_hash_table_new_full")
    && resolve(state, library, (void **)&lib.g_str_hash, "g_str_hash")
    && resolve(state, library, (void **)&lib.g_str_equal, "g_str_equal");
}

// libsecret brings libgcrypt, for its Diffie-Hellman sessions: 0.4 MiB of peak memory and
// its relocations, which the read paths, in a plain session, do without.
static void load_secret(void) {
  struct load_state *state = &secret_state;
  if (tokenctl_gio_load() != NULL) {
    fail(state, gio_state.failure);
    return;
  }
  void *library = dlopen(LIBSECRET_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fail(state, dlerror());
    return;
  }
  int ok = 1;
  TOKENCTL_SECRET_FUNCTIONS(RESOLVE, RESOLVE_PROCEDURE)
#undef RESOLVE
#undef RESOLVE_PROCEDURE
  __atomic_store_n(&secret_loaded, ok, __ATOMIC_RELEASE);
}

const char *tokenctl_gio_load(void) {
  pthread_once(&gio_state.once, load_gio);
  return gio_state.failure;
}

const char *tokenctl_libsecret_load(void) {
  pthread_once(&secret_state.once, load_secret);
  return secret_state.failure;
}

GQuark tokenctl_secret_error_domain(void) {
  // Only libsecret raises errors in its domain: none can exist before it is loaded.
  return __atomic_load_n(&secret_loaded, __ATOMIC_ACQUIRE) ? lib.secret_error_get_quark() : 0;
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
