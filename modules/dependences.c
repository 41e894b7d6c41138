/* dependences: a memory dependence profiler, LAMP-style (Mason Chen et
   al., "LAMP: loop-aware memory profiling"), as a GCC MemProf module
   (docs/modules.md).

   For every loop, the store-to-load dependences the run showed, by pair
   of instructions, with counts:
     - loop-carried: the load reads a value a store wrote in an earlier
       iteration of the same invocation of the loop;
     - intra-iteration: the store was in the same iteration.
   A pair is charged to the outermost loop where the iterations differ
   (carried), and as intra-iteration to every loop outside it whose
   iteration they share; loops entered after the store see nothing.  The
   input of speculative parallelization: a loop without carried
   dependences is a DOALL candidate on this input.

   How: each thread counts its events (its time).  Each loop on the
   thread's loop stack remembers when its invocation and its current
   iteration began; each 4-byte word of memory remembers the last store to
   it: the store's instruction, thread and time, in shadow memory (24
   bytes per word, in chunks made for the 64 KiB the program touches).  A load compares the
   store's time with the loops' times, outermost first.  A free forgets
   the block's words, so reused memory makes no false dependence.

   Events: load, store (-fplugin-arg-memprof-events=@dependences.events),
   loop; allocation from the runtime.  Arguments (module_args): out=FILE
   (default memprof-dependences.txt).  Limits: LOOP_DEPTH_MAX nested loops
   per thread (deeper ones are ignored), THREADS_MAX threads (the others
   share the last slot), accesses (memcpy) over RANGE_WORDS_MAX words are
   left out; a dependence across threads is not one.

   Build: gcc -shared -fPIC -O2 $(pkg-config --cflags memprof) \
            -o dependences.so modules/dependences.c  */

#include <memprof/module.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOOP_DEPTH_MAX 64
#define THREADS_MAX 64
#define RANGE_WORDS_MAX 4096
#define WORD_SHIFT 2
#define CHUNK_SHIFT 16
#define CHUNK_WORDS ((size_t) 1 << (CHUNK_SHIFT - WORD_SHIFT))

struct loop_frame
{
  uint64_t site;
  uint64_t invocation_start; /* thread time of the loop's entry */
  uint64_t iteration_start;  /* of its current iteration */
};

struct thread_state
{
  uint64_t time;
  int depth; /* may exceed LOOP_DEPTH_MAX: the deeper loops are ignored */
  struct loop_frame loops[LOOP_DEPTH_MAX];
};

/* ---- Hash tables: open addressing, keys never 0, doubling at 1/2 ---- */

/* The last store to a word of memory (site 0: none).  */
struct last_store
{
  uint64_t site;
  uint64_t time;
  uint32_t thread;
};

/* Shadow memory: the words of 1 << CHUNK_SHIFT bytes of the program's
   memory.  */
struct chunk
{
  uint64_t key; /* the chunk's number + 1; 0: empty */
  struct last_store *words;
};

struct dependence
{
  uint64_t loop, store, load; /* loop 0: empty */
  uint64_t count;
  int carried;
};

struct loop_totals
{
  uint64_t site; /* 0: empty */
  uint64_t invocations, iterations;
};

struct block
{
  uint64_t address; /* 0: empty */
  uint64_t size;
};

static struct thread_state threads[THREADS_MAX];
static struct chunk *chunks, *last_chunk;
static size_t chunks_capacity, chunks_used;
static struct dependence *dependences;
static size_t dependences_capacity, dependences_used;
static struct loop_totals *loops;
static size_t loops_capacity, loops_used;
static struct block *blocks;
static size_t blocks_capacity, blocks_used;
static char out_path[1024] = "memprof-dependences.txt";
static int out_of_memory;

static uint64_t
hash (uint64_t key)
{
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return key;
}

/* Make room for one more entry in TABLE (CAPACITY entries of SIZE bytes,
   USED of them taken), moving the entries with REHASH.  */
static void *
grow (void *table, size_t *capacity, size_t used, size_t size,
      void (*rehash) (void *fresh, size_t capacity, const void *entry))
{
  if ((used + 1) * 2 <= *capacity)
    return table;
  size_t fresh_capacity = *capacity ? *capacity * 2 : 1024;
  char *fresh = calloc (fresh_capacity, size);
  if (fresh == NULL)
    {
      out_of_memory = 1;
      return table;
    }
  for (size_t i = 0; i < *capacity; i++)
    rehash (fresh, fresh_capacity, (char *) table + i * size);
  free (table);
  *capacity = fresh_capacity;
  return fresh;
}

static struct chunk *
chunk_slot (struct chunk *table, size_t capacity, uint64_t key)
{
  size_t i = hash (key) & (capacity - 1);
  while (table[i].key != 0 && table[i].key != key)
    i = (i + 1) & (capacity - 1);
  return &table[i];
}

static void
rehash_chunk (void *fresh, size_t capacity, const void *entry)
{
  const struct chunk *old = entry;
  if (old->key != 0)
    *chunk_slot (fresh, capacity, old->key) = *old;
}

/* The shadow of WORD, made when CREATE, else null when it has none.  The
   last chunk used is looked up first: most accesses stay in one.  */
static struct last_store *
shadow_of (uint64_t word, int create)
{
  uint64_t key = (word >> (CHUNK_SHIFT - WORD_SHIFT)) + 1;
  if (last_chunk == NULL || last_chunk->key != key)
    {
      if (create)
        {
          struct chunk *before = chunks;
          chunks = grow (chunks, &chunks_capacity, chunks_used, sizeof *chunks,
                         rehash_chunk);
          if (chunks != before)
            last_chunk = NULL;
        }
      if (chunks_capacity == 0)
        return NULL;
      struct chunk *chunk = chunk_slot (chunks, chunks_capacity, key);
      if (chunk->key == 0)
        {
          if (!create)
            return NULL;
          chunk->words = calloc (CHUNK_WORDS, sizeof *chunk->words);
          if (chunk->words == NULL)
            {
              out_of_memory = 1;
              return NULL;
            }
          chunk->key = key;
          chunks_used++;
        }
      last_chunk = chunk;
    }
  return &last_chunk->words[word & (CHUNK_WORDS - 1)];
}

static struct dependence *
dependence_slot (struct dependence *table, size_t capacity, uint64_t loop,
                 uint64_t store, uint64_t load, int carried)
{
  size_t i
      = hash (loop ^ hash (store ^ hash (load)) ^ carried) & (capacity - 1);
  while (table[i].loop != 0
         && !(table[i].loop == loop && table[i].store == store
              && table[i].load == load && table[i].carried == carried))
    i = (i + 1) & (capacity - 1);
  return &table[i];
}

static void
rehash_dependence (void *fresh, size_t capacity, const void *entry)
{
  const struct dependence *old = entry;
  if (old->loop != 0)
    *dependence_slot (fresh, capacity, old->loop, old->store, old->load,
                      old->carried)
        = *old;
}

static struct loop_totals *
loop_slot (struct loop_totals *table, size_t capacity, uint64_t site)
{
  size_t i = hash (site) & (capacity - 1);
  while (table[i].site != 0 && table[i].site != site)
    i = (i + 1) & (capacity - 1);
  return &table[i];
}

static void
rehash_loop (void *fresh, size_t capacity, const void *entry)
{
  const struct loop_totals *old = entry;
  if (old->site != 0)
    *loop_slot (fresh, capacity, old->site) = *old;
}

static struct block *
block_slot (struct block *table, size_t capacity, uint64_t address)
{
  size_t i = hash (address) & (capacity - 1);
  while (table[i].address != 0 && table[i].address != address)
    i = (i + 1) & (capacity - 1);
  return &table[i];
}

static void
rehash_block (void *fresh, size_t capacity, const void *entry)
{
  const struct block *old = entry;
  if (old->address != 0)
    *block_slot (fresh, capacity, old->address) = *old;
}

/* ---- The events ---- */

static struct loop_totals *
totals_of (uint64_t site)
{
  loops = grow (loops, &loops_capacity, loops_used, sizeof *loops, rehash_loop);
  if (loops_capacity == 0)
    return NULL;
  struct loop_totals *totals = loop_slot (loops, loops_capacity, site);
  if (totals->site == 0)
    {
      totals->site = site;
      loops_used++;
    }
  return totals;
}

static void
add_dependence (uint64_t loop, uint64_t store, uint64_t load, int carried)
{
  dependences = grow (dependences, &dependences_capacity, dependences_used,
                      sizeof *dependences, rehash_dependence);
  if (dependences_capacity == 0)
    return;
  struct dependence *d = dependence_slot (dependences, dependences_capacity,
                                          loop, store, load, carried);
  if (d->loop == 0)
    {
      *d = (struct dependence){ loop, store, load, 0, carried };
      dependences_used++;
    }
  d->count++;
}

static void
on_store (struct thread_state *t, uint32_t thread, uint64_t word, uint64_t site)
{
  struct last_store *s = shadow_of (word, 1);
  if (s != NULL)
    *s = (struct last_store){ site, t->time, thread };
}

static void
on_load (struct thread_state *t, uint32_t thread, uint64_t word, uint64_t site)
{
  struct last_store *s = shadow_of (word, 0);
  if (s == NULL || s->site == 0 || s->thread != thread)
    return;
  int depth = t->depth < LOOP_DEPTH_MAX ? t->depth : LOOP_DEPTH_MAX;
  for (int i = 0; i < depth; i++)
    {
      const struct loop_frame *loop = &t->loops[i];
      if (s->time < loop->invocation_start)
        return;
      if (s->time < loop->iteration_start)
        {
          add_dependence (loop->site, s->site, site, 1);
          return;
        }
      add_dependence (loop->site, s->site, site, 0);
    }
}

/* Forget the last stores to the words of the block at ADDRESS, and the
   block.  */
static void
forget_block (uint64_t address)
{
  if (blocks_capacity == 0)
    return;
  struct block *b = block_slot (blocks, blocks_capacity, address);
  if (b->address != address)
    return;
  uint64_t first = address >> WORD_SHIFT;
  uint64_t last = (address + b->size + (1 << WORD_SHIFT) - 1) >> WORD_SHIFT;
  for (uint64_t word = first; word < last; word++)
    {
      struct last_store *s = shadow_of (word, 0);
      if (s != NULL)
        s->site = 0;
    }
  /* Removing from open addressing: put back what follows.  */
  b->address = 0;
  blocks_used--;
  for (size_t i = ((size_t) (b - blocks) + 1) & (blocks_capacity - 1);
       blocks[i].address != 0; i = (i + 1) & (blocks_capacity - 1))
    {
      struct block moved = blocks[i];
      blocks[i].address = 0;
      *block_slot (blocks, blocks_capacity, moved.address) = moved;
    }
}

static void
handle_event (const struct memprof_event *e)
{
  uint32_t thread = e->thread < THREADS_MAX ? e->thread : THREADS_MAX - 1;
  struct thread_state *t = &threads[thread];
  t->time++;
  switch (e->kind)
    {
    case MEMPROF_EVENT_LOAD:
    case MEMPROF_EVENT_STORE:
      {
        uint64_t first = e->address >> WORD_SHIFT;
        uint64_t last
            = (e->address + (e->size ? e->size : 1) + (1 << WORD_SHIFT) - 1)
              >> WORD_SHIFT;
        if (last - first > RANGE_WORDS_MAX)
          return;
        for (uint64_t word = first; word < last; word++)
          if (e->kind == MEMPROF_EVENT_LOAD)
            on_load (t, e->thread, word, e->site);
          else
            on_store (t, e->thread, word, e->site);
        return;
      }
    case MEMPROF_EVENT_ALLOC:
      blocks = grow (blocks, &blocks_capacity, blocks_used, sizeof *blocks,
                     rehash_block);
      if (blocks_capacity != 0)
        {
          struct block *b = block_slot (blocks, blocks_capacity, e->address);
          if (b->address != e->address)
            blocks_used++;
          *b = (struct block){ e->address, e->size };
        }
      return;
    case MEMPROF_EVENT_FREE:
      forget_block (e->address);
      return;
    case MEMPROF_EVENT_LOOP_ENTRY:
      if (t->depth < LOOP_DEPTH_MAX)
        {
          t->loops[t->depth] = (struct loop_frame){ e->site, t->time, t->time };
          struct loop_totals *totals = totals_of (e->site);
          if (totals)
            totals->invocations++;
        }
      t->depth++;
      return;
    case MEMPROF_EVENT_LOOP_ITERATION:
      {
        /* The innermost frame of this loop (a missed exit, by longjmp or
           an exception, is repaired here).  */
        int i = (t->depth < LOOP_DEPTH_MAX ? t->depth : LOOP_DEPTH_MAX) - 1;
        while (i >= 0 && t->loops[i].site != e->site)
          i--;
        if (i < 0)
          return;
        t->depth = i + 1;
        t->loops[i].iteration_start = t->time;
        struct loop_totals *totals = totals_of (e->site);
        if (totals)
          totals->iterations++;
        return;
      }
    case MEMPROF_EVENT_LOOP_EXIT:
      {
        int i = (t->depth < LOOP_DEPTH_MAX ? t->depth : LOOP_DEPTH_MAX) - 1;
        if (t->depth > LOOP_DEPTH_MAX)
          {
            t->depth--;
            return;
          }
        while (i >= 0 && t->loops[i].site != e->site)
          i--;
        if (i >= 0)
          t->depth = i;
        return;
      }
    default:
      return;
    }
}

/* ---- The module ---- */

static int
dependences_init (const char *arguments)
{
  const char *out = strstr (arguments, "out=");
  if (out != NULL)
    snprintf (out_path, sizeof out_path, "%.*s", (int) strcspn (out + 4, ","),
              out + 4);
  return 0;
}

static void
dependences_handle (const struct memprof_event *events, size_t count)
{
  for (size_t i = 0; i < count; i++)
    handle_event (&events[i]);
}

static void
print_site (FILE *out, uint64_t id)
{
  const struct memprof_site *site = memprof_site_of (id);
  fprintf (out, "%s %s:%u:%u", site->function, site->file, site->line,
           site->column);
}

static int
by_loop_then_count (const void *a, const void *b)
{
  const struct dependence *x = a, *y = b;
  if (x->loop != y->loop)
    return x->loop < y->loop ? -1 : 1;
  if (x->count != y->count)
    return x->count > y->count ? -1 : 1;
  return 0;
}

static void
dependences_finish (void)
{
  FILE *out = fopen (out_path, "w");
  size_t n = 0;
  if (out == NULL)
    return;
  for (size_t i = 0; i < dependences_capacity; i++)
    if (dependences[i].loop != 0)
      dependences[n++] = dependences[i];
  qsort (dependences, n, sizeof *dependences, by_loop_then_count);

  fprintf (out, "memprof-module\tdependences\n");
  fprintf (out, "table\tloops\nloop\tinvocations\titerations\n");
  for (size_t i = 0; i < loops_capacity; i++)
    if (loops[i].site != 0)
      {
        print_site (out, loops[i].site);
        fprintf (out, "\t%llu\t%llu\n",
                 (unsigned long long) loops[i].invocations,
                 (unsigned long long) loops[i].iterations);
      }
  fprintf (out, "table\tdependences\nloop\tkind\tstore\tload\tcount\n");
  for (size_t i = 0; i < n; i++)
    {
      print_site (out, dependences[i].loop);
      fprintf (out, "\t%s\t",
               dependences[i].carried ? "loop-carried" : "intra-iteration");
      print_site (out, dependences[i].store);
      fputc ('\t', out);
      print_site (out, dependences[i].load);
      fprintf (out, "\t%llu\n", (unsigned long long) dependences[i].count);
    }
  if (out_of_memory)
    fprintf (out, "table\tnotes\nnote\nout of memory: some events were "
                  "left out\n");
  fclose (out);
}

const struct memprof_module memprof_module = {
  MEMPROF_MODULE_ABI_VERSION,
  MEMPROF_EVENTS_MEMORY | MEMPROF_EVENTS_LOOP | MEMPROF_EVENTS_ALLOCATION,
  "dependences",
  dependences_init,
  dependences_handle,
  dependences_finish,
};
