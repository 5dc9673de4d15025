// libFuzzer entry (tests/model/CMakeLists.txt, SPARCOLL_FUZZ=ON with Clang):
//   build-fuzz/tests/model/tuning_fuzz tests/model/corpus/
#include <cstdio>
#include <cstdlib>

#include "fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string why = mtest::checkTuningBytes(data, size, nullptr);
  if (!why.empty()) {
    std::fprintf(stderr, "tuning parser: %s\n", why.c_str());
    std::abort();
  }
  return 0;
}
