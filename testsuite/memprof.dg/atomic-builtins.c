/* __atomic_fetch_add, __atomic_load_n, __atomic_store_n and
   __sync_fetch_and_add on a pointer are each one access at the pointer
   (collect_call, is_atomic_memory_builtin): a load for __atomic_load_*,
   a store for the others.  The results are used, so -O2 keeps them all. */
/* { dg-do compile } */

__attribute__ ((noipa)) int
atomics (int *p)
{
  int r = __atomic_fetch_add (p, 1, __ATOMIC_SEQ_CST);
  r += __atomic_load_n (p, __ATOMIC_ACQUIRE);
  __atomic_store_n (p, r, __ATOMIC_RELEASE);
  r += __sync_fetch_and_add (p, 2);
  return r;
}

/* { dg-final { scan-tree-dump-times "memprof: instrument (load|store) p_\[0-9\]+\\(D\\) " 4 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument load p_\[0-9\]+\\(D\\) " 1 "memprof" } } */
/* { dg-final { scan-tree-dump-times "memprof: instrument store p_\[0-9\]+\\(D\\) " 3 "memprof" } } */
/* { dg-final { scan-tree-dump "totals for atomics: 4 instrumented \\(1 loads, 3 stores, 0 ranges\\)" "memprof" } } */
