// The C side of NativeAppSupport: libcurl, loaded on first use, and a few Linux calls.
#include "curl-shim.h"
#include "linux.h"
