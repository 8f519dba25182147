// The C side of the HTTP transport: libcurl, loaded on first use (curl-shim.h).
#include "curl-shim.h"
