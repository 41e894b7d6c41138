/* Shared backend components for profiling modules (docs/modules.md,
   "Shared components"): a hash, an open-addressing table, and a shadow
   memory.  Header only, everything static: no link-time name of its
   own, no library to link.  Use it with <memprof/module.h>:

     #include <memprof/module_kit.h>  */

#ifndef MEMPROF_MODULE_KIT_H
#define MEMPROF_MODULE_KIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

/* Set when a table or the shadow could not grow: some events were left
   out (say so in the output).  */
static int memprof_out_of_memory;

static inline uint64_t
memprof_hash (uint64_t key)
{
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return key;
}

/* An open-addressing table of TYPE whose field KEY (a uint64_t, 0 for an
   empty slot) identifies an entry: NAME_slot (the entry of a key, or the
   empty slot where it goes), NAME_remove (linear probing's deletion: the
   entries after it move back, no tombstones) and NAME_reserve (room for
   one more of USED entries: the table doubles at half full, from 1024
   slots).  */
#define MEMPROF_TABLE(name, type, key)                                         \
  __attribute__ ((unused)) static type *name##_slot (                          \
      type *table, size_t capacity, uint64_t wanted)                           \
  {                                                                            \
    size_t i = memprof_hash (wanted) & (capacity - 1);                         \
    while (table[i].key != 0 && table[i].key != wanted)                        \
      i = (i + 1) & (capacity - 1);                                            \
    return &table[i];                                                          \
  }                                                                            \
  __attribute__ ((unused)) static void name##_remove (                         \
      type *table, size_t capacity, type *slot)                                \
  {                                                                            \
    size_t i = (size_t) (slot - table);                                        \
    slot->key = 0;                                                             \
    for (i = (i + 1) & (capacity - 1); table[i].key != 0;                      \
         i = (i + 1) & (capacity - 1))                                         \
      {                                                                        \
        type moved = table[i];                                                 \
        table[i].key = 0;                                                      \
        *name##_slot (table, capacity, moved.key) = moved;                     \
      }                                                                        \
  }                                                                            \
  __attribute__ ((unused)) static bool name##_reserve (                        \
      type **table, size_t *capacity, size_t used)                             \
  {                                                                            \
    size_t fresh_capacity = *capacity ? *capacity * 2 : 1024;                  \
    if ((used + 1) * 2 <= *capacity)                                           \
      return true;                                                             \
    type *fresh = calloc (fresh_capacity, sizeof *fresh);                      \
    if (fresh == NULL)                                                         \
      {                                                                        \
        memprof_out_of_memory = 1;                                             \
        return *capacity != 0 && used < *capacity - 1;                         \
      }                                                                        \
    for (size_t i = 0; i < *capacity; i++)                                     \
      if ((*table)[i].key != 0)                                                \
        *name##_slot (fresh, fresh_capacity, (*table)[i].key) = (*table)[i];   \
    free (*table);                                                             \
    *table = fresh;                                                            \
    *capacity = fresh_capacity;                                                \
    return true;                                                               \
  }

/* ---- Shadow memory ----

   An element of ELEMENT_SIZE bytes (zero at first) for each granule of
   1 << GRANULE_SHIFT bytes of the program's memory, made in chunks that
   shadow 1 << MEMPROF_SHADOW_CHUNK_SHIFT bytes when first written; the
   last chunk used is looked up first (most accesses stay in one).  One
   per worker: it takes no lock.

     struct memprof_shadow shadow = MEMPROF_SHADOW_INIT (2, sizeof (T));
     T *t = memprof_shadow_at (&shadow, address, true);  */

#define MEMPROF_SHADOW_CHUNK_SHIFT 16

struct memprof_shadow_chunk
{
  uint64_t key; /* the chunk's number + 1; 0: empty */
  unsigned char *elements;
};

struct memprof_shadow
{
  unsigned granule_shift;
  size_t element_size;
  struct memprof_shadow_chunk *chunks, *last;
  size_t capacity, used;
};

#define MEMPROF_SHADOW_INIT(granule_shift, element_size)                       \
  ((struct memprof_shadow){ (granule_shift), (element_size), NULL, NULL, 0, 0 })

MEMPROF_TABLE (memprof_shadow_chunk, struct memprof_shadow_chunk, key)

/* The element of the granule of ADDRESS; made when CREATE, else null
   when it was never made (or memory ran out).  */
static inline void *
memprof_shadow_at (struct memprof_shadow *shadow, uint64_t address, bool create)
{
  uint64_t key = (address >> MEMPROF_SHADOW_CHUNK_SHIFT) + 1;
  size_t per_chunk = (size_t) 1
                     << (MEMPROF_SHADOW_CHUNK_SHIFT - shadow->granule_shift);
  if (shadow->last == NULL || shadow->last->key != key)
    {
      if (create)
        {
          struct memprof_shadow_chunk *before = shadow->chunks;
          if (!memprof_shadow_chunk_reserve (&shadow->chunks, &shadow->capacity,
                                             shadow->used))
            return NULL;
          if (shadow->chunks != before)
            shadow->last = NULL;
        }
      if (shadow->capacity == 0)
        return NULL;
      struct memprof_shadow_chunk *chunk
          = memprof_shadow_chunk_slot (shadow->chunks, shadow->capacity, key);
      if (chunk->key == 0)
        {
          if (!create)
            return NULL;
          chunk->elements = calloc (per_chunk, shadow->element_size);
          if (chunk->elements == NULL)
            {
              memprof_out_of_memory = 1;
              return NULL;
            }
          chunk->key = key;
          shadow->used++;
        }
      shadow->last = chunk;
    }
  size_t index = (address >> shadow->granule_shift) & (per_chunk - 1);
  return shadow->last->elements + index * shadow->element_size;
}

#endif /* MEMPROF_MODULE_KIT_H */
