#pragma once
// A GPU backend's kernels for one model, chosen once when the network is built: the plan's specialized
// kernels (engine/src/specialized_source.h) from a file of `mlpcore compile`, the kernel cache, or the
// backend's run-time compiler (NVRTC, hiprtc), else the kernels built into the library.
#include <cstddef>
#include <string>
#include <vector>

#include "engine/src/fused_plan.h"
#include "engine/src/kernel_file.h"
#include "engine/src/runtime_compiler.h"
#include "engine/src/specialized_source.h"
#include "mlpcore/model.h"
#include "mlpcore/network.h"

namespace mlpcore::detail {

struct SpecializedCode {
  std::vector<std::vector<std::byte>> modules;  // one per kernel, then per twin (compile_kernel_file); none: the built-in kernels run
  std::string description;                      // Network::kernel(): which kernel, where it came from and how long that took
};

// The code objects a network loads: the specialized kernels' modules, else `built_in` (the library's).
std::vector<const void*> module_images(const SpecializedCode& code, std::vector<const void*> built_in);

// The plan's kernels for `target` ("sm_90", "gfx1100"): from options.kernels_file when given
// (Error(kernel_file) if it is not this plan's), else from the kernel cache, else compiled by `compiler`.
SpecializedCode specialized_code(const FusedPlan& plan, const std::string& target, const NetworkOptions& options, const KernelCompiler& compiler);

// The most bytes of registers a specialized kernel may spill to fit its policy's register bound
// (FusedPolicy::min_blocks). ptxas spills a few to reach the next occupancy step, and on an H100 that paid
// up to 40 bytes (8-64x8-3 ran 5% faster with them than unbounded); 16-64x3-16, which spilled 60-96
// bytes at 96 registers, ran 4-11% faster unbounded, with 104-138 registers and fewer blocks.
constexpr int kMaxSpillBytes = 48;

// One of the plan's kernels compiled for `target`; `source` is the plan's (specialized_source, built once
// by the caller for all its kernels and the cache key), assembled light where its policy says
// (ops::assembled_light). The compiler's code is taken as it is unless:
// - it left the output tiles it was to unroll (FusedPolicy::compiler_unrolls_tiles) in a loop, their
//   arrays in local memory: compiled again with them unrolled by construction (NVRTC takes about twice
//   as long);
// - it spilled more than kMaxSpillBytes to fit the policy's register bound, assembled full: assembled again
//   light (ptxas -O1 keeps fewer values live, and NVRTC with nvJitLink runs ptxas alone, a fifth of a
//   compile), kept where that fits within kMaxSpillBytes (docs/benchmarks.md, "Stop 56");
// - it still spills more than kMaxSpillBytes, or did not say how much it spilled: compiled again without
//   the bound. The whole compile: NVVM takes the bound as ptxas does, so assembling the bounded PTX again
//   without it gives other code (docs/benchmarks.md, "Stop 36").
// The cache key stays the plan's source's.
CompiledCode compile_kernel(const FusedPlan& plan, const std::string& source, const SpecializedKernel& kernel, const std::string& target,
                            const KernelCompiler& compiler);

// The small-batch twin of a kernel compile_kernel gave (has_small_batch_twin): its code assembled
// again without its register bound (KernelCompiler::assemble_unbounded), kept where ptxas says it
// spills at most kMaxSpillBytes; else the kernel's own code (one compiled unbounded already, a
// compiler that cannot assemble alone), so that a plan's kernel files hold the same modules everywhere.
CompiledCode small_batch_twin(const CompiledCode& kernel, const std::string& target, const KernelCompiler& compiler);

// ", 2 of 4 small-batch twins fell back to their kernel's code" where some of the plan's twins in
// `modules` (a kernel file's) are byte-equal to their kernel's module: small_batch_twin fell back (no
// nvJitLink, its unbounded assembly spilled more, or the kernel was compiled unbounded already), and
// those calls run the kernel. Empty where every twin has code of its own, the plan has none, or
// `modules` is not the plan's count.
std::string small_batch_twin_note(const FusedPlan& plan, const std::vector<std::vector<std::byte>>& modules);

// `mlpcore compile`: the kernel file of the plan's kernels for `target`, compiled now, each kernel on a
// thread of its own (compile_kernel), then its small-batch twin (small_batch_twins) there.
KernelFile compile_kernel_file(const FusedPlan& plan, const std::string& target, const KernelCompiler& compiler);

struct KernelChoice {
  FusedPlan plan;
  SpecializedCode code;
};

// What `backend` runs `model` with on `target`. `request` is the backend's (family, accumulation); it
// specializes where options allow and a kernel file or a loaded `compiler` can provide the kernels.
// Without them, or when compiling fails, the built-in kernels, with a notice on stderr (once per
// process for the machine's reason, per network for the network's). A wrong kernel file throws.
KernelChoice choose_kernels(const Model& model, const std::string& backend, PlanRequest request, const std::string& target,
                            const NetworkOptions& options, const RuntimeCompiler& compiler);

}  // namespace mlpcore::detail
