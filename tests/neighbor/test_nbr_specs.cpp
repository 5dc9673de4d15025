// The topology specs of bench/neighbor_allgather_perf's --topo flag
// (nbr_graphs.h: moore:, random:, file:): each builds the catalogue's graph
// it names, an edge list becomes exactly its edges, and every malformed spec
// or file is refused with a message naming the problem (the benchmark prints
// it and exits 2). No communication: every rank of an mpirun entry runs the
// same checks on files of its own.
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "nbr_graphs.h"

namespace ntest {
namespace {

// A file under the temporary directory, removed when the test ends.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/tmp") + "/sparcoll_nbr_edges_" + std::to_string(getpid()) + "_" +
            std::to_string(next_++) + ".txt";
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  static inline int next_ = 0;
};

Graph built(const std::string& text, int P) {
  Spec s;
  std::string err;
  EXPECT_TRUE(parseSpec(text, &s, &err)) << text << ": " << err;
  Graph g;
  EXPECT_TRUE(build(s, P, &g, &err)) << text << ": " << err;
  return g;
}

// The message a bad spec gets (empty when it was accepted).
std::string refusal(const std::string& text) {
  Spec s;
  std::string err;
  return parseSpec(text, &s, &err) ? std::string() : err;
}

TEST(NeighborSpecs, NameTheCatalogueGraphs) {
  for (int P : {1, 8, 16}) {
    EXPECT_EQ(built("moore:d=2,r=1", P).dst, moore(P, 2, 1, false).dst);
    EXPECT_EQ(built("moore:d=3,r=2,periodic=1", P).dst, moore(P, 3, 2, true).dst);
    EXPECT_EQ(built("moore", P).dst, moore(P, 2, 1, false).dst);  // the defaults
    EXPECT_EQ(built("random:p=0.1,seed=1", P).dst, erdosRenyi(P, 0.1, 1).dst);
    EXPECT_EQ(built("random:seed=7,p=1", P).dst, erdosRenyi(P, 1.0, 7).dst);
  }
  // p = 1 on 5 ranks: every rank sends to every other.
  for (const auto& d : built("random:p=1", 5).dst) EXPECT_EQ(d.size(), 4u);
}

TEST(NeighborSpecs, EdgeListIsItsEdges) {
  const TempFile f("# a triangle with a repeat and a self-loop\n0 1\n\n1 2   # trailing comment\n2 0\n2 0\n 3 3\n");
  const Graph g = built("file:" + f.path(), 5);
  EXPECT_EQ(g.P, 5);
  EXPECT_EQ(g.dst, (std::vector<std::vector<int>>{{1}, {2}, {0, 0}, {3}, {}}));
  EXPECT_EQ(g.src, (std::vector<std::vector<int>>{{2, 2}, {0}, {1}, {3}, {}}));
  const TempFile empty("# nothing\n");
  EXPECT_EQ(built("file:" + empty.path(), 3).dst, (std::vector<std::vector<int>>(3)));
}

TEST(NeighborSpecs, BadSpecsAreRefused) {
  const struct {
    const char* spec;
    const char* says;
  } bad[] = {
      {"torus:d=2", "unknown topology 'torus:d=2'"},
      {"", "unknown topology ''"},
      {"moore:d=0", "d must be an integer in [1, 6], got '0'"},
      {"moore:d=2,r=x", "r must be an integer in [1, 1000], got 'x'"},
      {"moore:d=2,periodic=2", "periodic must be 0 or 1"},
      {"moore:d=6,r=1000", "more than a million"},
      {"moore:k=2", "unknown parameter 'k' (takes d, r, periodic)"},
      {"moore:d=2,", "expected key=value, got ''"},
      {"random:p=0", "p must be a probability in (0, 1], got '0'"},
      {"random:p=1.5", "p must be a probability in (0, 1], got '1.5'"},
      {"random:p=-0.1", "got '-0.1'"},
      {"random:p=nan", "got 'nan'"},
      {"random:p=0.1,seed=-1", "seed must be an integer >= 0"},
      {"file:", "needs a path"},
      {"file:/nonexistent/sparcoll/edges.txt", "cannot read the edge list '/nonexistent/sparcoll/edges.txt'"},
  };
  for (const auto& b : bad) {
    const std::string err = refusal(b.spec);
    EXPECT_NE(err.find(b.says), std::string::npos) << "'" << b.spec << "' gave: '" << err << "'";
    EXPECT_EQ(err.find('\n'), std::string::npos) << err;
  }
}

TEST(NeighborSpecs, BadEdgeListsAreRefused) {
  const TempFile words("0 1\nzero one\n"), one("0 1\n2\n"), three("0 1 2\n"), negative("0 -1\n");
  for (const TempFile* f : {&words, &one, &three, &negative}) {
    const std::string err = refusal("file:" + f->path());
    EXPECT_NE(err.find(f->path() + ":"), std::string::npos) << err;  // the file and line
    EXPECT_NE(err.find("expected an edge 'i j'"), std::string::npos) << err;
  }
  EXPECT_NE(refusal("file:" + words.path()).find(":2:"), std::string::npos);
  // Ranks are checked against the run's size when the graph is built.
  const TempFile big("0 1\n1 7\n");
  Spec s;
  std::string err;
  ASSERT_TRUE(parseSpec("file:" + big.path(), &s, &err)) << err;
  Graph g;
  EXPECT_FALSE(build(s, 4, &g, &err));
  EXPECT_NE(err.find("names rank 7, but the run has 4 ranks"), std::string::npos) << err;
  EXPECT_TRUE(build(s, 8, &g, &err)) << err;
}

}  // namespace
}  // namespace ntest
