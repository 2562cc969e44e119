/* CUDA 12.6's callback API has cuptiSubscribe only: cuptiSubscribe_v2 and
 * its parameters came with 13.0, and are poisoned here (see README.md). */
#ifndef LUMEN_TEST_CUPTI_CALLBACKS_H
#define LUMEN_TEST_CUPTI_CALLBACKS_H
#include_next <cupti_callbacks.h>
#undef CUpti_SubscriberParams_STRUCT_SIZE
#pragma GCC poison cuptiSubscribe_v2 CUpti_SubscriberParams CUpti_SubscriberParams_STRUCT_SIZE
#endif
