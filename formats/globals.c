/* The programs' global variables in the profile model: see globals.h.  */

#include "globals.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* ---- Granules ---- */

static uint64_t
granule_hash (const void *owner, uint32_t index)
{
  const struct profile *profile = owner;
  return profile_address_hash (profile->granules[index].module,
                               profile->granules[index].address);
}

static bool
granule_equals (const void *owner, uint32_t index, const void *key)
{
  const struct profile *profile = owner;
  const struct profile_address_key *k = key;
  return profile->granules[index].module == k->module
         && profile->granules[index].address == k->address;
}

void
profile_add_granule (struct profile *profile, uint32_t module, uint64_t address,
                     uint64_t accesses)
{
  struct profile_address_key key = { module, address };
  index_table_reserve (&profile->granule_index, profile->granule_count,
                       granule_hash, profile);
  uint32_t *slot = index_table_slot (&profile->granule_index,
                                     profile_address_hash (module, address),
                                     granule_equals, profile, &key);
  if (*slot == 0)
    {
      profile->granules
          = array_grow (profile->granules, &profile->granule_capacity,
                        profile->granule_count, sizeof *profile->granules);
      struct profile_granule *granule
          = &profile->granules[profile->granule_count];
      memset (granule, 0, sizeof *granule);
      granule->module = module;
      granule->address = address;
      *slot = (uint32_t) ++profile->granule_count;
    }
  struct profile_granule *granule = &profile->granules[*slot - 1];
  /* Saturating: a sum that wraps would turn hot into cold.  */
  granule->accesses = granule->accesses + accesses < granule->accesses
                          ? UINT64_MAX
                          : granule->accesses + accesses;
}

/* ---- Globals ---- */

static uint64_t
global_hash_of (const struct profile_global *global)
{
  return hash_mix (((global->address * 31 + global->size) * 31 + global->name)
                       * 31
                   + global->file * 7 + global->module * 3 + global->flags);
}

static uint64_t
global_hash (const void *owner, uint32_t index)
{
  const struct profile *profile = owner;
  return global_hash_of (&profile->globals[index]);
}

static bool
global_equals (const void *owner, uint32_t index, const void *key)
{
  const struct profile *profile = owner;
  const struct profile_global *a = &profile->globals[index], *b = key;
  return a->module == b->module && a->name == b->name && a->file == b->file
         && a->flags == b->flags && a->address == b->address
         && a->size == b->size;
}

uint32_t
profile_add_global (struct profile *profile,
                    const struct profile_global *global)
{
  index_table_reserve (&profile->global_index, profile->global_count,
                       global_hash, profile);
  uint32_t *slot
      = index_table_slot (&profile->global_index, global_hash_of (global),
                          global_equals, profile, global);
  if (*slot != 0)
    return *slot - 1;
  profile->globals
      = array_grow (profile->globals, &profile->global_capacity,
                    profile->global_count, sizeof *profile->globals);
  profile->globals[profile->global_count] = *global;
  *slot = (uint32_t) ++profile->global_count;
  return *slot - 1;
}

bool
profile_module_has_globals (const struct profile *profile, uint32_t module)
{
  for (size_t i = 0; i < profile->global_count; i++)
    if (profile->globals[i].module == module)
      return true;
  return false;
}

/* ---- Accesses of each global ---- */

/* Bytes [low, high) of a module that some global holds: the union of the
   module's globals, as disjoint intervals sorted by address.  */
struct held
{
  uint32_t module;
  uint64_t low, high;
};

static const struct profile *sorting;

static uint64_t
end_of (const struct profile_global *global)
{
  uint64_t end = global->address + global->size;
  return end < global->address ? UINT64_MAX : end;
}

static int
compare_globals_by_address (const void *a, const void *b)
{
  const struct profile_global *x = &sorting->globals[*(const uint32_t *) a];
  const struct profile_global *y = &sorting->globals[*(const uint32_t *) b];
  if (x->module != y->module)
    return x->module < y->module ? -1 : 1;
  if (x->address != y->address)
    return x->address < y->address ? -1 : 1;
  return 0;
}

static int
compare_granules_by_address (const void *a, const void *b)
{
  const struct profile_granule *x = &sorting->granules[*(const uint32_t *) a];
  const struct profile_granule *y = &sorting->granules[*(const uint32_t *) b];
  if (x->module != y->module)
    return x->module < y->module ? -1 : 1;
  return x->address < y->address ? -1 : x->address > y->address;
}

/* Is (MODULE, ADDRESS) before (M, A)?  */
static bool
before (uint32_t module, uint64_t address, uint32_t m, uint64_t a)
{
  return module < m || (module == m && address < a);
}

/* The bytes of [LOW, LOW + 64) of MODULE that HELD (COUNT intervals) has.  */
static uint64_t
held_bytes (const struct held *held, size_t count, uint32_t module,
            uint64_t low)
{
  uint64_t high = low + PROFILE_GRANULE_SIZE < low ? UINT64_MAX
                                                   : low + PROFILE_GRANULE_SIZE;
  /* The first interval of MODULE that ends after LOW.  */
  size_t first = 0, last = count;
  while (first < last)
    {
      size_t middle = first + (last - first) / 2;
      if (before (held[middle].module, held[middle].high, module, low + 1))
        first = middle + 1;
      else
        last = middle;
    }
  uint64_t bytes = 0;
  for (size_t i = first;
       i < count && held[i].module == module && held[i].low < high; i++)
    {
      uint64_t from = held[i].low > low ? held[i].low : low;
      uint64_t to = held[i].high < high ? held[i].high : high;
      if (to > from)
        bytes += to - from;
    }
  return bytes;
}

/* Does HELD (COUNT intervals) have an interval of MODULE?  */
static bool
module_is_held (const struct held *held, size_t count, uint32_t module)
{
  size_t first = 0, last = count;
  while (first < last)
    {
      size_t middle = first + (last - first) / 2;
      if (held[middle].module < module)
        first = middle + 1;
      else
        last = middle;
    }
  return first < count && held[first].module == module;
}

static uint64_t
add_saturating (uint64_t a, uint64_t b)
{
  return a + b < a ? UINT64_MAX : a + b;
}

/* One global's bytes in one granule.  */
struct piece
{
  uint32_t global;  /* index in profile->globals */
  uint32_t granule; /* position in the granules sorted by address */
  uint64_t bytes;   /* the global's bytes in the granule */
  uint64_t held;    /* the bytes of the granule some global holds */
};

/* Every piece of every global, in the order of the globals by address.  */
static struct piece *
pieces_of (const struct profile *profile, const uint32_t *by_address,
           const uint32_t *granule_order, const struct held *held,
           size_t held_count, size_t *count)
{
  size_t capacity = 0, used = 0;
  struct piece *pieces = NULL;
  size_t granules = profile->granule_count;
  for (size_t i = 0; i < profile->global_count; i++)
    {
      const struct profile_global *global = &profile->globals[by_address[i]];
      uint64_t low = global->address & ~(uint64_t) (PROFILE_GRANULE_SIZE - 1);
      uint64_t high = end_of (global);
      /* The first granule at or after LOW in the global's module.  */
      size_t first = 0, last = granules;
      while (first < last)
        {
          size_t middle = first + (last - first) / 2;
          const struct profile_granule *g
              = &profile->granules[granule_order[middle]];
          if (before (g->module, g->address, global->module, low))
            first = middle + 1;
          else
            last = middle;
        }
      for (size_t k = first; k < granules; k++)
        {
          const struct profile_granule *g
              = &profile->granules[granule_order[k]];
          if (g->module != global->module || g->address >= high)
            break;
          uint64_t g_high = g->address + PROFILE_GRANULE_SIZE < g->address
                                ? UINT64_MAX
                                : g->address + PROFILE_GRANULE_SIZE;
          uint64_t from
              = global->address > g->address ? global->address : g->address;
          uint64_t to = high < g_high ? high : g_high;
          if (to <= from)
            continue;
          pieces = array_grow (pieces, &capacity, used, sizeof *pieces);
          pieces[used++]
              = (struct piece){ by_address[i], (uint32_t) k, to - from,
                                held_bytes (held, held_count, g->module,
                                            g->address) };
        }
    }
  *count = used;
  return pieces;
}

uint64_t
profile_global_accesses (const struct profile *profile, uint64_t *accesses)
{
  size_t globals = profile->global_count, granules = profile->granule_count;
  uint32_t *by_address = xmalloc (globals * sizeof *by_address + 1);
  uint32_t *granule_order = xmalloc (granules * sizeof *granule_order + 1);
  struct held *held = xmalloc (globals * sizeof *held + 1);
  size_t held_count = 0, piece_count = 0;
  uint64_t unattributed = 0;

  for (size_t i = 0; i < globals; i++)
    by_address[i] = (uint32_t) i;
  for (size_t i = 0; i < granules; i++)
    granule_order[i] = (uint32_t) i;
  sorting = profile;
  qsort (by_address, globals, sizeof *by_address, compare_globals_by_address);
  qsort (granule_order, granules, sizeof *granule_order,
         compare_granules_by_address);
  sorting = NULL;

  /* What the globals hold, merged into disjoint intervals.  */
  for (size_t i = 0; i < globals; i++)
    {
      const struct profile_global *global = &profile->globals[by_address[i]];
      struct held *last = held_count ? &held[held_count - 1] : NULL;
      if (last != NULL && last->module == global->module
          && global->address <= last->high)
        {
          if (end_of (global) > last->high)
            last->high = end_of (global);
          continue;
        }
      held[held_count++]
          = (struct held){ global->module, global->address, end_of (global) };
    }

  struct piece *pieces = pieces_of (profile, by_address, granule_order, held,
                                    held_count, &piece_count);
  /* Each global's density in the bytes whose accesses are its own: those
     in granules no access reached (no record), and those in granules
     where no other global has a byte.  */
  uint64_t *own_accesses = xcalloc (globals + 1, sizeof *own_accesses);
  uint64_t *own_bytes = xcalloc (globals + 1, sizeof *own_bytes);
  for (size_t i = 0; i < globals; i++)
    own_bytes[i] = profile->globals[i].size;
  for (size_t p = 0; p < piece_count; p++)
    if (pieces[p].bytes == pieces[p].held)
      {
        const struct profile_granule *g
            = &profile->granules[granule_order[pieces[p].granule]];
        own_accesses[pieces[p].global]
            = add_saturating (own_accesses[pieces[p].global], g->accesses);
      }
    else
      own_bytes[pieces[p].global] -= pieces[p].bytes;
  /* A shared granule's accesses go to its globals in proportion to their
     bytes times their density; a global with no granule of its own is
     taken to have the granule's mean density.  */
  double *weights = xcalloc (piece_count + 1, sizeof *weights);
  double *weight_sums = xcalloc (granules + 1, sizeof *weight_sums);
  for (size_t p = 0; p < piece_count; p++)
    {
      const struct piece *piece = &pieces[p];
      if (piece->bytes == piece->held)
        continue;
      const struct profile_granule *g
          = &profile->granules[granule_order[piece->granule]];
      double density = own_bytes[piece->global] > 0
                           ? (double) own_accesses[piece->global]
                                 / (double) own_bytes[piece->global]
                           : (double) g->accesses / (double) piece->held;
      weights[p] = (double) piece->bytes * density;
      weight_sums[piece->granule] += weights[p];
    }
  memset (accesses, 0, globals * sizeof *accesses);
  for (size_t p = 0; p < piece_count; p++)
    {
      const struct piece *piece = &pieces[p];
      const struct profile_granule *g
          = &profile->granules[granule_order[piece->granule]];
      uint64_t share;
      if (piece->bytes == piece->held)
        share = g->accesses;
      else if (weight_sums[piece->granule] > 0)
        {
          double exact
              = (double) g->accesses * weights[p] / weight_sums[piece->granule];
          /* Rounded up (no libm: the plugin links this file too).  */
          share
              = exact >= 18446744073709551615.0 ? UINT64_MAX : (uint64_t) exact;
          if (share != UINT64_MAX && (double) share < exact)
            share++;
        }
      else
        {
          /* No sharer is known to be accessed: by bytes alone.  */
          unsigned __int128 exact
              = ((unsigned __int128) g->accesses * piece->bytes + piece->held
                 - 1)
                / piece->held;
          share = exact > UINT64_MAX ? UINT64_MAX : (uint64_t) exact;
        }
      accesses[piece->global] = add_saturating (accesses[piece->global], share);
    }

  /* Modules without globals are not symbolized: nothing is missed there.  */
  for (size_t k = 0; k < granules; k++)
    {
      const struct profile_granule *g = &profile->granules[granule_order[k]];
      if (module_is_held (held, held_count, g->module)
          && held_bytes (held, held_count, g->module, g->address) == 0)
        unattributed = add_saturating (unattributed, g->accesses);
    }
  free (weights);
  free (weight_sums);
  free (own_accesses);
  free (own_bytes);
  free (pieces);
  free (by_address);
  free (granule_order);
  free (held);
  return unattributed;
}
