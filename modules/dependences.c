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
   bytes per word: the shadow memory of <memprof/module_kit.h>).  A load
   compares the store's time with the loops' times, outermost first.  A free forgets
   the block's words, so reused memory makes no false dependence.

   Events: load, store (-fplugin-arg-memprof-events=@dependences.events),
   loop; allocation from the runtime.  Arguments (module_args): out=FILE
   (default memprof-dependences.txt).  Limits: LOOP_DEPTH_MAX nested loops
   per thread (deeper ones are ignored), THREADS_MAX threads (the others
   share the last slot), accesses (memcpy) over RANGE_WORDS_MAX words are
   left out; a dependence across threads is not one.

   Build: gcc -shared -fPIC -O2 $(pkg-config --cflags memprof) \
            -o dependences.so modules/dependences.c  */

#include "common.h"

#define LOOP_DEPTH_MAX 64
#define THREADS_MAX 64
#define RANGE_WORDS_MAX 4096
#define WORD_SHIFT 2
/* The workers' granules: 4 KiB, whole words.  */
#define PARTITION_SHIFT 12

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

/* A pair's key is a 64-bit hash of the loop, the store, the load and
   the kind (dependence_key): two pairs share one with a probability of
   2^-64 per pair of pairs.  */
struct dependence
{
  uint64_t key; /* 0: empty */
  uint64_t loop, store, load;
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

/* What one worker knows: the events of its addresses (granules of
   1 << PARTITION_SHIFT bytes), the loops and the blocks.  */
struct state
{
  unsigned worker, workers;
  struct thread_state threads[THREADS_MAX];
  struct memprof_shadow shadow; /* a struct last_store per word */
  struct dependence *dependences;
  size_t dependences_capacity, dependences_used;
  struct loop_totals *loops;
  size_t loops_capacity, loops_used;
  struct block *blocks;
  size_t blocks_capacity, blocks_used;
};

/* The merged state finish writes.  */
static struct state *merged;
static char out_path[1024] = "memprof-dependences.txt";

MEMPROF_TABLE (dependence, struct dependence, key)
MEMPROF_TABLE (loop, struct loop_totals, site)
MEMPROF_TABLE (block, struct block, address)

static uint64_t
dependence_key (uint64_t loop, uint64_t store, uint64_t load, int carried)
{
  uint64_t key = memprof_hash (
      loop ^ memprof_hash (store ^ memprof_hash (load ^ (uint64_t) carried)));
  return key ? key : 1;
}

/* ---- The events ---- */

static struct loop_totals *
totals_of (struct state *S, uint64_t site)
{
  if (!loop_reserve (&S->loops, &S->loops_capacity, S->loops_used))
    return NULL;
  struct loop_totals *totals = loop_slot (S->loops, S->loops_capacity, site);
  if (totals->site == 0)
    {
      totals->site = site;
      S->loops_used++;
    }
  return totals;
}

static void
add_dependence (struct state *S, uint64_t loop, uint64_t store, uint64_t load,
                int carried)
{
  uint64_t key = dependence_key (loop, store, load, carried);
  if (!dependence_reserve (&S->dependences, &S->dependences_capacity,
                           S->dependences_used))
    return;
  struct dependence *d
      = dependence_slot (S->dependences, S->dependences_capacity, key);
  if (d->key == 0)
    {
      *d = (struct dependence){ key, loop, store, load, 0, carried };
      S->dependences_used++;
    }
  d->count++;
}

static void
on_store (struct state *S, struct thread_state *t, uint32_t thread,
          uint64_t word, uint64_t site)
{
  struct last_store *s
      = memprof_shadow_at (&S->shadow, word << WORD_SHIFT, true);
  if (s != NULL)
    *s = (struct last_store){ site, t->time, thread };
}

static void
on_load (struct state *S, struct thread_state *t, uint32_t thread,
         uint64_t word, uint64_t site)
{
  struct last_store *s
      = memprof_shadow_at (&S->shadow, word << WORD_SHIFT, false);
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
          add_dependence (S, loop->site, s->site, site, 1);
          return;
        }
      add_dependence (S, loop->site, s->site, site, 0);
    }
}

/* Forget the last stores to the words of the block at ADDRESS, and the
   block.  */
static void
forget_block (struct state *S, uint64_t address)
{
  if (S->blocks_capacity == 0)
    return;
  struct block *b = block_slot (S->blocks, S->blocks_capacity, address);
  if (b->address != address)
    return;
  uint64_t first = address >> WORD_SHIFT;
  uint64_t last = (address + b->size + (1 << WORD_SHIFT) - 1) >> WORD_SHIFT;
  for (uint64_t word = first; word < last; word++)
    {
      struct last_store *s
          = memprof_shadow_at (&S->shadow, word << WORD_SHIFT, false);
      if (s != NULL)
        s->site = 0;
    }
  block_remove (S->blocks, S->blocks_capacity, b);
  S->blocks_used--;
}

static void
handle_event (struct state *S, const struct memprof_event *e)
{
  uint32_t thread = e->thread < THREADS_MAX ? e->thread : THREADS_MAX - 1;
  struct thread_state *t = &S->threads[thread];
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
          if (!memprof_worker_owns (word << WORD_SHIFT, PARTITION_SHIFT,
                                    S->worker, S->workers))
            continue;
          else if (e->kind == MEMPROF_EVENT_LOAD)
            on_load (S, t, e->thread, word, e->site);
          else
            on_store (S, t, e->thread, word, e->site);
        return;
      }
    case MEMPROF_EVENT_ALLOC:
      if (block_reserve (&S->blocks, &S->blocks_capacity, S->blocks_used))
        {
          struct block *b
              = block_slot (S->blocks, S->blocks_capacity, e->address);
          if (b->address != e->address)
            S->blocks_used++;
          *b = (struct block){ e->address, e->size };
        }
      return;
    case MEMPROF_EVENT_FREE:
      forget_block (S, e->address);
      return;
    case MEMPROF_EVENT_LOOP_ENTRY:
      if (t->depth < LOOP_DEPTH_MAX)
        {
          t->loops[t->depth] = (struct loop_frame){ e->site, t->time, t->time };
          struct loop_totals *totals = totals_of (S, e->site);
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
        struct loop_totals *totals = totals_of (S, e->site);
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
  module_argument (arguments, "out", out_path, sizeof out_path);
  return 0;
}

static void *
dependences_worker_start (unsigned worker, unsigned workers)
{
  struct state *S = calloc (1, sizeof *S);
  if (S != NULL)
    {
      S->worker = worker;
      S->workers = workers;
      S->shadow = MEMPROF_SHADOW_INIT (WORD_SHIFT, sizeof (struct last_store));
    }
  return S;
}

static void
dependences_worker_handle (void *state, const struct memprof_event *events,
                           size_t count)
{
  struct state *S = state;
  if (S == NULL)
    return;
  for (size_t i = 0; i < count; i++)
    handle_event (S, &events[i]);
}

/* Every worker saw every loop event: the loops are worker 0's; the
   dependences of disjoint addresses add up.  */
static void
dependences_merge (void *const *states, unsigned workers)
{
  struct state *S = states[0];
  merged = S;
  for (unsigned w = 1; S != NULL && w < workers; w++)
    {
      const struct state *other = states[w];
      for (size_t i = 0; other != NULL && i < other->dependences_capacity; i++)
        {
          const struct dependence *d = &other->dependences[i];
          if (d->key == 0
              || !dependence_reserve (&S->dependences, &S->dependences_capacity,
                                      S->dependences_used))
            continue;
          struct dependence *into = dependence_slot (
              S->dependences, S->dependences_capacity, d->key);
          if (into->key == 0)
            {
              *into = *d;
              S->dependences_used++;
            }
          else
            into->count += d->count;
        }
    }
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
  struct state *S = merged;
  FILE *out;
  size_t n = 0;
  if (S == NULL || (out = fopen (out_path, "w")) == NULL)
    return;
  for (size_t i = 0; i < S->dependences_capacity; i++)
    if (S->dependences[i].key != 0)
      S->dependences[n++] = S->dependences[i];
  qsort (S->dependences, n, sizeof *S->dependences, by_loop_then_count);

  fprintf (out, "memprof-module\tdependences\n");
  fprintf (out, "table\tloops\nloop\tinvocations\titerations\n");
  for (size_t i = 0; i < S->loops_capacity; i++)
    if (S->loops[i].site != 0)
      {
        module_print_site (out, S->loops[i].site);
        fprintf (out, "\t%llu\t%llu\n",
                 (unsigned long long) S->loops[i].invocations,
                 (unsigned long long) S->loops[i].iterations);
      }
  fprintf (out, "table\tdependences\nloop\tkind\tstore\tload\tcount\n");
  for (size_t i = 0; i < n; i++)
    {
      module_print_site (out, S->dependences[i].loop);
      fprintf (out, "\t%s\t",
               S->dependences[i].carried ? "loop-carried" : "intra-iteration");
      module_print_site (out, S->dependences[i].store);
      fputc ('\t', out);
      module_print_site (out, S->dependences[i].load);
      fprintf (out, "\t%llu\n", (unsigned long long) S->dependences[i].count);
    }
  module_print_notes (out);
  fclose (out);
}

/* What the plugin instruments for it:
   -fplugin-arg-memprof-events=@dependences.so reads this (or name dependences.events).  */
MEMPROF_MODULE_EVENTS ("load store loop allocation");

const struct memprof_module memprof_module = {
  MEMPROF_MODULE_ABI_VERSION,
  MEMPROF_EVENTS_MEMORY | MEMPROF_EVENTS_LOOP | MEMPROF_EVENTS_ALLOCATION,
  "dependences",
  dependences_init,
  NULL,
  dependences_finish,
  .workers = 1,
  .partition_shift = PARTITION_SHIFT,
  .worker_start = dependences_worker_start,
  .worker_handle = dependences_worker_handle,
  .merge = dependences_merge,
};
