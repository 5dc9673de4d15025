// The tuning parser under many deterministic random mutations of a good file
// (bit flips, JSON punctuation and literals dropped in, bytes deleted or
// repeated): each must parse or fail cleanly (fuzz_check.h). Runs in every
// build, the ASan + UBSan one included; tuning_fuzz.cpp is the same check for
// libFuzzer.
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "fuzz_check.h"

namespace mtest {
namespace {

const char* const kSeed = R"({
  "format": "sparcoll-tuning", "version": 1, "created": "2026-11-30T12:00:00Z",
  "source": {"tool": "sparcoll-tune", "runs": [1, 2.5, null, true]},
  "models": [
    {"transport": "mpi", "memory": "host", "level": "intra", "alpha": 4e-6, "beta": 2e-10, "gamma": 1e-10,
     "fit": {"r2": 0.99}},
    {"transport": "nccl", "level": "inter", "alpha": 2e-5, "beta": 1e-9, "gamma": 0, "message_overhead": 3e-6}
  ],
  "rules": [
    {"collective": "allreduce", "transport": "mpi", "ranks": [2, 8], "bytes": [0, 4096], "algorithm": "recdbl"},
    {"collective": "sparse_allreduce", "density": [0, 0.01], "algorithm": "ssar_rec_dbl"},
    {"collective": "neighbor_allgather", "memory": "device", "algorithm": "hierarchical"}
  ]
})";

const char* const kTokens[] = {"{",
                               "}",
                               "[",
                               "]",
                               ",",
                               ":",
                               "\"",
                               "\\",
                               "null",
                               "true",
                               "-",
                               "1e400",
                               "0.5",
                               "18446744073709551616",
                               "\"bytes\": [1, 0]",
                               "\"x\": 1",
                               "\xff",
                               "\\u0000",
                               "\"algorithm\"",
                               "\"version\": 2",
                               "[[[[[[[["};

TEST(TuningFuzz, MutationsParseOrFailCleanly) {
  std::mt19937_64 rng(20261130);
  const std::string seed = kSeed;
  int parsed = 0, rejected = 0;
  const int kRuns = 20000;
  for (int run = 0; run < kRuns; ++run) {
    std::string s = seed;
    const int edits = 1 + int(rng() % 4);
    for (int e = 0; e < edits && !s.empty(); ++e) {
      const size_t at = rng() % s.size();
      switch (rng() % 5) {
        case 0: s[at] = char(s[at] ^ (1 << (rng() % 8))); break;
        case 1: s[at] = char(rng() % 256); break;
        case 2: s.insert(at, kTokens[rng() % (sizeof(kTokens) / sizeof(kTokens[0]))]); break;
        case 3: s.erase(at, 1 + rng() % 16); break;
        default: s.insert(at, s.substr(at, 1 + rng() % 32)); break;
      }
    }
    bool ok = false;
    const std::string why = checkTuningBytes(reinterpret_cast<const uint8_t*>(s.data()), s.size(), &ok);
    ASSERT_EQ(why, "") << "run " << run << ", input:\n" << s;
    (ok ? parsed : rejected)++;
  }
  // The mutations reach both sides (a test that only ever rejects proves little).
  EXPECT_GT(parsed, kRuns / 100);
  EXPECT_GT(rejected, kRuns / 2);
  bool ok = false;
  EXPECT_EQ(checkTuningBytes(reinterpret_cast<const uint8_t*>(seed.data()), seed.size(), &ok), "");
  EXPECT_TRUE(ok);
}

}  // namespace
}  // namespace mtest
