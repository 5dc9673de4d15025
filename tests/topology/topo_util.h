// The two-switch tree of the topology tests and its interleaved placement
// (test_topology_comm.cpp, test_topology_ring.cpp, test_topology_fold.cpp).
// Switch sw0 (root) with hosts a0, a1; switch sw1 under it with b0, b1. Link ids (sparcoll.h,
// scCommGetLinkTraffic): host i (a0 a1 b0 b1 = 0..3) 2i up, 2i+1 down; sw1's
// uplink 10 up (sw1 -> sw0), 11 down.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

namespace topotest {

constexpr int kLinks = 12, kUp = 10, kDown = 11;
inline const char* const kHosts[] = {"a0", "a1", "b0", "b1"};

inline const char* const kTree = R"({"version": 1, "name": "two-switch-2x2",
  "defaults": {"host_link": {"rate": "10gbit"}, "uplink": {"rate": "1gbit"}},
  "switches": [{"name": "sw0"}, {"name": "sw1", "parent": "sw0"}],
  "hosts": [{"name": "a0", "switch": "sw0"}, {"name": "a1", "switch": "sw0"},
            {"name": "b0", "switch": "sw1"}, {"name": "b1", "switch": "sw1"}]})";

inline std::string writeFile(const std::string& name, const std::string& text) {
  std::string path = "/tmp/sparcoll-topology-test-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

// Interleaved placement: rank r on host (a0, b0, a1, b1)[r % 4].
inline int hostOfRank(int r) {
  static const int kPlace[] = {0, 2, 1, 3};
  return kPlace[r % 4];
}
inline std::string names(int P) {
  std::string s;
  for (int r = 0; r < P; ++r) s += std::string(r ? "," : "") + kHosts[hostOfRank(r)];
  return s;
}

// The links a message from host x to host y crosses, by hand: its host links
// when the hosts differ, and sw1's uplink (up from b, down from a) when the
// switches differ.
inline void crossLinks(std::vector<uint64_t>& links, int x, int y, uint64_t bytes) {
  if (x == y) return;
  links[2 * size_t(x)] += bytes;
  links[2 * size_t(y) + 1] += bytes;
  if ((x >= 2) != (y >= 2)) links[size_t(x >= 2 ? kUp : kDown)] += bytes;
}

}  // namespace topotest
