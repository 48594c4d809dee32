#pragma once
// The one place that reads the compiler's target macros. Every flag is always defined as 0 or 1, so code
// can use `if constexpr` and plain `#if` alike:
//   MLPCORE_EMULATOR     host build of device code for the wave emulator (set by the build, ops/emu)
//   MLPCORE_DEVICE_AMD   device pass of a HIP compile for an AMD GPU
//   MLPCORE_ARCH_GFX11   RDNA3 / RDNA3.5: v_wmma_*_w32 with half-wave replicated A/B
//   MLPCORE_ARCH_GFX12   RDNA4: v_wmma_*_gfx12
//   MLPCORE_ARCH_GFX9    CDNA (gfx908, gfx90a, gfx94x, gfx950): v_mfma_*
//   MLPCORE_DEVICE_NVIDIA device pass of a CUDA compile
//   MLPCORE_ARCH_SM80    NVIDIA sm_80 and newer: mma.sync.m16n8k16
//   MLPCORE_LIGHT_ASSEMBLY the build of NVIDIA's built-in kernels that ptxas assembles at -O1 (set by the
//                        build, cmake/MlpcoreCuda.cmake; ops/fused_kernel_entry.h)

#ifndef MLPCORE_EMULATOR
#define MLPCORE_EMULATOR 0
#endif

#if defined(__HIP_DEVICE_COMPILE__) && defined(__AMDGCN__)
#define MLPCORE_DEVICE_AMD 1
#else
#define MLPCORE_DEVICE_AMD 0
#endif

#if MLPCORE_DEVICE_AMD && defined(__GFX11__)
#define MLPCORE_ARCH_GFX11 1
#else
#define MLPCORE_ARCH_GFX11 0
#endif

#if MLPCORE_DEVICE_AMD && defined(__GFX12__)
#define MLPCORE_ARCH_GFX12 1
#else
#define MLPCORE_ARCH_GFX12 0
#endif

// __GFX9__ also covers gfx900/gfx906, which have no matrix cores: list the MFMA chips.
#if MLPCORE_DEVICE_AMD && (defined(__gfx908__) || defined(__gfx90a__) || defined(__gfx940__) || defined(__gfx941__) || \
                           defined(__gfx942__) || defined(__gfx950__))
#define MLPCORE_ARCH_GFX9 1
#else
#define MLPCORE_ARCH_GFX9 0
#endif

#if defined(__CUDA_ARCH__)
#define MLPCORE_DEVICE_NVIDIA 1
#else
#define MLPCORE_DEVICE_NVIDIA 0
#endif

#if MLPCORE_DEVICE_NVIDIA && __CUDA_ARCH__ >= 800
#define MLPCORE_ARCH_SM80 1
#else
#define MLPCORE_ARCH_SM80 0
#endif

#ifndef MLPCORE_LIGHT_ASSEMBLY
#define MLPCORE_LIGHT_ASSEMBLY 0
#endif
#if MLPCORE_LIGHT_ASSEMBLY && !defined(__CUDACC__)
#error "MLPCORE_LIGHT_ASSEMBLY is a build of NVIDIA's built-in kernels"
#endif

#if MLPCORE_EMULATOR && (MLPCORE_DEVICE_AMD || MLPCORE_DEVICE_NVIDIA)
#error "MLPCORE_EMULATOR is a host build; it cannot be combined with a device compile"
#endif
