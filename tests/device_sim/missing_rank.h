// A meeting's missing rank (transport/local/world.h, World::arrive), the same
// scenario for every kind of meeting: ranks 0 and 1 of 3 on one simulated
// device call a 64-float in-place allreduce with `algo`; rank 2 calls it only
// after both returned. They time out naming rank 2 (`what`: how the wait is
// named) or hear of the other's abort, and withdraw: the late call does not
// touch their buffers (freed by then: under ASan a use after free) and
// fails, its own buffer untouched.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "sim_device.h"
#include "sparcoll/sparcoll.h"

namespace simdev {

inline void expectMissingRankNamed(scConfig_t cfg, scAlgo_t algo, const std::string& what) {
  cfg.timeoutSeconds = 1;
  constexpr int P = 3;
  std::vector<int> devices(P, 0);
  std::atomic<int> returned{0}, timedOut{0};
  auto allreduce = [&](float* buf, scComm_t comm) {
    return scAllReduce(buf, buf, 64, scFloat32, scSum, algo, comm, stream());
  };
  sctest::run(
      P,
      [&](scComm_t comm, int rank) {
        if (rank < 2) {
          auto buf = std::make_unique<std::vector<float>>(64, 1.0f);
          const scResult_t rc = allreduce(buf->data(), comm);
          const std::string err = scGetLastError(comm);
          if (rc == scTimeout) {
            ++timedOut;
            EXPECT_NE(err.find("waiting in " + what + " for ranks that have not reached it: 2 (its last call: #0)"),
                      std::string::npos)
                << err;
          } else {
            EXPECT_EQ(rc, scRemoteError) << err;  // the first to time out aborts
          }
          buf.reset();
          ++returned;
          return;
        }
        while (returned < 2) std::this_thread::sleep_for(std::chrono::milliseconds(5));
        std::vector<float> buf(64, 1.0f);
        EXPECT_NE(allreduce(buf.data(), comm), scSuccess);
        EXPECT_EQ(buf, std::vector<float>(64, 1.0f));
      },
      &cfg, devices.data());
  EXPECT_GE(timedOut, 1);
}

}  // namespace simdev
