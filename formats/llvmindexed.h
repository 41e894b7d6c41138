/* LLVM's indexed profile (what `llvm-profdata merge -o x.memprofdata`
   writes, clang's -fmemory-profile-use input): recognised by its magic so
   that `memprof' and -fplugin-arg-memprof-use= say what it is and which
   command makes a profile they read, instead of failing on its bytes.
   Reading it is not worth its cost: its MemProf section is a versioned
   on-disk hash table of frames and call stacks that carries no access
   histogram beyond what the raw profiles we merge ourselves hold.  */

#ifndef MEMPROF_LLVMINDEXED_H
#define MEMPROF_LLVMINDEXED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* "\xfflprofi\x81": llvm/ProfileData/InstrProf.h, IndexedInstrProf::Magic. */
#define LLVM_INDEXED_PROFILE_MAGIC 0x8169666f72706cffULL

/* Whether DATA (SIZE bytes, from NAME) is an LLVM indexed profile; if so,
   the one-line explanation is in ERROR.  */
static inline bool
llvm_indexed_profile_explain (const uint8_t *data, size_t size,
                              const char *name, char *error, size_t error_size)
{
  uint64_t magic = 0, version = 0;
  if (size < sizeof magic)
    return false;
  memcpy (&magic, data, sizeof magic);
  if (magic != LLVM_INDEXED_PROFILE_MAGIC)
    return false;
  if (size >= 2 * sizeof version)
    memcpy (&version, data + sizeof magic, sizeof version);
  snprintf (error, error_size,
            "%s: an LLVM indexed profile (version %llu: what `llvm-profdata "
            "merge -o FILE' writes, read by clang's -fmemory-profile-use), "
            "which GCC MemProf does not read; make a profile it reads from "
            "the raw profiles: `memprof merge --binary=APP -o APP.mprof "
            "memprof.profraw.*'",
            name, (unsigned long long) (version & 0xffffffffu));
  return true;
}

#endif /* MEMPROF_LLVMINDEXED_H */
