#ifndef TOKENCTL_CLIBSECRET_SHIM_H
#define TOKENCTL_CLIBSECRET_SHIM_H
#include <libsecret/secret.h>
#endif
