#include "transport/mpi/shm.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <strings.h>
#include <new>
#include <string>

#include "core/error.h"
#include "transport/mpi/util.h"

namespace sc {

// One queue: the counters on cache lines of their own (the sender writes
// tail, the receiver head), then the slots. Counters only grow; a slot is
// tail % kShmSlots.
struct ShmQueues::Queue {
  alignas(64) std::atomic<uint64_t> tail;  // messages published
  alignas(64) std::atomic<uint64_t> head;  // messages taken
  alignas(64) char slots[1];
  static constexpr size_t kSlotBytes = 64 + kShmBytes;  // header, padded to a cache line, then the message
  static constexpr size_t bytes() { return 192 + kShmSlots * kSlotBytes; }
  char* slot(uint64_t n) { return slots + (n % kShmSlots) * kSlotBytes; }
};
static_assert(std::atomic<uint64_t>::is_always_lock_free, "queues need lock-free 64-bit atomics across processes");

namespace {

// The largest node the queues serve: segments grow with the node's ranks
// (a queue from each), so a node of more ranks keeps to MPI alone.
constexpr int kMaxNodeRanks = 256;

// SPARCOLL_MPI_SHM: 1 when unset; 0 for "0" or "off", 1 for "1" or "on",
// -1 for anything else.
int envSetting() {
  const char* e = std::getenv("SPARCOLL_MPI_SHM");
  if (!e || !std::strcmp(e, "1") || !strcasecmp(e, "on")) return 1;
  if (!std::strcmp(e, "0") || !strcasecmp(e, "off")) return 0;
  return -1;
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
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  return cores > 0 && nodeRanks > cores;
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
  const int setting = envSetting();
  const bool on = allOf(comm, setting == 1 && nodeSize > 1 && nodeSize <= kMaxNodeRanks);
  SC_REQUIRE(setting >= 0, scInvalidArgument, "SPARCOLL_MPI_SHM='", std::getenv("SPARCOLL_MPI_SHM"),
             "' on rank ", rank,
             ": expected 0 or off (no shared-memory queues), 1 or on (the default)");
  if (!on) return nullptr;

  std::unique_ptr<ShmQueues> q(new ShmQueues);
  q->mine_ = index;
  q->yieldWhenIdle_ = yieldWhenIdle(nodeSize);
  q->segmentBytes_ = size_t(nodeSize) * Queue::bytes();
  q->segment_.assign(size_t(nodeSize), nullptr);
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
  return q;
}

ShmQueues::~ShmQueues() {
  for (char* s : segment_)
    if (s) munmap(s, segmentBytes_);
}

ShmQueues::Queue* ShmQueues::queueInto(int receiver, int sender) const {
  return reinterpret_cast<Queue*>(segment_[size_t(receiver)] + size_t(sender) * Queue::bytes());
}

bool ShmQueues::trySend(int to, const ShmHeader& h, const void* data) {
  Queue* qu = queueInto(slotOf_[size_t(to)], mine_);
  const uint64_t t = qu->tail.load(std::memory_order_relaxed);  // only this rank writes it
  if (t - qu->head.load(std::memory_order_acquire) >= kShmSlots) return false;
  char* s = qu->slot(t);
  std::memcpy(s, &h, sizeof h);
  if (h.bytes) std::memcpy(s + 64, data, h.bytes);
  qu->tail.store(t + 1, std::memory_order_release);
  return true;
}

const ShmHeader* ShmQueues::peek(int from) const {
  Queue* qu = queueInto(mine_, slotOf_[size_t(from)]);
  const uint64_t h = qu->head.load(std::memory_order_relaxed);  // only this rank writes it
  if (qu->tail.load(std::memory_order_acquire) == h) return nullptr;
  return reinterpret_cast<const ShmHeader*>(qu->slot(h));
}

void ShmQueues::pop(int from) {
  Queue* qu = queueInto(mine_, slotOf_[size_t(from)]);
  qu->head.store(qu->head.load(std::memory_order_relaxed) + 1, std::memory_order_release);
}

ShmRound::Problem ShmRound::progress(bool* moved) {
  Problem p;
  if (done()) return p;
  const uint64_t pass = q_->nextPass();
  // Sends in posted order; a full queue holds back the later sends to its peer.
  for (Msg& m : sends_) {
    if (m.done || !q_->firstInPass(q_->sendStamps_, m.peer, pass)) continue;
    if (!q_->trySend(m.peer, {seq_, sig_, uint32_t(m.bytes)}, m.buf)) continue;
    m.done = true;
    ++finished_;
    *moved = true;
    q_->sendStamps_[size_t(m.peer)] = 0;  // the next send to this peer may go in this pass too
  }
  // Receives: the first one still waiting from each peer takes the head of
  // that peer's queue (then the next one may, in the same pass).
  for (Msg& m : recvs_) {
    if (m.done || !q_->firstInPass(q_->recvStamps_, m.peer, pass)) continue;
    for (const ShmHeader* h; (h = q_->peek(m.peer)) != nullptr;) {
      if (h->seq < seq_) {  // a leftover of an earlier, mismatched call
        q_->pop(m.peer);
        *moved = true;
        continue;
      }
      if (h->seq != seq_ || h->sig != sig_) return {Problem::OtherCall, &m, h->seq, h->bytes};
      if (h->bytes != m.bytes) return {Problem::Size, &m, h->seq, h->bytes};
      if (m.bytes) std::memcpy(m.buf, reinterpret_cast<const char*>(h) + 64, m.bytes);
      q_->pop(m.peer);
      m.done = true;
      ++finished_;
      *moved = true;
      q_->recvStamps_[size_t(m.peer)] = 0;
      break;
    }
  }
  return p;
}

long ShmRound::strayFrom(int peer) const {
  if (!q_ || !q_->reaches(peer)) return -1;
  for (const Msg& m : recvs_)
    if (m.peer == peer && !m.done) return -1;  // progress() takes (or judges) it
  const ShmHeader* h = q_->peek(peer);
  return h && h->seq == seq_ ? long(h->bytes) : -1;
}

void ShmRound::describe(const std::function<void(const std::string&)>& add) const {
  for (const Msg& m : recvs_)
    if (!m.done) add("waiting for " + bytesText(m.bytes) + " from rank " + std::to_string(m.peer));
  for (const Msg& m : sends_)
    if (!m.done) add("waiting for rank " + std::to_string(m.peer) + " to take " + bytesText(m.bytes) +
                     " (its shared-memory queue from this rank is full)");
}

}  // namespace sc
