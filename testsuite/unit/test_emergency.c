/* The reserve (emergency.c) and the malloc family's calls made inside a
   section (allocator.c): blocks of every size and alignment, reused
   after their frees, taken and freed by several threads at once; a
   malloc, calloc and realloc inside a section get the reserve's blocks,
   which free, realloc and malloc_usable_size know outside it and from
   another thread; a free of glibc's block inside a section waits for
   the section's end.  */

#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "unit.h"

extern void *__libc_malloc (size_t);

#define THREADS 4
#define ROUNDS 20000
#define HELD 16

/* A block of the reserve has a header before it: the word before the
   user pointer has the header's tag (a glibc chunk's size field never
   has it), and the block is 64-byte aligned.  */
static bool
looks_like_reserve_block (const void *pointer)
{
  return ((uintptr_t) pointer & 63) == 0
         && (((const uint64_t *) pointer)[-1] & MEMPROF_HEADER_TAG) != 0;
}

START_TEST (test_sizes_and_alignments)
{
  static const size_t sizes[]
      = { 0, 1, 24, 64, 100, 1000, 4000, 60000, 70000, 1 << 20 };
  static const size_t alignments[] = { 16, 64, 128, 4096, 65536 };
  for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
    for (size_t a = 0; a < sizeof alignments / sizeof alignments[0]; a++)
      {
        size_t size = sizes[s], alignment = alignments[a];
        unsigned char *block = emergency_allocate (size, alignment);
        ck_assert_ptr_nonnull (block);
        ck_assert_msg (((uintptr_t) block & (alignment - 1)) == 0
                           && ((uintptr_t) block & 63) == 0,
                       "%zu bytes aligned to %zu at %p", size, alignment,
                       (void *) block);
        /* The caller's room and every byte asked for are writable.  */
        memset (block - EMERGENCY_ROOM, 0xa5, EMERGENCY_ROOM);
        memset (block, 0x5a, size);
        emergency_free (block);
      }
}
END_TEST

START_TEST (test_freed_spans_reused)
{
  void *first[8], *again[8];
  for (int i = 0; i < 8; i++)
    first[i] = emergency_allocate (200, 64);
  for (int i = 0; i < 8; i++)
    emergency_free (first[i]);
  /* Last freed, first taken.  */
  for (int i = 0; i < 8; i++)
    again[i] = emergency_allocate (200, 64);
  for (int i = 0; i < 8; i++)
    ck_assert_ptr_eq (again[i], first[7 - i]);
  for (int i = 0; i < 8; i++)
    emergency_free (again[i]);
}
END_TEST

/* Blocks one thread takes, another frees: each thread's blocks carry its
   mark, checked before the free, so a span handed out twice shows.  */
static void *_Atomic handed[THREADS];

static void *
hammer_reserve (void *argument)
{
  unsigned mark = (unsigned) (uintptr_t) argument;
  unsigned char *held[HELD] = { 0 };
  size_t held_size[HELD] = { 0 };
  unsigned long bad = 0;
  uint64_t random = 0x9e3779b97f4a7c15ULL * (mark + 1);
  for (unsigned round = 0; round < ROUNDS; round++)
    {
      random ^= random << 13;
      random ^= random >> 7;
      random ^= random << 17;
      unsigned slot = (unsigned) (random % HELD);
      if (held[slot] != NULL)
        {
          for (size_t k = 0; k < held_size[slot]; k++)
            bad += held[slot][k] != (unsigned char) mark;
          emergency_free (held[slot]);
        }
      held_size[slot] = 1 + (size_t) (random >> 20) % 3000;
      held[slot] = emergency_allocate (held_size[slot], 64);
      ck_assert_ptr_nonnull (held[slot]);
      memset (held[slot], (int) mark, held_size[slot]);
      /* A block of another thread's, freed here.  */
      void *theirs = atomic_exchange (&handed[(mark + 1) % THREADS], NULL);
      if (theirs != NULL)
        emergency_free (theirs);
      void *mine = emergency_allocate (100, 64);
      void *left = atomic_exchange (&handed[mark], mine);
      if (left != NULL)
        emergency_free (left);
    }
  for (unsigned slot = 0; slot < HELD; slot++)
    if (held[slot] != NULL)
      emergency_free (held[slot]);
  return (void *) bad;
}

START_TEST (test_threads_take_and_free)
{
  pthread_t threads[THREADS];
  for (unsigned i = 0; i < THREADS; i++)
    pthread_create (&threads[i], NULL, hammer_reserve, (void *) (uintptr_t) i);
  unsigned long bad = 0;
  for (unsigned i = 0; i < THREADS; i++)
    {
      void *result;
      pthread_join (threads[i], &result);
      bad += (unsigned long) (uintptr_t) result;
    }
  for (unsigned i = 0; i < THREADS; i++)
    {
      void *left = atomic_exchange (&handed[i], NULL);
      if (left != NULL)
        emergency_free (left);
    }
  ck_assert_msg (bad == 0,
                 "%lu bytes of live blocks changed by another "
                 "thread",
                 bad);
}
END_TEST

static void *
free_elsewhere (void *block)
{
  free (block);
  return NULL;
}

START_TEST (test_calls_inside_a_section)
{
  ck_assert (entry_begin ());
  unsigned char *plain = malloc (40);
  unsigned char *zeroed = calloc (10, 30);
  unsigned char *grown = realloc (NULL, 50);
  unsigned char *aligned = aligned_alloc (256, 512);
  entry_end ();
  ck_assert_ptr_nonnull (plain);
  ck_assert_ptr_nonnull (zeroed);
  ck_assert_ptr_nonnull (grown);
  ck_assert_ptr_nonnull (aligned);
  ck_assert_msg (looks_like_reserve_block (plain)
                     && looks_like_reserve_block (zeroed)
                     && looks_like_reserve_block (grown)
                     && looks_like_reserve_block (aligned),
                 "malloc, calloc, realloc and aligned_alloc inside a section "
                 "are the reserve's blocks, not glibc's");
  ck_assert (((uintptr_t) aligned & 255) == 0);
  for (int i = 0; i < 300; i++)
    ck_assert (zeroed[i] == 0);
  ck_assert_uint_eq (malloc_usable_size (plain), 40);
  ck_assert_uint_eq (malloc_usable_size (zeroed), 300);
  /* Outside the section: resized (its bytes kept), measured, freed.  */
  memset (grown, 7, 50);
  grown = realloc (grown, 100000);
  ck_assert_ptr_nonnull (grown);
  for (int i = 0; i < 50; i++)
    ck_assert (grown[i] == 7);
  free (grown);
  free (aligned);
  /* By another thread.  */
  pthread_t thread;
  pthread_create (&thread, NULL, free_elsewhere, plain);
  pthread_join (thread, NULL);
  /* A realloc inside a section: a fresh reserve block, the old one
     given back at once.  */
  ck_assert (entry_begin ());
  memset (zeroed, 3, 300);
  unsigned char *moved = realloc (zeroed, 600);
  entry_end ();
  ck_assert (looks_like_reserve_block (moved));
  for (int i = 0; i < 300; i++)
    ck_assert (moved[i] == 3);
  free (moved);
}
END_TEST

START_TEST (test_glibc_free_inside_a_section_waits)
{
  void *block = __libc_malloc (100);
  uint64_t deferred = runtime_frees_deferred;
  ck_assert (entry_begin ());
  free (block);
  /* Not given to glibc's free, which the section may be inside.  */
  ck_assert_ptr_eq (runtime_deferred_frees, block);
  ck_assert_uint_eq (runtime_frees_deferred, deferred + 1);
  entry_end ();
  ck_assert_ptr_null (runtime_deferred_frees);
}
END_TEST

Suite *
emergency_suite (void)
{
  Suite *suite = suite_create ("emergency");
  TCase *reserve = tcase_create ("reserve");
  tcase_set_timeout (reserve, 60);
  tcase_add_test (reserve, test_sizes_and_alignments);
  tcase_add_test (reserve, test_freed_spans_reused);
  tcase_add_test (reserve, test_threads_take_and_free);
  tcase_add_test (reserve, test_calls_inside_a_section);
  tcase_add_test (reserve, test_glibc_free_inside_a_section_waits);
  suite_add_tcase (suite, reserve);
  return suite;
}
