#include "common/group.h"

#include <algorithm>
#include <cstring>

#ifdef SPARCOLL_HAVE_MPI
#include <mpi.h>
#endif

namespace scbench {

namespace {
std::string pack(double v) { return std::string(reinterpret_cast<const char*>(&v), sizeof v); }
double unpack(const std::string& s) {
  double v = 0;
  std::memcpy(&v, s.data(), std::min(s.size(), sizeof v));
  return v;
}
}  // namespace

double Group::combine(double v, Combine how) {
  const auto all = allgather(pack(v));
  double acc = unpack(all[0]);
  for (size_t i = 1; i < all.size(); ++i) {
    const double x = unpack(all[i]);
    switch (how) {
      case Combine::Rank0: break;
      case Combine::Avg: acc += x; break;
      case Combine::Min: acc = std::min(acc, x); break;
      case Combine::Max: acc = std::max(acc, x); break;
    }
  }
  return how == Combine::Avg ? acc / double(all.size()) : acc;
}

double Group::sum(double v) {
  double acc = 0;
  for (const auto& s : allgather(pack(v))) acc += unpack(s);
  return acc;
}

std::vector<std::string> ThreadHub::allgather(int rank, const std::string& mine) {
  std::unique_lock<std::mutex> lk(m_);
  slots_[rank] = mine;
  const uint64_t gen = generation_;
  if (++arrived_ == n_) {
    // The last thread publishes; result_ stays valid until the next round
    // completes, which needs every thread to have returned from this one.
    result_ = slots_;
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
  } else {
    cv_.wait(lk, [&] { return generation_ != gen; });
  }
  return result_;
}

#ifdef SPARCOLL_HAVE_MPI
namespace {
class MpiGroup final : public Group {
 public:
  MpiGroup() {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::vector<std::string> allgather(const std::string& mine) override {
    int len = int(mine.size());
    std::vector<int> lens(size_), offs(size_);
    MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, MPI_COMM_WORLD);
    int total = 0;
    for (int i = 0; i < size_; ++i) {
      offs[i] = total;
      total += lens[i];
    }
    std::vector<char> buf(std::max(total, 1));
    MPI_Allgatherv(mine.data(), len, MPI_CHAR, buf.data(), lens.data(), offs.data(), MPI_CHAR, MPI_COMM_WORLD);
    std::vector<std::string> out(size_);
    for (int i = 0; i < size_; ++i) out[i].assign(buf.data() + offs[i], lens[i]);
    return out;
  }

 private:
  int rank_ = 0, size_ = 1;
};
}  // namespace

std::unique_ptr<Group> makeMpiGroup() { return std::make_unique<MpiGroup>(); }
#else
std::unique_ptr<Group> makeMpiGroup() { return nullptr; }
#endif

}  // namespace scbench
