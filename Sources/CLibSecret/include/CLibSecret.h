// The C side of the keyring store: libsecret, loaded on first use (libsecret-shim.h).
#include "libsecret-shim.h"
