/* The malloc API trace (docs/trace-format.md): what the runtime writes
   with trace=1 and `memprof trace' reads.  All integers little-endian, all
   structures packed.

   The file is one zstd frame (a reader of a file still being written, or
   of one that was synced, sees a frame without its end).  Decompressed it
   is

     header | block | block | ... | end block

   and each block is a block header followed by its payload: the records
   of one thread (RECORDS), a pair of clock readings (CLOCK, SYNC), a
   thread's name (THREAD, version 2) or the end of the trace (END).
   Version 2 adds the THREAD block; readers take both versions.  */

#ifndef MEMPROF_TRACEFORMAT_H
#define MEMPROF_TRACEFORMAT_H

#include <stdint.h>

/* "\x89MPTRCE\n" on disk.  */
#define MEMPROF_TRACE_MAGIC 0x0a45435254504d89ULL
#define MEMPROF_TRACE_VERSION 2
/* Without thread names: still read.  */
#define MEMPROF_TRACE_VERSION_1 1

struct memprof_trace_header
{
  uint64_t magic;
  uint32_t version;
  uint32_t header_size; /* 64 */
  uint32_t record_size; /* 64 */
  uint32_t pid;
  uint32_t flags;           /* MEMPROF_TRACE_FLAG_* */
  uint32_t reserved0;       /* 0 */
  uint64_t start_tsc;       /* the time stamp counter when it started */
  uint64_t start_monotonic; /* CLOCK_MONOTONIC ns at the same moment */
  uint64_t start_realtime;  /* CLOCK_REALTIME ns at the same moment */
  uint64_t reserved1;       /* 0 */
} __attribute__ ((packed));

/* The records carry stack ids (trace_stacks=1).  */
#define MEMPROF_TRACE_FLAG_STACKS 1u

enum memprof_trace_block_kind
{
  MEMPROF_TRACE_BLOCK_RECORDS = 1, /* count records of one thread */
  MEMPROF_TRACE_BLOCK_CLOCK = 2,   /* a memprof_trace_clock */
  MEMPROF_TRACE_BLOCK_SYNC = 3,    /* a memprof_trace_clock: synced here */
  MEMPROF_TRACE_BLOCK_END = 4,     /* a memprof_trace_end; the last block */
  MEMPROF_TRACE_BLOCK_THREAD = 5   /* version 2: a memprof_trace_thread,
                                      before the first RECORDS block of a
                                      thread and whenever its name
                                      changed */
};

struct memprof_trace_block
{
  uint32_t kind;   /* enum memprof_trace_block_kind */
  uint32_t thread; /* RECORDS, THREAD: the thread's id (gettid); else 0 */
  uint32_t count;  /* RECORDS: records that follow; else 0 */
  uint32_t size;   /* RECORDS: bytes of encoded records that follow;
                      THREAD: 16; else 0 */
} __attribute__ ((packed));

/* The most records in one block, and the most bytes they take.  */
#define MEMPROF_TRACE_BLOCK_RECORDS_MAX 65536
#define MEMPROF_TRACE_BLOCK_SIZE_MAX (1u << 24)

struct memprof_trace_clock
{
  uint64_t tsc;       /* the time stamp counter ... */
  uint64_t monotonic; /* ... and CLOCK_MONOTONIC ns, read together */
} __attribute__ ((packed));

/* A thread's name (pthread_setname_np, prctl PR_SET_NAME: the kernel's
   comm, at most 15 bytes), NUL-padded.  */
#define MEMPROF_TRACE_THREAD_NAME_SIZE 16
struct memprof_trace_thread
{
  char name[MEMPROF_TRACE_THREAD_NAME_SIZE];
} __attribute__ ((packed));

struct memprof_trace_end
{
  uint64_t tsc;
  uint64_t monotonic;
  uint64_t record_count; /* records in the whole file */
  uint64_t thread_count; /* threads that have records in it */
} __attribute__ ((packed));

/* The calls recorded.  */
enum memprof_trace_op
{
  MEMPROF_TRACE_MALLOC = 1,
  MEMPROF_TRACE_CALLOC = 2,
  MEMPROF_TRACE_REALLOC = 3,
  MEMPROF_TRACE_FREE = 4,
  MEMPROF_TRACE_ALIGNED_ALLOC = 5,
  MEMPROF_TRACE_POSIX_MEMALIGN = 6,
  MEMPROF_TRACE_MEMALIGN = 7,
  MEMPROF_TRACE_VALLOC = 8,
  MEMPROF_TRACE_PVALLOC = 9,
  MEMPROF_TRACE_REALLOCARRAY = 10,
  MEMPROF_TRACE_NEW = 11,          /* operator new */
  MEMPROF_TRACE_NEW_ARRAY = 12,    /* operator new[] */
  MEMPROF_TRACE_DELETE = 13,       /* operator delete */
  MEMPROF_TRACE_DELETE_ARRAY = 14, /* operator delete[] */
  MEMPROF_TRACE_OP_COUNT = 15      /* one past the last */
};

/* Flags of the C++ operators.  */
#define MEMPROF_TRACE_NOTHROW 1u /* the std::nothrow_t form */
#define MEMPROF_TRACE_ALIGNED 2u /* the std::align_val_t form: extra */
#define MEMPROF_TRACE_SIZED 4u   /* sized delete: size */

/* One call, as the runtime records it and `memprof' decodes it; in the
   file each is encoded (below).  Field by field (docs/trace-format.md):

   sequence  the call's place in the process's order of calls: one
             counter for all threads, read after an allocation returned
             and before a deallocation started, so an address is always
             freed before it is handed out again
   timestamp the time stamp counter (rdtsc), read with the sequence
   pointer   the pointer argument: free, realloc, reallocarray, delete
   result    the pointer returned (posix_memalign: stored), 0 on failure
   size      bytes asked for (calloc: of one element; reallocarray: the
             product, UINT64_MAX when it overflows; sized delete: the
             size given)
   extra     calloc: the element count; the memalign family and aligned
             new/delete: the alignment; realloc and reallocarray: the
             sequence read before the call; else 0
   usable    malloc_usable_size of the result, 0 when none
   stack_id  the allocation's context in the profile (trace_stacks=1),
             0 when not recorded
   op        enum memprof_trace_op
   flags     MEMPROF_TRACE_NOTHROW | ALIGNED | SIZED  */
struct memprof_trace_record
{
  uint64_t sequence;
  uint64_t timestamp;
  uint64_t pointer;
  uint64_t result;
  uint64_t size;
  uint64_t extra;
  uint64_t usable;
  uint32_t stack_id;
  uint8_t op;
  uint8_t flags;
  uint16_t reserved; /* 0 */
}; /* not packed: in memory only, its fields naturally aligned */

/* The encoding of the COUNT records of a RECORDS block: column by
   column, each column holding one value per record (or per record that
   has the field), in record order:

     bytes    op | flags << 4
     zigzag   sequence - previous record's sequence
     zigzag   timestamp - previous record's timestamp
     zigzag   pointer - previous address     (ops that take a pointer)
     zigzag   result - previous address      (ops that return one)
     varint   size
     varint   extra  (realloc, reallocarray: sequence - extra)
     zigzag   usable - size
     varint   stack_id                        (MEMPROF_TRACE_FLAG_STACKS)

   "previous" is 0 for the block's first record.  varint: 7 bits a byte,
   low first, the high bit set on all but the last (at most 10 bytes);
   zigzag: a signed difference v as the varint (v << 1) ^ (v >> 63).  The
   previous address is the last pointer or result that was not 0, in
   record order, a record's pointer before its result.  */
#define MEMPROF_TRACE_ENCODED_MAX (1 + 8 * 10)

static inline int
memprof_trace_op_takes_pointer (unsigned op)
{
  return op == MEMPROF_TRACE_REALLOC || op == MEMPROF_TRACE_FREE
         || op == MEMPROF_TRACE_REALLOCARRAY || op == MEMPROF_TRACE_DELETE
         || op == MEMPROF_TRACE_DELETE_ARRAY;
}

static inline int
memprof_trace_op_returns_pointer (unsigned op)
{
  return op != MEMPROF_TRACE_FREE && op != MEMPROF_TRACE_DELETE
         && op != MEMPROF_TRACE_DELETE_ARRAY;
}

static inline int
memprof_trace_op_is_realloc (unsigned op)
{
  return op == MEMPROF_TRACE_REALLOC || op == MEMPROF_TRACE_REALLOCARRAY;
}

_Static_assert(sizeof (struct memprof_trace_header) == 64, "trace header");
_Static_assert(sizeof (struct memprof_trace_block) == 16, "trace block");
_Static_assert(sizeof (struct memprof_trace_record) == 64, "trace record");

#endif /* MEMPROF_TRACEFORMAT_H */
