// CLinux is a header of static inline wrappers (include/CLinux.h); SwiftPM wants a
// source file for a C target.
#include "CLinux.h"
