/* memprof replay: run a workload (memprof trace2wl) against an allocator
   and measure it: wall time, cycles per call (rdtsc around each call),
   maximum RSS, ideal RSS (the most live requested bytes), and RSS and
   live bytes over time (a thread samples them every few milliseconds),
   as CSV and as a self-contained SVG chart.

   The replay runs in a child process: this process checks the workload,
   then runs itself again (/proc/self/exe) with --in-child and LD_PRELOAD
   set to the allocator alone (nothing for glibc), so that the allocator
   replaces malloc from the first instruction and nothing else (no
   libmemprof) is preloaded.  The child maps the workload, checks it
   again, starts one thread per workload thread, releases them together,
   and each decodes and runs its operations, waiting where the workload
   says (spinning, then yielding, on the other thread's count of
   operations done).  */

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "replay.h"
#include "traceformat.h"
#include "util.h"
#include "workload.h"

static const char usage[]
    = "usage: memprof replay [options] WORKLOAD\n"
      "\n"
      "Replay a workload (`memprof trace2wl TRACE -o WORKLOAD') with its\n"
      "threads against an allocator, in a child process that preloads it,\n"
      "and report wall time, cycles per call type (rdtsc around each call),\n"
      "maximum RSS, ideal RSS (the most live requested bytes, in the "
      "trace's\n"
      "order), their ratio, and RSS over time.  Every block is written, "
      "as the\n"
      "program wrote it, so that its pages count.\n"
      "\n"
      "  --allocator=NAME  glibc (default), jemalloc, tcmalloc (Debian's\n"
      "                    libjemalloc2 and libtcmalloc-minimal4), or the\n"
      "                    path of a shared library that defines malloc\n"
      "  --csv=FILE        write series,x,value rows: rss,MS,BYTES and\n"
      "                    live,MS,BYTES (sampled during the replay), and\n"
      "                    curve,SEQUENCE,BYTES (live requested bytes after\n"
      "                    each call that changed them, in the trace's "
      "order)\n"
      "  --svg=FILE        write a chart of RSS and live requested bytes\n"
      "                    against time (a self-contained SVG)\n"
      "  --interval=MS     sample RSS every MS milliseconds (default 5); "
      "each\n"
      "                    thread also samples 250 times over its "
      "operations\n"
      "  --no-write        do not write the blocks (by default every byte "
      "of\n"
      "                    every block is written, so that RSS counts them "
      "as the\n"
      "                    program's pages)\n"
      "\n"
      "Example:\n"
      "  memprof replay --allocator=jemalloc --svg=app.svg app.wl\n";

static const struct
{
  const char *name, *path;
} known_allocators[] = {
  { "jemalloc", "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2" },
  { "tcmalloc", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4" },
};

/* Check WORKLOAD's every byte (workload_walk, strict); exits 2 with the
   message when it does not hold.  */
static void
open_and_check (const char *path, struct mapped_file *file,
                struct workload *workload)
{
  char error[1024];
  if (map_file (path, file, error, sizeof error) != 0)
    die (EXIT_BAD_INPUT, "%s", error);
  if (workload_open_buffer (file->data, file->size, path, workload, error,
                            sizeof error)
          != 0
      || workload_walk (workload, true, NULL, NULL, NULL, NULL, error,
                        sizeof error)
             != 0)
    die (EXIT_BAD_INPUT, "%s", error);
}

/* The library to preload for NAME, NULL for glibc; exits 2 when NAME is
   none of the known ones and not a readable shared library.  */
static const char *
allocator_library (const char *name)
{
  if (strcmp (name, "glibc") == 0)
    return NULL;
  for (size_t i = 0; i < sizeof known_allocators / sizeof known_allocators[0];
       i++)
    if (strcmp (name, known_allocators[i].name) == 0)
      {
        if (access (known_allocators[i].path, R_OK) != 0)
          die (EXIT_BAD_INPUT,
               "--allocator=%s needs %s (Debian's %s; scripts/install-deps "
               "installs it)",
               name, known_allocators[i].path,
               strcmp (name, "jemalloc") == 0 ? "libjemalloc2"
                                              : "libtcmalloc-minimal4");
        return known_allocators[i].path;
      }
  if (strstr (name, ".so") == NULL || access (name, R_OK) != 0)
    command_usage_error ("replay",
                         "--allocator=%s: glibc, jemalloc, tcmalloc or the "
                         "path of a readable shared library (.so) expected",
                         name);
  return name;
}

/* Run the child and pass on its exit status.  */
static int
run_child (char **argv, int argc, const char *library,
           const char *allocator_name)
{
  char **child_argv = xcalloc ((size_t) argc + 3, sizeof *child_argv);
  pid_t pid;
  int status;

  child_argv[0] = argv[0];
  child_argv[1] = (char *) "replay";
  child_argv[2] = (char *) "--in-child";
  for (int i = 1; i < argc; i++)
    child_argv[i + 2] = argv[i];
  fflush (stdout);
  fflush (stderr);
  pid = fork ();
  if (pid < 0)
    die (1, "cannot start the replay: fork: %s", strerror (errno));
  if (pid == 0)
    {
      if (library != NULL)
        setenv ("LD_PRELOAD", library, 1);
      else
        unsetenv ("LD_PRELOAD");
      execv ("/proc/self/exe", child_argv);
      fprintf (stderr, "memprof: replay: cannot run /proc/self/exe: %s\n",
               strerror (errno));
      _exit (1);
    }
  while (waitpid (pid, &status, 0) < 0)
    if (errno != EINTR)
      die (1, "waitpid: %s", strerror (errno));
  free (child_argv);
  if (WIFSIGNALED (status))
    die (1, "the replay with %s died of signal %d (%s)", allocator_name,
         WTERMSIG (status), strsignal (WTERMSIG (status)));
  return WEXITSTATUS (status);
}

int
cmd_replay (int argc, char **argv)
{
  struct replay_options options = { .allocator = "glibc", .interval_ms = 5 };
  bool in_child = false;
  int parent_argc = 0;
  char **parent_argv = xcalloc ((size_t) argc + 1, sizeof *parent_argv);

  if (command_help_requested (argc, argv))
    {
      fputs (usage, stdout);
      return 0;
    }
  parent_argv[parent_argc++] = argv[0];
  for (int i = 1; i < argc; i++)
    {
      const char *arg = argv[i];
      if (strcmp (arg, "--in-child") == 0)
        {
          in_child = true;
          continue;
        }
      parent_argv[parent_argc++] = argv[i];
      if (strncmp (arg, "--allocator=", 12) == 0)
        options.allocator = arg + 12;
      else if (strncmp (arg, "--csv=", 6) == 0)
        options.csv = arg + 6;
      else if (strncmp (arg, "--svg=", 6) == 0)
        options.svg = arg + 6;
      else if (strcmp (arg, "--no-write") == 0)
        options.no_write = true;
      else if (strncmp (arg, "--interval=", 11) == 0)
        {
          char *end;
          long value = strtol (arg + 11, &end, 10);
          if (arg[11] == '\0' || *end != '\0' || value < 1 || value > 60000)
            command_usage_error ("replay",
                                 "--interval needs milliseconds (1 to "
                                 "60000), not '%s'",
                                 arg + 11);
          options.interval_ms = (int) value;
        }
      else if (arg[0] == '-' && arg[1] != '\0')
        command_usage_error ("replay", "unknown option '%s'", arg);
      else if (options.workload != NULL)
        command_usage_error ("replay", "one workload at a time");
      else
        options.workload = arg;
    }
  if (options.workload == NULL)
    command_usage_error ("replay", "no workload given");
  const char *library = allocator_library (options.allocator);
  options.library = library;

  struct mapped_file file;
  struct workload workload;
  open_and_check (options.workload, &file, &workload);
  if (!in_child)
    {
      workload_close (&workload);
      unmap_file (&file);
      int status
          = run_child (parent_argv, parent_argc, library, options.allocator);
      free (parent_argv);
      return status;
    }
  free (parent_argv);
  int status = replay_run (&options, &workload);
  workload_close (&workload);
  unmap_file (&file);
  return status;
}
