#include "nbr_traffic.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace ntest {
namespace {

std::set<int> distinctBut(const std::vector<int>& v, int r) {
  std::set<int> s(v.begin(), v.end());
  s.erase(r);
  return s;
}

// Counts one message of `bytes` (none when empty).
struct Counter {
  const World& w;
  int r;
  Traffic t;
  void send(int to, uint64_t bytes) {
    if (!bytes) return;
    t.bytesSent += bytes;
    t.msgsSent++;
    if (w.node[size_t(to)] != w.node[size_t(r)]) {
      t.interBytes += bytes;
      t.interMsgs++;
    }
  }
  void recv(uint64_t bytes) {
    if (!bytes) return;
    t.bytesRecv += bytes;
    t.msgsRecv++;
  }
};

bool in(const std::vector<int>& v, int x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// The distinct out-neighbours of s on d's node.
std::vector<int> fan(const World& w, int s, int d) {
  std::vector<int> f;
  for (int x : distinctBut(w.g.dst[size_t(s)], s))
    if (w.node[size_t(x)] == w.node[size_t(d)]) f.push_back(x);
  return f;
}

uint64_t weight(const World& w, int d) {
  uint64_t load = 0;
  for (int s : distinctBut(w.g.src[size_t(d)], d))
    if (w.node[size_t(s)] != w.node[size_t(d)] && fan(w, s, d).size() >= 2) load += fan(w, s, d).size() - 1;
  return std::max<uint64_t>(1, (uint64_t(1) << 20) / load);
}

// Element length of chunk t of an n-element block cut by the members' weights.
uint64_t chunk(const World& w, const std::vector<int>& members, size_t t, size_t n) {
  unsigned __int128 all = 0, lo = 0, hi = 0;
  for (size_t i = 0; i < members.size(); ++i) {
    const uint64_t x = weight(w, members[i]);
    all += x;
    if (i < t) lo += x;
    if (i <= t) hi += x;
  }
  return uint64_t(hi * n / all - lo * n / all);
}

}  // namespace

bool Traffic::operator==(const Traffic& o) const {
  return bytesSent == o.bytesSent && bytesRecv == o.bytesRecv && msgsSent == o.msgsSent && msgsRecv == o.msgsRecv &&
         interBytes == o.interBytes && interMsgs == o.interMsgs;
}

std::string Traffic::str() const {
  std::ostringstream os;
  os << "{sent " << msgsSent << " msgs / " << bytesSent << " B, received " << msgsRecv << " / " << bytesRecv
     << " B, inter-node " << interMsgs << " / " << interBytes << " B}";
  return os.str();
}

Traffic fromStats(const scStats_t& s) {
  return {s.bytesSent, s.bytesRecv, s.msgsSent, s.msgsRecv, s.interNodeBytesSent, s.interNodeMsgsSent};
}

std::vector<int> commonNeighbours(const Graph& g, const std::vector<int>& group) {
  if (group.size() < 2) return {};
  std::vector<int> C;
  for (int j : distinctBut(g.dst[size_t(group[0])], group[0])) {
    bool all = !in(group, j);
    for (int m : group) all = all && in(g.dst[size_t(m)], j);
    if (all) C.push_back(j);
  }
  return C;
}

Traffic naiveTraffic(const World& w, int r) {
  Counter c{w, r, {}};
  for (int j : w.g.dst[size_t(r)])
    if (j != r) c.send(j, w.elems[size_t(r)] * w.esz);
  for (int s : w.g.src[size_t(r)])
    if (s != r) c.recv(w.elems[size_t(s)] * w.esz);
  return c.t;
}

Traffic combiningTraffic(const World& w, int r) {
  Counter c{w, r, {}};
  const std::vector<int>& G = w.group[size_t(r)];
  const std::vector<int> C = commonNeighbours(w.g, G);
  const size_t g = G.size(), pos = size_t(std::find(G.begin(), G.end(), r) - G.begin());
  auto bytes = [&](int x) { return uint64_t(w.elems[size_t(x)] * w.esz); };
  uint64_t groupBytes = 0;
  for (int m : G) groupBytes += bytes(m);
  for (int m : G) {
    if (m == r) continue;
    if (w.v) {
      c.send(m, 8);
      c.recv(8);
    }
    c.send(m, bytes(r));
    c.recv(bytes(m));
  }
  for (int j : distinctBut(w.g.dst[size_t(r)], r))
    if (!in(G, j) && !in(C, j)) c.send(j, bytes(r));
  for (size_t x = pos; x < C.size(); x += g) c.send(C[x], groupBytes);
  std::set<int> delivering;  // leaders of the other groups whose C holds r
  for (int s : distinctBut(w.g.src[size_t(r)], r)) {
    const std::vector<int>& Gs = w.group[size_t(s)];
    if (in(Gs, r)) continue;  // a friend: its block came in the friends' exchange
    if (in(commonNeighbours(w.g, Gs), r)) delivering.insert(Gs[0]);
    else c.recv(bytes(s));
  }
  for (int leader : delivering) {
    uint64_t n = 0;
    for (int m : w.group[size_t(leader)]) n += bytes(m);
    c.recv(n);
  }
  return c.t;
}

Traffic hierarchicalTraffic(const World& w, int r) {
  Counter c{w, r, {}};
  auto bytes = [&](int x) { return uint64_t(w.elems[size_t(x)] * w.esz); };
  std::map<int, std::vector<int>> remote;  // node -> distinct out-neighbours there
  for (int j : distinctBut(w.g.dst[size_t(r)], r)) {
    if (w.node[size_t(j)] == w.node[size_t(r)]) c.send(j, bytes(r));
    else remote[w.node[size_t(j)]].push_back(j);
  }
  for (auto& [node, D] : remote) {
    if (D.size() == 1) c.send(D[0], bytes(r));
    else
      for (size_t t = 0; t < D.size(); ++t) c.send(D[t], chunk(w, D, t, w.elems[size_t(r)]) * w.esz);
  }
  for (int s : distinctBut(w.g.src[size_t(r)], r)) {
    const std::vector<int> D = fan(w, s, r);
    if (w.node[size_t(s)] == w.node[size_t(r)] || D.size() == 1) {
      c.recv(bytes(s));
      continue;
    }
    const size_t me = size_t(std::find(D.begin(), D.end(), r) - D.begin()), n = w.elems[size_t(s)];
    c.recv(chunk(w, D, me, n) * w.esz);
    for (size_t t = 0; t < D.size(); ++t)
      if (t != me) {
        c.send(D[t], chunk(w, D, me, n) * w.esz);
        c.recv(chunk(w, D, t, n) * w.esz);
      }
  }
  return c.t;
}

}  // namespace ntest
