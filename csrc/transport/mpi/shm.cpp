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
#include <strings.h>
#include <new>
#include <string>

#include "core/error.h"
#include "transport/mpi/util.h"

namespace sc {

// A receiver's segment, for a node of R ranks, holds the queues from every
// other rank in three parts:
//   1. per sender, its count of fragments taken (a cache line each, written
//      by the receiver);
//   2. per sender, lines_ slot lines: a stamp, the fragment's header and its
//      first kShmInline bytes (or a single-copy descriptor);
//   3. per sender, a ring of kShmRing bytes for the rest of each fragment:
//      the sender reserves the fragment's length, rounded up to a line, at
//      the ring's next free place aligned to that length's power of two,
//      and puts byte k of the fragment at offset k from there.
// Fragment n of a queue is in slot line n % lines_, and its stamp, n + 1, is
// what publishes it: the receiver polls the line it expects, not a counter
// of the sender's, and the sender reads the receiver's count only when its
// last look said the queue was full. So a message of up to 32 bytes hands
// over one cache line, where a counter each way, a header and the bytes
// would be four. Where ranks outnumber cores every hand-over is a miss, and
// that is what a small message costs.
//
// Lines and ring are apart so that small messages queue deep while the
// memory stays small: a queue holds 256 messages of up to 32 bytes, 128 of
// 64..128 bytes, or four fragments of 4 KiB, in 32 KiB. A sender that can
// run ahead of its receiver needs no turn of the receiver on a core for
// every few calls; MPI's eager sends do the same. Measured (8 ranks on 2
// cores, Erdős–Rényi p = 0.1, 8 B, neighbour allgather, in alternating
// runs): 4 slots 2.2-4.1 us per call, 64 slots 1.0-1.6 us, these queues
// 0.9-1.3 us, MPI_Neighbor_allgather 0.6-0.9 us. A ring, denser graphs and
// allreduce were within noise of 4 slots.
static_assert(sizeof(ShmHeader) == 24 && alignof(ShmHeader) == 8, "stamp, header and 32 bytes: one line");
static_assert(8 + sizeof(ShmHeader) + kShmInline == kShmLine, "a slot line is a cache line");
static_assert(sizeof(ShmDescriptor) <= kShmInline, "a descriptor fits its slot line");
static_assert((kShmMaxLines & (kShmMaxLines - 1)) == 0, "a power of two: line() masks");
static_assert(kShmRing % kShmBytes == 0 && kShmBytes % kShmLine == 0, "whole fragments and lines in a ring");
static_assert(std::atomic<uint64_t>::is_always_lock_free, "queues need lock-free 64-bit atomics across processes");

namespace {

// The largest node the queues serve: segments grow with the node's ranks
// (a queue from each), so a node of more ranks keeps to MPI alone.
constexpr int kMaxNodeRanks = 256;

// Slot lines per queue on a node of R ranks: kShmMaxLines, or fewer where the
// R - 1 queues into a rank would hold more than 512 KiB of lines (the same
// on every rank of the node).
uint64_t linesPerQueue(int nodeRanks) {
  const uint64_t budget = (512u << 10) / kShmLine / uint64_t(std::max(1, nodeRanks - 1));
  uint64_t n = kShmMaxLines;
  while (n > 4 && n > budget) n /= 2;
  return n;
}

// A switch (SPARCOLL_MPI_SHM, SPARCOLL_MPI_CMA): 1 when unset; 0 for "0"
// or "off", 1 for "1" or "on", -1 for anything else.
int envSwitch(const char* name) {
  const char* e = std::getenv(name);
  if (!e || !std::strcmp(e, "1") || !strcasecmp(e, "on")) return 1;
  if (!std::strcmp(e, "0") || !strcasecmp(e, "off")) return 0;
  return -1;
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
  const char* e = std::getenv("SPARCOLL_MPI_SHM_MAX_BYTES");
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
  const int setting = envSwitch("SPARCOLL_MPI_SHM"), cma = envSwitch("SPARCOLL_MPI_CMA");
  const long maxSet = envMaxBytes();
  const bool on =
      allOf(comm, setting == 1 && cma >= 0 && maxSet != -2 && nodeSize > 1 && nodeSize <= kMaxNodeRanks);
  SC_REQUIRE(setting >= 0, scInvalidArgument, "SPARCOLL_MPI_SHM='", std::getenv("SPARCOLL_MPI_SHM"),
             "' on rank ", rank,
             ": expected 0 or off (no shared-memory queues), 1 or on (the default)");
  SC_REQUIRE(cma >= 0, scInvalidArgument, "SPARCOLL_MPI_CMA='", std::getenv("SPARCOLL_MPI_CMA"), "' on rank ", rank,
             ": expected 0 or off (larger messages on the node through MPI), 1 or on (single copy, the default)");
  SC_REQUIRE(maxSet != -2, scInvalidArgument, "SPARCOLL_MPI_SHM_MAX_BYTES='",
             std::getenv("SPARCOLL_MPI_SHM_MAX_BYTES"), "' on rank ", rank,
             ": expected the largest message for the shared-memory queues, in bytes from 0 to 16M "
             "(K and M: 1024 and 1048576 bytes)");
  if (!on) return nullptr;

  // The largest message through the queues, the same on every rank of the
  // node (the smallest any rank asks for). A core per rank: 4 KiB. More
  // ranks than cores: 16 KiB where larger messages go by single copy, else
  // 32 KiB (measured: the queues' second copy costs more than single copy
  // from 32 KiB, and more than MPI's hand-overs from 64 KiB).
  const bool full = crowded(nodeSize);
  auto limit = [&](long crowdedBytes) { return int(maxSet >= 0 ? maxSet : full ? crowdedBytes : long(kShmBytes)); };
  int limits[2] = {limit(16384), limit(32768)};
  mpiCheck(MPI_Allreduce(MPI_IN_PLACE, limits, 2, MPI_INT, MPI_MIN, node), "MPI_Allreduce");
  std::unique_ptr<ShmQueues> q(new ShmQueues);
  q->mine_ = index;
  q->yieldWhenIdle_ = yieldWhenIdle(nodeSize);
  const size_t R = size_t(nodeSize), page = 4096;
  q->lines_ = linesPerQueue(nodeSize);
  q->linesAt_ = R * kShmLine;
  q->ringAt_ = (q->linesAt_ + R * q->lines_ * kShmLine + page - 1) / page * page;
  q->segmentBytes_ = q->ringAt_ + R * kShmRing;
  q->segment_.assign(size_t(nodeSize), nullptr);
  q->sent_.assign(size_t(nodeSize), 0);
  q->headSeen_.assign(size_t(nodeSize), 0);
  q->taken_.assign(size_t(nodeSize), 0);
  q->ringSent_.assign(size_t(nodeSize), 0);
  q->ringEnd_.assign(size_t(nodeSize) * q->lines_, 0);
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
    const bool sized = !make || (ftruncate(fd, off_t(q->segmentBytes_)) == 0 &&
                                 posix_fallocate(fd, 0, off_t(q->segmentBytes_)) == 0);
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

std::atomic<uint64_t>& ShmQueues::headOf(int receiver, int sender) const {
  return *reinterpret_cast<std::atomic<uint64_t>*>(segment_[size_t(receiver)] + size_t(sender) * kShmLine);
}

char* ShmQueues::line(int receiver, int sender, uint64_t n) const {
  // A power of two: the modulo is a mask, not a division per message.
  return segment_[size_t(receiver)] + linesAt_ + (size_t(sender) * lines_ + (n & (lines_ - 1))) * kShmLine;
}

char* ShmQueues::ring(int receiver, int sender) const {
  return segment_[size_t(receiver)] + ringAt_ + size_t(sender) * kShmRing;
}

char* ShmQueues::freeSlot(int to, ShmHeader h, size_t ringBytes, uint64_t* tail) {
  const int i = slotOf_[size_t(to)];
  const uint64_t t = sent_[size_t(i)];
  // A reservation is whole lines, aligned to its size's power of two (at
  // most kShmBytes, the ring a multiple of it): it never runs past the
  // ring's end, and fragments of 4 KiB keep to pages, four to a ring,
  // whatever smaller ones went before. The bytes skipped to align it are
  // free again once it is.
  uint64_t need = 0, start = ringSent_[size_t(i)];
  if (ringBytes) {
    uint64_t align = kShmLine;
    while (align < ringBytes) align *= 2;
    need = (ringBytes + kShmLine - 1) / kShmLine * kShmLine;
    start = (start + align - 1) & ~(align - 1);
  }
  auto fits = [&] {
    const uint64_t head = headSeen_[size_t(i)];
    if (t - head >= lines_) return false;
    // The ring is free up to the end of the last fragment taken (that
    // fragment's entry is still there: fewer than lines_ are in the queue).
    const uint64_t freeTo = head ? ringEnd_[size_t(i) * lines_ + ((head - 1) & (lines_ - 1))] : 0;
    return start + need - freeTo <= kShmRing;
  };
  if (!fits()) {  // full when last looked: look again
    headSeen_[size_t(i)] = headOf(i, mine_).load(std::memory_order_acquire);
    if (!fits()) return nullptr;
  }
  if (need) ringSent_[size_t(i)] = start + need;
  ringEnd_[size_t(i) * lines_ + (t & (lines_ - 1))] = ringSent_[size_t(i)];
  h.at = uint32_t(start % kShmRing);
  char* l = line(i, mine_, t);
  std::memcpy(l + 8, &h, sizeof h);
  *tail = t;
  return l;
}

void ShmQueues::publish(int to, uint64_t tail) {
  const int i = slotOf_[size_t(to)];
  stampOf(line(i, mine_, tail)).store(tail + 1, std::memory_order_release);
  sent_[size_t(i)] = tail + 1;
}

bool ShmQueues::trySend(int to, const ShmHeader& h, const void* data, size_t bytes) {
  uint64_t t;
  const size_t first = std::min(bytes, kShmInline);
  char* l = freeSlot(to, h, bytes > first ? bytes : 0, &t);
  if (!l) return false;
  if (first) std::memcpy(inlineOf(l), data, first);
  if (bytes > first) {
    const uint32_t at = reinterpret_cast<const ShmHeader*>(l + 8)->at;
    std::memcpy(ring(slotOf_[size_t(to)], mine_) + at + first, static_cast<const char*>(data) + first, bytes - first);
  }
  publish(to, t);
  return true;
}

const ShmHeader* ShmQueues::peek(int from) const {
  const int i = slotOf_[size_t(from)];
  const uint64_t n = taken_[size_t(i)];
  char* l = line(mine_, i, n);
  if (stampOf(l).load(std::memory_order_acquire) != n + 1) return nullptr;
  return reinterpret_cast<const ShmHeader*>(l + 8);
}

void ShmQueues::copyOut(int from, void* dst, size_t bytes) const {
  const int i = slotOf_[size_t(from)];
  const uint64_t n = taken_[size_t(i)];
  char* l = line(mine_, i, n);
  const size_t first = std::min(bytes, kShmInline);
  if (first) std::memcpy(dst, inlineOf(l), first);
  if (bytes > first) {
    const uint32_t at = reinterpret_cast<const ShmHeader*>(l + 8)->at;
    std::memcpy(static_cast<char*>(dst) + first, ring(mine_, i) + at + first, bytes - first);
  }
}

ShmDescriptor* ShmQueues::descriptorOf(const ShmHeader* h) {
  return reinterpret_cast<ShmDescriptor*>(const_cast<char*>(reinterpret_cast<const char*>(h)) + sizeof(ShmHeader));
}

bool ShmQueues::tryPost(int to, const ShmHeader& h, const void* buf, uint64_t* index) {
  char* l = freeSlot(to, h, 0, index);
  if (!l) return false;
  auto* d = reinterpret_cast<ShmDescriptor*>(inlineOf(l));
  d->addr = uint64_t(reinterpret_cast<uintptr_t>(buf));
  d->state.store(ShmDescriptor::kPosted, std::memory_order_relaxed);  // published by the stamp's release
  publish(to, *index);
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

void ShmQueues::pop(int from) {
  const int i = slotOf_[size_t(from)];
  headOf(mine_, i).store(++taken_[size_t(i)], std::memory_order_release);
}

ShmRound::Problem ShmRound::progress(bool* moved) {
  Problem p;
  if (done()) return p;
  const uint64_t pass = q_->nextPass();
  // Sends in posted order, a fragment per free slot; a full queue holds back
  // the rest of the message and the later sends to its peer.
  for (Msg& m : sends_) {
    if (m.done) continue;
    if (m.posted) {  // read by its receiver yet? (it holds back no other send)
      if (q_->taken(m.peer, m.index)) {
        m.done = true;
        ++finished_;
        *moved = true;
      }
      continue;
    }
    if (!q_->firstInPass(q_->sendStamps_, m.peer, pass)) continue;
    if (m.bytes > q_->maxBytes()) {  // single copy: a descriptor, which the receiver reads from
      if (!q_->tryPost(m.peer, {seq_, sig_, uint32_t(m.bytes), kShmDescriptor, 0}, m.buf, &m.index)) continue;
      m.posted = true;
      *moved = true;
      q_->sendStamps_[size_t(m.peer)] = 0;
      continue;
    }
    for (;;) {
      const size_t n = std::min(kShmBytes, m.bytes - m.moved);
      if (!q_->trySend(m.peer, {seq_, sig_, uint32_t(m.bytes), uint32_t(m.moved), 0}, m.buf + m.moved, n)) break;
      m.moved += n;
      *moved = true;
      if (m.moved == m.bytes) {
        m.done = true;
        ++finished_;
        q_->sendStamps_[size_t(m.peer)] = 0;  // the next send to this peer may go in this pass too
        break;
      }
    }
  }
  // Receives: the first one still waiting from each peer takes the head of
  // that peer's queue, fragment by fragment (then the next one may, in the
  // same pass).
  for (Msg& m : recvs_) {
    if (m.done || !q_->firstInPass(q_->recvStamps_, m.peer, pass)) continue;
    for (const ShmHeader* h; (h = q_->peek(m.peer)) != nullptr;) {
      if (h->seq < seq_) {  // a leftover of an earlier, mismatched call
        q_->pop(m.peer);
        *moved = true;
        continue;
      }
      if (h->seq != seq_ || h->sig != sig_) return {Problem::OtherCall, &m, h->seq, h->bytes};
      if (h->offset == kShmDescriptor) {
        if (h->bytes != m.bytes || m.moved) return {Problem::Size, &m, h->seq, h->bytes};
        ShmDescriptor* d = ShmQueues::descriptorOf(h);
        auto revoked = [&] { return d->state.load(std::memory_order_acquire) == ShmDescriptor::kRevoked; };
        if (revoked()) return {Problem::Revoked, &m, h->seq, h->bytes};
        // A read that fails on a revoked descriptor found the buffer gone.
        if (const int err = q_->readFrom(m.peer, d, m.buf, m.bytes))
          return {revoked() ? Problem::Revoked : Problem::Unreadable, &m, h->seq, h->bytes, err};
        // Claimed after reading: a sender that revoked first may have freed
        // or reused the buffer while it was read.
        uint32_t posted = ShmDescriptor::kPosted;
        if (!d->state.compare_exchange_strong(posted, ShmDescriptor::kTaken, std::memory_order_acq_rel))
          return {Problem::Revoked, &m, h->seq, h->bytes};
        q_->pop(m.peer);
        m.moved = m.bytes;
        m.done = true;
        ++finished_;
        *moved = true;
        q_->recvStamps_[size_t(m.peer)] = 0;
        break;
      }
      if (h->bytes != m.bytes || h->offset != m.moved) return {Problem::Size, &m, h->seq, h->bytes};
      const size_t n = std::min(kShmBytes, m.bytes - m.moved);
      q_->copyOut(m.peer, m.buf + m.moved, n);
      q_->pop(m.peer);
      m.moved += n;
      *moved = true;
      if (m.moved == m.bytes) {
        m.done = true;
        ++finished_;
        q_->recvStamps_[size_t(m.peer)] = 0;
        break;
      }
    }
  }
  return p;
}

void ShmRound::revoke() {
  for (Msg& m : sends_)
    if (m.posted && !m.done) {
      q_->revoke(m.peer, m.index);
      m.done = true;
      ++finished_;
    }
}

long ShmRound::strayFrom(int peer) const {
  if (!q_ || !q_->reaches(peer)) return -1;
  for (const Msg& m : recvs_)
    if (m.peer == peer && !m.done) return -1;  // progress() takes (or judges) it
  const ShmHeader* h = q_->peek(peer);
  return h && h->seq == seq_ ? long(h->bytes) : -1;
}

void ShmRound::describe(const std::function<void(const std::string&)>& add) const {
  auto part = [](const Msg& m) { return m.moved ? " (" + bytesText(m.moved) + " of it moved)" : std::string(); };
  for (const Msg& m : recvs_)
    if (!m.done) add("waiting for " + bytesText(m.bytes) + " from rank " + std::to_string(m.peer) + part(m));
  for (const Msg& m : sends_)
    if (m.posted && !m.done)
      add("waiting for rank " + std::to_string(m.peer) + " to read " + bytesText(m.bytes) + " (single copy)");
    else if (!m.done)
      add("waiting for rank " + std::to_string(m.peer) + " to take " + bytesText(m.bytes) + part(m) +
          " (its shared-memory queue from this rank is full)");
}

}  // namespace sc
