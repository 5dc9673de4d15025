#include "transport/mpi/shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "core/error.h"
#include "core/env.h"
#include "transport/mpi/util.h"

namespace sc {

// A receiver's segment, for a node of R ranks, holds the queues from every
// other rank in five parts:
//   1. per sender, its count of fragments taken (a cache line each, written
//      by the receiver);
//   2. per sender, kShmSlots slot lines: a stamp, the fragment's header and
//      its first kShmInline bytes (or a single-copy descriptor);
//   3. per sender, spillLines_ spill lines, laid out as slot lines;
//   4. per sender and slot, a page for the rest of the fragment (its byte k
//      at offset k);
//   5. per sender, a spill ring of kShmSpillRing bytes for the rest of each
//      spilled fragment: the sender reserves its length, rounded up to a
//      line, at the ring's next free place aligned to that length's power of
//      two (so it never runs past the end), byte k at offset k from there.
// Fragment n of a queue goes to slot n % kShmSlots when the receiver took
// that slot's last fragment, else to the next spill line; its stamp, n + 1,
// is what publishes it. The receiver looks for fragment n in its slot, then
// at its next spill line: it polls the lines it expects, not a counter of the
// sender's, and the sender reads the receiver's count only when its last
// look said a slot was busy. So a message of up to 32 bytes hands over one
// cache line, where a counter each way, a header and the bytes would be
// four; and every slot line into a rank lies in one or two pages, so a rank
// polling all its peers touches those pages, not a page per slot.
//
// Why slots and a spill: a queue deep enough for a sender to run far ahead
// of its receiver (as MPI's eager sends do, on a sparse graph where the
// receiver waits for a core) costs, as a plain ring, a fresh line or two per
// message, and with many busy queues those miss the cache. Measured (2
// cores, alternating runs, neighbour allgather, naive/MPI_Neighbor_allgather
// time): a ring of 256 lines and a 16 KiB ring for the rest took Erdős–Rényi
// p = 0.1 at 8 ranks and 8 B from 3.6-5.4 to 0.9-1.3, but Moore d = 2,
// r = 2 at 16 ranks and 64..256 B from 0.88-0.96 to 1.2-1.4, and the same
// with a sender held to 4 fragments ahead. Slots stay in cache; the spill
// is touched only while a receiver is behind (slots and spill: 0.8-1.7 on
// the first graph at 8..256 B, 0.86-0.91 on the second).
static_assert(sizeof(ShmHeader) == 24 && alignof(ShmHeader) == 8, "stamp, header and 32 bytes: one line");
static_assert(8 + sizeof(ShmHeader) + kShmInline == kShmLine, "a slot line is a cache line");
static_assert(sizeof(ShmDescriptor) <= kShmInline, "a descriptor fits its slot line");
static_assert((kShmSlots & (kShmSlots - 1)) == 0, "a power of two: slot() masks");
static_assert((kShmSpillLines & (kShmSpillLines - 1)) == 0 && kShmSpillRing % kShmBytes == 0,
              "a power of two of spill lines, and whole fragments in a spill ring");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "queues need lock-free 64-bit atomics across processes");

namespace {

// The largest node the queues serve: segments grow with the node's ranks
// (a queue from each), so a node of more ranks keeps to MPI alone.
constexpr int kMaxNodeRanks = 256;

// Spill lines per queue on a node of R ranks: kShmSpillLines, or fewer where
// the R - 1 queues into a rank would hold more than 256 KiB of them (the
// same on every rank of the node).
uint64_t spillLinesFor(int nodeRanks) {
  const uint64_t budget = (256u << 10) / kShmLine / uint64_t(std::max(1, nodeRanks - 1));
  uint64_t n = kShmSpillLines;
  while (n > 4 && n > budget) n /= 2;
  return n;
}

// Whether this process can read the memory of the next rank of the node
// (index + 1): each rank publishes a word of its own and where it lies, and
// reads its neighbour's. The kernel refuses where ptrace rules forbid it
// (Yama's ptrace_scope, containers without it), and then nobody uses it.
bool readsNeighbour(MPI_Comm node, int index, int nodeSize, std::vector<int>* pids) {
  static const uint64_t word = 0x7370617263636d61ull ^ uint64_t(getpid());
  struct Mine {
    uint64_t addr, value;
    int64_t pid;
  } mine{uint64_t(reinterpret_cast<uintptr_t>(&word)), word, int64_t(getpid())};
  std::vector<Mine> all(static_cast<size_t>(nodeSize));
  mpiCheck(MPI_Allgather(&mine, int(sizeof mine), MPI_BYTE, all.data(), int(sizeof mine), MPI_BYTE, node),
           "MPI_Allgather");
  pids->resize(size_t(nodeSize));
  for (int i = 0; i < nodeSize; ++i) (*pids)[size_t(i)] = int(all[size_t(i)].pid);
  const Mine& next = all[size_t((index + 1) % nodeSize)];
  uint64_t got = 0;
  iovec local{&got, sizeof got}, remote{reinterpret_cast<void*>(uintptr_t(next.addr)), sizeof got};
  return process_vm_readv(pid_t(next.pid), &local, 1, &remote, 1, 0) == ssize_t(sizeof got) && got == next.value;
}

// The largest message SPARCOLL_MPI_SHM_MAX_BYTES allows.
constexpr long kMaxMaxBytes = 16L << 20;

// SPARCOLL_MPI_SHM_MAX_BYTES: bytes, with an optional K or M (1024,
// 1048576), from 0 to 16M; -1 when unset, -2 for anything else.
long envMaxBytes() {
  const char* e = env::get(env::Var::MpiShmMaxBytes);
  if (!e) return -1;
  char* end = nullptr;
  errno = 0;
  const long long v = std::strtoll(e, &end, 10);
  if (end == e || errno || v < 0 || *e == '-' || *e == '+' || *e == ' ') return -2;
  long long unit = 1;
  if (*end == 'K' || *end == 'k') unit = 1024, ++end;
  else if (*end == 'M' || *end == 'm') unit = 1 << 20, ++end;
  if (*end || v > kMaxMaxBytes / unit) return -2;
  return long(v * unit);
}

// Whether the node's ranks outnumber its cores.
bool crowded(int nodeRanks) {
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 && nodeRanks > cores;
}

// Whether every rank of comm says yes.
bool allOf(MPI_Comm comm, bool mine) {
  int in = mine ? 1 : 0, out = 0;
  mpiCheck(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_MIN, comm), "MPI_Allreduce");
  return out == 1;
}

// Whether a wait should yield the core as soon as it finds nothing to do:
// where the node's ranks outnumber its cores (the message waited for then
// needs a peer that waits for a core), or where the user asked MPI to yield
// when idle (Open MPI's mpi_yield_when_idle, which mpirun also sets by
// itself when it oversubscribes).
bool yieldWhenIdle(int nodeRanks) {
  const char* e = std::getenv("OMPI_MCA_mpi_yield_when_idle");
  if (e && *e && std::strcmp(e, "0") != 0 && std::strcmp(e, "false") != 0) return true;
  return crowded(nodeRanks);
}

}  // namespace

std::unique_ptr<ShmQueues> ShmQueues::create(MPI_Comm comm, uint64_t id) {
  MPI_Comm node;
  mpiCheck(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node), "MPI_Comm_split_type");
  int nodeSize = 0, index = 0, size = 0, rank = 0;
  MPI_Comm_size(node, &nodeSize);
  MPI_Comm_rank(node, &index);
  MPI_Comm_size(comm, &size);
  MPI_Comm_rank(comm, &rank);
  struct FreeNode {
    MPI_Comm* c;
    ~FreeNode() { MPI_Comm_free(c); }
  } freeNode{&node};
  // A bad setting turns the queues off for all, then fails this rank's
  // communicator (after the collective, so that no rank waits for it there).
  const int setting = env::onOff(env::Var::MpiShm), cma = env::onOff(env::Var::MpiCma);
  const long maxSet = envMaxBytes();
  const bool on = allOf(comm, setting == 1 && cma >= 0 && maxSet != -2 && nodeSize > 1 && nodeSize <= kMaxNodeRanks);
  SC_REQUIRE(setting >= 0, scInvalidArgument, env::setting(env::Var::MpiShm), " on rank ", rank,
             ": expected 0 or off (no shared-memory queues), 1 or on (the default)");
  SC_REQUIRE(cma >= 0, scInvalidArgument, env::setting(env::Var::MpiCma), " on rank ", rank,
             ": expected 0 or off (larger messages on the node through MPI), 1 or on (single copy, the default)");
  SC_REQUIRE(maxSet != -2, scInvalidArgument, env::setting(env::Var::MpiShmMaxBytes), " on rank ", rank,
             ": expected the largest message for the shared-memory queues, in bytes from 0 to 16M "
             "(K and M: 1024 and 1048576 bytes)");
  if (!on) return nullptr;

  // The largest message through the queues, the same on every rank of the
  // node (the smallest any rank asks for): 16 KiB where larger messages go
  // by single copy; without it, 32 KiB where ranks outnumber cores, else
  // 16 KiB. Measured where ranks outnumber cores (8 on 2 cores): the queues'
  // second copy costs more than single copy from 32 KiB, and more than MPI's
  // hand-overs from 64 KiB. With a core per rank (2 ranks on 2 cores,
  // alternating runs, bench/results/mpi-shm-limit-2026-11-25.txt), an 8 KiB
  // message through the queues took 1.8 us against 4.3 us by single copy
  // (5.7 us through MPI), 16 KiB 3.1 against 4.9, and 32 KiB a queue's
  // 8 fragments stalled the sender behind its 2-fragment spill ring (18.9 us
  // against 6.8). Either way 4 slots per queue and the spill behind them (the
  // layout's comment above): more slots measured within noise of 4 on dense
  // graphs and slowed a ring.
  const bool full = crowded(nodeSize);
  auto limit = [&](long bytes) { return int(maxSet >= 0 ? maxSet : bytes); };
  int limits[2] = {limit(16384), limit(full ? 32768 : 16384)};
  mpiCheck(MPI_Allreduce(MPI_IN_PLACE, limits, 2, MPI_INT, MPI_MIN, node), "MPI_Allreduce");
  std::unique_ptr<ShmQueues> q(new ShmQueues);
  q->mine_ = index;
  q->yieldWhenIdle_ = yieldWhenIdle(nodeSize);
  const size_t R = size_t(nodeSize), page = 4096;
  q->spillLines_ = spillLinesFor(nodeSize);
  q->linesAt_ = R * kShmLine;
  q->spillAt_ = q->linesAt_ + R * kShmSlots * kShmLine;
  q->bulkAt_ = (q->spillAt_ + R * q->spillLines_ * kShmLine + page - 1) / page * page;
  q->ringAt_ = q->bulkAt_ + R * kShmSlots * kShmBytes;
  q->segmentBytes_ = q->ringAt_ + R * kShmSpillRing;
  q->segment_.assign(size_t(nodeSize), nullptr);
  for (auto* v : {&q->sent_, &q->headSeen_, &q->taken_, &q->spillSent_, &q->spillDone_, &q->ringSent_, &q->spillTaken_})
    v->assign(R, 0);
  q->lastIn_.assign(R * kShmSlots, 0);
  q->spillFrag_.assign(R * q->spillLines_, 0);
  q->ringEnd_.assign(R * q->spillLines_, 0);
  // Each node rank's index, known to all: the node's ranks in comm's numbering.
  const std::vector<int> inComm = ranksIn(node, comm);
  q->slotOf_.assign(size_t(size), -1);
  for (int i = 0; i < nodeSize; ++i)
    if (i != index) q->slotOf_[size_t(inComm[size_t(i)])] = i;

  // This rank's segment, named after the node's lowest rank's process and
  // the communicator's id (the same on every rank), zeroed when made. Its
  // memory is reserved up front (posix_fallocate): a full /dev/shm then
  // turns the queues off instead of failing a later write with SIGBUS.
  int leaderPid = int(getpid());
  mpiCheck(MPI_Bcast(&leaderPid, 1, MPI_INT, 0, node), "MPI_Bcast");
  auto name = [&](int i) {
    char n[96];
    std::snprintf(n, sizeof n, "/sparcoll-%d-%016llx-%d", leaderPid, static_cast<unsigned long long>(id), i);
    return std::string(n);
  };
  auto map = [&](int i, bool make) -> char* {
    const int fd = shm_open(name(i).c_str(), make ? O_CREAT | O_EXCL | O_RDWR : O_RDWR, 0600);
    if (fd < 0) return nullptr;
    const bool sized =
        !make || (ftruncate(fd, off_t(q->segmentBytes_)) == 0 && posix_fallocate(fd, 0, off_t(q->segmentBytes_)) == 0);
    void* p = sized ? mmap(nullptr, q->segmentBytes_, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
    close(fd);
    if (p != MAP_FAILED) return static_cast<char*>(p);
    if (make) shm_unlink(name(i).c_str());
    return nullptr;
  };
  const bool made = (q->segment_[size_t(index)] = map(index, true)) != nullptr;
  // Every segment made (or not) before any is opened; one that is missing
  // fails its opening, and then the queues are off for every rank.
  mpiCheck(MPI_Barrier(node), "MPI_Barrier");
  bool mapped = made;
  for (int i = 0; i < nodeSize; ++i)
    if (i != index) mapped = (q->segment_[size_t(i)] = map(i, false)) != nullptr && mapped;
  // Unlinked once every rank mapped every segment: the names go, the memory
  // stays until the last mapping does.
  const bool all = allOf(comm, mapped);
  if (made) shm_unlink(name(index).c_str());
  if (!all) return nullptr;  // the destructor unmaps what was mapped
  // Single copy where every rank wants it and every rank can read its neighbour.
  const bool reads = readsNeighbour(node, index, nodeSize, &q->pids_);
  q->singleCopy_ = allOf(comm, cma == 1 && reads);
  q->maxBytes_ = size_t(limits[q->singleCopy_ ? 0 : 1]);
  return q;
}

ShmQueues::~ShmQueues() {
  for (char* s : segment_)
    if (s) munmap(s, segmentBytes_);
}

namespace {

// A fragment's first bytes (at most kShmInline) to or from its slot line. A
// memcpy of a variable length is a call into libc; these are a few fixed-size
// moves, two overlapping ones per size class (the small messages' path).
void copyInline(void* dst, const void* src, size_t n) {
  auto two = [&](auto word) {
    constexpr size_t w = sizeof word;
    decltype(word) a, b;
    std::memcpy(&a, src, w);
    std::memcpy(&b, static_cast<const char*>(src) + n - w, w);
    std::memcpy(dst, &a, w);
    std::memcpy(static_cast<char*>(dst) + n - w, &b, w);
  };
  struct Pair {
    uint64_t x, y;
  };
  if (n >= 16) two(Pair{});
  else if (n >= 8) two(uint64_t{});
  else if (n >= 4) two(uint32_t{});
  else if (n) std::memcpy(dst, src, n);
}

}  // namespace

std::atomic<uint64_t>& ShmQueues::headOf(int receiver, int sender) const {
  return *reinterpret_cast<std::atomic<uint64_t>*>(segment_[size_t(receiver)] + size_t(sender) * kShmLine);
}

char* ShmQueues::line(int receiver, int sender, uint64_t n) const {
  // A constant slot count: the modulo is a mask, not a division per message.
  return segment_[size_t(receiver)] + linesAt_ + (size_t(sender) * kShmSlots + n % kShmSlots) * kShmLine;
}

char* ShmQueues::bulk(int receiver, int sender, uint64_t n) const {
  return segment_[size_t(receiver)] + bulkAt_ + (size_t(sender) * kShmSlots + n % kShmSlots) * kShmBytes;
}

char* ShmQueues::spillLine(int receiver, int sender, uint64_t k) const {
  return segment_[size_t(receiver)] + spillAt_ + (size_t(sender) * spillLines_ + (k & (spillLines_ - 1))) * kShmLine;
}

char* ShmQueues::spillRing(int receiver, int sender) const {
  return segment_[size_t(receiver)] + ringAt_ + size_t(sender) * kShmSpillRing;
}

bool ShmQueues::slotFree(int i, uint64_t n) {
  const uint64_t last = lastIn_[size_t(i) * kShmSlots + n % kShmSlots];  // its fragment + 1, 0: none
  if (headSeen_[size_t(i)] >= last) return true;
  headSeen_[size_t(i)] = headOf(i, mine_).load(std::memory_order_acquire);  // busy when last looked
  return headSeen_[size_t(i)] >= last;
}

char* ShmQueues::spill(int i, uint64_t n, size_t ringBytes, uint32_t* at) {
  const size_t base = size_t(i) * spillLines_;
  const uint64_t mask = spillLines_ - 1, sent = spillSent_[size_t(i)];
  // Spill lines the receiver took: those of fragments below its count (the
  // last look, which slotFree() just took).
  uint64_t& done = spillDone_[size_t(i)];
  while (done < sent && spillFrag_[base + (done & mask)] < headSeen_[size_t(i)]) ++done;
  if (sent - done >= spillLines_) return nullptr;
  uint64_t need = 0, start = ringSent_[size_t(i)];
  if (ringBytes) {
    uint64_t align = kShmLine;
    while (align < ringBytes) align *= 2;
    need = (ringBytes + kShmLine - 1) / kShmLine * kShmLine;
    start = (start + align - 1) & ~(align - 1);
    // The ring is free up to the end of the last spilled fragment taken.
    const uint64_t freeTo = done ? ringEnd_[base + ((done - 1) & mask)] : 0;
    if (start + need - freeTo > kShmSpillRing) return nullptr;
    ringSent_[size_t(i)] = start + need;
  }
  spillFrag_[base + (sent & mask)] = n;
  ringEnd_[base + (sent & mask)] = ringSent_[size_t(i)];
  *at = uint32_t(start % kShmSpillRing);
  return spillLine(i, mine_, sent);
}

void ShmQueues::publish(int i, char* l, uint64_t n) {
  stampOf(l).store(n + 1, std::memory_order_release);
  sent_[size_t(i)] = n + 1;
}

bool ShmQueues::trySend(int to, const ShmHeader& h, const void* data, size_t bytes) {
  const int i = slotOf_[size_t(to)];
  const uint64_t n = sent_[size_t(i)];
  const size_t first = std::min(bytes, kShmInline);
  ShmHeader head = h;
  char *l, *rest;  // the line, and where byte k of the fragment goes (k >= first)
  const bool inSlot = slotFree(i, n);
  if (inSlot) {
    l = line(i, mine_, n);
    rest = bulk(i, mine_, n);
    head.at = 0;
  } else {
    if (!(l = spill(i, n, bytes > first ? bytes : 0, &head.at))) return false;
    rest = spillRing(i, mine_) + head.at;
  }
  std::memcpy(l + 8, &head, sizeof head);
  copyInline(inlineOf(l), data, first);
  if (bytes > first) std::memcpy(rest + first, static_cast<const char*>(data) + first, bytes - first);
  if (inSlot) lastIn_[size_t(i) * kShmSlots + n % kShmSlots] = n + 1;
  else ++spillSent_[size_t(i)];
  publish(i, l, n);
  return true;
}

char* ShmQueues::arrived(int i, bool* spilled) const {
  const uint64_t n = taken_[size_t(i)];
  char* l = line(mine_, i, n);
  if (stampOf(l).load(std::memory_order_acquire) == n + 1) {
    *spilled = false;
    return l;
  }
  l = spillLine(mine_, i, spillTaken_[size_t(i)]);
  *spilled = true;
  return stampOf(l).load(std::memory_order_acquire) == n + 1 ? l : nullptr;
}

const ShmHeader* ShmQueues::peek(int from) const {
  bool spilled;
  const char* l = arrived(slotOf_[size_t(from)], &spilled);
  return l ? reinterpret_cast<const ShmHeader*>(l + 8) : nullptr;
}

// The line of the fragment peek() returned: in its slot, or spilled.
char* ShmQueues::lineOf(const ShmHeader* h) { return const_cast<char*>(reinterpret_cast<const char*>(h)) - 8; }
bool ShmQueues::spilled(int i, const ShmHeader* h) const { return lineOf(h) != line(mine_, i, taken_[size_t(i)]); }

void ShmQueues::copyOut(int from, const ShmHeader* h, void* dst, size_t bytes) const {
  const int i = slotOf_[size_t(from)];
  const size_t first = std::min(bytes, kShmInline);
  copyInline(dst, inlineOf(lineOf(h)), first);
  if (bytes <= first) return;
  const char* rest = spilled(i, h) ? spillRing(mine_, i) + h->at : bulk(mine_, i, taken_[size_t(i)]);
  std::memcpy(static_cast<char*>(dst) + first, rest + first, bytes - first);
}

ShmDescriptor* ShmQueues::descriptorOf(const ShmHeader* h) {
  return reinterpret_cast<ShmDescriptor*>(const_cast<char*>(reinterpret_cast<const char*>(h)) + sizeof(ShmHeader));
}

// Descriptors go in slots only (never spilled): a sender waits for its slot.
bool ShmQueues::tryPost(int to, const ShmHeader& h, const void* buf, uint64_t* index) {
  const int i = slotOf_[size_t(to)];
  const uint64_t n = sent_[size_t(i)];
  if (!slotFree(i, n)) return false;
  char* l = line(i, mine_, n);
  std::memcpy(l + 8, &h, sizeof h);
  auto* d = reinterpret_cast<ShmDescriptor*>(inlineOf(l));
  d->addr = uint64_t(reinterpret_cast<uintptr_t>(buf));
  d->state.store(ShmDescriptor::kPosted, std::memory_order_relaxed);  // published by the stamp's release
  lastIn_[size_t(i) * kShmSlots + n % kShmSlots] = n + 1;
  *index = n;
  publish(i, l, n);
  return true;
}

// The descriptor stays in its slot until the receiver pops it, and only
// this rank reuses the slot, after that: once head has passed index the
// receiver took it (it pops only after claiming), before that the slot is
// still the descriptor.
ShmDescriptor* ShmQueues::unpopped(int to, uint64_t index) const {
  const int i = slotOf_[size_t(to)];
  if (headOf(i, mine_).load(std::memory_order_acquire) > index) return nullptr;
  return reinterpret_cast<ShmDescriptor*>(inlineOf(line(i, mine_, index)));
}

bool ShmQueues::taken(int to, uint64_t index) const {
  const ShmDescriptor* d = unpopped(to, index);
  return !d || d->state.load(std::memory_order_acquire) == ShmDescriptor::kTaken;
}

void ShmQueues::revoke(int to, uint64_t index) {
  uint32_t posted = ShmDescriptor::kPosted;
  if (ShmDescriptor* d = unpopped(to, index))
    d->state.compare_exchange_strong(posted, ShmDescriptor::kRevoked, std::memory_order_acq_rel);
}

int ShmQueues::readFrom(int from, const ShmDescriptor* d, void* buf, size_t bytes) const {
  const pid_t pid = pid_t(pids_[size_t(slotOf_[size_t(from)])]);
  size_t done = 0;
  while (done < bytes) {
    iovec local{static_cast<char*>(buf) + done, bytes - done};
    iovec remote{reinterpret_cast<char*>(uintptr_t(d->addr)) + done, bytes - done};
    const ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EFAULT;
    done += size_t(n);
  }
  return 0;
}

void ShmQueues::pop(int from, const ShmHeader* h) {
  const int i = slotOf_[size_t(from)];
  if (spilled(i, h)) ++spillTaken_[size_t(i)];
  headOf(mine_, i).store(++taken_[size_t(i)], std::memory_order_release);
}

}  // namespace sc
