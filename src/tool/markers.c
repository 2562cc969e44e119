/*
 * markers.c - liblumen_markers: the region markers of lumen/markers.h,
 * doing nothing. An application links this library; when it runs under
 * `lumen profile`, the tool library (loaded first) defines the same
 * functions and the dynamic linker binds the calls to those.
 */
#include "lumen/markers.h"

void lumen_region_begin(const char *name) { (void)name; }
void lumen_region_end(const char *name) { (void)name; }
unsigned long long lumen_range_start(const char *name) {
  (void)name;
  return 0;
}
void lumen_range_stop(unsigned long long id) { (void)id; }
void lumen_mark(const char *name) { (void)name; }
