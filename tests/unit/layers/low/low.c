/* A module low in the order that includes one above it: lint/layers_refuse
 * expects cmake/layers.cmake to name this line. */
#include "low/low.h"
#include "high/high.h"
