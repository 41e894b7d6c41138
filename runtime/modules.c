/* Modules unloaded before the profile is written.

   A profile's segment table lists the executable segments of the loaded
   modules, taken with dl_iterate_phdr when the profile is written; a
   library that was dlclose'd before then is not among them, and its
   frames stay bare addresses that neither memprof --binary nor
   llvm-profdata can match to the library.  So the runtime interposes
   dlclose: before the library goes, its segments (address range, load
   bias, build ID) are kept; at a dump, the kept segments of modules no
   longer loaded are added to the table, unless a module loaded since
   covers their addresses (its frames would be ambiguous, and the live
   module wins).

   No allocation: the kept segments live in a fixed table
   (UNLOADED_SEGMENTS_MAX), and the list of loaded segments taken at
   dlclose in a static buffer, both under one lock.  */

#define _GNU_SOURCE
#include "internal.h"
#include "rawformat.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#define UNLOADED_SEGMENTS_MAX 256

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static struct memprof_raw_segment unloaded[UNLOADED_SEGMENTS_MAX];
static size_t unloaded_count;
static struct memprof_raw_segment loaded[SEGMENTS_MAX];

static int (*real_dlclose) (void *);

/* Whether [START, END) meets a segment of SEGMENTS[0, COUNT).  */
static bool
overlaps (const struct memprof_raw_segment *segments, size_t count,
          uint64_t start, uint64_t end)
{
  for (size_t i = 0; i < count; i++)
    if (segments[i].start < end && start < segments[i].end)
      return true;
  return false;
}

/* Keep the segments of the module loaded with bias BIAS.  */
static void
keep_segments_of (uint64_t bias)
{
  size_t count = segments_collect (loaded, SEGMENTS_MAX);
  for (size_t i = 0; i < count; i++)
    {
      if (loaded[i].offset != bias)
        continue;
      /* The same module closed twice (or loaded again at the same place):
         one entry.  */
      if (overlaps (unloaded, unloaded_count, loaded[i].start, loaded[i].end))
        continue;
      if (unloaded_count == UNLOADED_SEGMENTS_MAX)
        return;
      unloaded[unloaded_count++] = loaded[i];
    }
}

MEMPROF_EXPORT int
dlclose (void *handle)
{
  struct link_map *map = NULL;

  if (real_dlclose == NULL)
    real_dlclose = (int (*) (void *)) dlsym (RTLD_NEXT, "dlclose");
  if (real_dlclose == NULL)
    return -1;
  in_runtime++;
  if (dlinfo (handle, RTLD_DI_LINKMAP, &map) == 0 && map != NULL
      && map->l_addr != 0)
    {
      pthread_mutex_lock (&modules_lock);
      keep_segments_of (map->l_addr);
      pthread_mutex_unlock (&modules_lock);
    }
  in_runtime--;
  return real_dlclose (handle);
}

/* See internal.h.  */
void
modules_add_unloaded (struct memprof_raw_segment *segments, size_t *count,
                      size_t max)
{
  pthread_mutex_lock (&modules_lock);
  size_t loaded_count = *count;
  for (size_t i = 0; i < unloaded_count && *count < max; i++)
    if (!overlaps (segments, loaded_count, unloaded[i].start, unloaded[i].end))
      segments[(*count)++] = unloaded[i];
  pthread_mutex_unlock (&modules_lock);
}
