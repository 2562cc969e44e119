/*
 * fake_cupti.c - stand-ins for libcupti of several CUDA versions, built
 * only for tests (integration/cupti_library_*): each exports what that
 * version's library has and nothing more, so that liblumen_tool's choice
 * between them is made by dlsym as with a real one. FAKE_API is the value
 * cuptiGetVersion gives; FAKE_HOST adds the Profiler Host API (CUDA 12.6),
 * FAKE_RANGE the Range Profiler (12.6 Update 2), FAKE_V2 cuptiSubscribe_v2
 * (13.0). Every call succeeds except the subscribe calls, which answer
 * CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39) so that the tool's
 * error names the call it chose; cuptiSubscribe_v2 answers
 * CUPTI_ERROR_INVALID_PARAMETER (1) where its parameters are not what
 * 13.0's cupti_callbacks.h describes (32 bytes, a subscriber name).
 */
#include <stddef.h>
#include <string.h>

#define EXPORT __attribute__((visibility("default")))
/* A call that takes one parameter struct and succeeds. */
#define OK_CALL(name)                                                          \
  EXPORT int name(void *params);                                               \
  int name(void *params) {                                                     \
    (void)params;                                                              \
    return 0;                                                                  \
  }

EXPORT int cuptiGetVersion(unsigned *version);
int cuptiGetVersion(unsigned *version) {
  *version = FAKE_API;
  return 0;
}

EXPORT int cuptiGetResultString(int result, const char **text);
int cuptiGetResultString(int result, const char **text) {
  *text = result == 39 ? "fake: another subscriber" : "fake: an error";
  return 0;
}

EXPORT int cuptiSubscribe(void **subscriber, void *callback, void *user);
int cuptiSubscribe(void **subscriber, void *callback, void *user) {
  (void)subscriber, (void)callback, (void)user;
  return 39;
}

EXPORT int cuptiEnableCallback(unsigned enable, void *subscriber, int domain,
                               unsigned cbid);
int cuptiEnableCallback(unsigned enable, void *subscriber, int domain,
                        unsigned cbid) {
  (void)enable, (void)subscriber, (void)domain, (void)cbid;
  return 0;
}

EXPORT int cuptiEnableDomain(unsigned enable, void *subscriber, int domain);
int cuptiEnableDomain(unsigned enable, void *subscriber, int domain) {
  (void)enable, (void)subscriber, (void)domain;
  return 0;
}

OK_CALL(cuptiProfilerInitialize)
OK_CALL(cuptiDeviceGetChipName)

#ifdef FAKE_HOST
OK_CALL(cuptiProfilerHostInitialize)
#endif

#ifdef FAKE_RANGE
OK_CALL(cuptiRangeProfilerEnable)
OK_CALL(cuptiRangeProfilerDisable)
OK_CALL(cuptiRangeProfilerGetCounterDataSize)
OK_CALL(cuptiRangeProfilerCounterDataImageInitialize)
OK_CALL(cuptiRangeProfilerSetConfig)
OK_CALL(cuptiRangeProfilerStart)
OK_CALL(cuptiRangeProfilerStop)
OK_CALL(cuptiRangeProfilerDecodeData)
#endif

#ifdef FAKE_V2
typedef struct subscriber_params {
  size_t structSize;
  const char *subscriberName;
  char *oldSubscriberName;
  size_t oldSubscriberSize;
} subscriber_params;

EXPORT int cuptiSubscribe_v2(void **subscriber, void *callback, void *user,
                             subscriber_params *params);
int cuptiSubscribe_v2(void **subscriber, void *callback, void *user,
                      subscriber_params *params) {
  (void)subscriber, (void)callback, (void)user;
  if (!params || params->structSize != 32 || !params->subscriberName)
    return 1;
  return 39;
}
#endif
