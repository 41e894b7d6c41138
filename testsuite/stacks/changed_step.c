/* A return address whose frame-pointer step is right at first and wrong
   later: the case the runtime's learnt verdicts assume never happens in
   compiled code (a call site's frame layout is fixed), made here by hand
   to check what the runtime does when it does.  two_faced (x86-64
   assembly, with DWARF unwind rules that are right either way) calls
   leaf from one call instruction; with a frame pointer of its own in the
   first phase, without one (the caller's left in %rbp) in the second, so
   the frame-pointer step from its return address skips caller's frame
   in the second phase.  The runtime learns the step as a frame-pointer
   step in the first phase; in the second its checks against a full
   unwind (one capture in VERIFY_INTERVAL) find it wrong, and from then on
   the step must never be taken again: every cache of verdicts, the
   thread's hot frames included, must forget it.  Argument: allocations
   per phase (default 20000).  Prints the allocations of each phase.  */
#include <stdio.h>
#include <stdlib.h>

void *leaf (long size);
void *two_faced (long without_frame_pointer, long size);

__asm__(".text\n"
        ".globl two_faced\n"
        ".type two_faced, @function\n"
        "two_faced:\n"
        ".cfi_startproc\n"
        "  pushq %rbp\n"
        ".cfi_def_cfa_offset 16\n"
        ".cfi_offset %rbp, -16\n"
        "  testq %rdi, %rdi\n"
        "  jnz 1f\n"
        "  movq %rsp, %rbp\n"
        "1:\n"
        "  movq %rsi, %rdi\n"
        "  call leaf\n"
        "  popq %rbp\n"
        ".cfi_def_cfa_offset 8\n"
        "  ret\n"
        ".cfi_endproc\n"
        ".size two_faced, .-two_faced\n");

__attribute__ ((noipa)) void *
leaf (long size)
{
  void *block = malloc ((size_t) size);
  __asm__ volatile("" : : "r"(block) : "memory");
  return block;
}

__attribute__ ((noipa)) static void *
caller (long without_frame_pointer, long size)
{
  void *block = two_faced (without_frame_pointer, size);
  __asm__ volatile("" : : "r"(block) : "memory");
  return block;
}

/* Both phases through this one function, so that every return address
   outside two_faced is the same in both.  */
__attribute__ ((noipa)) static long
run_phase (long phase, long rounds)
{
  long made = 0;
  for (long i = 0; i < rounds; i++)
    {
      free (caller (phase, 24 + 8 * phase));
      made++;
    }
  return made;
}

int
main (int argc, char **argv)
{
  long rounds = argc > 1 ? atol (argv[1]) : 20000;
  long made[2];
  /* Not unrolled: one call of run_phase for both phases.  */
  static volatile long phases = 2;
  for (long phase = 0; phase < phases; phase++)
    made[phase & 1] = run_phase (phase, rounds);
  printf ("%ld %ld\n", made[0], made[1]);
  return 0;
}
