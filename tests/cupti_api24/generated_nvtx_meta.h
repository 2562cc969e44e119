/* CUDA 12.6's generated_nvtx_meta.h uses the NVTX types without including
 * their headers (13.0's includes the four itself): an includer that has
 * not included them first fails here (see README.md). */
#ifndef LUMEN_TEST_GENERATED_NVTX_META_H
#define LUMEN_TEST_GENERATED_NVTX_META_H
#if !defined(NVTX_VERSION) || !defined(NVTOOLSEXT_CUDA_V3) || !defined(NVTOOLSEXT_CUDART_V3) ||   \
    !defined(NVTOOLSEXT_SYNC_V3)
#error "CUDA 12.6's generated_nvtx_meta.h needs the NVTX headers included before it"
#endif
#include_next <generated_nvtx_meta.h>
#endif
