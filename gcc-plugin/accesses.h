/* Finding the memory accesses of a function (accesses.cc).  */

#ifndef MEMPROF_PLUGIN_ACCESSES_H
#define MEMPROF_PLUGIN_ACCESSES_H

/* Every memory access of the current function (cfun), in statement
   order; inline asm with memory operands is counted in COUNTS.  */
void collect_accesses (vec<memory_access> *accesses,
                       struct access_counts *counts);

/* The object that holds REF when REF is a bit-field (whose own address
   cannot be taken), else REF.  */
tree bit_field_container (tree ref);

#endif /* MEMPROF_PLUGIN_ACCESSES_H */
