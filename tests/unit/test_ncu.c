/*
 * test_ncu.c - the cells of Nsight Compute's CSV exports: numbers with
 * thousands separators and missing values (lm_ncu_number), units scaled
 * to CUPTI's base units (lm_ncu_unit_scale).
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "ncu/ncu.h"

static void test_numbers(void) {
  double v;
  CHECK(lm_ncu_number("1,073,741,824", &v) == 1 && v == 1073741824.0);
  CHECK(lm_ncu_number("32,746,880", &v) == 1 && v == 32746880.0);
  CHECK(lm_ncu_number("14915839.12", &v) == 1 && v == 14915839.12);
  CHECK(lm_ncu_number("10,776.576", &v) == 1 && v == 10776.576);
  CHECK(lm_ncu_number("0", &v) == 1 && v == 0);
  CHECK(lm_ncu_number("-3.5e2", &v) == 1 && v == -350);
  CHECK(lm_ncu_number("n/a", &v) == 2 && isnan(v));
  CHECK(lm_ncu_number("N/A", &v) == 2 && isnan(v));
  CHECK(lm_ncu_number("", &v) == 2 && isnan(v));
  CHECK(lm_ncu_number("ten", &v) == 0);
  CHECK(lm_ncu_number("1,2,x", &v) == 0);
  CHECK(lm_ncu_number(",5", &v) == 0);
  CHECK(lm_ncu_number("CachePreferNone", &v) == 0);
}

static int scale_is(const char *unit, double want) {
  double s;
  return lm_ncu_unit_scale(unit, &s) == 1 && fabs(s - want) <= 1e-12 * fabs(want);
}

static void test_units(void) {
  CHECK(scale_is("", 1) && scale_is("%", 1) && scale_is("inst", 1) && scale_is("warp", 1));
  CHECK(scale_is("byte", 1) && scale_is("Kbyte", 1e3) && scale_is("Mbyte", 1e6) && scale_is("Gbyte", 1e9));
  CHECK(scale_is("Tbyte", 1e12) && scale_is("Kibyte", 1024) && scale_is("Mibyte", 1048576));
  /* Times in nanoseconds, as gpu__time_duration.sum. */
  CHECK(scale_is("nsecond", 1) && scale_is("usecond", 1e3) && scale_is("msecond", 1e6) && scale_is("second", 1e9));
  /* Rates per second. */
  CHECK(scale_is("cycle/nsecond", 1e9) && scale_is("cycle/usecond", 1e6) && scale_is("cycle/second", 1));
  CHECK(scale_is("byte/second", 1) && scale_is("Mbyte/s", 1e6) && scale_is("Gbyte/second", 1e9));
  CHECK(scale_is("Tbyte/second", 1e12) && scale_is("inst/cycle", 1) && scale_is("Kbyte/block", 1e3));
  CHECK(scale_is("cycle", 1) && scale_is("Mcycle", 1e6) && scale_is("sector/request", 1));
  CHECK(scale_is("register/thread", 1) && scale_is("Khz", 1e3));
  double s;
  CHECK(lm_ncu_unit_scale("furlong", &s) == 0);
  CHECK(lm_ncu_unit_scale("byte/furlong", &s) == 0);
  CHECK(lm_ncu_unit_scale("byte/second/second", &s) == 0);
  CHECK(lm_ncu_unit_scale("Xbyte", &s) == 0);
}

int main(void) {
  test_numbers();
  test_units();
  return check_report("test_ncu");
}
