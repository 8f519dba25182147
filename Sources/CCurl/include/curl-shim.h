#include <curl/curl.h>

// libcurl is not linked: it is opened with dlopen(3) by the first request. Linked, its ~47
// shared libraries (TLS, HTTP/2, SSH, LDAP, Kerberos, …) were mapped and relocated on
// every start, which doubled the time of `tokenctl token` with a valid token, a command
// that sends nothing. Swift calls libcurl only through these wrappers; a call of a
// `curl_*` function itself would fail to link.

// Opens libcurl and runs curl_global_init, once per process, under a lock (libcurl requires
// both to happen before any handle exists). Returns NULL when libcurl is ready, else why
// not: dlopen's or dlsym's message, or the failed curl_global_init. Thread-safe; later
// calls return the first call's result.
const char *tokenctl_curl_load(void);

// The libcurl functions tokenctl uses. Call only after tokenctl_curl_load returned NULL.
CURL *tokenctl_curl_easy_init(void);
void tokenctl_curl_easy_cleanup(CURL *handle);
CURLcode tokenctl_curl_easy_perform(CURL *handle);
const char *tokenctl_curl_easy_strerror(CURLcode code);
struct curl_slist *tokenctl_curl_slist_append(struct curl_slist *list, const char *line);
void tokenctl_curl_slist_free_all(struct curl_slist *list);

// curl_easy_setopt and curl_easy_getinfo are variadic, which Swift cannot call: one typed
// wrapper per argument type.
CURLcode tokenctl_curl_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode tokenctl_curl_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode tokenctl_curl_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode tokenctl_curl_setopt_off(CURL *handle, CURLoption option, curl_off_t value);
// For CURLOPT_WRITEFUNCTION and CURLOPT_HEADERFUNCTION, which share a signature.
CURLcode tokenctl_curl_setopt_write_function(CURL *handle, CURLoption option, curl_write_callback value);
CURLcode tokenctl_curl_setopt_xferinfo_function(CURL *handle, curl_xferinfo_callback value);
CURLcode tokenctl_curl_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode tokenctl_curl_getinfo_off(CURL *handle, CURLINFO info, curl_off_t *value);
