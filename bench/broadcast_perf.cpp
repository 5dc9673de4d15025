// broadcast_perf: scBroadcast, nccl-tests compatible (see bench/common/driver.h).
// count = elements of the buffer; size = count * typesize; busbw = algbw
// (nccl-tests' broadcast: factor 1). -r picks the root (default 0), as in
// nccl-tests. scBroadcast works in place, so both column sets run on the
// receive buffer: the "out-of-place" one differs only in where the driver's
// buffers sit. Every element of every rank is checked against root's input.
#include "common/dense.h"
#include "common/driver.h"

namespace {

class Broadcast final : public scbench::Collective {
 public:
  scbench::ToolSpec spec() const override {
    scbench::ToolSpec s{"broadcast_perf", "Broadcast", {"auto", "binomial", "scatter_allgather", "native"}, false};
    s.hasRoot = true;
    return s;
  }
  void validate(scbench::Options& o) override {
    if (o.root < 0) throw scbench::UsageError{"-r (root) must be >= 0, got " + std::to_string(o.root)};
    root_ = o.root;
  }
  scbench::Layout layout(size_t count, size_t, int) const override { return {count, count, count, 0, 0}; }
  double busFactor(int) const override { return 1.0; }

  // Every rank starts from its own values, so a rank the broadcast missed fails the check.
  void init(scbench::RankState& rs, const scbench::Case& c) override {
    rs.write(rs.recvPtr(c), c.layout.recvCount, c.dtype, [&](uint64_t k) { return value(c, rs.nranks, rs.rank, k); });
  }
  scResult_t run(scbench::RankState& rs, const scbench::Case& c) override {
    return scBroadcast(rs.recvPtr(c), c.layout.paramCount, c.dtype, root_, scbench::denseAlgo(c.algorithm), rs.comm,
                       rs.stream);
  }
  uint64_t check(scbench::RankState& rs, const scbench::Case& c) override {
    return rs.countWrong(rs.recvPtr(c), c.layout.recvCount, c.dtype,
                         [&](uint64_t k) { return value(c, rs.nranks, root_, k); });
  }

 private:
  static double value(const scbench::Case& c, int nranks, int rank, uint64_t k) {
    return scbench::DenseData{scMax, nranks, c.seed}.input(rank, k);
  }
  int root_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  Broadcast coll;
  return scbench::run(argc, argv, coll);
}
