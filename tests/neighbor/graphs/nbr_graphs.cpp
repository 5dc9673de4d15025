#include "nbr_graphs.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>

namespace ntest {

uint64_t mix(uint64_t a, uint64_t b, uint64_t c) {
  uint64_t x = a * 0x9E3779B97F4A7C15ull ^ (b + 0x632BE59BD9B4E019ull) ^ (c * 0xD1B54A32D192ED03ull);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

Graph fromDestinations(std::string name, int P, std::vector<std::vector<int>> dst, SourceOrder order) {
  Graph g;
  g.name = std::move(name);
  g.P = P;
  g.dst = std::move(dst);
  g.src.assign(size_t(P), {});
  for (int i = 0; i < P; ++i)
    for (int j : g.dst[size_t(i)]) g.src[size_t(j)].push_back(i);
  for (int j = 0; j < P; ++j) {
    auto& s = g.src[size_t(j)];
    if (order == SourceOrder::Descending) std::reverse(s.begin(), s.end());
    if (order == SourceOrder::Shuffled)
      for (size_t a = s.size(); a > 1; --a) std::swap(s[a - 1], s[mix(uint64_t(j), a) % a]);
  }
  return g;
}

std::vector<int> gridDims(int P, int d) {
  std::vector<int> dims(size_t(d), 1);
  std::vector<int> primes;  // P's prime factors, largest first
  for (int n = P, f = 2; n > 1;) {
    if (n % f == 0) {
      primes.push_back(f);
      n /= f;
    } else ++f;
  }
  std::sort(primes.rbegin(), primes.rend());
  for (int p : primes) *std::min_element(dims.begin(), dims.end()) *= p;
  std::sort(dims.rbegin(), dims.rend());
  return dims;
}

Graph moore(int P, int d, int r, bool periodic) {
  const std::vector<int> dims = gridDims(P, d);
  std::vector<std::vector<int>> dst(static_cast<size_t>(P));
  auto coords = [&](int rank) {
    std::vector<int> c(static_cast<size_t>(d));
    for (int k = d - 1; k >= 0; --k) {
      c[size_t(k)] = rank % dims[size_t(k)];
      rank /= dims[size_t(k)];
    }
    return c;
  };
  const int side = 2 * r + 1;
  int offsets = 1;
  for (int k = 0; k < d; ++k) offsets *= side;
  for (int rank = 0; rank < P; ++rank) {
    const std::vector<int> c = coords(rank);
    for (int o = 0; o < offsets; ++o) {
      int rest = o, target = 0;
      bool inside = true, zero = true;
      for (int k = 0; k < d; ++k) {
        const int off = rest % side - r;
        rest /= side;
        zero = zero && off == 0;
        int x = c[size_t(k)] + off;
        if (periodic) x = ((x % dims[size_t(k)]) + dims[size_t(k)]) % dims[size_t(k)];
        inside = inside && x >= 0 && x < dims[size_t(k)];
        target = target * dims[size_t(k)] + x;
      }
      if (!zero && inside) dst[size_t(rank)].push_back(target);
    }
  }
  return fromDestinations("moore d=" + std::to_string(d) + " r=" + std::to_string(r) + (periodic ? " periodic" : ""), P,
                          std::move(dst), periodic ? SourceOrder::Descending : SourceOrder::Ascending);
}

Graph erdosRenyi(int P, double p, uint64_t seed) {
  std::vector<std::vector<int>> dst(static_cast<size_t>(P));
  for (int i = 0; i < P; ++i)
    for (int j = 0; j < P; ++j)
      if (i != j && double(mix(seed, uint64_t(i), uint64_t(j)) >> 11) * 0x1p-53 < p) dst[size_t(i)].push_back(j);
  return fromDestinations("erdos-renyi p=" + std::to_string(p).substr(0, 4) + " seed=" + std::to_string(seed), P,
                          std::move(dst), SourceOrder::Shuffled);
}

Graph star(int P) {
  std::vector<std::vector<int>> dst(static_cast<size_t>(P));
  for (int i = 1; i < P; ++i) {
    dst[0].push_back(i);
    dst[size_t(i)].push_back(0);
  }
  return fromDestinations("star", P, std::move(dst));
}

Graph empty(int P, bool some) {
  std::vector<std::vector<int>> dst(static_cast<size_t>(P));
  if (some)  // odd ranks form a ring among themselves; even ranks have degree 0
    for (int i = 1; i < P; i += 2) dst[size_t(i)].push_back(i + 2 < P ? i + 2 : 1);
  return fromDestinations(some ? "degree 0 on even ranks" : "degree 0", P, std::move(dst));
}

Graph multiEdges(int P, uint64_t seed) {
  std::vector<std::vector<int>> dst(static_cast<size_t>(P));
  for (int i = 0; i < P; ++i) {
    const int n = 1 + int(mix(seed, uint64_t(i)) % 6);
    for (int e = 0; e < n; ++e) {
      const int j = int(mix(seed, uint64_t(i), uint64_t(e) + 1) % uint64_t(P));
      const int times = 1 + int(mix(seed + 1, uint64_t(i), uint64_t(e)) % 3);
      for (int t = 0; t < times; ++t) dst[size_t(i)].push_back(j);  // j == i: self-loops
    }
    std::swap(dst[size_t(i)].front(), dst[size_t(i)].back());  // repeats not always adjacent
  }
  return fromDestinations("multi-edges and self-loops seed=" + std::to_string(seed), P, std::move(dst),
                          SourceOrder::Shuffled);
}

Graph halo(int P, uint64_t seed) {
  std::vector<size_t> rows(static_cast<size_t>(P));
  std::vector<size_t> first(size_t(P) + 1, 0);
  for (int r = 0; r < P; ++r) {
    rows[size_t(r)] = 3 + size_t(r % 3);
    first[size_t(r) + 1] = first[size_t(r)] + rows[size_t(r)];
  }
  const size_t N = first[size_t(P)];
  auto owner = [&](size_t col) { return int(std::upper_bound(first.begin(), first.end(), col) - first.begin()) - 1; };
  // needs[q][o]: rank q's rows touch a column of rank o.
  std::vector<std::vector<bool>> needs(size_t(P), std::vector<bool>(size_t(P), false));
  for (size_t i = 0; i < N; ++i) {
    const int q = owner(i);
    std::vector<size_t> cols;
    if (i > 0) cols.push_back(i - 1);
    if (i + 1 < N) cols.push_back(i + 1);
    if (mix(seed, i) % 4 == 0) cols.push_back(size_t(mix(seed, i, 1) % N));
    for (size_t c : cols)
      if (owner(c) != q) needs[size_t(q)][size_t(owner(c))] = true;
  }
  std::vector<std::vector<int>> dst(static_cast<size_t>(P));
  for (int o = 0; o < P; ++o)
    for (int q = 0; q < P; ++q)
      if (needs[size_t(q)][size_t(o)]) dst[size_t(o)].push_back(q);
  Graph g = fromDestinations("sparse-matrix halo seed=" + std::to_string(seed), P, std::move(dst));
  g.blocks = rows;
  return g;
}

std::vector<Graph> catalogue(int P) {
  std::vector<Graph> gs;
  for (int d = 1; d <= 3; ++d)
    for (int r = 1; r <= 2; ++r)
      for (bool periodic : {false, true}) gs.push_back(moore(P, d, r, periodic));
  for (double p : {0.05, 0.2, 0.4, 0.6}) gs.push_back(erdosRenyi(P, p, 11 + uint64_t(p * 100)));
  gs.push_back(star(P));
  gs.push_back(empty(P, false));
  gs.push_back(empty(P, true));
  gs.push_back(multiEdges(P, 5));
  gs.push_back(halo(P, 3));
  return gs;
}

size_t vcount(const Graph& g, int r, size_t n) {
  if (!g.blocks.empty()) return g.blocks[size_t(r)] * std::max<size_t>(n, 1);
  return r % 4 == 3 ? 0 : n + size_t(r) * (n / 3 + 1);  // some ranks send nothing
}

namespace {

bool fail(std::string* err, const std::string& msg) {
  if (err) *err = msg;
  return false;
}

// A whole string as a number, or false.
bool wholeLong(const std::string& s, long* v) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtol(s.c_str(), &end, 10);
  return errno == 0 && *end == 0;
}

bool wholeDouble(const std::string& s, double* v) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) return false;
  char* end = nullptr;
  errno = 0;
  *v = std::strtod(s.c_str(), &end);
  return errno == 0 && *end == 0 && std::isfinite(*v);
}

// "k=v,k=v" of moore: and random:, each key one of `keys`.
bool parseParams(const std::string& spec, const std::string& body, const std::vector<std::string>& keys,
                 std::vector<std::pair<std::string, std::string>>* out, std::string* err) {
  size_t at = 0;
  while (at <= body.size() && !body.empty()) {
    const size_t comma = std::min(body.find(',', at), body.size());
    const std::string item = body.substr(at, comma - at);
    const size_t eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      return fail(err, "topology '" + spec + "': expected key=value, got '" + item + "'");
    const std::string key = item.substr(0, eq);
    if (std::find(keys.begin(), keys.end(), key) == keys.end()) {
      std::string known;
      for (const auto& k : keys) known += (known.empty() ? "" : ", ") + k;
      return fail(err, "topology '" + spec + "': unknown parameter '" + key + "' (takes " + known + ")");
    }
    out->emplace_back(key, item.substr(eq + 1));
    at = comma + 1;
  }
  return true;
}

bool readEdges(const std::string& path, Spec* s, std::string* err) {
  std::ifstream f(path);
  if (!f) return fail(err, "cannot read the edge list '" + path + "': " + std::strerror(errno));
  std::string line;
  for (int n = 1; std::getline(f, line); ++n) {
    const std::string text = line.substr(0, line.find('#'));
    long a = -1, b = -1;
    char extra = 0;
    const int got = std::sscanf(text.c_str(), " %ld %ld %c", &a, &b, &extra);
    if (got == EOF) continue;  // blank or comment only
    if (got != 2 || a < 0 || b < 0 || a >= (1L << 24) || b >= (1L << 24))
      return fail(err, path + ":" + std::to_string(n) + ": expected an edge 'i j' of two ranks in [0, 2^24), got '" +
                           line + "'");
    s->edges.emplace_back(int(a), int(b));
    s->ranksNeeded = std::max(s->ranksNeeded, int(std::max(a, b)) + 1);
  }
  if (f.bad()) return fail(err, "error reading the edge list '" + path + "'");
  return true;
}

}  // namespace

bool parseSpec(const std::string& text, Spec* s, std::string* err) {
  *s = Spec{};
  s->text = text;
  const size_t colon = text.find(':');
  const std::string kind = text.substr(0, colon), body = colon == std::string::npos ? "" : text.substr(colon + 1);
  if (kind == "file") {
    s->kind = Spec::Kind::File;
    if (body.empty()) return fail(err, "topology 'file:PATH' needs a path");
    return readEdges(body, s, err);
  }
  std::vector<std::pair<std::string, std::string>> kv;
  if (kind == "moore") {
    s->kind = Spec::Kind::Moore;
    if (!parseParams(text, body, {"d", "r", "periodic"}, &kv, err)) return false;
  } else if (kind == "random") {
    s->kind = Spec::Kind::Random;
    if (!parseParams(text, body, {"p", "seed"}, &kv, err)) return false;
  } else {
    return fail(err, "unknown topology '" + text + "' (moore:d=D,r=R[,periodic=1], random:p=X[,seed=S] or file:PATH)");
  }
  for (const auto& [key, value] : kv) {
    long n = 0;
    double x = 0;
    const std::string bad = "topology '" + text + "': ";
    if (key == "d" && !(wholeLong(value, &n) && n >= 1 && n <= 6))
      return fail(err, bad + "d must be an integer in [1, 6], got '" + value + "'");
    if (key == "r" && !(wholeLong(value, &n) && n >= 1 && n <= 1000))
      return fail(err, bad + "r must be an integer in [1, 1000], got '" + value + "'");
    if (key == "periodic" && !(wholeLong(value, &n) && (n == 0 || n == 1)))
      return fail(err, bad + "periodic must be 0 or 1, got '" + value + "'");
    if (key == "seed" && !(wholeLong(value, &n) && n >= 0))
      return fail(err, bad + "seed must be an integer >= 0, got '" + value + "'");
    if (key == "p" && !(wholeDouble(value, &x) && x > 0 && x <= 1))
      return fail(err, bad + "p must be a probability in (0, 1], got '" + value + "'");
    if (key == "d") s->d = int(n);
    if (key == "r") s->r = int(n);
    if (key == "periodic") s->periodic = n == 1;
    if (key == "seed") s->seed = uint64_t(n);
    if (key == "p") s->p = x;
  }
  if (s->kind == Spec::Kind::Moore && std::pow(2.0 * s->r + 1, s->d) > 1e6)
    return fail(err, "topology '" + text + "': (2r+1)^d offsets is more than a million");
  return true;
}

bool build(const Spec& s, int P, Graph* g, std::string* err) {
  switch (s.kind) {
    case Spec::Kind::Moore: *g = moore(P, s.d, s.r, s.periodic); return true;
    case Spec::Kind::Random: *g = erdosRenyi(P, s.p, s.seed); return true;
    case Spec::Kind::File: break;
  }
  if (s.ranksNeeded > P)
    return fail(err, "the edge list of '" + s.text + "' names rank " + std::to_string(s.ranksNeeded - 1) +
                         ", but the run has " + std::to_string(P) + " rank" + (P == 1 ? "" : "s"));
  std::vector<std::vector<int>> dst(static_cast<size_t>(P));
  for (const auto& [a, b] : s.edges) dst[size_t(a)].push_back(b);
  *g = fromDestinations("edge list " + s.text.substr(5), P, std::move(dst));
  return true;
}

}  // namespace ntest
