# Areas bound when their C functions exist (see sparcoll_py_area in CMakeLists.txt):
# sparcoll_py_area(<name> <header> <binding source> <C functions the binding calls>...)
sparcoll_py_area(dsop dsop.h dsop.cpp scDsop scDsopOutputType scDsopAlgoFor)
sparcoll_py_area(dsop_sparse dsop.h dsop_sparse.cpp scDsopSparse scDsopOutputType)
sparcoll_py_area(topk topk.h topk.cpp scTopkMaxOutput scTopkSelect scTopkStateCreate scTopkStateDestroy
                 scTopkStateResidual scTopkStateReset scTopkStateGetStep scTopkStateSetStep scTopkSelectFeedback)
sparcoll_py_area(sparse sparse.h sparse.cpp scSparseAllReduceEx scSparseAllReduceToSparse scSparseResultCreate
                 scSparseResultDestroy scSparseResultIsDense scSparseResultNnz scSparseResultDim
                 scSparseResultIndices scSparseResultValues scSparseResultAlgo scSparseAlgoFor)
