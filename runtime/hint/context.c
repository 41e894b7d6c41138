/* libmemprof_hint: allocation calls classified by their calling context
   at run time (include/memprof/hint_context.h is the contract with the
   plugin, docs/feedback.md "Context hints" the user's side).

   A call the profile found ambiguous (its contexts disagree) calls
   __memprof_hint_context_NAME with its table.  The entry point walks
   frame pointers up the table's depth of caller frames (the plugin
   keeps frame pointers in the units it compiles with a profile), hashes
   the return addresses with the table's address and probes a cache of
   decisions: one load on a hit.  A miss (the first allocation of each
   distinct calling context) names each return address by its frame key,
   from the ELF notes of the loaded objects, and picks the first entry of
   the table whose keys match; the decision goes into the cache.  Cold
   and hot contexts then allocate as __memprof_hint_NAME does, all others
   as the unhinted function does.

   The walk never reads outside the thread's stack: each frame pointer
   must lie above the previous one and below the stack's top; a frame of
   code built without frame pointers ends the walk or yields a return
   address no note names: an unknown frame, which matches any key (the
   frames of code built without the profile, libraries, are not told
   apart).
   Objects loaded later (dlopen) are read when a return address is not
   found and the set of objects has changed.  */

#define _GNU_SOURCE
#include "hint-internal.h"

#include "memprof/hint_context.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The decisions already made: (tag | hint) words, the tag from the hash
   of the table and the return addresses (its top bit set, so no filled
   slot is 0), the hint 0 for the default class.  */
#define DECISION_SLOT_BITS 12
#define DECISION_SLOTS (1u << DECISION_SLOT_BITS)
#define DECISION_PROBES 4
static _Atomic uint64_t decisions[DECISION_SLOTS];

/* Return address -> frame key, from every loaded object's notes, sorted
   by address; rebuilt when the set of objects changes.  */
struct site
{
  uintptr_t address;
  uint64_t key;
};

static struct site *sites;
static size_t site_count;
static unsigned long long sites_objects = (unsigned long long) -1;
static pthread_mutex_t sites_lock = PTHREAD_MUTEX_INITIALIZER;

/* The tables used so far, with MEMPROF_HINT_STATS=1.  */
static bool statistics;
/* MEMPROF_HINT_STATS=unplaced: counted as with 1, and each block then
   allocated as the default class (jemalloc's default arenas, as jemalloc
   alone places it), to compare the pages of the hot contexts' blocks.  */
static bool unplaced;
/* MEMPROF_HINT_DEBUG=1: each decision made (a miss of the cache) is
   written to the statistics' copy of stderr: the table, the return
   addresses walked (as object+offset) and their keys, and the entry
   taken; each table's entries are written at its first decision.  */
static bool debugging;
/* Where the statistics go: a copy of stderr made at start-up, so that a
   program that closes stderr at exit before our atexit handler runs
   (gnulib's close_stdout does, in m4) does not lose them.  */
static int statistics_fd = STDERR_FILENO;
static uint64_t *used_tables;

/* The highest frame a walk may read in this thread: its stack's top
   less a frame's two words; 0 until learnt, 1 when unknown (no frame
   lies at or below it: no walk).  */
static __thread uintptr_t walk_limit
    __attribute__ ((tls_model ("initial-exec")));

static uintptr_t __attribute__ ((noinline, cold)) learn_walk_limit (void)
{
  pthread_attr_t attributes;
  void *low;
  size_t size;

  walk_limit = 1;
  if (pthread_getattr_np (pthread_self (), &attributes) == 0)
    {
      if (pthread_attr_getstack (&attributes, &low, &size) == 0
          && size >= 2 * sizeof (uintptr_t))
        walk_limit = (uintptr_t) low + size - 2 * sizeof (uintptr_t);
      pthread_attr_destroy (&attributes);
    }
  return walk_limit;
}

static inline uintptr_t
thread_walk_limit (void)
{
  uintptr_t limit = walk_limit;

  return LIKELY (limit != 0) ? limit : learn_walk_limit ();
}

/* One step of the walk up the frame-pointer chain: the frame FRAME
   links to must lie above it and leave room for its two words below
   LIMIT (the stack's top less 16 bytes), or the walk ends.  No test of
   alignment: x86-64 reads an unaligned word, and a word inside the
   stack that is no frame pointer only yields a return address no note
   names (an unknown frame) or ends the walk.  */
#define WALK_STEP_OK(next, frame, limit)                                       \
  ((next) > (uintptr_t) (frame) && (next) <= (limit))

/* The allocating function's frame (the entry point's caller's): NEXT,
   the word the entry point's frame at ENTRY links to, when it is a frame
   pointer, else 0 (the walk then reads nothing).  Only the entry point
   reads its own frame, so the rest of the walk may run after it has
   tail-called its slow path.  */
static inline uintptr_t
allocating_frame (uintptr_t next, uintptr_t entry, uintptr_t limit)
{
  return LIKELY (WALK_STEP_OK (next, entry, limit)) ? next : 0;
}

/* The hash of the return addresses of the DEPTH frames from FRAME, the
   allocating function's (0: none), up, with HASH, one multiply each (a
   walk that ends early hashes the frames it read: the same context ends
   at the same frame, and a tag of its own is as unlikely as another's).
   Nothing is stored: the cache of decisions' hit, the common case,
   needs the hash alone; a miss walks again (caller_returns).  The walk
   is unrolled, entered at the step of its depth (a switch), so a frame
   costs its two loads, the multiply and the two bounds tests, with no
   count; a depth above MEMPROF_CONTEXT_MAX_DEPTH walks nothing (its
   table decides 0, in the slow path).  */
#define HASH_MULTIPLIER 0x9e3779b97f4a7c15ULL
#define WALK_STEP(n)                                                           \
  case n:                                                                      \
    {                                                                          \
      const uintptr_t *words = (const uintptr_t *) frame;                      \
      uintptr_t next = words[0];                                               \
                                                                               \
      hash = (hash ^ words[1]) * multiplier;                                   \
      if (n == 1)                                                              \
        return hash;                                                           \
      if (UNLIKELY (!WALK_STEP_OK (next, frame, limit)))                       \
        return hash;                                                           \
      frame = next;                                                            \
    }                                                                          \
    __attribute__ ((fallthrough));

static inline __attribute__ ((always_inline)) uint64_t
caller_hash (uintptr_t frame, unsigned depth, uint64_t hash, uintptr_t limit)
{
  /* In a register for the whole walk: GCC otherwise loads the constant
     again at every step (a movabs each, 5 of Lua's 73 instructions a
     call); the empty asm hides its value.  */
  uint64_t multiplier = HASH_MULTIPLIER;

  __asm__("" : "+r"(multiplier));
  if (LIKELY (frame != 0))
    switch (depth)
      {
        WALK_STEP (12)
        WALK_STEP (11)
        WALK_STEP (10)
        WALK_STEP (9)
        WALK_STEP (8)
        WALK_STEP (7)
        WALK_STEP (6)
        WALK_STEP (5)
        WALK_STEP (4)
        WALK_STEP (3)
        WALK_STEP (2)
        WALK_STEP (1)
      default:
        return hash;
      }
  return hash;
}
#undef WALK_STEP

_Static_assert(MEMPROF_CONTEXT_MAX_DEPTH == 12,
               "caller_hash has a step for each depth");

/* The same walk, storing the return addresses into RETURNS (0 past the
   walk's end), for a decision.  */
static void
caller_returns (uintptr_t frame, unsigned depth, uintptr_t *returns)
{
  uintptr_t limit = thread_walk_limit ();
  unsigned count = 0;

  if (frame != 0)
    for (;;)
      {
        const uintptr_t *words = (const uintptr_t *) frame;
        uintptr_t next = words[0];

        returns[count] = words[1];
        if (++count == depth || !WALK_STEP_OK (next, frame, limit))
          break;
        frame = next;
      }
  for (; count < depth; count++)
    returns[count] = 0;
}

/* ---- The notes: return address -> frame key ---- */

struct site_collection
{
  struct site *sites;
  size_t count, capacity;
  bool failed;
};

static void
add_site (struct site_collection *collection, uintptr_t address, uint64_t key)
{
  if (collection->count == collection->capacity)
    {
      size_t capacity = collection->capacity ? 2 * collection->capacity : 256;
      struct site *grown
          = realloc (collection->sites, capacity * sizeof *grown);
      if (grown == NULL)
        {
          collection->failed = true;
          return;
        }
      collection->sites = grown;
      collection->capacity = capacity;
    }
  collection->sites[collection->count].address = address;
  collection->sites[collection->count].key = key;
  collection->count++;
}

/* The records of one note's descriptor at DESCRIPTOR, SIZE bytes.  */
static void
read_note (struct site_collection *collection, const unsigned char *descriptor,
           size_t size)
{
  for (size_t offset = 0; offset + 12 <= size; offset += 12)
    {
      const unsigned char *record = descriptor + offset;
      int32_t relative;
      uint32_t low, high;

      memcpy (&relative, record, 4);
      memcpy (&low, record + 4, 4);
      memcpy (&high, record + 8, 4);
      add_site (collection, (uintptr_t) record + (intptr_t) relative,
                (uint64_t) high << 32 | low);
    }
}

static int
read_object (struct dl_phdr_info *info, size_t size, void *data)
{
  struct site_collection *collection = data;
  static const char owner[] = MEMPROF_CONTEXT_NOTE_OWNER;

  (void) size;
  for (unsigned i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *header = &info->dlpi_phdr[i];
      size_t align = header->p_align == 8 ? 8 : 4;
      const unsigned char *note
          = (const unsigned char *) (info->dlpi_addr + header->p_vaddr);
      const unsigned char *end = note + header->p_memsz;

      if (header->p_type != PT_NOTE)
        continue;
      while (note + sizeof (ElfW (Nhdr)) <= end)
        {
          const ElfW (Nhdr) *nhdr = (const ElfW (Nhdr) *) note;
          const unsigned char *name = note + sizeof *nhdr;
          const unsigned char *descriptor
              = name + ((nhdr->n_namesz + align - 1) & ~(align - 1));

          if (descriptor + nhdr->n_descsz > end)
            break;
          if (nhdr->n_type == MEMPROF_CONTEXT_NOTE_TYPE
              && nhdr->n_namesz == sizeof owner
              && memcmp (name, owner, sizeof owner) == 0)
            read_note (collection, descriptor, nhdr->n_descsz);
          note = descriptor + ((nhdr->n_descsz + align - 1) & ~(align - 1));
        }
    }
  return 0;
}

static int
count_objects (struct dl_phdr_info *info, size_t size, void *data)
{
  (void) size;
  *(unsigned long long *) data = info->dlpi_adds;
  return 1;
}

static int
compare_sites (const void *a, const void *b)
{
  uintptr_t x = ((const struct site *) a)->address;
  uintptr_t y = ((const struct site *) b)->address;
  return x < y ? -1 : x > y;
}

/* Read the notes again if objects were loaded since; under sites_lock.  */
static void
refresh_sites (void)
{
  unsigned long long objects = 0;
  struct site_collection collection = { NULL, 0, 0, false };

  dl_iterate_phdr (count_objects, &objects);
  if (objects == sites_objects)
    return;
  dl_iterate_phdr (read_object, &collection);
  if (collection.failed)
    {
      free (collection.sites);
      return;
    }
  qsort (collection.sites, collection.count, sizeof *collection.sites,
         compare_sites);
  free (sites);
  sites = collection.sites;
  site_count = collection.count;
  sites_objects = objects;
}

/* The frame key of the call that returns to ADDRESS, 0 when no note
   names it; under sites_lock.  */
static uint64_t
key_of (uintptr_t address)
{
  size_t low = 0, high = site_count;

  if (address == 0)
    return 0;
  while (low < high)
    {
      size_t middle = low + (high - low) / 2;
      if (sites[middle].address < address)
        low = middle + 1;
      else
        high = middle;
    }
  return low < site_count && sites[low].address == address ? sites[low].key : 0;
}

/* Do an entry's DEPTH keys match the frames' KEYS?  A 0 on either side
   (the profile's context ended; a frame no note names) matches any
   frame, but an entry with keys must match one of them: a stack whose
   frames no note names at all (notes stripped, a program built without
   the profile) is not classified by wildcards alone.  */
static bool
entry_matches (const uint64_t *entry, unsigned depth, const uint64_t *keys)
{
  bool named = false, equal = false;

  for (unsigned i = 0; i < depth; i++)
    {
      if (entry[i] != 0 && keys[i] != 0 && entry[i] != keys[i])
        return false;
      named |= entry[i] != 0;
      equal |= entry[i] != 0 && entry[i] == keys[i];
    }
  return equal || !named;
}

/* ---- MEMPROF_HINT_DEBUG=1 ---- */

/* Write the text of FORMAT to the statistics' file descriptor (no
   allocation: this runs inside malloc).  */
static void __attribute__ ((format (printf, 1, 2)))
debug_write (const char *format, ...)
{
  char line[768];
  va_list arguments;
  int length;

  va_start (arguments, format);
  length = vsnprintf (line, sizeof line, format, arguments);
  va_end (arguments);
  if (length > (int) sizeof line - 1)
    length = sizeof line - 1;
  if (length > 0 && write (statistics_fd, line, length) < 0)
    return;
}

/* ADDRESS as OBJECT+OFFSET, the form addr2line takes.  */
static void
debug_address (uintptr_t address, char *text, size_t size)
{
  Dl_info info;

  if (address != 0 && dladdr ((void *) address, &info) != 0
      && info.dli_fname != NULL)
    snprintf (text, size, "%s+%#lx", info.dli_fname,
              (unsigned long) (address - (uintptr_t) info.dli_fbase));
  else
    snprintf (text, size, "%#lx", (unsigned long) address);
}

static void
debug_decision (const uint64_t *table, unsigned depth, const uintptr_t *returns,
                const uint64_t *keys, unsigned taken)
{
  static _Atomic (const uint64_t *) last_dumped;
  unsigned entries = (unsigned) (table[MEMPROF_CONTEXT_WORD_SHAPE] >> 32);
  const char *name
      = (const char *) (uintptr_t) table[MEMPROF_CONTEXT_WORD_NAME];
  char text[512];

  if (atomic_exchange (&last_dumped, table) != table)
    for (unsigned e = 0; e < entries; e++)
      {
        const uint64_t *entry
            = table + MEMPROF_CONTEXT_HEADER_WORDS + (size_t) e * (1 + depth);
        debug_write ("libmemprof_hint: debug: table %s entry %u hint %u:", name,
                     e, (unsigned) entry[0]);
        for (unsigned d = 0; d < depth; d++)
          debug_write (" %016llx", (unsigned long long) entry[1 + d]);
        debug_write ("\n");
      }
  debug_write (
      "libmemprof_hint: debug: decision %s: entry %u of %u (hint %u)\n", name,
      taken, entries,
      taken < entries ? (unsigned)
              table[MEMPROF_CONTEXT_HEADER_WORDS + (size_t) taken * (1 + depth)]
                      : 0);
  for (unsigned d = 0; d < depth; d++)
    {
      debug_address (returns[d], text, sizeof text);
      debug_write ("libmemprof_hint: debug:   frame %u: %s key %016llx\n", d,
                   text, (unsigned long long) keys[d]);
    }
}

/* The hint of the first entry of TABLE whose keys match the frames
   returning to RETURNS, or 0.  */
static unsigned char
decide (const uint64_t *table, unsigned depth, const uintptr_t *returns)
{
  uint64_t keys[MEMPROF_CONTEXT_MAX_DEPTH];
  unsigned entries = (unsigned) (table[MEMPROF_CONTEXT_WORD_SHAPE] >> 32);
  const uint64_t *entry = table + MEMPROF_CONTEXT_HEADER_WORDS;

  pthread_mutex_lock (&sites_lock);
  for (unsigned i = 0; i < depth; i++)
    {
      keys[i] = key_of (returns[i]);
      if (keys[i] == 0 && returns[i] != 0)
        {
          refresh_sites ();
          keys[i] = key_of (returns[i]);
        }
    }
  pthread_mutex_unlock (&sites_lock);

  for (unsigned e = 0; e < entries; e++, entry += 1 + depth)
    if (entry_matches (entry + 1, depth, keys))
      {
        if (UNLIKELY (debugging))
          debug_decision (table, depth, returns, keys, e);
        return (unsigned char) entry[0];
      }
  if (UNLIKELY (debugging))
    debug_decision (table, depth, returns, keys, entries);
  return 0;
}

static void __attribute__ ((noinline))
count_call (uint64_t *table, unsigned char hint, size_t bytes)
{
  unsigned class_index = hint == 0 ? 0 : hint < MEMPROF_HINT_HOT_MIN ? 1 : 2;
  _Atomic uint64_t *words = (_Atomic uint64_t *) table;

  if (atomic_load_explicit (&words[MEMPROF_CONTEXT_WORD_NEXT],
                            memory_order_acquire)
      == 0)
    {
      pthread_mutex_lock (&sites_lock);
      if (table[MEMPROF_CONTEXT_WORD_NEXT] == 0)
        {
          atomic_store_explicit (
              &words[MEMPROF_CONTEXT_WORD_NEXT],
              used_tables ? (uint64_t) (uintptr_t) used_tables : 1,
              memory_order_release);
          used_tables = table;
        }
      pthread_mutex_unlock (&sites_lock);
    }
  atomic_fetch_add_explicit (&words[MEMPROF_CONTEXT_WORD_CALLS + class_index],
                             1, memory_order_relaxed);
  atomic_fetch_add_explicit (&words[MEMPROF_CONTEXT_WORD_BYTES + class_index],
                             bytes, memory_order_relaxed);
}

/* The tag of a decision in the cache (the walk's HASH, its hint byte
   cleared) and its first slot: a product's top bits are its best mixed,
   so the slot is those (no finalizer of the hash on the common path).
   A slot holds tag | hint; 0 is an empty slot, which the inline probe
   takes for the default class of a hash whose tag is 0 (one hash in
   2^56, as likely as two contexts sharing a tag).  With
   MEMPROF_HINT_STATS=1 every slot holds its tag with DECISION_COUNTED
   flipped, so the inline probe never matches and each call is counted
   by the slow path, with no test of the mode on the common path.  */
#define DECISION_TAG(hash) ((hash) & ~(uint64_t) 0xff)
#define DECISION_SLOT(hash) ((unsigned) ((hash) >> (64 - DECISION_SLOT_BITS)))
#define DECISION_COUNTED ((uint64_t) 1 << 8)

/* Does the slot's WORD hold the decision of HASH?  */
#define DECISION_HOLDS(word, hash) ((((word) ^ (hash)) >> 8) == 0)

/* The hint of the context whose walk hashed to HASH, when its first
   slot did not hold it: the other slots probed, or else decided (the
   first allocation of a calling context: walks again from FRAME, the
   allocating function's, names the return addresses) and recorded in
   the first free slot probed, or the first.  A table whose header is
   not this library's decides 0.  */
static unsigned char __attribute__ ((noinline, cold))
context_hint_slow (const uint64_t *table, uintptr_t frame, unsigned depth,
                   uint64_t hash)
{
  uintptr_t returns[MEMPROF_CONTEXT_MAX_DEPTH];
  uint64_t tag
      = DECISION_TAG (hash) ^ (UNLIKELY (statistics) ? DECISION_COUNTED : 0);
  unsigned slot = DECISION_SLOT (hash), free_slot = DECISION_SLOTS;
  unsigned char hint = 0;

  for (unsigned probe = 0; probe < DECISION_PROBES; probe++)
    {
      unsigned index = (slot + probe) % DECISION_SLOTS;
      uint64_t word
          = atomic_load_explicit (&decisions[index], memory_order_relaxed);
      if (word != 0 && DECISION_HOLDS (word, tag))
        return (unsigned char) word;
      if (word == 0 && free_slot == DECISION_SLOTS)
        free_slot = index;
    }
  /* The depth is tested here, not on the common path: a walk of any
     depth reads only the stack, and a table of no valid depth decides 0
     (the default class).  */
  if (depth - 1 < MEMPROF_CONTEXT_MAX_DEPTH
      && table[MEMPROF_CONTEXT_WORD_HEADER]
             == (MEMPROF_CONTEXT_MAGIC << 32 | MEMPROF_CONTEXT_VERSION))
    {
      caller_returns (frame, depth, returns);
      hint = decide (table, depth, returns);
    }
  atomic_store_explicit (
      &decisions[free_slot != DECISION_SLOTS ? free_slot : slot], tag | hint,
      memory_order_relaxed);
  return hint;
}

/* What cached_hint returns when the first slot does not hold the
   decision (or statistics are counted): the entry point's slow path
   decides.  */
#define HINT_UNDECIDED 0x100u

/* The hint for TABLE's call whose allocating function's frame is FRAME
   when the first slot of the cache of decisions holds it (0: the
   default class; a table of no valid depth is always that, decided by
   the slow path), else HINT_UNDECIDED, with the walk's hash in *HASH
   (always, with MEMPROF_HINT_STATS=1).  No call: an entry point whose
   hint is cached calls only its allocator, in tail position, and so
   saves no register.  */
static inline __attribute__ ((always_inline)) unsigned
cached_hint (const uint64_t *table, uintptr_t frame, uintptr_t limit,
             uint64_t *hash)
{
  unsigned depth = (unsigned) (table[MEMPROF_CONTEXT_WORD_SHAPE] & 0xff);
  uint64_t word;

  *hash = caller_hash (frame, depth, (uintptr_t) table, limit);
  word = atomic_load_explicit (&decisions[DECISION_SLOT (*hash)],
                               memory_order_relaxed);
  if (LIKELY (DECISION_HOLDS (word, *hash)))
    return (unsigned char) word;
  /* The second slot too: a context whose first slot another took (two
     of Lua's 104 walks of 1000 rounds share one in some builds, half of
     all calls) would take the slow path on every call.  */
  word = atomic_load_explicit (
      &decisions[(DECISION_SLOT (*hash) + 1) % DECISION_SLOTS],
      memory_order_relaxed);
  if (DECISION_HOLDS (word, *hash))
    return (unsigned char) word;
  return HINT_UNDECIDED;
}

/* The hint of an allocation of BYTES that cached_hint left undecided
   (HASH, FRAME as it had them), counted with MEMPROF_HINT_STATS=1.  */
static unsigned char
undecided_hint (uint64_t *table, uintptr_t frame, uint64_t hash, size_t bytes)
{
  unsigned depth = (unsigned) (table[MEMPROF_CONTEXT_WORD_SHAPE] & 0xff);
  unsigned char hint = context_hint_slow (table, frame, depth, hash);

  if (UNLIKELY (statistics))
    count_call (table, hint, bytes);
  return hint;
}

/* The hint for an allocation of BYTES by TABLE's call whose allocating
   function's frame is FRAME (allocating_frame): 0 (the default class),
   or the hint byte.  The common case, a context decided before and found
   in its first slot, is the walk, a hash and one load, with no call.  */
static inline __attribute__ ((always_inline)) unsigned char
context_hint_from (uint64_t *table, uintptr_t frame, uintptr_t limit,
                   size_t bytes)
{
  uint64_t hash = 0;
  unsigned hint = cached_hint (table, frame, limit, &hash);

  if (LIKELY (hint != HINT_UNDECIDED))
    return (unsigned char) hint;
  return undecided_hint (table, frame, hash, bytes);
}

/* The same from the entry point's own frame, ENTRY_FRAME.  */
static inline __attribute__ ((always_inline)) unsigned char
context_hint (uint64_t *table, const void *entry_frame, size_t bytes)
{
  uintptr_t limit = thread_walk_limit ();

  return context_hint_from (table,
                            allocating_frame (*(const uintptr_t *) entry_frame,
                                              (uintptr_t) entry_frame, limit),
                            limit, bytes);
}

/* ---- Statistics (MEMPROF_HINT_STATS=1) ---- */

/* The distinct 4 KiB pages the blocks of hot contexts lay on during the
   run (a block counts the pages from its first byte to its last, at most
   HOT_PAGES_PER_BLOCK): a set of page numbers (plus 1, 0 is an empty
   slot) in an open-addressed table mapped at the first hot block, filled
   to half at most.  Only the context-classified malloc and realloc count
   them (the calls of an allocator wrapper).  */
#define PAGE_SHIFT 12
#define HOT_PAGE_SLOT_BITS 20
#define HOT_PAGE_SLOTS ((size_t) 1 << HOT_PAGE_SLOT_BITS)
#define HOT_PAGES_PER_BLOCK 256
static uintptr_t *hot_pages;
/* The bytes of default-class contexts whose blocks lay in a hinted
   arena's range (a hinted block reused after jemalloc's own free).  */
static _Atomic uint64_t default_bytes_hinted_ranges;
static size_t hot_page_count;
static bool hot_pages_full;
static pthread_mutex_t hot_pages_lock = PTHREAD_MUTEX_INITIALIZER;

static void
add_hot_page (uintptr_t page)
{
  size_t slot
      = (size_t) ((page * 0x9e3779b97f4a7c15ull) >> (64 - HOT_PAGE_SLOT_BITS));

  while (hot_pages[slot] != 0 && hot_pages[slot] != page)
    slot = (slot + 1) & (HOT_PAGE_SLOTS - 1);
  if (hot_pages[slot] != 0)
    return;
  if (hot_page_count >= HOT_PAGE_SLOTS / 2)
    {
      hot_pages_full = true;
      return;
    }
  hot_pages[slot] = page;
  hot_page_count++;
}

static void
count_hot_pages (const void *block, size_t size)
{
  uintptr_t first = ((uintptr_t) block >> PAGE_SHIFT) + 1;
  uintptr_t last
      = (((uintptr_t) block + (size ? size : 1) - 1) >> PAGE_SHIFT) + 1;

  if (last - first >= HOT_PAGES_PER_BLOCK)
    last = first + HOT_PAGES_PER_BLOCK - 1;
  pthread_mutex_lock (&hot_pages_lock);
  if (hot_pages == NULL)
    {
      void *table = mmap (NULL, HOT_PAGE_SLOTS * sizeof *hot_pages,
                          PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
      hot_pages = table != MAP_FAILED ? table : NULL;
    }
  if (hot_pages != NULL)
    for (uintptr_t page = first; page <= last; page++)
      add_hot_page (page);
  pthread_mutex_unlock (&hot_pages_lock);
}

static void
print_statistics (void)
{
  static const char *const classes[3] = { "default", "cold", "hot" };
  uint64_t *table = used_tables;

  while (table != NULL && table != (uint64_t *) 1)
    {
      char line[512];
      uint64_t bytes = 0;
      int length;

      for (unsigned c = 0; c < 3; c++)
        bytes += table[MEMPROF_CONTEXT_WORD_BYTES + c];
      length = snprintf (
          line, sizeof line, "libmemprof_hint: context-classified call %s:",
          (const char *) (uintptr_t) table[MEMPROF_CONTEXT_WORD_NAME]);
      for (unsigned c = 0; c < 3 && length < (int) sizeof line; c++)
        length += snprintf (
            line + length, sizeof line - length,
            " %s %llu calls %llu bytes (%.1f%% of bytes)%s", classes[c],
            (unsigned long long) table[MEMPROF_CONTEXT_WORD_CALLS + c],
            (unsigned long long) table[MEMPROF_CONTEXT_WORD_BYTES + c],
            bytes ? 100.0 * (double) table[MEMPROF_CONTEXT_WORD_BYTES + c]
                        / (double) bytes
                  : 0.0,
            c < 2 ? "," : "\n");
      if (length > (int) sizeof line)
        length = sizeof line;
      if (write (statistics_fd, line, length) < 0)
        return;
      table = (uint64_t *) (uintptr_t) table[MEMPROF_CONTEXT_WORD_NEXT];
    }
  if (used_tables != NULL)
    {
      char line[256];
      int length = snprintf (
          line, sizeof line,
          "libmemprof_hint: hot contexts' blocks lay on %s%zu pages of 4 "
          "KiB (%s); default contexts' blocks in the hinted arenas: %llu "
          "bytes\n",
          hot_pages_full ? "more than " : "", hot_page_count,
          unplaced ? "unplaced: jemalloc's default arenas"
                   : "placed in the hot arena",
          (unsigned long long) default_bytes_hinted_ranges);
      if (length > 0 && length < (int) sizeof line
          && write (statistics_fd, line, length) < 0)
        return;
    }
}

__attribute__ ((constructor)) static void
context_initialize (void)
{
  const char *value = getenv ("MEMPROF_HINT_STATS");

  const char *debug = getenv ("MEMPROF_HINT_DEBUG");

  unplaced = value != NULL && strcmp (value, "unplaced") == 0;
  statistics = value != NULL && (strcmp (value, "1") == 0 || unplaced);
  debugging = debug != NULL && strcmp (debug, "1") == 0;
  if (statistics || debugging)
    {
      int copy = fcntl (STDERR_FILENO, F_DUPFD_CLOEXEC, 3);

      if (copy >= 0)
        statistics_fd = copy;
    }
  if (statistics)
    atexit (print_statistics);
}

/* ---- The entry points ---- */

/* The unhinted function for the default class and whenever
   hint_forwarding: by a tail call, so that a profiler sees the
   program's call site.  */

/* __memprof_hint_malloc's work, without its call through the PLT:
   malloc is the call that matters for speed.  Out of line, so that the
   entry points reach it by a tail call.  */
static void *__attribute__ ((noinline))
context_allocate_hinted_refill (size_t size, unsigned char hint)
{
  void *pointer = hint_allocate_cached (size, hint);

  if (UNLIKELY (pointer == NULL))
    errno = ENOMEM;
  return pointer;
}

/* The same, the common case (a block in the bin) with no register saved:
   the rest tail-called.  */
static void *__attribute__ ((noinline))
context_allocate_hinted (size_t size, unsigned char hint)
{
  void *block = hint_cache_pop (size, hint);

  if (LIKELY (block != NULL))
    return block;
  return context_allocate_hinted_refill (size, hint);
}

/* What the context-classified malloc (MALLOC_CALL, POINTER NULL) and
   realloc do for a context of HINT (malloc_call is a constant wherever
   it matters: the entry points are two instances of one body).  */
static inline void *
context_allocate_as (bool malloc_call, void *pointer, size_t size,
                     unsigned char hint)
{
  /* realloc (NULL, SIZE) is malloc (SIZE): jemalloc's own, directly,
     where the range test of hint_realloc_default and jemalloc's realloc
     would each have passed it on.  */
  if (hint == 0)
    return malloc_call || pointer == NULL
               ? malloc (size)
               : hint_realloc_default (pointer, size);
  if (pointer == NULL)
    /* A new block (an interpreter's allocator reallocates NULL too).  */
    return context_allocate_hinted (size, hint);
  return hint_internal_realloc (pointer, size, hint);
}

/* The slow paths of the two, tail-called: a hint not in its first slot
   (or statistics counted; FRAME is the allocating function's, HASH the
   walk's), or the first call of the process or of the thread (the mode
   or the walk's limit not known yet; NEXT is the word the entry point's
   frame at ENTRY links to).  */
/* With MEMPROF_HINT_STATS: allocated for HINT (as the default class
   when unplaced), the pages of a hot context's block counted.  */
static void *__attribute__ ((noinline, cold))
context_allocate_counted (bool malloc_call, void *pointer, size_t size,
                          unsigned char hint)
{
  void *block
      = context_allocate_as (malloc_call, pointer, size, unplaced ? 0 : hint);

  if (block != NULL && hint >= MEMPROF_HINT_HOT_MIN)
    count_hot_pages (block, size);
  else if (block != NULL && hint == 0
           && (uintptr_t) block - hint_range_base < hint_range_bytes)
    atomic_fetch_add_explicit (&default_bytes_hinted_ranges, size,
                               memory_order_relaxed);
  return block;
}

static void *__attribute__ ((noinline))
context_allocate_undecided (bool malloc_call, void *pointer, size_t size,
                            uint64_t *table, uintptr_t frame, uint64_t hash)
{
  unsigned char hint = undecided_hint (table, frame, hash, size);

  if (UNLIKELY (statistics))
    return context_allocate_counted (malloc_call, pointer, size, hint);
  return context_allocate_as (malloc_call, pointer, size, hint);
}

static void *__attribute__ ((noinline, cold))
context_allocate_first (bool malloc_call, void *pointer, size_t size,
                        uint64_t *table, uintptr_t next, uintptr_t entry)
{
  uintptr_t limit;
  unsigned char hint;

  if (hint_forwarding ())
    return malloc_call ? malloc (size) : realloc (pointer, size);
  limit = thread_walk_limit ();
  hint = context_hint_from (table, allocating_frame (next, entry, limit), limit,
                            size);
  if (UNLIKELY (statistics))
    return context_allocate_counted (malloc_call, pointer, size, hint);
  return context_allocate_as (malloc_call, pointer, size, hint);
}

/* malloc and realloc, the calls that matter for speed (an interpreter
   allocates through one realloc), decide without a call when the hint
   is cached and then only tail-call: few registers are saved.  ENTRY is
   the entry point's frame.  */
static inline __attribute__ ((always_inline)) void *
context_allocate (bool malloc_call, void *pointer, size_t size, uint64_t *table,
                  const uintptr_t *entry)
{
  uintptr_t limit = walk_limit, frame;
  uint64_t hash = 0;
  unsigned hint;

  /* A thread learns its walk's limit only in HINT_MODE_ARENAS (every
     caller of thread_walk_limit has tested the mode, decided once and
     for all, before): a limit known is the mode known.  */
  if (UNLIKELY (limit == 0))
    {
      if (atomic_load_explicit (&hint_mode, memory_order_relaxed)
          == HINT_MODE_FORWARD)
        return malloc_call ? malloc (size) : realloc (pointer, size);
      return context_allocate_first (malloc_call, pointer, size, table,
                                     entry[0], (uintptr_t) entry);
    }
  frame = allocating_frame (entry[0], (uintptr_t) entry, limit);
  hint = cached_hint (table, frame, limit, &hash);
  if (UNLIKELY (hint == HINT_UNDECIDED))
    return context_allocate_undecided (malloc_call, pointer, size, table, frame,
                                       hash);
  return context_allocate_as (malloc_call, pointer, size, (unsigned char) hint);
}

HINT_EXPORT void *
__memprof_hint_context_malloc (size_t size, uint64_t *table)
{
  return context_allocate (true, NULL, size, table,
                           __builtin_frame_address (0));
}

HINT_EXPORT void *
__memprof_hint_context_calloc (size_t count, size_t size, uint64_t *table)
{
  unsigned char hint;

  if (UNLIKELY (hint_forwarding ()))
    return calloc (count, size);
  hint = context_hint (table, __builtin_frame_address (0), count * size);
  if (hint == 0)
    return calloc (count, size);
  return hint_internal_calloc (count, size, hint);
}

HINT_EXPORT void *
__memprof_hint_context_realloc (void *pointer, size_t size, uint64_t *table)
{
  return context_allocate (false, pointer, size, table,
                           __builtin_frame_address (0));
}

HINT_EXPORT void *
__memprof_hint_context_aligned_alloc (size_t alignment, size_t size,
                                      uint64_t *table)
{
  unsigned char hint;

  if (UNLIKELY (hint_forwarding ()))
    return aligned_alloc (alignment, size);
  hint = context_hint (table, __builtin_frame_address (0), size);
  if (hint == 0)
    return aligned_alloc (alignment, size);
  return hint_internal_aligned_alloc (alignment, size, hint);
}

HINT_EXPORT int
__memprof_hint_context_posix_memalign (void **result, size_t alignment,
                                       size_t size, uint64_t *table)
{
  unsigned char hint;

  if (UNLIKELY (hint_forwarding ()))
    return posix_memalign (result, alignment, size);
  hint = context_hint (table, __builtin_frame_address (0), size);
  if (hint == 0)
    return posix_memalign (result, alignment, size);
  return hint_internal_posix_memalign (result, alignment, size, hint);
}

HINT_EXPORT void *
__memprof_hint_context_memalign (size_t alignment, size_t size, uint64_t *table)
{
  unsigned char hint;

  if (UNLIKELY (hint_forwarding ()))
    return memalign (alignment, size);
  hint = context_hint (table, __builtin_frame_address (0), size);
  if (hint == 0)
    return memalign (alignment, size);
  return hint_internal_memalign (alignment, size, hint);
}

HINT_EXPORT char *
__memprof_hint_context_strdup (const char *string, uint64_t *table)
{
  unsigned char hint;

  if (UNLIKELY (hint_forwarding ()))
    return strdup (string);
  hint = context_hint (table, __builtin_frame_address (0), strlen (string) + 1);
  if (hint == 0)
    return strdup (string);
  return hint_internal_strdup (string, hint);
}

HINT_EXPORT char *
__memprof_hint_context_strndup (const char *string, size_t limit,
                                uint64_t *table)
{
  unsigned char hint;

  if (UNLIKELY (hint_forwarding ()))
    return strndup (string, limit);
  hint = context_hint (table, __builtin_frame_address (0),
                       strnlen (string, limit) + 1);
  if (hint == 0)
    return strndup (string, limit);
  return hint_internal_strndup (string, limit, hint);
}
