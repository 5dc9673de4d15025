#include "dense_check.h"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace dtest {
namespace {

constexpr size_t kGuard = 64;  // bytes after every output that must stay untouched
constexpr uint8_t kFill = 0xA5;

bool guardIntact(const Bytes& buf, size_t used) {
  for (size_t k = used; k < buf.size(); ++k)
    if (buf[k] != kFill) return false;
  return true;
}

bool callOk(scResult_t r, scComm_t comm, const Call& c, const char* what) {
  EXPECT_EQ(r, scSuccess) << what << " " << c.label() << ": " << scGetErrorString(r) << ": " << scGetLastError(comm);
  return r == scSuccess;
}

}  // namespace

std::string Call::label() const {
  std::ostringstream os;
  os << algoStr(algo) << "/" << typeStr(dt) << "/" << opStr(op) << "/count=" << count
     << (inPlace ? "/in-place" : "/out-of-place");
  return os.str();
}

bool checkAllReduce(scComm_t comm, int rank, int P, const Call& c, const Bytes& expected, CrossRank* xr, size_t first) {
  const size_t esz = elemSize(c.dt), bytes = c.count * esz;
  const Bytes input = makeInput(c.dt, c.op, P, rank, 0, c.count);
  Bytes out(bytes + kGuard, kFill);
  scResult_t r;
  if (c.inPlace) {
    if (bytes) std::memcpy(out.data(), input.data(), bytes);
    r = scAllReduce(out.data(), out.data(), c.count, c.dt, c.op, c.algo, comm, nullptr);
  } else {
    Bytes send = input;
    r = scAllReduce(send.data(), out.data(), c.count, c.dt, c.op, c.algo, comm, nullptr);
    EXPECT_TRUE(send == input) << "allreduce " << c.label() << " wrote to its send buffer";
  }
  if (!callOk(r, comm, c, "allreduce")) return false;
  const size_t n = expected.size() / esz;
  EXPECT_LE(first + n, c.count);
  const std::string bad = firstMismatch(out.data() + first * esz, expected.data(), std::min(n, c.count - first), esz);
  EXPECT_TRUE(bad.empty()) << "allreduce " << c.label() << " on rank " << rank << " (elements from " << first
                           << "): " << bad;
  EXPECT_TRUE(guardIntact(out, bytes)) << "allreduce " << c.label() << " wrote past the end of recvbuf";
  if (xr) xr->add(rank, "allreduce " + c.label(), out.data(), bytes);
  return true;
}

bool checkReduceScatter(scComm_t comm, int rank, int P, const Call& c, const Bytes& expected, size_t first) {
  const size_t esz = elemSize(c.dt), bytes = c.count * esz, total = size_t(P) * c.count;
  const Bytes input = makeInput(c.dt, c.op, P, rank, 0, total);
  const size_t mine0 = size_t(rank) * c.count;
  if (mine0 < first || (mine0 + c.count - first) * esz > expected.size()) {
    ADD_FAILURE() << "test bug: the reference does not cover block " << rank;
    return false;
  }
  const uint8_t* want = expected.data() + (mine0 - first) * esz;
  scResult_t r;
  std::string bad;
  bool guard;
  if (c.inPlace) {
    Bytes buf(total * esz + kGuard, kFill);
    if (bytes) std::memcpy(buf.data(), input.data(), total * esz);
    uint8_t* mine = buf.data() + size_t(rank) * bytes;
    r = scReduceScatter(buf.data(), mine, c.count, c.dt, c.op, c.algo, comm, nullptr);
    if (!callOk(r, comm, c, "reduce-scatter")) return false;
    bad = firstMismatch(mine, want, c.count, esz);
    guard = guardIntact(buf, total * esz);
  } else {
    Bytes send = input, out(bytes + kGuard, kFill);
    r = scReduceScatter(send.data(), out.data(), c.count, c.dt, c.op, c.algo, comm, nullptr);
    if (!callOk(r, comm, c, "reduce-scatter")) return false;
    EXPECT_TRUE(send == input) << "reduce-scatter " << c.label() << " wrote to its send buffer";
    bad = firstMismatch(out.data(), want, c.count, esz);
    guard = guardIntact(out, bytes);
  }
  EXPECT_TRUE(bad.empty()) << "reduce-scatter " << c.label() << " on rank " << rank << " (block " << rank
                           << "): " << bad;
  EXPECT_TRUE(guard) << "reduce-scatter " << c.label() << " wrote past the end of its output";
  return true;
}

bool checkAllGather(scComm_t comm, int rank, int P, const Call& c, uint64_t salt, CrossRank* xr) {
  const size_t esz = elemSize(c.dt), bytes = c.count * esz, total = size_t(P) * bytes;
  Bytes expected(total);
  for (int q = 0; q < P; ++q) {
    const Bytes pq = makePayload(q, bytes, salt);
    if (bytes) std::memcpy(expected.data() + size_t(q) * bytes, pq.data(), bytes);
  }
  const Bytes mine = makePayload(rank, bytes, salt);
  Bytes out(total + kGuard, kFill);
  scResult_t r;
  if (c.inPlace) {
    uint8_t* block = out.data() + size_t(rank) * bytes;
    if (bytes) std::memcpy(block, mine.data(), bytes);
    r = scAllGather(block, out.data(), c.count, c.dt, c.algo, comm, nullptr);
  } else {
    Bytes send = mine;
    r = scAllGather(send.data(), out.data(), c.count, c.dt, c.algo, comm, nullptr);
    EXPECT_TRUE(send == mine) << "allgather " << c.label() << " wrote to its send buffer";
  }
  if (!callOk(r, comm, c, "allgather")) return false;
  const std::string bad = firstMismatch(out.data(), expected.data(), size_t(P) * c.count, esz);
  EXPECT_TRUE(bad.empty()) << "allgather " << c.label() << " on rank " << rank << ": " << bad;
  EXPECT_TRUE(guardIntact(out, total)) << "allgather " << c.label() << " wrote past the end of recvbuf";
  if (xr) xr->add(rank, "allgather " + c.label(), out.data(), total);
  return true;
}

bool checkBroadcast(scComm_t comm, int rank, const Call& c, int root, uint64_t salt) {
  const size_t esz = elemSize(c.dt), bytes = c.count * esz;
  const Bytes want = makePayload(root, bytes, salt), mine = makePayload(rank, bytes, salt);
  Bytes buf(bytes + kGuard, kFill);
  if (bytes) std::memcpy(buf.data(), mine.data(), bytes);
  const scResult_t r = scBroadcast(bytes ? buf.data() : nullptr, c.count, c.dt, root, c.algo, comm, nullptr);
  if (!callOk(r, comm, c, "broadcast")) return false;
  const std::string bad = firstMismatch(buf.data(), want.data(), c.count, esz);
  EXPECT_TRUE(bad.empty()) << "broadcast " << c.label() << " root " << root << " on rank " << rank << ": " << bad;
  EXPECT_TRUE(guardIntact(buf, bytes)) << "broadcast " << c.label() << " wrote past the end of its buffer";
  return true;
}

}  // namespace dtest
