// How sparcoll-tune times the algorithms of one point (Sweep::timeTogether):
// a warm-up and a timed call each, then turns of one run (batch calls) per
// algorithm, in an order rotated every turn, until every algorithm spent the
// budget (at least minRuns, at most maxRuns turns). Checked call by call on
// one rank.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "common/timing.h"
#include "sweep.h"

namespace sctune {
namespace {

class OneRank : public scbench::Group {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::vector<std::string> allgather(const std::string& mine) override { return {mine}; }
};

// The calls timeTogether made, by algorithm, in order.
struct Recorded {
  std::vector<Point> pts;
  std::vector<int> calls;
};

Recorded timeN(int n, const Plan& plan) {
  OneRank g;
  scbench::RankState rs;
  Sweep sw(g, rs, plan);
  Recorded r;
  std::vector<Point> pts;
  std::vector<std::function<void()>> calls;
  for (int i = 0; i < n; ++i) {
    pts.push_back({"allreduce", "algo" + std::to_string(i), 1, 4});
    calls.push_back([&r, i] { r.calls.push_back(i); });
  }
  r.pts = sw.timeTogether(pts, calls);
  return r;
}

// What the schedule says the calls are: warm-up and timed call of each
// algorithm, then per turn t the algorithms (j + t) mod n, batch calls each.
std::vector<int> expected(const std::vector<Point>& pts) {
  const int n = int(pts.size());
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.insert(v.end(), {i, i});
  for (int t = 0; t < pts[0].runs; ++t)
    for (int j = 0; j < n; ++j) {
      const int i = (j + t) % n;
      v.insert(v.end(), size_t(pts[size_t(i)].batch), i);
    }
  return v;
}

TEST(TimeTogether, AlgorithmsTakeTurnsInRotatedOrder) {
  Plan plan;
  plan.budget = 2e-3;
  plan.minRuns = 3;
  plan.maxRuns = 5;
  for (int n : {1, 2, 3, 4}) {
    const Recorded r = timeN(n, plan);
    ASSERT_EQ(r.pts.size(), size_t(n));
    for (const Point& p : r.pts) {
      EXPECT_EQ(p.runs, r.pts[0].runs) << n << " algorithms: every one runs once per turn";
      EXPECT_GE(p.runs, plan.minRuns);
      EXPECT_LE(p.runs, plan.maxRuns);
      EXPECT_GE(p.batch, 1);
      EXPECT_GT(p.seconds, 0);
    }
    EXPECT_EQ(r.calls, expected(r.pts)) << n << " algorithms";
  }
}

// A call slower than the budget runs one call per run, and the turns stop at
// minRuns once every algorithm spent the budget.
TEST(TimeTogether, SlowCallsStopAtMinRuns) {
  Plan plan;
  plan.budget = 1e-3;
  plan.minRuns = 3;
  plan.maxRuns = 20;
  OneRank g;
  scbench::RankState rs;
  Sweep sw(g, rs, plan);
  int calls = 0;
  auto slow = [&] {
    ++calls;
    const double t0 = scbench::now();
    while (scbench::now() - t0 < 2e-3) {
    }
  };
  const std::vector<Point> pts = sw.timeTogether({{"allreduce", "a", 1, 4}, {"allreduce", "b", 1, 4}}, {slow, slow});
  for (const Point& p : pts) {
    EXPECT_EQ(p.batch, 1);
    EXPECT_EQ(p.runs, plan.minRuns);
    EXPECT_GE(p.seconds, 2e-3);
  }
  EXPECT_EQ(calls, 2 * 2 + 2 * plan.minRuns);
}

}  // namespace
}  // namespace sctune
