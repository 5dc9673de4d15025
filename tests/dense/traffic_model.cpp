#include "traffic_model.h"

#include <algorithm>
#include <functional>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace dtest {
namespace {

struct Acc {
  Traffic t;
  size_t esz;
  void send(size_t n) {
    if (n) {
      t.bytesSent += n * esz;
      t.msgsSent++;
    }
  }
  void recv(size_t n) {
    if (n) {
      t.bytesRecv += n * esz;
      t.msgsRecv++;
    }
  }
  void sendSliced(size_t n, size_t slice) {
    for (size_t k = 0; k < n; k += slice) send(std::min(slice, n - k));
  }
  void recvSliced(size_t n, size_t slice) {
    for (size_t k = 0; k < n; k += slice) recv(std::min(slice, n - k));
  }
};

// Balanced split of n elements in p blocks: the first n % p get one more.
size_t balanced(size_t n, int p, int i) { return n / size_t(p) + (size_t(i) < n % size_t(p) ? 1 : 0); }

struct Folding {
  int P, p2, q;
  explicit Folding(int P) : P(P), p2(1), q(0) {
    while (p2 * 2 <= P) p2 *= 2;
    q = P - p2;
  }
  bool inPair(int r) const { return r < 2 * q; }
  bool idle(int r) const { return inPair(r) && r % 2 == 0; }  // hands its data to r + 1
  int newRank(int r) const { return inPair(r) ? r / 2 : r - q; }
};

// Sizes of the P' pieces, and the size of the aligned group of d pieces holding piece x.
struct PieceSizes {
  std::vector<size_t> len;
  size_t group(int d, int x) const {
    size_t s = 0;
    for (int i = x / d * d; i < x / d * d + d; ++i) s += len[size_t(i)];
    return s;
  }
};

void halving(Acc& a, const PieceSizes& ps, int p2, int n) {
  for (int d = p2 / 2; d >= 1; d /= 2) {
    a.send(ps.group(d, n ^ d));
    a.recv(ps.group(d, n));
  }
}
void doubling(Acc& a, const PieceSizes& ps, int p2, int n) {
  for (int d = 1; d < p2; d *= 2) {
    a.send(ps.group(d, n));
    a.recv(ps.group(d, n ^ d));
  }
}

Traffic ringAllReduce(int P, int r, size_t count, Acc a, size_t slice) {
  for (int b = 0; b < P; ++b) {
    if (b != r) a.sendSliced(balanced(count, P, b), slice);
    if (b != (r + P - 1) % P) a.recvSliced(balanced(count, P, b), slice);
  }
  for (int b = 0; b < P; ++b) {
    if (b != (r + 1) % P) a.send(balanced(count, P, b));
    if (b != r) a.recv(balanced(count, P, b));
  }
  return a.t;
}

Traffic rabenseifnerAllReduce(int P, int r, size_t count, Acc a) {
  const Folding f(P);
  if (f.idle(r)) {
    a.send(count);
    a.recv(count);
    return a.t;
  }
  if (f.inPair(r)) a.recv(count);
  PieceSizes ps;
  for (int i = 0; i < f.p2; ++i) ps.len.push_back(balanced(count, f.p2, i));
  halving(a, ps, f.p2, f.newRank(r));
  doubling(a, ps, f.p2, f.newRank(r));
  if (f.inPair(r)) a.send(count);
  return a.t;
}

Traffic recdblAllReduce(int P, int r, size_t count, Acc a) {
  const Folding f(P);
  if (f.idle(r)) {
    a.send(count);
    a.recv(count);
    return a.t;
  }
  if (f.inPair(r)) a.recv(count);
  for (int d = 1; d < f.p2; d *= 2) {
    a.send(count);
    a.recv(count);
  }
  if (f.inPair(r)) a.send(count);
  return a.t;
}

PieceSizes rankBlockPieces(const Folding& f, size_t block) {
  PieceSizes ps;
  for (int i = 0; i < f.p2; ++i) ps.len.push_back(i < f.q ? 2 * block : block);
  return ps;
}

Traffic halvingReduceScatter(int P, int r, size_t rc, Acc a) {
  const Folding f(P);
  const size_t total = size_t(P) * rc;
  if (f.idle(r)) {
    a.send(total);
    a.recv(rc);
    return a.t;
  }
  if (f.inPair(r)) a.recv(total);
  halving(a, rankBlockPieces(f, rc), f.p2, f.newRank(r));
  if (f.inPair(r)) a.send(rc);
  return a.t;
}

Traffic doublingAllGather(int P, int r, size_t sc, Acc a) {
  const Folding f(P);
  const size_t total = size_t(P) * sc;
  if (f.idle(r)) {
    a.send(sc);
    a.recv(total);
    return a.t;
  }
  if (f.inPair(r)) a.recv(sc);
  doubling(a, rankBlockPieces(f, sc), f.p2, f.newRank(r));
  if (f.inPair(r)) a.send(total);
  return a.t;
}

int lowBit(int rel, int P) {
  if (rel) return rel & -rel;
  int m = 1;
  while (m < P) m *= 2;
  return m;
}

// The blocks of the relative ranks [a, b), as messages of contiguous absolute blocks.
void subtreeMessages(int P, int root, size_t count, int a, int b, const std::function<void(size_t)>& msg) {
  size_t run = 0;
  for (int j = a; j < b; ++j) {
    const int blk = (j + root) % P;
    if (j > a && blk == 0) {  // wrapped: a new message
      msg(run);
      run = 0;
    }
    run += balanced(count, P, blk);
  }
  msg(run);
}

}  // namespace

Traffic expectedBroadcastTraffic(scAlgo_t algo, int P, int r, int root, size_t count, size_t esz) {
  Acc a{{}, esz};
  if (P == 1 || count == 0) return {};
  const int rel = (r - root + P) % P, low = lowBit(rel, P);
  if (algo == scAlgoBinomial) {
    if (rel) a.recv(count);
    for (int m = 1; m < low; m *= 2)
      if (rel + m < P) a.send(count);
    return a.t;
  }
  if (algo != scAlgoScatterAllGather) throw std::logic_error("test: no broadcast traffic model for this algorithm");
  if (rel) subtreeMessages(P, root, count, rel, std::min(rel + low, P), [&](size_t n) { a.recv(n); });
  for (int m = 1; m < low; m *= 2)
    if (rel + m < P) subtreeMessages(P, root, count, rel + m, std::min(rel + 2 * m, P), [&](size_t n) { a.send(n); });
  for (int b = 0; b < P; ++b) {
    if (b != (r + 1) % P) a.send(balanced(count, P, b));
    if (b != r) a.recv(balanced(count, P, b));
  }
  return a.t;
}

std::string Traffic::str() const {
  std::ostringstream os;
  os << "{bytesSent " << bytesSent << ", bytesRecv " << bytesRecv << ", msgsSent " << msgsSent << ", msgsRecv "
     << msgsRecv << "}";
  return os.str();
}

Traffic fromStats(const scStats_t& s) { return {s.bytesSent, s.bytesRecv, s.msgsSent, s.msgsRecv}; }

Traffic expectedTraffic(Coll coll, scAlgo_t algo, int P, int r, size_t count, size_t esz, size_t slice) {
  Acc a{{}, esz};
  if (P == 1 || count == 0) return {};
  switch (coll) {
    case Coll::AllReduce:
      if (algo == scAlgoRing) return ringAllReduce(P, r, count, a, slice);
      if (algo == scAlgoRabenseifner) return rabenseifnerAllReduce(P, r, count, a);
      if (algo == scAlgoRecDbl) return recdblAllReduce(P, r, count, a);
      break;
    case Coll::ReduceScatter:
      if (algo == scAlgoRing) {
        for (int s = 0; s < P - 1; ++s) {
          a.sendSliced(count, slice);
          a.recvSliced(count, slice);
        }
        return a.t;
      }
      if (algo == scAlgoRabenseifner) return halvingReduceScatter(P, r, count, a);
      break;
    case Coll::AllGather:
      if (algo == scAlgoRing) {
        for (int s = 0; s < P - 1; ++s) {
          a.send(count);
          a.recv(count);
        }
        return a.t;
      }
      if (algo == scAlgoRecDbl) return doublingAllGather(P, r, count, a);
      break;
  }
  throw std::logic_error("test: no traffic model for this collective/algorithm");
}

}  // namespace dtest
