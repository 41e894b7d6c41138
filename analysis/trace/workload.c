/* See workload.h.  An operation on disk:

     byte    code: 0 wait, else the trace's operation
     wait:   varint thread, varint operations
     else:   varint sequence - the thread's previous one, varint slot, then
             malloc, valloc, pvalloc, realloc: varint size
             calloc: varint count, varint size
             aligned_alloc, posix_memalign, memalign: varint alignment,
               varint size
             free: nothing
             new, new[]: byte flags, varint size, [varint alignment]
             delete, delete[]: byte flags, [varint size], [varint alignment]
   (docs/trace-format.md).  */

#include "workload.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "traceformat.h"
#include "util.h"

/* ---- Writing ---- */

static void
put_varint (struct buffer *stream, uint64_t value)
{
  uint8_t bytes[10];
  size_t length = 0;
  while (value >= 0x80)
    {
      bytes[length++] = (uint8_t) (value | 0x80);
      value >>= 7;
    }
  bytes[length++] = (uint8_t) value;
  buffer_append (stream, bytes, length);
}

static void
put_byte (struct buffer *stream, uint8_t byte)
{
  buffer_append (stream, &byte, 1);
}

void
workload_encode_op (struct buffer *stream, const struct workload_op *op,
                    uint64_t *previous_sequence)
{
  put_byte (stream, op->code);
  if (op->code == WORKLOAD_WAIT)
    {
      put_varint (stream, op->wait_thread);
      put_varint (stream, op->wait_ops);
      return;
    }
  put_varint (stream, op->sequence - *previous_sequence);
  *previous_sequence = op->sequence;
  put_varint (stream, op->slot);
  switch (op->code)
    {
    case MEMPROF_TRACE_MALLOC:
    case MEMPROF_TRACE_VALLOC:
    case MEMPROF_TRACE_PVALLOC:
    case MEMPROF_TRACE_REALLOC:
      put_varint (stream, op->size);
      break;
    case MEMPROF_TRACE_CALLOC:
      put_varint (stream, op->count);
      put_varint (stream, op->size);
      break;
    case MEMPROF_TRACE_ALIGNED_ALLOC:
    case MEMPROF_TRACE_POSIX_MEMALIGN:
    case MEMPROF_TRACE_MEMALIGN:
      put_varint (stream, op->alignment);
      put_varint (stream, op->size);
      break;
    case MEMPROF_TRACE_NEW:
    case MEMPROF_TRACE_NEW_ARRAY:
      put_byte (stream, op->flags);
      put_varint (stream, op->size);
      if (op->flags & MEMPROF_TRACE_ALIGNED)
        put_varint (stream, op->alignment);
      break;
    case MEMPROF_TRACE_DELETE:
    case MEMPROF_TRACE_DELETE_ARRAY:
      put_byte (stream, op->flags);
      if (op->flags & MEMPROF_TRACE_SIZED)
        put_varint (stream, op->size);
      if (op->flags & MEMPROF_TRACE_ALIGNED)
        put_varint (stream, op->alignment);
      break;
    default:
      break;
    }
}

/* ---- Reading ---- */

static int bad (char *error, size_t error_size, const char *name,
                uint64_t offset, const char *format, ...)
    __attribute__ ((format (printf, 5, 6)));

static int
bad (char *error, size_t error_size, const char *name, uint64_t offset,
     const char *format, ...)
{
  char what[400];
  va_list args;
  va_start (args, format);
  vsnprintf (what, sizeof what, format, args);
  va_end (args);
  snprintf (error, error_size, "%s: byte %llu: %s", name,
            (unsigned long long) offset, what);
  return -1;
}

int
workload_open_buffer (const uint8_t *data, size_t size, const char *name,
                      struct workload *workload, char *error, size_t error_size)
{
  struct workload_header header;
  uint64_t table_end, ops = 0;

  memset (workload, 0, sizeof *workload);
  workload->data = data;
  workload->size = size;
  workload->name = name;
  if (size < sizeof header)
    return bad (error, error_size, name, size,
                "truncated: a 64-byte workload header expected, the file "
                "has %zu bytes",
                size);
  memcpy (&header, data, sizeof header);
  if (header.magic != WORKLOAD_MAGIC)
    return bad (error, error_size, name, 0,
                "a memprof workload's magic number expected (make one with "
                "`memprof trace2wl TRACE -o FILE')");
  if (header.version != WORKLOAD_VERSION)
    return bad (error, error_size, name, 8, "version %d expected, found %u",
                WORKLOAD_VERSION, header.version);
  if (header.header_size != sizeof header || header.flags != 0)
    return bad (error, error_size, name, 12,
                "a header of 64 bytes with flags 0 expected");
  if (header.thread_count == 0 || header.thread_count > WORKLOAD_THREADS_MAX)
    return bad (error, error_size, name, 16,
                "1 to %d threads expected, found %u", WORKLOAD_THREADS_MAX,
                header.thread_count);
  table_end
      = sizeof header
        + (uint64_t) header.thread_count * sizeof (struct workload_thread);
  if (table_end > size)
    return bad (error, error_size, name, size,
                "truncated: a table of %u threads expected (to byte %llu)",
                header.thread_count, (unsigned long long) table_end);
  workload->threads = xcalloc (header.thread_count, sizeof *workload->threads);
  memcpy (workload->threads, data + sizeof header,
          header.thread_count * sizeof *workload->threads);
  for (uint32_t i = 0; i < header.thread_count; i++)
    {
      const struct workload_thread *thread = &workload->threads[i];
      uint64_t at = sizeof header + (uint64_t) i * sizeof *thread;
      if (thread->reserved != 0 || thread->offset < table_end
          || thread->offset > size || thread->size > size - thread->offset)
        {
          bad (error, error_size, name, at,
               "thread %u: operations inside the file (after byte %llu, "
               "before byte %zu) expected, found %llu bytes at %llu",
               i, (unsigned long long) table_end, size,
               (unsigned long long) thread->size,
               (unsigned long long) thread->offset);
          workload_close (workload);
          return -1;
        }
      if (thread->op_count > WORKLOAD_THREAD_OPS_MAX
          || thread->op_count > thread->size / 3)
        {
          bad (error, error_size, name, at,
               "thread %u: at most %llu operations in its %llu bytes "
               "expected, found %llu",
               i, (unsigned long long) (thread->size / 3),
               (unsigned long long) thread->size,
               (unsigned long long) thread->op_count);
          workload_close (workload);
          return -1;
        }
      ops += thread->op_count;
    }
  if (ops != header.op_count || header.slot_count > ops)
    {
      workload_close (workload);
      return bad (error, error_size, name, 24,
                  "%llu operations (the threads' sum) and at most as many "
                  "slots expected, found %llu operations and %llu slots",
                  (unsigned long long) ops,
                  (unsigned long long) header.op_count,
                  (unsigned long long) header.slot_count);
    }
  workload->header = header;
  return 0;
}

void
workload_close (struct workload *workload)
{
  free (workload->threads);
  workload->threads = NULL;
}

void
workload_cursor_init (const struct workload *workload, uint32_t thread,
                      struct workload_cursor *cursor)
{
  const struct workload_thread *entry = &workload->threads[thread];
  cursor->start = cursor->p = workload->data + entry->offset;
  cursor->end = cursor->start + entry->size;
  cursor->sequence = 0;
  cursor->file_offset = entry->offset;
}

static bool
get_varint (struct workload_cursor *cursor, uint64_t *value)
{
  return varint_get (&cursor->p, cursor->end, value);
}

static bool
is_alignment (uint64_t value)
{
  return value != 0 && (value & (value - 1)) == 0 && value <= (1u << 30);
}

int
workload_next (const struct workload *workload, struct workload_cursor *cursor,
               struct workload_op *op, char *error, size_t error_size)
{
  const uint8_t *start = cursor->p;
  uint64_t delta, value;
  const char *field;

#define OFFSET(at) (cursor->file_offset + (uint64_t) ((at) -cursor->start))
#define VARINT(name, into)                                                     \
  do                                                                           \
    {                                                                          \
      field = name;                                                            \
      if (!get_varint (cursor, into))                                          \
        goto bad_varint;                                                       \
    }                                                                          \
  while (0)

  memset (op, 0, sizeof *op);
  if (cursor->p == cursor->end)
    return 0;
  op->code = *cursor->p++;
  if (op->code == WORKLOAD_WAIT)
    {
      VARINT ("the thread waited for", &value);
      if (value >= workload->header.thread_count)
        return bad (error, error_size, workload->name, OFFSET (start),
                    "a wait for one of the %u threads expected, found thread "
                    "%llu",
                    workload->header.thread_count, (unsigned long long) value);
      op->wait_thread = (uint32_t) value;
      VARINT ("the operations waited for", &op->wait_ops);
      return 1;
    }
  if (op->code >= MEMPROF_TRACE_OP_COUNT
      || op->code == MEMPROF_TRACE_REALLOCARRAY)
    return bad (error, error_size, workload->name, OFFSET (start),
                "an operation code (0 to %d, not %d) expected, found %u",
                MEMPROF_TRACE_OP_COUNT - 1, MEMPROF_TRACE_REALLOCARRAY,
                op->code);
  VARINT ("the sequence number", &delta);
  if (delta > UINT64_MAX - cursor->sequence)
    return bad (error, error_size, workload->name, OFFSET (start),
                "a sequence number below 2^64 expected");
  op->sequence = cursor->sequence + delta;
  cursor->sequence = op->sequence;
  VARINT ("the slot", &op->slot);
  if (op->slot >= workload->header.slot_count)
    return bad (error, error_size, workload->name, OFFSET (start),
                "a slot below %llu expected, found %llu",
                (unsigned long long) workload->header.slot_count,
                (unsigned long long) op->slot);
  switch (op->code)
    {
    case MEMPROF_TRACE_MALLOC:
    case MEMPROF_TRACE_VALLOC:
    case MEMPROF_TRACE_PVALLOC:
    case MEMPROF_TRACE_REALLOC:
      VARINT ("the size", &op->size);
      break;
    case MEMPROF_TRACE_CALLOC:
      VARINT ("the element count", &op->count);
      VARINT ("the element size", &op->size);
      break;
    case MEMPROF_TRACE_ALIGNED_ALLOC:
    case MEMPROF_TRACE_POSIX_MEMALIGN:
    case MEMPROF_TRACE_MEMALIGN:
      VARINT ("the alignment", &op->alignment);
      VARINT ("the size", &op->size);
      if (!is_alignment (op->alignment))
        return bad (error, error_size, workload->name, OFFSET (start),
                    "an alignment that is a power of two up to 2^30 "
                    "expected, found %llu",
                    (unsigned long long) op->alignment);
      break;
    case MEMPROF_TRACE_NEW:
    case MEMPROF_TRACE_NEW_ARRAY:
    case MEMPROF_TRACE_DELETE:
    case MEMPROF_TRACE_DELETE_ARRAY:
      {
        bool is_new = op->code == MEMPROF_TRACE_NEW
                      || op->code == MEMPROF_TRACE_NEW_ARRAY;
        unsigned allowed = MEMPROF_TRACE_NOTHROW | MEMPROF_TRACE_ALIGNED
                           | (is_new ? 0 : MEMPROF_TRACE_SIZED);
        field = "the flags";
        if (cursor->p == cursor->end)
          goto bad_varint;
        op->flags = *cursor->p++;
        if ((op->flags & ~allowed) != 0)
          return bad (error, error_size, workload->name, OFFSET (start),
                      "flags of %s within 0x%x expected, found 0x%x",
                      is_new ? "new" : "delete", allowed, op->flags);
        if (is_new || (op->flags & MEMPROF_TRACE_SIZED))
          VARINT ("the size", &op->size);
        if (op->flags & MEMPROF_TRACE_ALIGNED)
          {
            VARINT ("the alignment", &op->alignment);
            if (!is_alignment (op->alignment))
              return bad (error, error_size, workload->name, OFFSET (start),
                          "an alignment that is a power of two up to 2^30 "
                          "expected, found %llu",
                          (unsigned long long) op->alignment);
          }
      }
      break;
    default:
      break;
    }
  return 1;
bad_varint:
  if (cursor->p == cursor->end)
    return bad (error, error_size, workload->name, OFFSET (cursor->p),
                "truncated: %s of the operation at byte %llu expected, the "
                "thread's operations end",
                field, (unsigned long long) OFFSET (start));
  return bad (error, error_size, workload->name, OFFSET (cursor->p),
              "%s: a varint of at most 10 bytes expected", field);
#undef VARINT
#undef OFFSET
}

uint64_t
workload_op_bytes (const struct workload_op *op)
{
  uint64_t bytes;
  if (op->code == MEMPROF_TRACE_CALLOC)
    return __builtin_mul_overflow (op->size, op->count, &bytes) ? UINT64_MAX
                                                                : bytes;
  return op->size;
}

/* ---- The walk ---- */

struct walker_thread
{
  struct workload_cursor cursor;
  struct workload_op next; /* the next operation that is not a wait */
  bool has_next;
  struct workload_op *waits; /* before NEXT */
  size_t wait_count, wait_capacity;
  uint64_t done;   /* operations walked */
  uint32_t *known; /* per thread: operations it is known to have done */
};

struct walker
{
  const struct workload *workload;
  struct walker_thread *threads;
  uint32_t *heap; /* threads with a next operation, by its sequence */
  size_t heap_count;
  char *error;
  size_t error_size;
};

static bool
before (const struct walker *walker, uint32_t a, uint32_t b)
{
  uint64_t x = walker->threads[a].next.sequence;
  uint64_t y = walker->threads[b].next.sequence;
  return x < y || (x == y && a < b);
}

static void
heap_push (struct walker *walker, uint32_t thread)
{
  size_t at = walker->heap_count++;
  walker->heap[at] = thread;
  while (at > 0
         && before (walker, walker->heap[at], walker->heap[(at - 1) / 2]))
    {
      uint32_t parent = walker->heap[(at - 1) / 2];
      walker->heap[(at - 1) / 2] = walker->heap[at];
      walker->heap[at] = parent;
      at = (at - 1) / 2;
    }
}

static uint32_t
heap_pop (struct walker *walker)
{
  uint32_t top = walker->heap[0];
  walker->heap[0] = walker->heap[--walker->heap_count];
  for (size_t at = 0;;)
    {
      size_t smallest = at, left = 2 * at + 1, right = left + 1;
      if (left < walker->heap_count
          && before (walker, walker->heap[left], walker->heap[smallest]))
        smallest = left;
      if (right < walker->heap_count
          && before (walker, walker->heap[right], walker->heap[smallest]))
        smallest = right;
      if (smallest == at)
        break;
      uint32_t swap = walker->heap[at];
      walker->heap[at] = walker->heap[smallest];
      walker->heap[smallest] = swap;
      at = smallest;
    }
  return top;
}

/* Decode THREAD's waits and next operation.  */
static int
advance (struct walker *walker, uint32_t index)
{
  struct walker_thread *thread = &walker->threads[index];
  struct workload_op op;
  thread->wait_count = 0;
  thread->has_next = false;
  for (;;)
    {
      int got = workload_next (walker->workload, &thread->cursor, &op,
                               walker->error, walker->error_size);
      if (got < 0)
        return -1;
      if (got == 0)
        {
          if (thread->wait_count > 0)
            return bad (
                walker->error, walker->error_size, walker->workload->name,
                thread->cursor.file_offset
                    + (uint64_t) (thread->cursor.p - thread->cursor.start),
                "thread %u: an operation after its last wait "
                "expected",
                index);
          return 0;
        }
      if (op.code != WORKLOAD_WAIT)
        break;
      if (thread->wait_count == thread->wait_capacity)
        {
          thread->wait_capacity
              = thread->wait_capacity ? 2 * thread->wait_capacity : 8;
          thread->waits
              = xrealloc (thread->waits, thread->wait_capacity * sizeof (op));
        }
      thread->waits[thread->wait_count++] = op;
    }
  thread->next = op;
  thread->has_next = true;
  return 0;
}

int
workload_walk (const struct workload *workload, bool strict,
               workload_failed_fn failed, workload_curve_fn curve, void *cookie,
               uint64_t *peak, char *error, size_t error_size)
{
  uint32_t thread_count = workload->header.thread_count;
  uint64_t slot_count = workload->header.slot_count;
  struct walker walker
      = { .workload = workload, .error = error, .error_size = error_size };
  uint64_t *sizes = xcalloc (slot_count ? slot_count : 1, sizeof (uint64_t));
  uint64_t *last = xcalloc (slot_count ? slot_count : 1, sizeof (uint64_t));
  uint8_t *live_slot = xcalloc (slot_count ? slot_count : 1, 1);
  uint64_t live = 0, emitted = 0, max = 0, group = 0;
  bool in_group = false;
  int status = -1;

  walker.threads = xcalloc (thread_count, sizeof *walker.threads);
  walker.heap = xcalloc (thread_count, sizeof *walker.heap);
  for (uint32_t i = 0; i < thread_count; i++)
    {
      workload_cursor_init (workload, i, &walker.threads[i].cursor);
      if (advance (&walker, i) != 0)
        goto done;
      if (walker.threads[i].has_next)
        heap_push (&walker, i);
    }
  while (walker.heap_count > 0)
    {
      uint32_t index = heap_pop (&walker);
      struct walker_thread *thread = &walker.threads[index];
      const struct workload_op *op = &thread->next;
      uint64_t at = thread->cursor.file_offset;
      uint64_t sequence = op->sequence;

      if (in_group && op->sequence != group)
        {
          if (live > max)
            max = live;
          if (curve != NULL && live != emitted)
            curve (cookie, group, live);
          emitted = live;
        }
      group = op->sequence;
      in_group = true;
      if (thread->done >= workload->threads[index].op_count)
        {
          bad (error, error_size, workload->name, at,
               "thread %u: %llu operations expected, it has more", index,
               (unsigned long long) workload->threads[index].op_count);
          goto done;
        }
      for (size_t w = 0; w < thread->wait_count; w++)
        {
          const struct workload_op *wait = &thread->waits[w];
          uint32_t other = wait->wait_thread;
          if (other == index || wait->wait_ops == 0
              || wait->wait_ops > walker.threads[other].done)
            {
              bad (error, error_size, workload->name, at,
                   "thread %u, operation %llu: a wait for an earlier "
                   "operation of another thread expected, found a wait for "
                   "thread %u to have done %llu operations (the replay would "
                   "deadlock)",
                   index, (unsigned long long) thread->done, other,
                   (unsigned long long) wait->wait_ops);
              goto done;
            }
          if (thread->known == NULL)
            thread->known = xcalloc (thread_count, sizeof (uint32_t));
          if (thread->known[other] < wait->wait_ops)
            thread->known[other] = (uint32_t) wait->wait_ops;
        }
      uint64_t previous = last[op->slot];
      if (previous != 0)
        {
          uint32_t owner = (uint32_t) (previous >> 32) - 1;
          uint32_t owner_ops = (uint32_t) previous;
          if (owner != index
              && (thread->known == NULL || thread->known[owner] < owner_ops))
            {
              bad (error, error_size, workload->name, at,
                   "thread %u, operation %llu: slot %llu was last used by "
                   "thread %u's operation %u; a wait for it expected first "
                   "(two replay threads would use the slot at once)",
                   index, (unsigned long long) thread->done,
                   (unsigned long long) op->slot, owner, owner_ops);
              goto done;
            }
        }
      bool allocates = op->code != MEMPROF_TRACE_FREE
                       && op->code != MEMPROF_TRACE_DELETE
                       && op->code != MEMPROF_TRACE_DELETE_ARRAY
                       && op->code != MEMPROF_TRACE_REALLOC;
      if (strict && allocates && live_slot[op->slot])
        {
          bad (error, error_size, workload->name, at,
               "thread %u, operation %llu: an allocation into an empty slot "
               "expected, slot %llu is live",
               index, (unsigned long long) thread->done,
               (unsigned long long) op->slot);
          goto done;
        }
      if (strict && !allocates && op->code != MEMPROF_TRACE_REALLOC
          && !live_slot[op->slot])
        {
          bad (error, error_size, workload->name, at,
               "thread %u, operation %llu: a free of a live slot expected, "
               "slot %llu is empty",
               index, (unsigned long long) thread->done,
               (unsigned long long) op->slot);
          goto done;
        }
      if (failed == NULL || !failed (cookie, index, thread->done))
        {
          if (op->code == MEMPROF_TRACE_REALLOC)
            {
              live -= sizes[op->slot];
              sizes[op->slot] = op->size;
              live += op->size;
              live_slot[op->slot] = op->size != 0;
            }
          else if (allocates)
            {
              if (live_slot[op->slot])
                live -= sizes[op->slot];
              sizes[op->slot] = workload_op_bytes (op);
              live += sizes[op->slot];
              live_slot[op->slot] = 1;
            }
          else
            {
              live -= sizes[op->slot];
              sizes[op->slot] = 0;
              live_slot[op->slot] = 0;
            }
        }
      thread->done++;
      last[op->slot] = ((uint64_t) index + 1) << 32 | (uint32_t) thread->done;
      if (advance (&walker, index) != 0)
        goto done;
      if (thread->has_next)
        {
          if (thread->next.sequence < sequence)
            {
              bad (error, error_size, workload->name,
                   thread->cursor.file_offset,
                   "thread %u: sequence numbers that do not decrease "
                   "expected",
                   index);
              goto done;
            }
          heap_push (&walker, index);
        }
    }
  for (uint32_t i = 0; i < thread_count; i++)
    if (walker.threads[i].done != workload->threads[i].op_count)
      {
        bad (error, error_size, workload->name,
             sizeof (struct workload_header)
                 + (uint64_t) i * sizeof (struct workload_thread),
             "thread %u: %llu operations expected, found %llu", i,
             (unsigned long long) workload->threads[i].op_count,
             (unsigned long long) walker.threads[i].done);
        goto done;
      }
  if (in_group)
    {
      if (live > max)
        max = live;
      if (curve != NULL && live != emitted)
        curve (cookie, group, live);
    }
  if (peak != NULL)
    *peak = max;
  status = 0;
done:
  for (uint32_t i = 0; i < thread_count; i++)
    {
      free (walker.threads[i].waits);
      free (walker.threads[i].known);
    }
  free (walker.threads);
  free (walker.heap);
  free (sizes);
  free (last);
  free (live_slot);
  return status;
}
