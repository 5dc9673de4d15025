#include "algo/ctx.h"

#include <algorithm>
#include <string>

namespace sc {
namespace {

// A round whose errors name where the schedule was (Ctx::where).
class NamedRound final : public Round {
 public:
  NamedRound(std::unique_ptr<Round> r, const Ctx& c) : r_(std::move(r)), c_(c) {}
  void wait(const Deadline& dl) override {
    if (!r_) return;  // a round with nothing to move (Transport::post)
    try {
      r_->wait(dl);
    } catch (const Error& e) {
      throw e.within(c_.where());
    }
  }

 private:
  std::unique_ptr<Round> r_;
  const Ctx& c_;
};

// A planned round (Ctx, planned): its wait is a step of the plan.
class PlannedRound final : public Round {
 public:
  PlannedRound(const Ctx& c, CallPlan& plan, size_t post) : c_(c), plan_(plan), post_(post) {}
  void wait(const Deadline&) override {
    CallPlan::Step s = c_.planStep(CallPlan::Wait);
    s.first = post_;
    plan_.steps.push_back(s);
  }

 private:
  const Ctx& c_;
  CallPlan& plan_;
  const size_t post_;
};

}  // namespace

void Ctx::planLocal(CallPlan::Kind kind, void* dst, const void* a, const void* b, size_t n, int divisor) {
  CallPlan::Step s = planStep(kind);
  s.dst = dst;
  s.a = a;
  s.b = b;
  s.count = n;
  s.dt = dt;
  s.op = op;
  s.divisor = divisor;
  plan_->steps.push_back(s);
}

void Ctx::runPlan() {
  phase_ = nullptr;  // a plan's errors name their own steps' phases
  try {
    comm.transport->runPlan(*plan_, *this);
  } catch (const Error& e) {
    throw e.within(where());
  }
}

std::string Ctx::where() const {
  std::string w;
  if (phase_) {
    w = phase_;
    if (steps_) w += cat(" step ", step_ + 1, "/", steps_);
    w += " of ";
  }
  return w + (comm.call.name[0] ? comm.call.text() : std::string("the call")) + cat(" (call #", comm.seq, ")");
}

std::unique_ptr<Round> Ctx::postRaw(std::vector<P2POp>& ops) {
  // One pass counts the traffic and finds the messages to drop (none, on
  // most rounds: a second pass only then).
  const auto dropped = [](const P2POp& o) { return o.bytes == 0 || o.peer < 0; };
  bool drop = false;
  for (const auto& o : ops) {
    if (dropped(o)) {
      drop = true;
      continue;
    }
    if (o.kind == P2POp::Recv) {
      comm.stats.bytesRecv += o.bytes;
      comm.stats.msgsRecv++;
      comm.stats.msgsReduced += o.fuse.be != nullptr;
      continue;
    }
    comm.stats.bytesSent += o.bytes;
    comm.stats.msgsSent++;
    if (nodeOf && (*nodeOf)[size_t(o.peer)] != (*nodeOf)[size_t(rank)]) {
      comm.stats.interNodeBytesSent += o.bytes;
      comm.stats.interNodeMsgsSent++;
    }
    // The tree links the message crosses (topology/topology.h).
    if (topo::CommTopo* t = comm.topo.get())
      for (const int l : t->linksTo[size_t(o.peer)]) {
        uint64_t& b = t->linkBytes[size_t(l)];
        b += o.bytes;
        comm.stats.maxLinkBytes = std::max(comm.stats.maxLinkBytes, b);
      }
  }
  if (drop) ops.erase(std::remove_if(ops.begin(), ops.end(), dropped), ops.end());
  if (!ops.empty()) comm.stats.rounds++;
  comm.recorder->round(ops, phase_, step_, steps_);
  if (!plan_) return comm.transport->post(ops, stream, dl);
  if (ops.empty()) return nullptr;
  CallPlan::Step s = planStep(CallPlan::Post);
  s.first = plan_->ops.size();
  s.count = ops.size();
  plan_->steps.push_back(s);
  plan_->ops.insert(plan_->ops.end(), ops.begin(), ops.end());
  return std::make_unique<PlannedRound>(*this, *plan_, plan_->posts++);
}

std::unique_ptr<Round> Ctx::post(std::vector<P2POp> ops) { return std::make_unique<NamedRound>(postRaw(ops), *this); }

// NamedRound's wait without the wrapper: exchange is on every call's path,
// and most small rounds finish in their posting (no round to wait for).
// Flattened: postRaw inlined here (a call less per round).
[[gnu::flatten]] void Ctx::exchange(std::vector<P2POp>& ops) {
  const std::unique_ptr<Round> r = postRaw(ops);
  if (!r) return;
  try {
    r->wait(dl);
  } catch (const Error& e) {
    throw e.within(where());
  }
}

}  // namespace sc
