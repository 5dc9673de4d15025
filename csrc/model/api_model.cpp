// C API of the cost model: estimates on a communicator's model, and models of
// hypothetical size for tools (scCostModel*).
#include <cmath>
#include <memory>

#include "core/api_guard.h"
#include "model/estimate.h"
#include "neighbor/model.h"

struct scCostModel {
  sc::model::Model model;
};

using namespace sc;

extern "C" scResult_t scEstimateTime(scComm_t comm, scCollective_t coll, int algo, size_t count, scDataType_t dt,
                                     double density, double* seconds, int* autoAlgo) {
  return scGuard(comm, [&] {
    checkComm(comm);
    SC_ARG(seconds != nullptr, "seconds output is NULL");
    const model::Estimate e = model::estimate(comm->model, coll, algo, count, dt, density);
    *seconds = e.seconds;
    if (autoAlgo) *autoAlgo = e.autoAlgo;
  });
}

extern "C" scResult_t scCostModelCreate(scCostModel_t* out, const scConfig_t* cfg, int nranks, int machines,
                                        int isDevice) {
  return scGuard(nullptr, [&] {
    SC_ARG(out != nullptr, "output model pointer is NULL");
    *out = nullptr;
    SC_ARG(nranks >= 1, "nranks must be >= 1, got ", nranks);
    SC_ARG(machines >= 1 && machines <= nranks, "machines must be in [1, nranks = ", nranks, "], got ", machines);
    const scTransport_t t = cfg ? cfg->transport : scTransportMpi;
    SC_ARG(t == scTransportMpi || t == scTransportNccl || t == scTransportLocal, "unknown transport ", int(t));
    SC_ARG(t != scTransportNccl || isDevice, "the nccl transport works on device memory (isDevice = 1)");
    SC_ARG(t != scTransportMpi || !isDevice, "the mpi transport works on host memory (isDevice = 0)");
    const Config c = resolveConfig(cfg, t);
    auto m = std::make_unique<scCostModel>();
    m->model = model::makeModel(c.tuning, c.env, t, isDevice != 0, nranks, machines, c.algo);
    *out = m.release();
  });
}

extern "C" scResult_t scCostModelEstimateTime(scCostModel_t m, scCollective_t coll, int algo, size_t count,
                                              scDataType_t dt, double density, double* seconds, int* autoAlgo) {
  return scGuard(nullptr, [&] {
    SC_ARG(m != nullptr, "cost model is NULL");
    SC_ARG(seconds != nullptr, "seconds output is NULL");
    const model::Estimate e = model::estimate(m->model, coll, algo, count, dt, density);
    *seconds = e.seconds;
    if (autoAlgo) *autoAlgo = e.autoAlgo;
  });
}

extern "C" scResult_t scCostModelNeighborTime(scCostModel_t m, const scNbrCostTerms_t* terms, size_t bytes,
                                              double* seconds) {
  return scGuard(nullptr, [&] {
    SC_ARG(m != nullptr, "cost model is NULL");
    SC_ARG(terms != nullptr, "terms is NULL");
    SC_ARG(seconds != nullptr, "seconds output is NULL");
    // Terms are counts (scTopologyCostTerms gives them >= 0): a negative or
    // non-finite one is a caller's mistake, not a time to price.
    const struct {
      const char* name;
      const double* v;
    } fields[] = {{"rounds", terms->rounds},
                  {"extraMessages", terms->extraMessages},
                  {"blocks", terms->blocks},
                  {"sharedBlocks", terms->sharedBlocks}};
    for (const auto& f : fields)
      for (int l = 0; l < 2; ++l)
        SC_ARG(std::isfinite(f.v[l]) && f.v[l] >= 0, "terms->", f.name, "[", l, "] must be a finite number >= 0, got ",
               f.v[l]);
    *seconds = nbr::termsSeconds(m->model, *terms, double(bytes));
  });
}

extern "C" scResult_t scCostModelDestroy(scCostModel_t m) {
  delete m;
  return scSuccess;
}
