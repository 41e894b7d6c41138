/* Modules unloaded before the profile is written.

   A profile's segment table lists the executable segments of the loaded
   modules, taken with dl_iterate_phdr when the profile is written; a
   library that was dlclose'd before then is not among them, and its
   frames stay bare addresses that neither memprof --binary nor
   llvm-profdata can match to the library.  So the runtime interposes
   dlclose: the loaded modules' segments (address range, load bias,
   build ID) are taken before the C library's dlclose, and those of the
   modules it unloaded (the closed one, and the dependencies it took
   along) are kept; at a dump, the kept segments of modules no longer
   loaded are added to the table, unless a module loaded since covers
   their addresses (its frames would be ambiguous, and the live module
   wins).

   No allocation: the kept segments live in a table under a lock (static,
   UNLOADED_SEGMENTS_MAX, then mapped and doubled when full); the lists taken at dlclose in
   memory mapped for the call (without it, the closed module's segments
   alone are kept, through a static buffer under the lock).

   A module dlopen'ed later may be mapped where an unloaded one was, and
   what the runtime learnt per code address would then be taken for the
   new module's: the interceptors' list of instrumented modules and their
   threads' verdicts (interceptors.c), the stack capture's frame facts
   (stack.c), the contexts themselves (a stack is its return addresses)
   and the profile's segment table (which names one module per address).
   So dlclose compares the loaded modules before and after the C
   library's dlclose (dlpi_subs says whether any went; a module closed
   may take its dependencies along, or stay for another handle), and for
   each one gone: tells the interceptors to forget it (their lists have
   room for 256 modules), and, with reserve_unloaded_modules=1 (the
   default), maps its address range PROT_NONE (no memory,
   MAP_FIXED_NOREPLACE: never over anything mapped since), so that no
   later module is mapped there and the addresses already recorded keep
   naming it.  When the range is not reserved, the stack capture forgets
   what it learnt there too.  At most RESERVED_MODULES_MAX reservations
   (a program that loads and unloads plugins forever does not run out of
   mappings; adjacent ones merge into one): later unloaded modules'
   addresses may be reused, counts stay right, and the profile names the
   first module unloaded from there (its segments are kept, an
   overlapping later one's not).  None either once the kept segments fill
   half the profile's segment table: a reserved module loaded again lands
   at a new address, which the profile must name too.  */

#define _GNU_SOURCE
#include "internal.h"
#include "rawformat.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define UNLOADED_SEGMENTS_MAX 256
/* Modules compared before and after a dlclose, at most (their list is
   mapped for the call: a destructor may call dlclose again, and no lock
   can be held over the C library's dlclose).  */
#define MODULES_COMPARED_MAX 4096
#define RESERVED_MODULES_MAX 1024

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
/* The kept segments: the static table first, then a mapped one twice
   as large each time it fills (each reserved module lands at a new
   address when loaded again: up to RESERVED_MODULES_MAX modules' segments
   must be named).  */
static struct memprof_raw_segment initial_unloaded[UNLOADED_SEGMENTS_MAX];
static struct memprof_raw_segment *unloaded = initial_unloaded;
static size_t unloaded_count, unloaded_capacity = UNLOADED_SEGMENTS_MAX;
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

/* Room for one more kept segment; false when no memory.  Under
   modules_lock.  */
static bool
unloaded_room (void)
{
  if (unloaded_count < unloaded_capacity)
    return true;
  size_t capacity = unloaded_capacity * 2;
  struct memprof_raw_segment *table = runtime_map (capacity * sizeof *table);
  if (table == NULL)
    return false;
  memcpy (table, unloaded, unloaded_count * sizeof *table);
  if (unloaded != initial_unloaded)
    runtime_unmap (unloaded, unloaded_capacity * sizeof *table);
  unloaded = table;
  unloaded_capacity = capacity;
  return true;
}

/* Keep the segments of the module loaded with bias BIAS, from LOADED
   (COUNT of them: the loaded modules' segments, taken while it was
   loaded).  Under modules_lock.  */
static void
keep_segments_of (const struct memprof_raw_segment *loaded, size_t count,
                  uint64_t bias)
{
  for (size_t i = 0; i < count; i++)
    {
      if (loaded[i].offset != bias)
        continue;
      /* The same module closed twice (or loaded again at the same place):
         one entry.  */
      if (overlaps (unloaded, unloaded_count, loaded[i].start, loaded[i].end))
        continue;
      if (!unloaded_room ())
        return;
      unloaded[unloaded_count++] = loaded[i];
    }
}

/* A loaded module: its load bias and the span of its PT_LOAD segments.  */
struct module_span
{
  uintptr_t bias, low, high;
  /* With the bias, what tells the module from another one mapped at its
     address meanwhile (another thread's dlopen during the dlclose): its
     program headers and a hash of its name.  */
  const void *phdr;
  uint64_t name_hash;
  bool loaded; /* found again after the dlclose */
};

/* See internal.h: FNV-1a.  */
uint64_t
module_name_hash (const char *name)
{
  uint64_t hash = 14695981039346656037ULL;
  for (; name != NULL && *name; name++)
    hash = (hash ^ (unsigned char) *name) * 1099511628211ULL;
  return hash;
}

struct module_list
{
  struct module_span *modules;
  size_t count;
  unsigned long long unloads; /* dlpi_subs: modules unloaded so far */
};

static int
list_module (struct dl_phdr_info *info, size_t size, void *cookie)
{
  struct module_list *list = cookie;
  if (size
      >= offsetof (struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    list->unloads = info->dlpi_subs;
  if (list->modules == NULL || list->count == MODULES_COMPARED_MAX)
    return 0;
  uintptr_t low = UINTPTR_MAX, high = 0;
  for (size_t i = 0; i < info->dlpi_phnum; i++)
    {
      const ElfW (Phdr) *segment = &info->dlpi_phdr[i];
      if (segment->p_type != PT_LOAD)
        continue;
      uintptr_t start = info->dlpi_addr + segment->p_vaddr;
      if (start < low)
        low = start;
      if (start + segment->p_memsz > high)
        high = start + segment->p_memsz;
    }
  if (low < high)
    list->modules[list->count++]
        = (struct module_span){ info->dlpi_addr,
                                low,
                                high,
                                info->dlpi_phdr,
                                module_name_hash (info->dlpi_name),
                                false };
  return 0;
}

/* Mark the modules of the list COOKIE that are still loaded.  */
static int
mark_loaded (struct dl_phdr_info *info, size_t size, void *cookie)
{
  struct module_list *list = cookie;
  (void) size;
  uint64_t name_hash = module_name_hash (info->dlpi_name);
  for (size_t i = 0; i < list->count; i++)
    if (list->modules[i].bias == info->dlpi_addr
        && list->modules[i].phdr == info->dlpi_phdr
        && list->modules[i].name_hash == name_hash)
      list->modules[i].loaded = true;
  return 0;
}

static _Atomic unsigned reserved_modules;

/* Keep [LOW, HIGH) of an unloaded module from being mapped again: a
   PROT_NONE mapping, never over one made since.  False when it could not
   be (or may not be): then another module may be mapped there.  */
static bool
reserve_addresses (uintptr_t low, uintptr_t high)
{
  uintptr_t page = (uintptr_t) sysconf (_SC_PAGESIZE);
  low &= ~(page - 1);
  high = (high + page - 1) & ~(page - 1);
  if (!runtime_options.reserve_unloaded_modules
      || atomic_fetch_add (&reserved_modules, 1) >= RESERVED_MODULES_MAX)
    return false;
  void *at = mmap (
      (void *) low, high - low, PROT_NONE,
      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
  /* A kernel before 4.17 takes the address as a hint only.  */
  if (at != MAP_FAILED && at != (void *) low)
    munmap (at, high - low);
  return at == (void *) low;
}

/* The modules of BEFORE that are no longer loaded: their segments (from
   SEGMENTS, COUNT of them, taken with BEFORE) kept for the profile, and
   they are forgotten by the interceptors and the stack capture, their
   addresses reserved.  */
static void
forget_unloaded (struct module_list *before,
                 const struct memprof_raw_segment *segments, size_t count)
{
  dl_iterate_phdr (mark_loaded, before);
  for (size_t i = 0; i < before->count; i++)
    {
      const struct module_span *module = &before->modules[i];
      if (module->loaded)
        continue;
      pthread_mutex_lock (&modules_lock);
      keep_segments_of (segments, count, module->bias);
      /* A reserved module loaded again lands at a new address, whose
         segments the profile must name too: no more reservations once the
         kept segments would take more than half the profile's segment
         table (the loaded modules' come first).  */
      bool room = unloaded_count < SEGMENTS_MAX / 2;
      pthread_mutex_unlock (&modules_lock);
      if (interceptors_forget_module)
        interceptors_forget_module (module->bias, module->name_hash,
                                    module->low, module->high);
      /* Reserved, its addresses are never another module's: what the
         stack capture learnt of them may stay (clearing it costs a scan
         of its maps, about 0.1 ms).  */
      if (!room || !reserve_addresses (module->low, module->high))
        stack_forget_code (module->low, module->high);
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
  /* The loaded modules and their segments (with their build IDs, which
     are gone with a module), in memory mapped for this call.  */
  size_t modules_size = MODULES_COMPARED_MAX * sizeof (struct module_span);
  size_t size
      = modules_size + SEGMENTS_MAX * sizeof (struct memprof_raw_segment);
  char *memory = runtime_map (size);
  struct module_list before = { (struct module_span *) memory, 0, 0 };
  struct memprof_raw_segment *segments
      = (struct memprof_raw_segment *) (memory + modules_size);
  size_t segment_count = 0;
  if (memory != NULL)
    segment_count = segments_collect (segments, SEGMENTS_MAX);
  else if (dlinfo (handle, RTLD_DI_LINKMAP, &map) == 0 && map != NULL
           && map->l_addr != 0)
    {
      /* No memory: the closed module's segments at least, as before.  */
      pthread_mutex_lock (&modules_lock);
      keep_segments_of (loaded, segments_collect (loaded, SEGMENTS_MAX),
                        map->l_addr);
      pthread_mutex_unlock (&modules_lock);
    }
  dl_iterate_phdr (list_module, &before);
  in_runtime--;
  int result = real_dlclose (handle);
  in_runtime++;
  /* Only when a module went (dlpi_subs moved): a dlclose that unloads
     nothing costs one more walk of the list.  */
  struct module_list unloads = { NULL, 0, before.unloads };
  dl_iterate_phdr (list_module, &unloads);
  if (unloads.unloads != before.unloads && memory != NULL)
    forget_unloaded (&before, segments, segment_count);
  if (memory != NULL)
    runtime_unmap (memory, size);
  in_runtime--;
  return result;
}

/* See internal.h.  */
void
modules_fork_prepare (void)
{
  pthread_mutex_lock (&modules_lock);
}

void
modules_fork_release (void)
{
  pthread_mutex_unlock (&modules_lock);
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
