#include "curl-shim.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// libcurl's soname since 7.16 (2006); Debian's libcurl4 (OpenSSL) and libcurl3-gnutls
// variants both provide it under this name, and the headers we build with match its ABI.
#define LIBCURL_SONAME "libcurl.so.4"

static struct {
  CURLcode (*global_init)(long flags);
  CURL *(*easy_init)(void);
  void (*easy_cleanup)(CURL *handle);
  CURLcode (*easy_perform)(CURL *handle);
  const char *(*easy_strerror)(CURLcode code);
  CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
  CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
  struct curl_slist *(*slist_append)(struct curl_slist *list, const char *line);
  void (*slist_free_all)(struct curl_slist *list);
} curl;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static const char *load_failure;
// dlerror's text lives in a buffer the next dl call overwrites: keep a copy.
static char load_failure_text[512];

static int fail(const char *format, const char *detail) {
  snprintf(load_failure_text, sizeof load_failure_text, format, detail ? detail : "unknown error");
  load_failure = load_failure_text;
  return 0;
}

static int resolve(void *library, void **slot, const char *name) {
  dlerror();
  *slot = dlsym(library, name);
  if (*slot == NULL) return fail("%s", dlerror());
  return 1;
}

static void load(void) {
  // RTLD_LOCAL: libcurl's dependencies stay out of the global namespace, where they could
  // interpose on the libraries libsecret already loaded.
  void *library = dlopen(LIBCURL_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) {
    fail("%s", dlerror());
    return;
  }
  int ok = resolve(library, (void **)&curl.global_init, "curl_global_init")
    && resolve(library, (void **)&curl.easy_init, "curl_easy_init")
    && resolve(library, (void **)&curl.easy_cleanup, "curl_easy_cleanup")
    && resolve(library, (void **)&curl.easy_perform, "curl_easy_perform")
    && resolve(library, (void **)&curl.easy_strerror, "curl_easy_strerror")
    && resolve(library, (void **)&curl.easy_setopt, "curl_easy_setopt")
    && resolve(library, (void **)&curl.easy_getinfo, "curl_easy_getinfo")
    && resolve(library, (void **)&curl.slist_append, "curl_slist_append")
    && resolve(library, (void **)&curl.slist_free_all, "curl_slist_free_all");
  // The library stays open for the rest of the process, as a linked one would.
  if (!ok) return;
  CURLcode code = curl.global_init(CURL_GLOBAL_ALL);
  if (code != CURLE_OK) fail("curl_global_init failed: %s", curl.easy_strerror(code));
}

const char *tokenctl_curl_load(void) {
  pthread_once(&load_once, load);
  return load_failure;
}

CURL *tokenctl_curl_easy_init(void) { return curl.easy_init(); }
void tokenctl_curl_easy_cleanup(CURL *handle) { curl.easy_cleanup(handle); }
CURLcode tokenctl_curl_easy_perform(CURL *handle) { return curl.easy_perform(handle); }
const char *tokenctl_curl_easy_strerror(CURLcode code) { return curl.easy_strerror(code); }
struct curl_slist *tokenctl_curl_slist_append(struct curl_slist *list, const char *line) {
  return curl.slist_append(list, line);
}
void tokenctl_curl_slist_free_all(struct curl_slist *list) { curl.slist_free_all(list); }

CURLcode tokenctl_curl_setopt_long(CURL *handle, CURLoption option, long value) {
  return curl.easy_setopt(handle, option, value);
}
CURLcode tokenctl_curl_setopt_string(CURL *handle, CURLoption option, const char *value) {
  return curl.easy_setopt(handle, option, value);
}
CURLcode tokenctl_curl_setopt_pointer(CURL *handle, CURLoption option, void *value) {
  return curl.easy_setopt(handle, option, value);
}
CURLcode tokenctl_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value) {
  return curl.easy_setopt(handle, option, value);
}
CURLcode tokenctl_curl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value) {
  return curl.easy_setopt(handle, option, value);
}
CURLcode tokenctl_curl_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback value) {
  return curl.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, value);
}
CURLcode tokenctl_curl_getinfo_long(CURL *handle, CURLINFO info, long *value) {
  return curl.easy_getinfo(handle, info, value);
}
CURLcode tokenctl_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value) {
  return curl.easy_getinfo(handle, info, value);
}
