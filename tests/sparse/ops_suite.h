// The sparse stream operations on random and adversarial inputs, each run on
// an implementation under test (the CUDA ops on device memory, or the CPU ops)
// and on the CPU reference, compared byte for byte: counts, indices, values.
// Shared by the CPU suite and the GPU suite (label gpu).
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "sparse/ops.h"
#include "sparse_util.h"

namespace sptest {

// Memory of the implementation under test.
struct Mem {
  virtual ~Mem() = default;
  virtual void* alloc(size_t bytes) = 0;  // freed with the Mem
  virtual void put(void* dst, const void* src, size_t bytes) = 0;
  virtual void get(void* dst, const void* src, size_t bytes) = 0;
};

struct HostMem : Mem {
  std::vector<std::unique_ptr<std::vector<uint8_t>>> bufs;
  void* alloc(size_t bytes) override {
    bufs.push_back(std::make_unique<std::vector<uint8_t>>(std::max<size_t>(bytes, 1), 0xCD));
    return bufs.back()->data();
  }
  void put(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
  void get(void* dst, const void* src, size_t bytes) override {
    if (bytes) std::memcpy(dst, src, bytes);
  }
};

struct OpsSuite {
  sc::sp::SparseOps& sub;  // under test, on `mem`
  Mem& mem;
  std::unique_ptr<sc::sp::SparseOps> ref;
  scIndexType_t it;
  scDataType_t vt;
  size_t isz, vsz;
  std::mt19937_64 rng;

  OpsSuite(sc::sp::SparseOps& s, Mem& m, uint64_t seed)
      : sub(s),
        mem(m),
        ref(sc::sp::makeCpuOps(s.it, s.vt, sc::sp::OpsEnv{})),
        it(s.it),
        vt(s.vt),
        isz(s.isz),
        vsz(s.vsz),
        rng(seed) {}

  using Bytes = std::vector<uint8_t>;
  Bytes idxBytes(const std::vector<uint64_t>& x) const { return packIndices(x, it); }
  Bytes valBytes(size_t n) {
    std::vector<int> v(n);
    for (int& x : v) x = int(rng() % 7) + 1;
    return packValues(v, vt);
  }
  void* up(const Bytes& b) {
    void* p = mem.alloc(b.size());
    mem.put(p, b.data(), b.size());
    return p;
  }
  Bytes down(const void* p, size_t bytes) {
    Bytes b(bytes);
    mem.get(b.data(), p, bytes);
    return b;
  }
  uint64_t count(const uint64_t* devCnt) {
    uint64_t c = 0;
    sub.toHost(&c, devCnt, 8);
    return c;
  }
  uint64_t* cnt() { return static_cast<uint64_t*>(mem.alloc(8 * 8)); }

  // n distinct sorted indices in [lo, lo + span).
  std::vector<uint64_t> sorted(uint64_t lo, uint64_t span, size_t n) {
    n = std::min<uint64_t>(n, span);
    std::vector<uint64_t> x;
    if (n == 0) return x;
    const double p = double(n) / double(span);
    for (uint64_t i = 0; i < span && x.size() < n; ++i)
      if (std::uniform_real_distribution<double>(0, 1)(rng) < p || span - i <= n - x.size()) x.push_back(lo + i);
    return x;
  }

  void mergeCase(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
    SCOPED_TRACE(testing::Message() << "merge " << a.size() << " + " << b.size());
    const Bytes ai = idxBytes(a), bi = idxBytes(b), av = valBytes(a.size()), bv = valBytes(b.size());
    const size_t cap = a.size() + b.size();
    Bytes ri(cap * isz + 1), rv(cap * vsz + 1);
    uint64_t rc = 0;
    ref->mergeSum(ai.data(), av.data(), a.size(), bi.data(), bv.data(), b.size(), ri.data(), rv.data(), &rc);
    void* oi = mem.alloc(cap * isz);
    void* ov = mem.alloc(cap * vsz);
    uint64_t* c = cnt();
    sub.mergeSum(up(ai), up(av), a.size(), up(bi), up(bv), b.size(), oi, ov, c);
    const uint64_t n = count(c);
    ASSERT_EQ(n, rc);
    EXPECT_EQ(down(oi, n * isz), Bytes(ri.begin(), ri.begin() + n * isz));
    EXPECT_EQ(down(ov, n * vsz), Bytes(rv.begin(), rv.begin() + n * vsz));
  }

  void splitCase(const std::vector<uint64_t>& x, const std::vector<uint64_t>& bounds) {
    const int parts = int(bounds.size()) - 1;
    SCOPED_TRACE(testing::Message() << "split " << x.size() << " into " << parts);
    const Bytes xi = idxBytes(x);
    std::vector<uint64_t> rc(parts + 1), ro(parts + 1), gc(parts + 1), go(parts + 1);
    ref->split(xi.data(), x.size(), nullptr, bounds.data(), parts, rc.data(), ro.data());
    uint64_t* dc = static_cast<uint64_t*>(mem.alloc((parts + 1) * 8));
    uint64_t* dof = static_cast<uint64_t*>(mem.alloc((parts + 1) * 8));
    sub.split(up(xi), x.size(), nullptr, bounds.data(), parts, dc, dof);
    sub.toHost(gc.data(), dc, gc.size() * 8);
    sub.toHost(go.data(), dof, go.size() * 8);
    EXPECT_EQ(gc, rc);
    EXPECT_EQ(go, ro);
    // The count taken from ops memory (a count an earlier operation left
    // there), with a wrong host count beside it: the same split.
    uint64_t* dn = static_cast<uint64_t*>(mem.alloc(8));
    const uint64_t nx = x.size();
    sub.fromHost(dn, &nx, 8);
    sub.split(up(xi), x.size() + 7, dn, bounds.data(), parts, dc, dof);
    sub.toHost(gc.data(), dc, gc.size() * 8);
    sub.toHost(go.data(), dof, go.size() * 8);
    EXPECT_EQ(gc, rc) << "count from ops memory";
    EXPECT_EQ(go, ro) << "count from ops memory";
  }

  void scatterCases(const std::vector<uint64_t>& x, uint64_t lo, size_t len) {
    SCOPED_TRACE(testing::Message() << "densify/scatterAdd/sparsify " << x.size() << " over " << len);
    const Bytes xi = idxBytes(x), xv = valBytes(x.size());
    Bytes base = valBytes(len);
    for (size_t i = 0; i < len; i += 3) std::memset(&base[i * vsz], 0, vsz);  // some zeros for sparsify
    // densify
    Bytes rd(len * vsz + 1);
    ref->densify(xi.data(), xv.data(), x.size(), lo, len, rd.data());
    void* d = mem.alloc(len * vsz);
    void* dxi = up(xi);
    void* dxv = up(xv);
    sub.densify(dxi, dxv, x.size(), lo, len, d);
    EXPECT_EQ(down(d, len * vsz), Bytes(rd.begin(), rd.begin() + len * vsz));
    // scatterAdd onto a non-zero base
    Bytes ra = base;
    ra.push_back(0);
    ref->scatterAdd(xi.data(), xv.data(), x.size(), lo, ra.data());
    void* da = up(base);
    sub.scatterAdd(dxi, dxv, x.size(), lo, da);
    EXPECT_EQ(down(da, len * vsz), Bytes(ra.begin(), ra.begin() + len * vsz));
    // sparsify the base
    Bytes si(len * isz + 1), sv(len * vsz + 1);
    uint64_t rc = 0;
    ref->sparsify(base.data(), len, lo, si.data(), sv.data(), &rc);
    void* oi = mem.alloc(len * isz);
    void* ov = mem.alloc(len * vsz);
    uint64_t* c = cnt();
    sub.sparsify(up(base), len, lo, oi, ov, c);
    const uint64_t n = count(c);
    ASSERT_EQ(n, rc);
    EXPECT_EQ(down(oi, n * isz), Bytes(si.begin(), si.begin() + n * isz));
    EXPECT_EQ(down(ov, n * vsz), Bytes(sv.begin(), sv.begin() + n * vsz));
  }

  void sortCase(const std::vector<uint64_t>& raw) {
    SCOPED_TRACE(testing::Message() << "sortCoalesce " << raw.size());
    const Bytes xi = idxBytes(raw), xv = valBytes(raw.size());
    Bytes ri(raw.size() * isz + 1), rv(raw.size() * vsz + 1);
    uint64_t rc = 0;
    ref->sortCoalesce(xi.data(), xv.data(), raw.size(), ri.data(), rv.data(), &rc);
    void* oi = mem.alloc(raw.size() * isz);
    void* ov = mem.alloc(raw.size() * vsz);
    uint64_t* c = cnt();
    sub.sortCoalesce(up(xi), up(xv), raw.size(), oi, ov, c);
    const uint64_t n = count(c);
    ASSERT_EQ(n, rc);
    EXPECT_EQ(down(oi, n * isz), Bytes(ri.begin(), ri.begin() + n * isz));
    EXPECT_EQ(down(ov, n * vsz), Bytes(rv.begin(), rv.begin() + n * vsz));
  }

  void validateCase(const std::vector<uint64_t>& x, uint64_t dim, bool rangeOnly) {
    SCOPED_TRACE(testing::Message() << "validate " << x.size() << " dim " << dim << (rangeOnly ? " range" : ""));
    const Bytes xi = idxBytes(x);
    uint64_t re = 0;
    ref->validate(xi.data(), x.size(), dim, rangeOnly, &re);
    uint64_t* e = cnt();
    sub.validate(up(xi), x.size(), dim, rangeOnly, e);
    EXPECT_EQ(count(e), re);
  }

  // The static-size path's operations on P gathered blocks (sparse/static_block.h):
  // the first bad slot's status word, the slots' sums densified, the kept status.
  // badRank < 0: every block valid; else that rank's count (badCount) or one index is bad.
  void staticCase(int P, uint64_t cap, uint64_t dim, int badRank, bool badCount) {
    SCOPED_TRACE(testing::Message() << "static P=" << P << " cap=" << cap << " dim=" << dim << " bad=" << badRank
                                    << (badCount ? " count" : " index"));
    const sc::sp::StaticLayout L{cap, isz, vsz};
    Bytes blocks(P * L.bytes(), 0xCD);
    for (int r = 0; r < P; ++r) {
      uint8_t* b = &blocks[r * L.bytes()];
      uint64_t count = r == badRank && badCount ? cap + 1 + rng() % 3 : rng() % (cap + 1);
      if (r == badRank && !badCount) count = cap;
      std::memcpy(b, &count, 8);
      std::vector<uint64_t> x(cap);
      for (auto& v : x) v = rng() % (dim / 2 + 1);
      if (r == badRank && !badCount) x[cap / 2] = dim + rng() % 5;
      const Bytes xi = idxBytes(x), xv = valBytes(cap);
      std::memcpy(b + L.idxOff(), xi.data(), xi.size());
      std::memcpy(b + L.valOff(), xv.data(), xv.size());
    }
    const uint64_t n = uint64_t(P) * cap;
    auto runOn = [&](sc::sp::SparseOps& ops, const void* bl, void* k, void* v, void* oi, void* ov, uint64_t* w,
                     void* dense) {
      ops.staticSlots(bl, P, L, dim, k, v, &w[0]);
      ops.sortCoalesce(k, v, n, oi, ov, &w[1]);
      ops.densifyCounted(oi, ov, &w[1], n, dim, dense);
      ops.keepStatus(&w[2], &w[0]);
    };
    Bytes rk(n * isz), rv(n * vsz), roi(n * isz), rov(n * vsz), rd(dim * vsz + 1);
    uint64_t rw[3] = {0, 0, 0};
    runOn(*ref, blocks.data(), rk.data(), rv.data(), roi.data(), rov.data(), rw, rd.data());
    uint64_t* w = cnt();
    const uint64_t zero[3] = {0, 0, 0};
    sub.fromHost(w, zero, sizeof zero);  // the status word starts cleared, as the caller leaves it
    void* dd = mem.alloc(dim * vsz);
    runOn(sub, up(blocks), mem.alloc(n * isz), mem.alloc(n * vsz), mem.alloc(n * isz), mem.alloc(n * vsz), w, dd);
    uint64_t gw[3];
    sub.toHost(gw, w, sizeof gw);
    EXPECT_EQ(gw[0], rw[0]);
    EXPECT_EQ(gw[1], rw[1]);
    EXPECT_EQ(gw[2], rw[2]);
    EXPECT_EQ(rw[0] == sc::sp::kStaticOk, badRank < 0);
    EXPECT_EQ(down(dd, dim * vsz), Bytes(rd.begin(), rd.begin() + dim * vsz));
  }

  // Everything, at sizes that cross many thread blocks, plus edge cases.
  void runAll() {
    const uint64_t top = it == scIndexU64 ? (uint64_t(1) << 40) : (uint64_t(1) << 32);  // index space end
    for (size_t n : {size_t(0), size_t(1), size_t(1000), size_t(70000)}) {
      const std::vector<uint64_t> a = sorted(0, 4 * n + 10, n);
      mergeCase(a, {});
      mergeCase({}, a);
      mergeCase(a, a);                             // full overlap
      mergeCase(a, sorted(0, 4 * n + 10, n / 2));  // partial overlap
      std::vector<uint64_t> odd;                   // disjoint interleaved
      for (uint64_t v : a) odd.push_back(v * 2 + 1);
      std::vector<uint64_t> even;
      for (uint64_t v : a) even.push_back(v * 2);
      mergeCase(odd, even);
      mergeCase(sorted(top - 3 * n - 10, 3 * n + 10, n), sorted(top - 2 * n - 10, 2 * n + 10, n));  // near the top
    }
    for (int parts : {1, 2, 7, 64}) {
      const uint64_t N = 100003;
      std::vector<uint64_t> b(parts + 1);
      for (int p = 0; p <= parts; ++p) b[p] = N * p / parts;
      splitCase({}, b);
      splitCase(sorted(0, N, 5000), b);
      splitCase(sorted(b[parts / 2], b[parts / 2 + 1] - b[parts / 2], 300), b);  // one part only
      std::vector<uint64_t> edges;                                               // every boundary and its predecessor
      for (int p = 1; p < parts; ++p) {
        edges.push_back(b[p] - 1);
        edges.push_back(b[p]);
      }
      std::sort(edges.begin(), edges.end());
      edges.erase(std::unique(edges.begin(), edges.end()), edges.end());
      splitCase(edges, b);
    }
    {
      std::vector<uint64_t> b = {top - 1000, top - 10, top};  // the last boundary is dim itself
      splitCase(sorted(top - 1000, 1000, 100), b);
    }
    for (size_t len : {size_t(1), size_t(1000), size_t(300000)}) {
      const uint64_t lo = it == scIndexU64 ? (uint64_t(1) << 35) : 12345;
      scatterCases({}, lo, len);
      scatterCases(sorted(lo, len, len / 10 + 1), lo, len);
      scatterCases(sorted(lo, len, len), lo, len);
    }
    for (size_t n : {size_t(0), size_t(1), size_t(5000), size_t(200000)}) {
      std::vector<uint64_t> raw(n);
      for (auto& x : raw) x = rng() % (n / 3 + 2) + (it == scIndexU64 ? (uint64_t(1) << 36) : 0);
      sortCase(raw);
    }
    {
      std::vector<uint64_t> same(5000, 7);  // one index repeated
      sortCase(same);
    }
    for (int P : {1, 3, 8})
      for (uint64_t cap : {1, 5, 300}) {
        staticCase(P, cap, 1000, -1, false);
        staticCase(P, cap, 1000, P / 2, true);
        staticCase(P, cap, 1000, P - 1, false);
      }
    staticCase(4, 20000, 50000, -1, false);  // many thread blocks
    for (size_t n : {size_t(0), size_t(1), size_t(100000)}) {
      std::vector<uint64_t> x = sorted(0, 3 * n + 3, n);
      const uint64_t dim = 3 * n + 3;
      validateCase(x, dim, false);
      if (n > 10) {
        std::vector<uint64_t> y = x;
        y[n / 2] = y[n / 2 - 1];  // duplicate
        validateCase(y, dim, false);
        y[n / 3] = y[n / 3 - 1] - 1;  // unsorted earlier
        validateCase(y, dim, false);
        validateCase(y, dim, true);
        y = x;
        y[n - 1] = dim;  // out of range at the end
        validateCase(y, dim, false);
        y[7] = dim + 5;  // and earlier
        validateCase(y, dim, true);
      }
    }
  }
};

}  // namespace sptest
