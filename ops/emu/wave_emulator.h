#pragma once
// The wave emulator: runs device code on the host, one fiber per GPU thread, so every lane really executes
// the per-lane kernel code. Fibers run until they reach a cross-lane point (a matrix instruction, a lane
// shuffle: a wave collective) or a block barrier; when every lane of the wave has arrived at the same
// collective it is executed once, for the whole wave, exactly as the hardware defines it.
// A collective needs every lane of its wave (the matrix instructions need EXEC all ones): a lane that has
// returned, or waits elsewhere, makes the launch fail with EmulatorError instead of guessing.
#include <cstdint>
#include <functional>
#include <span>
#include <stdexcept>
#include <string>

namespace mlpcore::emu {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  unsigned count() const { return x * y * z; }
};

class EmulatorError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What sets one chip's arithmetic apart from others that run the same instructions; the emulated
// instructions read it from the running launch. gfx90a (CDNA2) MFMA flush 16-bit subnormal inputs and
// subnormal inputs and outputs of their float32 sums to zero (AMD's MIOpen documentation, "MI200 MFMA
// behavior specifics"; also modelled by microsoft/MMA-Sim); gfx942 (CDNA3) keeps them.
struct ChipNumerics {
  bool mfma_flushes_subnormals = false;
};
inline constexpr ChipNumerics kCdna2Numerics{.mfma_flushes_subnormals = true};

// Runs `body` for every thread of every block, blocks one after another, threads grouped into waves of
// `wave_size` consecutive linear thread ids (x fastest), as on the hardware.
void launch(Dim3 grid, Dim3 block, unsigned wave_size, const std::function<void()>& body, ChipNumerics numerics = {});

// The calling thread's coordinates; valid inside a running body only.
Dim3 thread_idx();
Dim3 block_idx();
Dim3 block_dim();
Dim3 grid_dim();
unsigned lane_id();
unsigned wave_size();
const ChipNumerics& chip_numerics();

void barrier();       // all threads of the block
void wave_barrier();  // all lanes of the wave (memory written before is visible to the wave after)
[[noreturn]] void trap(const char* why);

// One wave collective: every lane passes its operand `in` and a place `out` for its result; once the whole
// wave has arrived, `execute` runs once with all lanes' pointers (index = lane). Lanes must agree on it.
using CollectiveFn = void (*)(std::span<const void* const> in, std::span<void* const> out);
void wave_collective(const char* name, CollectiveFn execute, const void* in, void* out);

// The value every lane of the wave passes (ops::warp_uniform's contract, which the hardware does not
// check); traps where the lanes differ.
unsigned wave_uniform(unsigned v);

}  // namespace mlpcore::emu
