/* The memprof command's subcommands, one file each (cmd_NAME.c), each
   with its own usage text and --help.  Each returns the exit status.  */

#ifndef MEMPROF_ANALYSIS_COMMANDS_H
#define MEMPROF_ANALYSIS_COMMANDS_H

int cmd_show (int argc, char **argv);
int cmd_merge (int argc, char **argv);
int cmd_diff (int argc, char **argv);
int cmd_functions (int argc, char **argv);
int cmd_flamegraph (int argc, char **argv);
int cmd_report (int argc, char **argv);
int cmd_findings (int argc, char **argv);
int cmd_trace (int argc, char **argv);
int cmd_trace2wl (int argc, char **argv);
int cmd_replay (int argc, char **argv);
int cmd_export (int argc, char **argv);
int cmd_check (int argc, char **argv);
int cmd_module_show (int argc, char **argv);

/* Print USAGE to stdout and return 0 when ARGV holds -h or --help (before
   a lone "--"); used by every subcommand before it parses.  */
int command_help_requested (int argc, char **argv);

/* "memprof: CMD: MESSAGE; see 'memprof CMD --help'" and exit status 2.  */
void command_usage_error (const char *command, const char *format, ...)
    __attribute__ ((noreturn, format (printf, 2, 3)));

/* VALUE of OPTION as a number from LOW to HIGH, or a usage error of
   COMMAND.  */
double command_number (const char *command, const char *option,
                       const char *value, double low, double high);
/* VALUE of OPTION as a count (0 or more), or a usage error.  */
long command_count (const char *command, const char *option, const char *value);
/* The index of VALUE in NAMES (NULL-terminated), or a usage error of
   COMMAND: "unknown WHAT 'VALUE' (a, b or c)".  */
int command_choice (const char *command, const char *what, const char *value,
                    const char *const *names);
/* { "text", "json", NULL }: the choice of --format for most commands.  */
extern const char *const command_text_or_json[];

#endif /* MEMPROF_ANALYSIS_COMMANDS_H */
