/* CUDA 12.6's CUPTI API version over the installed toolkit's header (see
 * README.md). */
#ifndef LUMEN_TEST_CUPTI_VERSION_H
#define LUMEN_TEST_CUPTI_VERSION_H
#include_next <cupti_version.h>
#undef CUPTI_API_VERSION
#define CUPTI_API_VERSION 24
#endif
