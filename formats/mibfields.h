/* The MemInfoBlock's fields by LLVM's names, in LLVM's order: what JSON
   and YAML output print.  */

#ifndef MEMPROF_ANALYSIS_MIBFIELDS_H
#define MEMPROF_ANALYSIS_MIBFIELDS_H

#include <stddef.h>
#include <stdint.h>

#include "mib.h"

/* The fields up to and including AccessHistogramSize.  */
extern const size_t mib_field_count;
const char *mib_field_name (size_t field);
uint64_t mib_field_value (const struct memprof_mib *mib, size_t field);
/* Set it (a 32-bit field keeps the low 32 bits of VALUE).  */
void mib_field_set (struct memprof_mib *mib, size_t field, uint64_t value);

#endif /* MEMPROF_ANALYSIS_MIBFIELDS_H */
