// all_reduce_perf: scAllReduce, nccl-tests compatible (see bench/common/driver.h).
// size = count * typesize; busbw = algbw * 2(n-1)/n.
#include "common/dense.h"
#include "common/driver.h"

namespace {

class AllReduce final : public scbench::Collective {
 public:
  scbench::ToolSpec spec() const override {
    return {"all_reduce_perf", "AllReduce", {"auto", "ring", "rabenseifner", "recdbl", "native"}, true};
  }
  scbench::Layout layout(size_t count, size_t, int) const override { return {count, count, count, 0, 0}; }
  double busFactor(int n) const override { return 2.0 * (n - 1) / n; }

  void init(scbench::RankState& rs, const scbench::Case& c) override {
    const scbench::DenseData d{c.op, rs.nranks, c.seed, c.dtype};
    rs.zero(rs.recv.data(), c.layout.recvCount * c.esz);
    rs.write(rs.sendPtr(c), c.layout.sendCount, c.dtype, [&](uint64_t i) { return d.input(rs.rank, i); });
  }
  scResult_t run(scbench::RankState& rs, const scbench::Case& c) override {
    return scAllReduce(rs.sendPtr(c), rs.recvPtr(c), c.layout.paramCount, c.dtype, c.op,
                       scbench::denseAlgo(c.algorithm), rs.comm, rs.stream);
  }
  uint64_t check(scbench::RankState& rs, const scbench::Case& c) override {
    const scbench::DenseData d{c.op, rs.nranks, c.seed, c.dtype};
    return rs.countWrong(rs.recvPtr(c), c.layout.recvCount, c.dtype, [&](uint64_t i) { return d.reduced(i); });
  }
};

}  // namespace

int main(int argc, char** argv) {
  AllReduce coll;
  return scbench::run(argc, argv, coll);
}
