/* test_simsdk.c - the simulated SDK's name mangling (test infrastructure
 * that hands out code object symbols as a real runtime does): plain
 * signatures get the manglings g++ gives the same declarations, with the
 * ABI's substitutions; the rest is refused (and reported as recorded); and
 * lumen's demangling gives every mangled name back as it was recorded. */
#include <string.h>

#include "backend/backend.h"
#include "check.h"
#include "sim/simsdk.h"

static const char *mangled(const char *name) {
  static char out[4096];
  return simsdk_mangle(name, out, sizeof out) == 0 ? out : "(refused)";
}

int main(void) {
  /* Expected values: g++'s symbols for these declarations. */
  CHECK_STR(mangled("vecCopy(double*, double*, double*, int, int) [clone .kd]"), "_Z7vecCopyPdS_S_ii.kd");
  CHECK_STR(mangled("vecCopy(double*, double*, double*, int, int)"), "_Z7vecCopyPdS_S_ii");
  CHECK_STR(mangled("g(float* const*, float* const*)"), "_Z1gPKPfS1_");
  CHECK_STR(mangled("ns::in::f(int*, int*, float const*, float const*, unsigned long, char const**, char const**)"),
            "_ZN2ns2in1fEPiS1_PKfS3_mPPKcS6_");
  CHECK_STR(mangled("ns::in::f(int*, int*, const float*, const float*, unsigned long, const char**, const char**)"),
            "_ZN2ns2in1fEPiS1_PKfS3_mPPKcS6_");
  CHECK_STR(mangled("k(Vec*, Vec const&, Vec*)"), "_Z1kP3VecRKS_S0_");
  CHECK_STR(mangled("u(unsigned int, long long, unsigned char const*, unsigned char const*)"), "_Z1ujxPKhS0_");
  CHECK_STR(mangled("none()"), "_Z4nonev");
  /* Refused: templates, return types, anonymous namespaces, C names. */
  CHECK_STR(mangled("void fma<64>(float*, int) [clone .kd]"), "(refused)");
  CHECK_STR(mangled("__amd_rocclr_fillBufferAligned.kd"), "(refused)");
  CHECK_STR(mangled("void at::native::(anonymous namespace)::k<float>(int) (.kd)"), "(refused)");
  CHECK_STR(mangled("f(std::vector<int>)"), "(refused)");
  CHECK_STR(mangled("::f(int)"), "(refused)");
  CHECK_STR(mangled("f(int"), "(refused)");
  char tiny[8];
  CHECK(simsdk_mangle("vecCopy(double*, double*, double*, int, int)", tiny, sizeof tiny) == -1);
  /* Round trip through lumen's demangling (the C++ runtime's). */
  static const char *const names[] = {
      "vecCopy(double*, double*, double*, int, int) [clone .kd]",
      "ns::in::f(int*, int*, float const*, float const*, unsigned long, char const**, char const**) [clone .kd]",
      "k(Vec*, Vec const&, Vec*) [clone .kd]", "none() [clone .kd]"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    char back[4096];
    CHECK_STR(lm_backend_demangle(mangled(names[i]), back, sizeof back), names[i]);
  }
  return check_report("test_simsdk");
}
