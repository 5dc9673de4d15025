// SPARCOLL_TRACE (one Chrome trace file per communicator rank: every call
// with its bytes, rounds, peers and status) and the flight recorder dumped to
// stderr when a call times out (core/trace.h).
#include <dirent.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <thread>
#include <chrono>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "common/harness.h"
#include "core/deadline.h"
#include "core/trace.h"
#include "reliability/reliability_util.h"

namespace {

using reltest::has;

bool local() { return sctest::mode() == sctest::Mode::Local; }

std::string makeTempDir() {
  char tmpl[] = "/tmp/sparcoll-trace-XXXXXX";
  const char* d = mkdtemp(tmpl);
  return d ? d : "";
}

std::vector<std::string> files(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).rfind("sparcoll-", 0) == 0) out.push_back(dir + "/" + e->d_name);
    closedir(d);
  }
  return out;
}

void removeDir(const std::string& dir) {
  for (const auto& f : files(dir)) unlink(f.c_str());
  rmdir(dir.c_str());
}

TEST(Trace, EveryCallOfEveryRank) {
  if (!local()) GTEST_SKIP() << "one process holds every rank's file here";
  const std::string dir = makeTempDir();
  ASSERT_FALSE(dir.empty());
  constexpr int P = 3;
  {
    sctest::ScopedEnv env("SPARCOLL_TRACE", dir.c_str());
    sctest::run(P, [&](scComm_t comm, int rank) {
      std::vector<float> x(3000, 1.0f), g(3000 * P);
      SC_OK(comm, scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr));
      SC_OK(comm, scAllGather(x.data(), g.data(), x.size(), scFloat32, scAlgoRecDbl, comm, nullptr));
      // A call that fails on every rank: it is traced with its error.
      const size_t n = rank == 0 ? 100 : 200;
      EXPECT_NE(scAllReduce(x.data(), x.data(), n, scFloat32, scSum, scAlgoRing, comm, nullptr), scSuccess);
    });
  }
  const auto fs = files(dir);
  ASSERT_EQ(fs.size(), size_t(P)) << "one file per communicator rank in " << dir;
  std::set<int> ranks;
  for (const auto& f : fs) {
    std::ifstream in(f);
    std::stringstream ss;
    ss << in.rdbuf();
    nlohmann::json events;
    ASSERT_NO_THROW(events = nlohmann::json::parse(ss.str())) << f;  // closed: a complete JSON array
    std::vector<nlohmann::json> calls;
    for (const auto& e : events)
      if (e["ph"] == "X") calls.push_back(e);
    ASSERT_EQ(calls.size(), 3u) << f;
    const int rank = calls[0]["pid"];
    ranks.insert(rank);
    const auto& ar = calls[0]["args"];
    EXPECT_EQ(calls[0]["name"], "scAllReduce");
    EXPECT_EQ(ar["call"], 1);
    EXPECT_EQ(ar["algorithm"], "ring");
    EXPECT_EQ(ar["count"], 3000);
    EXPECT_EQ(ar["status"], "success");
    // Ring allreduce: 2(P-1) rounds, each sending a block of about count/P
    // elements to the right and receiving one from the left.
    EXPECT_EQ(ar["rounds"], 2 * (P - 1));
    EXPECT_EQ(ar["bytes_sent"], 2 * (P - 1) * 1000 * 4);
    EXPECT_EQ(ar["bytes_received"], 2 * (P - 1) * 1000 * 4);
    std::set<int> peers(ar["peers"].begin(), ar["peers"].end());
    EXPECT_EQ(peers, (std::set<int>{(rank + 1) % P, (rank + P - 1) % P}));
    EXPECT_GE(calls[0]["dur"].get<double>(), 0.0);
    EXPECT_LE(calls[0]["ts"].get<double>(), calls[1]["ts"].get<double>());
    EXPECT_EQ(calls[1]["name"], "scAllGather");
    EXPECT_EQ(calls[1]["args"]["algorithm"], "recdbl");
    EXPECT_NE(calls[2]["args"]["status"], "success");
    EXPECT_TRUE(calls[2]["args"].contains("error"));
  }
  EXPECT_EQ(ranks, (std::set<int>{0, 1, 2}));
  removeDir(dir);
}

TEST(Trace, BadDirectoryIsRefusedAtCreation) {
  sctest::ScopedEnv env("SPARCOLL_TRACE", "/nonexistent/sparcoll-trace");
  scComm_t comms[2];
  EXPECT_EQ(scCommInitLocal(comms, 2, nullptr, nullptr), scInvalidArgument);
  EXPECT_TRUE(has(scGetLastError(nullptr), "SPARCOLL_TRACE")) << scGetLastError(nullptr);
  sctest::ScopedEnv env2("SPARCOLL_FLIGHT_RECORDER", "many");
  EXPECT_EQ(scCommInitLocal(comms, 2, nullptr, nullptr), scInvalidArgument);
}

// A timeout dumps the last calls (SPARCOLL_FLIGHT_RECORDER of them) to stderr,
// the call that timed out last, with where it was.
TEST(FlightRecorder, DumpedOnTimeout) {
  if (!local()) GTEST_SKIP() << "stderr of one process";
  sctest::ScopedEnv keep("SPARCOLL_FLIGHT_RECORDER", "3");
  scConfig_t cfg = sctest::testConfig();
  cfg.timeoutSeconds = 0.3;
  testing::internal::CaptureStderr();
  sctest::run(
      2,
      [&](scComm_t comm, int rank) {
        std::vector<float> x(1000, 1.0f);
        for (int i = 0; i < 5; ++i)
          SC_OK(comm, scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr));
        if (rank == 1) return;  // stops: rank 0's next call times out
        EXPECT_NE(scAllReduce(x.data(), x.data(), x.size(), scFloat32, scSum, scAlgoRing, comm, nullptr), scSuccess);
      },
      &cfg);
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_TRUE(has(err, "sparcoll: rank 0 of 2")) << err;
  EXPECT_TRUE(has(err, "its last calls:")) << err;
  EXPECT_FALSE(has(err, "  #3 ")) << "only the last 3 calls are kept: " << err;
  EXPECT_TRUE(has(err, "  #4 scAllReduce(count=1000, float, sum, ring): ok")) << err;
  EXPECT_TRUE(has(err, "  #6 scAllReduce(count=1000, float, sum, ring): timeout in")) << err;
  EXPECT_TRUE(has(err, "last at ring")) << err;
}

}  // namespace

// The recorder lists each peer of a call once, in order of first use, however
// many messages go to it, and counts the distinct peers past its cap exactly;
// a call nested in another (DSOP's allreduce) keeps its own list, and the
// outer call's list stays free of repeats after it.
TEST(FlightRecorder, PeersOncePerCall) {
  constexpr int P = 100;
  sc::Recorder rec(4, "", 0, P, "local");
  char b = 0;
  auto ops = [&](std::initializer_list<int> peers) {
    std::vector<sc::P2POp> v;
    for (int p : peers) v.push_back({sc::P2POp::Send, p, &b, 1});
    for (int p : peers) v.push_back({sc::P2POp::Recv, p, &b, 1});
    return v;
  };
  scStats_t st{};
  rec.begin(1, {"outer"}, st);
  rec.round(ops({3, 1, 3}), nullptr, 0, 0);
  rec.round(ops({1, 7}), nullptr, 0, 0);
  rec.begin(2, {"inner"}, st);
  rec.round(ops({7, 5, 7}), nullptr, 0, 0);
  rec.end(1, scSuccess, "", st);
  rec.round(ops({5, 7, 3, 9}), nullptr, 0, 0);
  rec.end(0, scSuccess, "", st);
  // Past the cap (64 peers): 90 distinct peers, each in several messages.
  rec.begin(3, {"wide"}, st);
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<sc::P2POp> v;
    for (int p = 0; p < 90; ++p) v.push_back({sc::P2POp::Send, p, &b, 1});
    rec.round(v, nullptr, 0, 0);
  }
  rec.end(2, scSuccess, "", st);
  const std::string d = rec.dump();
  EXPECT_TRUE(has(d, "#1 outer(")) << d;
  EXPECT_TRUE(has(d, "3 rounds, peers 3 1 7 5 9\n")) << d;
  EXPECT_TRUE(has(d, "1 round, peers 7 5\n")) << d;
  std::string wide = "3 rounds, peers";
  for (int p = 0; p < 64; ++p) wide += " " + std::to_string(p);
  EXPECT_TRUE(has(d, wide + " and 26 more\n")) << d;
}

// Microseconds of the duration that follows `prefix` in a dump ("12 us",
// "3.250 ms", "1.500 s"), or -1 when the prefix is not there.
double usAfter(const std::string& d, const std::string& prefix) {
  const size_t at = d.find(prefix);
  if (at == std::string::npos) return -1;
  std::istringstream in(d.substr(at + prefix.size()));
  double v = 0;
  std::string unit;
  in >> v >> unit;
  return unit.rfind("us", 0) == 0 ? v : unit.rfind("ms", 0) == 0 ? v * 1e3 : v * 1e6;
}

// Without a trace, no clock is read per call: a call is timed from its
// deadline's start (the first look of one of its waits at the clock, which
// end() is given) to its end, on the precise clock. A call that never
// waited that long says so, not a false "0 us"; one nested in another is
// timed from its own start; one in flight from its wait's start.
TEST(FlightRecorder, TimedFromTheFirstLongWait) {
  using Clock = std::chrono::steady_clock;
  sc::Recorder rec(8, "", 0, 2, "local");
  scStats_t st{};
  const auto ticksAgo = [](double ms) {
    return int64_t(
        (Clock::now() - std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double, std::milli>(ms)))
            .time_since_epoch()
            .count());
  };
  rec.begin(1, {"quick"}, st);
  rec.end(0, scSuccess, "", st, 0);
  rec.begin(2, {"waited"}, st);
  rec.end(1, scSuccess, "", st, ticksAgo(30));
  rec.begin(3, {"outer"}, st);
  rec.begin(4, {"inner"}, st);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  rec.end(3, scSuccess, "", st, 0);
  rec.end(2, scSuccess, "", st, 0);
  rec.begin(5, {"hung"}, st);
  const std::string d = rec.dump(ticksAgo(40));
  EXPECT_TRUE(has(d, "#1 quick(count=0): ok without a long wait, sent 0 B")) << d;
  const double waited = usAfter(d, "#2 waited(count=0): ok in ");
  EXPECT_GE(waited, 30e3) << d;
  EXPECT_LT(waited, 30e3 + 10e6) << d;
  EXPECT_GE(usAfter(d, "#4 inner(count=0): ok in "), 20e3) << d;
  EXPECT_TRUE(has(d, "#3 outer(count=0): ok without a long wait")) << d;
  EXPECT_GE(usAfter(d, "#5 hung(count=0): in flight for "), 40e3) << d;
  EXPECT_TRUE(has(rec.dump(0), "#5 hung(count=0): in flight, no long wait yet")) << rec.dump(0);
}
