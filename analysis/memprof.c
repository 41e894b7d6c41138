/* memprof: the analysis command of GCC MemProf.  `memprof CMD ARGS...'
   runs the subcommand CMD; the table below is the list of them.  */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "util.h"

/* MEMPROF_VERSION comes from configure (the Makefile).  */

struct command
{
  const char *name;
  int (*run) (int argc, char **argv);
  const char *summary;
};

static const struct command commands[] = {
  { "show", cmd_show, "allocation contexts, ranked, as text, JSON or YAML" },
  { "findings", cmd_findings,
    "waste: never-touched, over-reserved, short-lived, leaked" },
  { "functions", cmd_functions, "the per-function allocation table" },
  { "flamegraph", cmd_flamegraph, "folded stacks or an SVG flame graph" },
  { "report", cmd_report, "a self-contained HTML report" },
  { "export", cmd_export, "pprof or speedscope files for their viewers" },
  { "check", cmd_check, "a memory gate for CI: limits and growth" },
  { "merge", cmd_merge, "many profiles into one .mprof file" },
  { "diff", cmd_diff, "what changed between two profiles" },
  { "trace", cmd_trace, "show a malloc API trace (trace=1)" },
  { "trace2wl", cmd_trace2wl, "a trace into a workload for replay" },
  { "replay", cmd_replay, "replay a workload against an allocator" },
  { "module-show", cmd_module_show, "a profiling module's output, symbolized" },
};

static void
usage (FILE *out)
{
  fprintf (out, "usage: memprof <command> [options] PROFILE...\n"
                "       memprof <command> --help\n"
                "\n"
                "Reads the profiles GCC MemProf's runtime writes (raw MemProf\n"
                "profiles, with their .extra side files), clang's\n"
                "-fmemory-profile profiles, and .mprof files from `memprof "
                "merge'.\n"
                "\n"
                "Commands:\n");
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    fprintf (out, "  %-11s %s\n", commands[i].name, commands[i].summary);
  fprintf (out,
           "\nExit status: 0 done, 1 a failure of this machine (out "
           "of memory, a failed write), 2 bad input or usage, 3 a limit of "
           "`memprof check' broken.\n");
}

int
main (int argc, char **argv)
{
  if (argc < 2)
    {
      usage (stderr);
      return EXIT_BAD_INPUT;
    }
  const char *name = argv[1];
  if (strcmp (name, "--help") == 0 || strcmp (name, "-h") == 0
      || strcmp (name, "help") == 0)
    {
      if (strcmp (name, "help") == 0 && argc > 2)
        {
          char *help_argv[] = { argv[2], (char *) "--help", NULL };
          for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
            if (strcmp (commands[i].name, argv[2]) == 0)
              return commands[i].run (2, help_argv);
          die (EXIT_BAD_INPUT, "no command '%s'; 'memprof --help' lists them",
               argv[2]);
        }
      usage (stdout);
      return 0;
    }
  if (strcmp (name, "--version") == 0)
    {
      printf ("memprof (GCC MemProf) %s\n", MEMPROF_VERSION);
      return 0;
    }
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
    if (strcmp (commands[i].name, name) == 0)
      {
        int status = commands[i].run (argc - 1, argv + 1);
        if (fflush (stdout) != 0 || ferror (stdout))
          die (1, "cannot write the output");
        return status;
      }
  die (EXIT_BAD_INPUT,
       "'%s' is not a memprof command; 'memprof --help' lists "
       "them",
       name);
}
