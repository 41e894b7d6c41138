/* The runtime's options, made from options.def.  Pure logic: no
   allocation, no I/O (problems go through a caller-supplied function), so
   that the unit tests can drive it directly.  */

#ifndef MEMPROF_OPTIONS_H
#define MEMPROF_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

/* The longest value a string option can hold, NUL included.  */
#define MEMPROF_OPTION_STRING_MAX 1024
/* The longest choice of an enumerated option, NUL included.  */
#define MEMPROF_OPTION_ENUM_MAX 32

struct memprof_options
{
#define MEMPROF_BOOL(name, def, help, example) bool name;
#define MEMPROF_INT(name, def, min, max, help, example) long name;
#define MEMPROF_STRING(name, def, help, example)                               \
  char name[MEMPROF_OPTION_STRING_MAX];
#define MEMPROF_ENUM(name, def, choices, help, example)                        \
  char name[MEMPROF_OPTION_ENUM_MAX];
#include "options.def"
#undef MEMPROF_BOOL
#undef MEMPROF_INT
#undef MEMPROF_STRING
#undef MEMPROF_ENUM
};

enum memprof_option_type
{
  MEMPROF_OPTION_BOOL,
  MEMPROF_OPTION_INT,
  MEMPROF_OPTION_STRING,
  MEMPROF_OPTION_ENUM /* a string among CHOICES ("a|b|c") */
};

struct memprof_option_desc
{
  const char *name;
  enum memprof_option_type type;
  size_t offset; /* within struct memprof_options */
  long minimum, maximum;
  const char *default_text;
  const char *choices; /* enumerated options: "a|b|c" */
  const char *help;
  const char *example;
};

extern const struct memprof_option_desc memprof_option_table[];
extern const size_t memprof_option_count;

/* Receives one complete line (no newline) describing a problem.  */
typedef void (*memprof_option_report_fn) (void *cookie, const char *line);

/* Every option at its default.  */
void options_set_defaults (struct memprof_options *options);

/* Parse TEXT ("key=value" pairs separated by ':') into OPTIONS.  Each
   unknown key or bad value is reported once through REPORT, naming SOURCE
   (e.g. "MEMPROF_OPTIONS"), and leaves that option as it was.  Returns the
   number of problems.  */
int options_parse (struct memprof_options *options, const char *text,
                   const char *source, memprof_option_report_fn report,
                   void *cookie);

/* The descriptor of option NAME (LENGTH bytes), or NULL.  */
const struct memprof_option_desc *options_find (const char *name,
                                                size_t length);

/* Is the LENGTH bytes at VALUE one of DESC's choices?  */
bool options_is_choice (const struct memprof_option_desc *desc,
                        const char *value, size_t length);

/* Format the value of option DESC into BUF; returns the full length.  */
int options_format_value (const struct memprof_options *options,
                          const struct memprof_option_desc *desc, char *buf,
                          size_t size);

#endif /* MEMPROF_OPTIONS_H */
