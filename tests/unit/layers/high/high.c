/* A module above low: it may include low's header. */
#include "high/high.h"
#include "low/low.h"
