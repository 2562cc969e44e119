/*
 * lumen/markers.h - mark regions of your code for lumen.
 *
 * Build with -DLUMEN_MARKERS and link liblumen_markers to turn the macros
 * into calls; without LUMEN_MARKERS they compile to nothing. When the
 * program runs under `lumen profile`, each kernel dispatch is tagged with
 * the regions active on its thread (BEGIN/END nest per thread) and the
 * process-wide ranges (START/STOP, which may end on another thread), and
 * `-r NAME` limits collection to dispatches inside region NAME. Outside
 * lumen the calls do nothing.
 *
 *   LUMEN_REGION_BEGIN("solve");  ...kernels...  LUMEN_REGION_END("solve");
 *   unsigned long long id = LUMEN_RANGE_START("io");  ...  LUMEN_RANGE_STOP(id);
 *   LUMEN_MARK("checkpoint");
 */
#ifndef LUMEN_MARKERS_H
#define LUMEN_MARKERS_H

#ifdef __cplusplus
extern "C" {
#endif

#ifdef LUMEN_MARKERS
void lumen_region_begin(const char *name);
void lumen_region_end(const char *name);
unsigned long long lumen_range_start(const char *name);
void lumen_range_stop(unsigned long long id);
void lumen_mark(const char *name);
#define LUMEN_REGION_BEGIN(name) lumen_region_begin(name)
#define LUMEN_REGION_END(name) lumen_region_end(name)
#define LUMEN_RANGE_START(name) lumen_range_start(name)
#define LUMEN_RANGE_STOP(id) lumen_range_stop(id)
#define LUMEN_MARK(name) lumen_mark(name)
#else
#define LUMEN_REGION_BEGIN(name) ((void)0)
#define LUMEN_REGION_END(name) ((void)0)
#define LUMEN_RANGE_START(name) (0ULL)
#define LUMEN_RANGE_STOP(id) ((void)(id))
#define LUMEN_MARK(name) ((void)0)
#endif

#ifdef __cplusplus
}
#endif

#endif
