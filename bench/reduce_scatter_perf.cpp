// reduce_scatter_perf: scReduceScatter, nccl-tests compatible (see bench/common/driver.h).
// count = elements received per rank; size = count * nranks * typesize;
// busbw = algbw * (n-1)/n.
#include "common/dense.h"
#include "common/driver.h"

namespace {

class ReduceScatter final : public scbench::Collective {
 public:
  scbench::ToolSpec spec() const override {
    return {"reduce_scatter_perf", "ReduceScatter", {"auto", "ring", "rabenseifner", "native"}, true};
  }
  // nccl-tests: per-rank count rounded down to a multiple of 16 bytes.
  scbench::Layout layout(size_t count, size_t esz, int n) const override {
    const size_t base = (count / size_t(n)) & ~(16 / esz - 1);
    return {base * n, base, base, 0, base};
  }
  double busFactor(int n) const override { return double(n - 1) / n; }

  // Rank r's input element j is input(r, j) over the whole nranks*count vector;
  // rank r receives block r of the reduction.
  void init(scbench::RankState& rs, const scbench::Case& c) override {
    const scbench::DenseData d{c.op, rs.nranks, c.seed, c.dtype};
    rs.zero(rs.recv.data(), c.layout.sendCount * c.esz);
    rs.write(rs.sendPtr(c), c.layout.sendCount, c.dtype, [&](uint64_t j) { return d.input(rs.rank, j); });
  }
  scResult_t run(scbench::RankState& rs, const scbench::Case& c) override {
    return scReduceScatter(rs.sendPtr(c), rs.recvPtr(c), c.layout.paramCount, c.dtype, c.op,
                           scbench::denseAlgo(c.algorithm), rs.comm, rs.stream);
  }
  uint64_t check(scbench::RankState& rs, const scbench::Case& c) override {
    const scbench::DenseData d{c.op, rs.nranks, c.seed, c.dtype};
    const uint64_t first = uint64_t(rs.rank) * c.layout.recvCount;
    return rs.countWrong(rs.recvPtr(c), c.layout.recvCount, c.dtype, [&](uint64_t k) { return d.reduced(first + k); });
  }
};

}  // namespace

int main(int argc, char** argv) {
  ReduceScatter coll;
  return scbench::run(argc, argv, coll);
}
