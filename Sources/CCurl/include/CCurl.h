// The C side of NativeAppSupport: libcurl, loaded on first use, and two Linux calls.
#include "curl-shim.h"
#include "linux.h"
