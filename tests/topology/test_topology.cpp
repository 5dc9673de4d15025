// The topology file parser and the depth-first order (topology/topology.h),
// without any communicator.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "topology/topology.h"

namespace {

using sc::topo::Tree;

Tree parse(const std::string& text) { return sc::topo::parse(text, "t.json"); }

std::vector<std::string> dfsNames(const Tree& t) {
  std::vector<std::string> n;
  for (int h : t.dfsHost) n.push_back(t.hostName[size_t(h)]);
  return n;
}

// The message of a description that must fail.
std::string failure(const std::string& text) {
  try {
    parse(text);
  } catch (const sc::Error& e) {
    EXPECT_EQ(e.code(), scInvalidArgument);
    return e.what();
  }
  ADD_FAILURE() << "accepted: " << text;
  return "";
}

TEST(TopologyParse, OneSwitch) {
  const Tree t = parse(R"({"version": 1, "switches": [{"name": "sw0"}],
    "hosts": [{"name": "n2", "switch": "sw0"}, {"name": "n0", "switch": "sw0"}, {"name": "n1", "switch": "sw0"}]})");
  EXPECT_EQ(dfsNames(t), (std::vector<std::string>{"n2", "n0", "n1"}));  // file order
  EXPECT_EQ(t.nlinks(), 8);
  EXPECT_EQ(t.path(0, 2), (std::vector<int>{Tree::hostUp(0), Tree::hostDown(2)}));
  EXPECT_TRUE(t.path(1, 1).empty());
}

TEST(TopologyParse, TwoSwitchesHostsListedInterleaved) {
  const Tree t = parse(R"({"version": 1,
    "defaults": {"host_link": {"rate": "10gbit"}, "uplink": {"rate": "1gbit"}},
    "switches": [{"name": "sw0"}, {"name": "sw1", "parent": "sw0"}],
    "hosts": [{"name": "b0", "switch": "sw1"}, {"name": "a0", "switch": "sw0"},
              {"name": "b1", "switch": "sw1"}, {"name": "a1", "switch": "sw0"}]})");
  EXPECT_EQ(dfsNames(t), (std::vector<std::string>{"a0", "a1", "b0", "b1"}));
  EXPECT_EQ(t.root, 0);
  // a0 (host 1) to b0 (host 0): its host link up, sw1's uplink down, b0's host link down.
  EXPECT_EQ(t.path(1, 0), (std::vector<int>{Tree::hostUp(1), t.switchDown(1), Tree::hostDown(0)}));
  EXPECT_EQ(t.path(0, 1), (std::vector<int>{Tree::hostUp(0), t.switchUp(1), Tree::hostDown(1)}));
  EXPECT_EQ(t.path(0, 2), (std::vector<int>{Tree::hostUp(0), Tree::hostDown(2)}));
  EXPECT_DOUBLE_EQ(t.linkRate(t.switchUp(1)), 1e9);
  EXPECT_DOUBLE_EQ(t.linkRate(Tree::hostDown(3)), 1e10);
  // Machine names: by name, by scripts/cluster's address, by the first label.
  EXPECT_EQ(t.findHost("a1"), 3);
  EXPECT_EQ(t.findHost("10.77.0.3"), 2);
  EXPECT_EQ(t.findHost("10.77.0.9"), -1);
  EXPECT_EQ(t.findHost("b0.cluster.example"), 0);
  EXPECT_EQ(t.findHost("c0"), -1);
}

// core -> agg0 -> tor00, tor01; core -> agg1 -> tor10; children listed before
// their parents and the file's switch order deciding between siblings.
TEST(TopologyParse, ThreeLevelsOrderOfTheFile) {
  const Tree t = parse(R"({"version": 1, "switches": [
      {"name": "tor10", "parent": "agg1"}, {"name": "agg1", "parent": "core"},
      {"name": "tor01", "parent": "agg0"}, {"name": "tor00", "parent": "agg0"},
      {"name": "core"}, {"name": "agg0", "parent": "core", "uplink": {"rate": "4gbit"}}],
    "hosts": [{"name": "h10", "switch": "tor10"}, {"name": "h01", "switch": "tor01"},
              {"name": "h00", "switch": "tor00"}, {"name": "h00b", "switch": "tor00"},
              {"name": "hcore", "switch": "core"}, {"name": "hagg1", "switch": "agg1"}]})");
  // core's own host, then agg1 (listed before agg0) with its own host, tor10,
  // then agg0: tor01 (listed before tor00), tor00.
  EXPECT_EQ(dfsNames(t), (std::vector<std::string>{"hcore", "hagg1", "h10", "h01", "h00", "h00b"}));
  EXPECT_EQ(t.depth[0], 2);
  EXPECT_EQ(t.depth[4], 0);
  // h10 (host 0) to h00 (host 2): up tor10, up agg1, down agg0, down tor00.
  EXPECT_EQ(t.path(0, 2), (std::vector<int>{Tree::hostUp(0), t.switchUp(0), t.switchUp(1), t.switchDown(5),
                                            t.switchDown(3), Tree::hostDown(2)}));
  EXPECT_DOUBLE_EQ(t.linkRate(t.switchUp(5)), 4e9);
  EXPECT_DOUBLE_EQ(t.linkRate(t.switchUp(0)), 0);  // unshaped
}

TEST(TopologyParse, UnbalancedAndSlots) {
  const Tree t = parse(R"({"version": 1, "defaults": {"slots": 2},
    "switches": [{"name": "r"}, {"name": "x", "parent": "r"}, {"name": "y", "parent": "x"}],
    "hosts": [{"name": "deep", "switch": "y", "slots": 4}, {"name": "mid", "switch": "x"},
              {"name": "top", "switch": "r", "slots": 1}]})");
  EXPECT_EQ(dfsNames(t), (std::vector<std::string>{"top", "mid", "deep"}));
  EXPECT_EQ(t.hostSlots, (std::vector<int>{4, 2, 1}));
  // Ranks: 0 deep, 1 top, 2 mid, 3 deep, 4 top, 5 mid: the order groups each
  // host's ranks, in rank order, hosts depth-first (Lemma 6).
  EXPECT_EQ(sc::topo::ringOrder(t, {0, 2, 1, 0, 2, 1}), (std::vector<int>{1, 4, 2, 5, 0, 3}));
  EXPECT_EQ(sc::topo::ringOrder(t, {2, 2, 1, 1, 0, 0}), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(TopologyParse, ExamplesOfScriptsCluster) {
  // The example files' shape: two-switch-4x2 and three-level-tree in short.
  std::string hosts;
  for (int i = 0; i < 8; ++i)
    hosts += std::string(i ? "," : "") + R"({"name": "node)" + std::to_string(i) + R"(", "switch": "sw)" +
             std::to_string(i / 4) + "\"}";
  const Tree t = parse(R"({"version": 1, "name": "two-switch-4x2", "description": "d", "mtu": 9000,
    "defaults": {"host_link": {"rate": "10gbit", "delay": "50us", "burst": "64k"}, "uplink": {"rate": "1Gbit/s"}},
    "switches": [{"name": "sw0"}, {"name": "sw1", "parent": "sw0"}], "hosts": [)" +
                       hosts + "]}");
  EXPECT_EQ(t.name, "two-switch-4x2");
  EXPECT_EQ(t.hosts(), 8);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(t.hostDfs[size_t(i)], i);
  EXPECT_DOUBLE_EQ(t.hostLink[0].delay, 50e-6);
}

TEST(TopologyParse, ErrorsNameTheFileAndTheKey) {
  const std::string sw = R"("switches": [{"name": "sw0"}])", h = R"("hosts": [{"name": "n0", "switch": "sw0"}])";
  std::string m = failure(R"({"version": 1, "colour": 2, )" + sw + "," + h + "}");
  EXPECT_NE(m.find("topology file 't.json'"), std::string::npos) << m;
  EXPECT_NE(m.find("unknown key \"colour\""), std::string::npos) << m;
  m = failure(R"({"version": 1, "switches": [{"name": "sw0", "uplinc": {}}], )" + h + "}");
  EXPECT_NE(m.find("switch \"sw0\" (switches[0]): unknown key \"uplinc\""), std::string::npos) << m;
  m = failure(R"({"version": 1, )" + sw + R"(, "hosts": [{"name": "n0", "switch": "sw0", "link": {"rte": 1}}]})");
  EXPECT_NE(m.find("host \"n0\".link: unknown key \"rte\""), std::string::npos) << m;
  m = failure(R"({"version": 2, )" + sw + "," + h + "}");
  EXPECT_NE(m.find("version: 2 is not supported"), std::string::npos) << m;
  m = failure(R"({"version": 1, "switches": [{"name": "sw0"}, {"name": "a", "parent": "b"},
                 {"name": "b", "parent": "a"}], )" +
              h + "}");
  EXPECT_NE(m.find("parents form a cycle: a -> b -> a"), std::string::npos) << m;
  m = failure(R"({"version": 1, "switches": [{"name": "sw0"}, {"name": "a", "parent": "nope"}], )" + h + "}");
  EXPECT_NE(m.find("switch \"a\".parent: no switch named \"nope\""), std::string::npos) << m;
  m = failure(R"({"version": 1, "switches": [{"name": "sw0"}, {"name": "sw1"}], )" + h + "}");
  EXPECT_NE(m.find("exactly one root switch (without parent), found 2: sw0, sw1"), std::string::npos) << m;
  m = failure(R"({"version": 1, )" + sw + R"(, "hosts": [{"name": "n0", "switch": "sw9"}]})");
  EXPECT_NE(m.find("host \"n0\".switch: no switch named \"sw9\""), std::string::npos) << m;
  m = failure(R"({"version": 1, )" + sw + R"(, "hosts": [{"name": "sw0", "switch": "sw0"}]})");
  EXPECT_NE(m.find("the name is used twice"), std::string::npos) << m;
  m = failure(R"({"version": 1, )" + sw + R"(, "hosts": [{"name": "n0", "switch": "sw0", "link": {"rate": "fast"}}]})");
  EXPECT_NE(m.find("host \"n0\".link.rate: rate \"fast\" is not a rate"), std::string::npos) << m;
  m = failure(R"({"version": 1, )" + sw + R"(, "hosts": [{"name": "-n", "switch": "sw0"}]})");
  EXPECT_NE(m.find("is not a host name label"), std::string::npos) << m;
  m = failure(R"({"version": 1, )" + sw + R"(, "hosts": [{"name": "n0", "switch": "sw0", "slots": 0}]})");
  EXPECT_NE(m.find("host \"n0\".slots: 0 must be a positive integer"), std::string::npos) << m;
  m = failure(R"({"version": 1, "switches": [{"name": "sw0", "uplink": {}}], )" + h + "}");
  EXPECT_NE(m.find("has an uplink but no parent"), std::string::npos) << m;
  m = failure(R"({"version": 1, )" + sw + "}");
  EXPECT_NE(m.find("missing key \"hosts\""), std::string::npos) << m;
  m = failure("{\"version\": 1,");
  EXPECT_NE(m.find("not JSON"), std::string::npos) << m;
}

}  // namespace
