// CLinux is mostly a header of static inline wrappers (include/CLinux.h); this file holds
// what must exist once: the arguments saved before main.
#include "CLinux.h"

static int saved_argument_count;
static char *const *saved_arguments;

static void tokenctl_save_arguments(int count, char **arguments, char **environment) {
  (void)environment;
  saved_argument_count = count;
  saved_arguments = arguments;
}

// Run by glibc's start code, in a static program as in a dynamic one, before main.
__attribute__((section(".init_array"), used))
static void (*const tokenctl_save_arguments_entry)(int, char **, char **) = tokenctl_save_arguments;

int tokenctl_argument_count(void) { return saved_argument_count; }
char *const *tokenctl_arguments(void) { return saved_arguments; }
