// Device DSOP kernels (kernels/dsop.cu). The declaration of deviceRect lives
// in csrc/dsop/kernels.h with the rest of the kernel contract (semantics, the
// engine rule), so host code and the benchmark see one interface.
#pragma once

#include "dsop/kernels.h"
