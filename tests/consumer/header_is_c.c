/* Compiled as C: ccalloc.h must be usable from C programs. */
#include <ccalloc/ccalloc.h>

const char* ccalloc_consumer_c_last_error(void) { return ccalloc_last_error(); }
