// core/deadline.h: the deadline that starts at its first look (a call's: one
// start shared by all its waits, never before the look).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "core/deadline.h"

namespace {

using sc::Clock;

Clock::duration budget(double s) {
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(s));
}

TEST(Deadline, AtFirstLookStartsOnceForEveryCopy) {
  constexpr double kBudget = 0.25;
  std::atomic<Clock::rep> start{sc::Deadline::kNotStarted};
  const sc::Deadline a = sc::Deadline::atFirstLook(&start, kBudget), b = a;
  const sc::Deadline c = sc::Deadline::atFirstLook(&start, kBudget);
  EXPECT_EQ(start.load(), sc::Deadline::kNotStarted) << "made, not looked at: no start yet";
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto before = Clock::now();
  const Clock::time_point at = b.at();
  const auto after = Clock::now();
  EXPECT_GE(at, before + budget(kBudget)) << "the budget starts at the first look, not before";
  EXPECT_LE(at, after + budget(kBudget));
  EXPECT_NE(start.load(), sc::Deadline::kNotStarted);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(a.at(), at) << "a copy shares the start";
  EXPECT_EQ(c.at(), at) << "a deadline made from the same start shares it";
  EXPECT_FALSE(a.expired());
  EXPECT_EQ(a.seconds, kBudget);
}

TEST(Deadline, AtFirstLookExpiresAndNamesItsBudget) {
  std::atomic<Clock::rep> start{sc::Deadline::kNotStarted};
  const sc::Deadline d = sc::Deadline::atFirstLook(&start, 0.01);
  EXPECT_FALSE(d.expired());
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  EXPECT_TRUE(d.expired());
  try {
    d.check("rank 3");
    FAIL() << "no timeout";
  } catch (const sc::Error& e) {
    EXPECT_EQ(e.code(), scTimeout);
    EXPECT_NE(std::string(e.what()).find("deadline of 0.01 s expired while waiting for rank 3"), std::string::npos)
        << e.what();
  }
}

// A deadline looked at after its call ended (its start negative): a budget
// from the look, which leaves the start as it is.
TEST(Deadline, AtFirstLookBetweenCalls) {
  std::atomic<Clock::rep> start{-1};
  const sc::Deadline d = sc::Deadline::atFirstLook(&start, 1.0);
  const auto before = Clock::now();
  const Clock::time_point at = d.at();
  EXPECT_GE(at, before + std::chrono::seconds(1));
  EXPECT_LE(at, Clock::now() + std::chrono::seconds(1));
  EXPECT_EQ(start.load(), -1);
}

TEST(Deadline, FixedAndClamped) {
  const auto t0 = Clock::now();
  EXPECT_EQ(sc::Deadline::after(t0, 2.0).at(), t0 + std::chrono::seconds(2));
  EXPECT_FALSE(sc::Deadline::in(1e300).expired()) << "a huge budget does not overflow into the past";
}

}  // namespace
