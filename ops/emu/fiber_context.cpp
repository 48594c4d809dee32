#include "ops/emu/fiber_context.h"

#include <cstdint>
#include <cstring>

#if MLPCORE_EMU_STACK_SWITCH
// rdi: where to save the running stack pointer; rsi: the stack pointer to continue on. The saved frame,
// from the stack pointer up: MXCSR (4 bytes) and x87 control word (2 + 2 bytes), r15, r14, r13, r12, rbx,
// rbp, return address.
extern "C" void mlpcore_emu_switch_stack(void** save, void* load);
asm(R"(
  .pushsection .text
  .p2align 4
  .globl mlpcore_emu_switch_stack
  .hidden mlpcore_emu_switch_stack
  .type mlpcore_emu_switch_stack, @function
mlpcore_emu_switch_stack:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size mlpcore_emu_switch_stack, .-mlpcore_emu_switch_stack
  .popsection
)");
#endif

namespace mlpcore::emu {

#if MLPCORE_EMU_STACK_SWITCH

void make_fiber(FiberContext& fiber, void* stack, std::size_t bytes, void (*entry)()) {
  // The first switch pops the frame above and "returns" into entry with the stack as a call leaves it
  // (8 below a 16-byte boundary), over a null return address that ends debuggers' backtraces.
  const auto top = (reinterpret_cast<std::uintptr_t>(stack) + bytes) & ~std::uintptr_t{15};
  auto* frame = reinterpret_cast<std::uint64_t*>(top - 9 * sizeof(std::uint64_t));
  std::memset(frame, 0, 9 * sizeof(std::uint64_t));
  std::uint32_t mxcsr = 0;
  std::uint16_t x87_control = 0;
  asm volatile("stmxcsr %0\n\tfnstcw %1" : "=m"(mxcsr), "=m"(x87_control));
  std::memcpy(reinterpret_cast<char*>(frame), &mxcsr, sizeof mxcsr);
  std::memcpy(reinterpret_cast<char*>(frame) + 4, &x87_control, sizeof x87_control);
  frame[7] = reinterpret_cast<std::uint64_t>(entry);
  fiber.stack_pointer = frame;
}

void switch_fiber(FiberContext& from, FiberContext& to) { mlpcore_emu_switch_stack(&from.stack_pointer, to.stack_pointer); }

#else

void make_fiber(FiberContext& fiber, void* stack, std::size_t bytes, void (*entry)()) {
  getcontext(&fiber.context);
  fiber.context.uc_stack.ss_sp = stack;
  fiber.context.uc_stack.ss_size = bytes;
  fiber.context.uc_link = nullptr;
  makecontext(&fiber.context, entry, 0);
}

void switch_fiber(FiberContext& from, FiberContext& to) { swapcontext(&from.context, &to.context); }

#endif

}  // namespace mlpcore::emu
