// The property both the mutation test and the libFuzzer target check: any
// bytes given as a tuning file either parse or fail with scInvalidArgument and
// a message naming the file — never a crash, a hang or another exception.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mtest {

// "" when the property holds for these bytes, else what went wrong. parsed
// (may be NULL) says whether they parsed.
std::string checkTuningBytes(const uint8_t* data, size_t size, bool* parsed);

}  // namespace mtest
