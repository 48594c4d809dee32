#pragma once
// Marks functions shared by host code and GPU kernels.
#if defined(__HIPCC__) || defined(__CUDACC__)
#define MLPCORE_HOST_DEVICE __host__ __device__
#else
#define MLPCORE_HOST_DEVICE
#endif
