/*
 * fake_cuda.c - the two CUDA driver calls liblumen_tool needs before the
 * first launch, in a library named libcuda.so.1 (its soname) so that the
 * tool finds it loaded as it finds the real driver under CUDA. Built only
 * for tests (integration/cupti_library_*); nothing is ever launched.
 */
#define EXPORT __attribute__((visibility("default")))

EXPORT int cuCtxGetDevice(int *device);
int cuCtxGetDevice(int *device) {
  *device = 0;
  return 0;
}

EXPORT int cuDeviceGetAttribute(int *value, int attribute, int device);
int cuDeviceGetAttribute(int *value, int attribute, int device) {
  (void)attribute, (void)device;
  *value = 0;
  return 0;
}
