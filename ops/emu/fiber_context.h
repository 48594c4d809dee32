#pragma once
// The wave emulator's fiber switch. On x86-64 it is a few instructions that save the callee-saved
// registers, MXCSR and the x87 control word: glibc's swapcontext also saves the signal mask, a system call
// on every switch (43% of an emulated network's time), and under AddressSanitizer its interceptor clears
// the shadow of the whole fiber stack on every switch (60% of the sanitizer pass's time in the kernel).
// Elsewhere (other processors, x32, non-ELF) it is ucontext, and so it is in builds with shadow stacks
// (-fcf-protection=return), which only glibc's switch keeps in step. The emulator calls AddressSanitizer's
// fiber hooks around each switch.
#include <cstddef>

#if defined(__x86_64__) && defined(__LP64__) && defined(__ELF__) && !(defined(__CET__) && (__CET__ & 2))
#define MLPCORE_EMU_STACK_SWITCH 1
#else
#define MLPCORE_EMU_STACK_SWITCH 0
#include <ucontext.h>
#endif

namespace mlpcore::emu {

struct FiberContext {
#if MLPCORE_EMU_STACK_SWITCH
  void* stack_pointer = nullptr;
#else
  ucontext_t context{};
#endif
};

// Makes `fiber` start `entry` on the stack [stack, stack + bytes) at its first resume. `entry` must not
// return: it switches away for the last time instead.
void make_fiber(FiberContext& fiber, void* stack, std::size_t bytes, void (*entry)());

// Saves the running context in `from` and continues `to` where it last switched away (or at its entry).
void switch_fiber(FiberContext& from, FiberContext& to);

}  // namespace mlpcore::emu
