// The C++ RAII layer (sparcoll.hpp): ownership, typed calls, exceptions.
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/harness.h"
#include "sparcoll/sparcoll.hpp"

namespace {

TEST(CxxApi, LocalGroupTypedCollectives) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "local-only test";
  auto comms = sparcoll::Comm::local(4, {}, sparcoll::Config().timeout(30).pipelineBytes(64));
  ASSERT_EQ(comms.size(), 4u);
  std::vector<std::thread> threads;
  std::vector<std::vector<double>> ar(4), rs(4), ag(4);
  for (int r = 0; r < 4; ++r)
    threads.emplace_back([&, r] {
      EXPECT_EQ(comms[r].rank(), r);
      EXPECT_EQ(comms[r].size(), 4);
      std::vector<double> x(40);
      for (size_t i = 0; i < x.size(); ++i) x[i] = double(r * 100 + i);
      ar[r].resize(40);
      comms[r].allReduce(x.data(), ar[r].data(), x.size(), scSum, scAlgoRing);
      rs[r].resize(10);
      comms[r].reduceScatter(x.data(), rs[r].data(), 10, scMax, scAlgoRabenseifner);
      ag[r].resize(160);
      comms[r].allGather(x.data(), ag[r].data(), 40, scAlgoRecDbl);
      comms[r].barrier();
    });
  for (auto& t : threads) t.join();
  for (int r = 0; r < 4; ++r) {
    for (size_t i = 0; i < 40; ++i) EXPECT_EQ(ar[r][i], 4.0 * i + 600.0);
    for (size_t i = 0; i < 10; ++i) EXPECT_EQ(rs[r][i], 300.0 + r * 10 + i);
    for (size_t i = 0; i < 160; ++i) EXPECT_EQ(ag[r][i], double((i / 40) * 100 + i % 40));
  }
  EXPECT_GT(comms[0].stats().bytesSent, 0u);
  comms[0].resetStats();
  EXPECT_EQ(comms[0].stats().bytesSent, 0u);
}

TEST(CxxApi, ErrorsBecomeExceptionsWithCodeAndMessage) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "local-only test";
  auto comms = sparcoll::Comm::local(1);
  try {
    comms[0].allReduce<float>(nullptr, nullptr, 3);
    FAIL() << "expected sparcoll::Error";
  } catch (const sparcoll::Error& e) {
    EXPECT_EQ(e.code(), scInvalidArgument);
    EXPECT_NE(std::string(e.what()).find("sendbuf is NULL"), std::string::npos) << e.what();
  }
  EXPECT_THROW(sparcoll::Comm::local(0), sparcoll::Error);
  EXPECT_THROW(sparcoll::Comm::local(2, {0}), sparcoll::Error);
}

// Comm::shrink: ranks 0 and 2 of 3 go on without rank 1, which takes no part.
TEST(CxxApi, ShrinkWithoutARank) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "local-only test";
  auto comms = sparcoll::Comm::local(3);
  std::vector<int> got(3, -1);
  std::vector<std::thread> threads;
  for (int r : {0, 2})
    threads.emplace_back([&, r] {
      sparcoll::Comm small = comms[r].shrink({1});
      EXPECT_EQ(small.size(), 2);
      int x = small.rank() + 1;
      small.allReduce(&x, &x, 1, scSum, scAlgoRing);
      got[r] = x;
      EXPECT_THROW(comms[r].shrink({r}), sparcoll::Error) << "a rank cannot exclude itself";
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(got, (std::vector<int>{3, -1, 3}));
}

// The cost model: a Config keeps its tuning file's path (a copy outlives the
// caller's string), a communicator's estimate is the CostModel's of its size,
// and neighborTime prices a neighbourhood's terms (or throws on bad ones).
TEST(CxxApi, CostModelAndEstimates) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "local-only test";
  const std::string path = testing::TempDir() + "sparcoll-cxx-tuning.json";
  std::ofstream(path) << R"({"format": "sparcoll-tuning", "version": 1, "models":
    [{"transport": "local", "alpha": 1e-5, "beta": 1e-9, "gamma": 1e-10}],
    "rules": [{"collective": "allreduce", "bytes": [0, 64], "algorithm": "ring"}]})";
  sparcoll::Config cfg;
  {
    std::string temp = path;
    cfg.transport(scTransportLocal).timeout(30).tuningFile(temp);
  }
  const sparcoll::Config copy = cfg;
  auto comms = sparcoll::Comm::local(2, {}, copy);
  const sparcoll::Estimate e = comms[0].estimateTime(scCollAllReduce, 4, scFloat32);
  EXPECT_EQ(e.autoAlgo, scAlgoRing);  // the rule
  // ring, P = 2, n = 16 bytes: 2 alpha + n beta + n/2 gamma
  EXPECT_NEAR(e.seconds, 2e-5 + 16e-9 + 8e-10, 1e-15);
  const sparcoll::CostModel m(2, 1, false, copy);
  const sparcoll::Estimate f = m.estimateTime(scCollAllReduce, 4, scFloat32);
  EXPECT_EQ(f.seconds, e.seconds);
  EXPECT_EQ(f.autoAlgo, e.autoAlgo);
  try {
    m.estimateTime(scCollSparseAllReduce, 10, scFloat32);  // density missing
    ADD_FAILURE() << "no exception";
  } catch (const sparcoll::Error& err) {
    EXPECT_EQ(err.code(), scInvalidArgument);
  }
  // A round of two messages and one block of 16 bytes: alpha + alpha / 12 (o
  // by default) + 16 beta.
  scNbrCostTerms_t terms{{1, 0}, {1, 0}, {1, 0}, {0, 0}};
  EXPECT_NEAR(m.neighborTime(terms, 16), 1e-5 + 1e-5 / 12 + 16e-9, 1e-18);
  terms.blocks[1] = -1;
  try {
    m.neighborTime(terms, 16);
    ADD_FAILURE() << "no exception";
  } catch (const sparcoll::Error& err) {
    EXPECT_EQ(err.code(), scInvalidArgument);
  }
  std::remove(path.c_str());
}

TEST(CxxApi, MoveTransfersOwnership) {
  if (sctest::mode() == sctest::Mode::Mpi) GTEST_SKIP() << "local-only test";
  auto comms = sparcoll::Comm::local(1);
  sparcoll::Comm a = std::move(comms[0]);
  EXPECT_EQ(comms[0].get(), nullptr);
  sparcoll::Comm b;
  b = std::move(a);
  EXPECT_EQ(a.get(), nullptr);
  EXPECT_EQ(b.size(), 1);
  int v = 7, out = 0;
  b.allReduce(&v, &out, 1);
  EXPECT_EQ(out, 7);
}

TEST(CxxApi, MpiWorld) {
  if (sctest::mode() != sctest::Mode::Mpi) GTEST_SKIP() << "runs in the MPI binary";
  sparcoll::Comm comm = sparcoll::Comm::mpi(nullptr, sparcoll::Config().timeout(60));
  const int P = comm.size();
  int64_t v = comm.rank() + 1, out = 0;
  comm.allReduce(&v, &out, 1, scSum);
  EXPECT_EQ(out, int64_t(P) * (P + 1) / 2);
}

}  // namespace
