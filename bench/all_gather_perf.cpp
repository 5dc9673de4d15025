// all_gather_perf: scAllGather, nccl-tests compatible (see bench/common/driver.h).
// count = elements sent per rank; size = count * nranks * typesize;
// busbw = algbw * (n-1)/n.
#include "common/dense.h"
#include "common/driver.h"

namespace {

class AllGather final : public scbench::Collective {
 public:
  scbench::ToolSpec spec() const override {
    return {"all_gather_perf", "AllGather", {"auto", "ring", "recdbl", "native"}, false};
  }
  // nccl-tests: per-rank count rounded down to a multiple of 16 bytes.
  scbench::Layout layout(size_t count, size_t esz, int n) const override {
    const size_t base = (count / size_t(n)) & ~(16 / esz - 1);
    return {base, base * n, base, base, 0};
  }
  double busFactor(int n) const override { return double(n - 1) / n; }

  // Rank r sends value(r, k); every rank receives block s = value(s, .).
  void init(scbench::RankState& rs, const scbench::Case& c) override {
    rs.zero(rs.recv.data(), c.layout.recvCount * c.esz);
    rs.write(rs.sendPtr(c), c.layout.sendCount, c.dtype, [&](uint64_t k) { return value(c, rs.nranks, rs.rank, k); });
  }
  scResult_t run(scbench::RankState& rs, const scbench::Case& c) override {
    return scAllGather(rs.sendPtr(c), rs.recvPtr(c), c.layout.paramCount, c.dtype, scbench::denseAlgo(c.algorithm),
                       rs.comm, rs.stream);
  }
  uint64_t check(scbench::RankState& rs, const scbench::Case& c) override {
    const uint64_t n = c.layout.sendCount;
    return rs.countWrong(rs.recvPtr(c), c.layout.recvCount, c.dtype,
                         [&](uint64_t j) { return value(c, rs.nranks, int(j / n), j % n); });
  }

 private:
  static double value(const scbench::Case& c, int nranks, int rank, uint64_t k) {
    return scbench::DenseData{scMax, nranks, c.seed}.input(rank, k);
  }
};

}  // namespace

int main(int argc, char** argv) {
  AllGather coll;
  return scbench::run(argc, argv, coll);
}
