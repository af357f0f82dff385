/* driver.c - placeholder */
#include "cudart/cudart.h"
void *cr_driver_entry(const char *name) { (void)name; return 0; }
