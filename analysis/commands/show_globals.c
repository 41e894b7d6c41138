/* memprof show --globals: see show_globals.h.  */

#include "show_globals.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"
#include "globals.h"
#include "util.h"

struct ranked
{
  uint32_t global;
  uint64_t accesses;
  double density; /* accesses per byte */
};

static const struct profile *ranking;

/* Densest first; then more accesses, then by name and address, so that
   the order never depends on the order of the inputs.  */
static int
compare_ranked (const void *a, const void *b)
{
  const struct ranked *x = a, *y = b;
  if (x->density != y->density)
    return x->density > y->density ? -1 : 1;
  if (x->accesses != y->accesses)
    return x->accesses > y->accesses ? -1 : 1;
  const struct profile_global *gx = &ranking->globals[x->global];
  const struct profile_global *gy = &ranking->globals[y->global];
  int order = strcmp (profile_string (ranking, gx->name),
                      profile_string (ranking, gy->name));
  if (order != 0)
    return order;
  return gx->address < gy->address ? -1 : gx->address > gy->address;
}

static void
print_text (struct session *session, const struct ranked *ranked, size_t count,
            uint64_t unattributed)
{
  const struct profile *profile = &session->profile;
  uint64_t total = 0, never = 0;
  for (size_t i = 0; i < profile->global_count; i++)
    {
      total += ranked[i].accesses;
      never += ranked[i].accesses == 0;
    }
  printf ("%zu globals in %llu profile%s (%llu counted globals): %llu "
          "accesses in %zu granules of 64 bytes; %llu globals never "
          "accessed\n",
          profile->global_count, (unsigned long long) profile->inputs,
          profile->inputs == 1 ? "" : "s",
          (unsigned long long) profile->global_inputs,
          (unsigned long long) total, profile->granule_count,
          (unsigned long long) never);
  if (profile->global_inputs == 0 && profile->granule_count == 0)
    {
      printf ("No counts of globals: the profiles come without side files "
              "of version 2 (a runtime that counts globals writes them; "
              "build the program with the plugin, whose globals=1 is the "
              "default).\n");
      return;
    }
  if (profile->global_count == 0)
    {
      printf ("No global is named: give the program with --binary=FILE.\n");
      return;
    }
  printf ("Sorted by accesses per byte; the first %zu.\n\n", count);
  printf ("%4s %10s %12s %10s  %s\n", "#", "acc/byte", "accesses", "bytes",
          "global");
  for (size_t rank = 0; rank < count; rank++)
    {
      const struct profile_global *global
          = &profile->globals[ranked[rank].global];
      printf ("%4zu %10.2f %12" PRIu64 " %10" PRIu64 "  %s", rank + 1,
              ranked[rank].density, ranked[rank].accesses, global->size,
              session_demangled (session, global->name));
      if (global->flags & PROFILE_GLOBAL_LOCAL)
        printf (" (static%s%s)", global->file ? ", " : "",
                profile_string (profile, global->file));
      if (ranked[rank].accesses == 0)
        printf ("  ! never accessed");
      printf ("\n");
    }
  if (unattributed > 0)
    printf ("\n%" PRIu64 " accesses fell in granules that no global holds "
            "(padding, or data without a sized symbol).\n",
            unattributed);
}

static void
print_json (struct session *session, const struct ranked *ranked, size_t count,
            uint64_t unattributed)
{
  const struct profile *profile = &session->profile;
  printf ("{\n  \"inputs\": %llu,\n  \"global_inputs\": %llu,\n"
          "  \"granules\": %zu,\n  \"unattributed_accesses\": %" PRIu64 ",\n"
          "  \"globals\": [",
          (unsigned long long) profile->inputs,
          (unsigned long long) profile->global_inputs, profile->granule_count,
          unattributed);
  for (size_t rank = 0; rank < count; rank++)
    {
      const struct profile_global *global
          = &profile->globals[ranked[rank].global];
      printf ("%s\n    {\"rank\": %zu, \"name\": ", rank ? "," : "", rank + 1);
      emit_json_string (stdout, profile_string (profile, global->name));
      printf (", \"demangled\": ");
      emit_json_string (stdout, session_demangled (session, global->name));
      printf (", \"file\": ");
      emit_json_string (stdout, profile_string (profile, global->file));
      printf (", \"local\": %s, \"address\": \"0x%" PRIx64
              "\", \"size\": %" PRIu64 ", \"accesses\": %" PRIu64
              ", \"density\": %.6g, \"never_accessed\": %s}",
              global->flags & PROFILE_GLOBAL_LOCAL ? "true" : "false",
              global->address, global->size, ranked[rank].accesses,
              ranked[rank].density,
              ranked[rank].accesses == 0 ? "true" : "false");
    }
  printf ("\n  ]\n}\n");
}

void
show_globals (struct session *session, bool json, long top)
{
  const struct profile *profile = &session->profile;
  uint64_t *accesses = xmalloc (profile->global_count * sizeof *accesses + 1);
  struct ranked *ranked = xmalloc (profile->global_count * sizeof *ranked + 1);
  uint64_t unattributed = profile_global_accesses (profile, accesses);
  for (size_t i = 0; i < profile->global_count; i++)
    {
      ranked[i].global = (uint32_t) i;
      ranked[i].accesses = accesses[i];
      ranked[i].density
          = (double) accesses[i] / (double) profile->globals[i].size;
    }
  ranking = profile;
  qsort (ranked, profile->global_count, sizeof *ranked, compare_ranked);
  ranking = NULL;
  size_t count = profile->global_count;
  if (top > 0 && (size_t) top < count)
    count = (size_t) top;
  if (json)
    print_json (session, ranked, count, unattributed);
  else
    print_text (session, ranked, count, unattributed);
  free (ranked);
  free (accesses);
}
