/* MEMPROF_OPTIONS parsing.  Runs inside the first malloc call, so it uses
   no allocation: values are parsed in place and copied into fixed
   buffers.  */

#include "options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STRINGIFY_(x) #x
#define STRINGIFY(x) STRINGIFY_ (x)

const struct memprof_option_desc memprof_option_table[] = {
#define OPTION(option_name, option_type, low, high, text, option_choices,      \
               option_help, option_example)                                    \
  { .name = #option_name,                                                      \
    .type = option_type,                                                       \
    .offset = offsetof (struct memprof_options, option_name),                  \
    .minimum = low,                                                            \
    .maximum = high,                                                           \
    .default_text = text,                                                      \
    .choices = option_choices,                                                 \
    .help = option_help,                                                       \
    .example = option_example },
#define MEMPROF_BOOL(name, def, help, example)                                 \
  OPTION (name, MEMPROF_OPTION_BOOL, 0, 1, (def) ? "1" : "0", NULL, help,      \
          example)
#define MEMPROF_INT(name, def, min, max, help, example)                        \
  OPTION (name, MEMPROF_OPTION_INT, min, max, STRINGIFY (def), NULL, help,     \
          example)
#define MEMPROF_STRING(name, def, help, example)                               \
  OPTION (name, MEMPROF_OPTION_STRING, 0, 0, def, NULL, help, example)
#define MEMPROF_ENUM(name, def, choices, help, example)                        \
  OPTION (name, MEMPROF_OPTION_ENUM, 0, 0, def, choices, help, example)
#include "options.def"
#undef MEMPROF_BOOL
#undef MEMPROF_INT
#undef MEMPROF_STRING
#undef MEMPROF_ENUM
#undef OPTION
};

const size_t memprof_option_count
    = sizeof memprof_option_table / sizeof memprof_option_table[0];

void
options_set_defaults (struct memprof_options *options)
{
  memset (options, 0, sizeof *options);
#define MEMPROF_BOOL(name, def, help, example) options->name = (def);
#define MEMPROF_INT(name, def, min, max, help, example) options->name = (def);
#define MEMPROF_STRING(name, def, help, example)                               \
  snprintf (options->name, sizeof options->name, "%s", def);
#define MEMPROF_ENUM(name, def, choices, help, example)                        \
  snprintf (options->name, sizeof options->name, "%s", def);
#include "options.def"
#undef MEMPROF_BOOL
#undef MEMPROF_INT
#undef MEMPROF_STRING
#undef MEMPROF_ENUM
}

const struct memprof_option_desc *
options_find (const char *name, size_t length)
{
  for (size_t i = 0; i < memprof_option_count; i++)
    {
      const char *candidate = memprof_option_table[i].name;
      if (strlen (candidate) == length && memcmp (candidate, name, length) == 0)
        return &memprof_option_table[i];
    }
  return NULL;
}

static bool
parse_bool (const char *value, size_t length, bool *result)
{
  static const char *const truths[] = { "1", "true", "yes", "on" };
  static const char *const falsehoods[] = { "0", "false", "no", "off" };
  for (size_t i = 0; i < 4; i++)
    {
      if (strlen (truths[i]) == length
          && strncmp (value, truths[i], length) == 0)
        return *result = true, true;
      if (strlen (falsehoods[i]) == length
          && strncmp (value, falsehoods[i], length) == 0)
        return *result = false, true;
    }
  return false;
}

static bool
parse_int (const char *value, size_t length, long minimum, long maximum,
           long *result)
{
  char digits[32];
  char *end;
  long parsed;

  if (length == 0 || length >= sizeof digits)
    return false;
  memcpy (digits, value, length);
  digits[length] = '\0';
  errno = 0;
  parsed = strtol (digits, &end, 0);
  if (errno != 0 || *end != '\0' || parsed < minimum || parsed > maximum)
    return false;
  *result = parsed;
  return true;
}

bool
options_is_choice (const struct memprof_option_desc *desc, const char *value,
                   size_t length)
{
  for (const char *choice = desc->choices; choice != NULL && *choice != '\0';)
    {
      const char *bar = strchr (choice, '|');
      size_t choice_length = bar ? (size_t) (bar - choice) : strlen (choice);
      if (choice_length == length && strncmp (choice, value, length) == 0)
        return true;
      choice = bar ? bar + 1 : choice + choice_length;
    }
  return false;
}

/* Reports quote at most this much of a bad text, so that the line
   always goes on to say which option it is and what was expected.  */
#define QUOTED_MAX 64

static int
quoted_length (size_t length)
{
  return (int) (length > QUOTED_MAX ? QUOTED_MAX : length);
}

static const char *
ellipsis (size_t length)
{
  return length > QUOTED_MAX ? "..." : "";
}

/* What a good value of DESC looks like, for error messages.  */
static void
describe_expected (const struct memprof_option_desc *desc, char *buf,
                   size_t size)
{
  switch (desc->type)
    {
    case MEMPROF_OPTION_BOOL:
      snprintf (buf, size, "0 or 1 (also false/true, no/yes, off/on)");
      break;
    case MEMPROF_OPTION_INT:
      snprintf (buf, size, "an integer from %ld to %ld", desc->minimum,
                desc->maximum);
      break;
    case MEMPROF_OPTION_STRING:
      snprintf (buf, size, "a non-empty text shorter than %d bytes",
                MEMPROF_OPTION_STRING_MAX);
      break;
    case MEMPROF_OPTION_ENUM:
      snprintf (buf, size, "one of %s", desc->choices);
      break;
    }
}

/* Store VALUE into the option DESC; false when the value is bad.  */
static bool
set_value (struct memprof_options *options,
           const struct memprof_option_desc *desc, const char *value,
           size_t length)
{
  char *field = (char *) options + desc->offset;
  switch (desc->type)
    {
    case MEMPROF_OPTION_BOOL:
      return parse_bool (value, length, (bool *) field);
    case MEMPROF_OPTION_INT:
      return parse_int (value, length, desc->minimum, desc->maximum,
                        (long *) field);
    case MEMPROF_OPTION_ENUM:
      if (!options_is_choice (desc, value, length)
          || length >= MEMPROF_OPTION_ENUM_MAX)
        return false;
      memcpy (field, value, length);
      field[length] = '\0';
      return true;
    case MEMPROF_OPTION_STRING:
      if (length == 0 || length >= MEMPROF_OPTION_STRING_MAX)
        return false;
      memcpy (field, value, length);
      field[length] = '\0';
      return true;
    }
  return false;
}

int
options_parse (struct memprof_options *options, const char *text,
               const char *source, memprof_option_report_fn report,
               void *cookie)
{
  char line[512];
  int problems = 0;
  const char *item = text;

  if (text == NULL)
    return 0;
  while (*item != '\0')
    {
      const char *end = strchr (item, ':');
      size_t item_length = end ? (size_t) (end - item) : strlen (item);
      const char *equals = memchr (item, '=', item_length);

      if (item_length == 0)
        ; /* "a=1::b=2" and a trailing ':' are harmless.  */
      else if (equals == NULL)
        {
          snprintf (
              line, sizeof line,
              "%s: '%.*s%s' is not key=value; ignored (MEMPROF_OPTIONS=help=1 "
              "lists the options)",
              source, quoted_length (item_length), item,
              ellipsis (item_length));
          report (cookie, line);
          problems++;
        }
      else
        {
          size_t key_length = equals - item;
          const char *value = equals + 1;
          size_t value_length = item_length - key_length - 1;
          const struct memprof_option_desc *desc
              = options_find (item, key_length);

          if (desc == NULL)
            {
              snprintf (line, sizeof line,
                        "%s: unknown option '%.*s%s'; ignored "
                        "(MEMPROF_OPTIONS=help=1 "
                        "lists the options)",
                        source, quoted_length (key_length), item,
                        ellipsis (key_length));
              report (cookie, line);
              problems++;
            }
          else if (!set_value (options, desc, value, value_length))
            {
              char expected[96], current[64];
              describe_expected (desc, expected, sizeof expected);
              options_format_value (options, desc, current, sizeof current);
              snprintf (line, sizeof line,
                        "%s: bad value '%.*s%s' for %s (expected %s); keeping "
                        "%s",
                        source, quoted_length (value_length), value,
                        ellipsis (value_length), desc->name, expected, current);
              report (cookie, line);
              problems++;
            }
        }
      if (end == NULL)
        break;
      item = end + 1;
    }
  return problems;
}

int
options_format_value (const struct memprof_options *options,
                      const struct memprof_option_desc *desc, char *buf,
                      size_t size)
{
  const char *field = (const char *) options + desc->offset;
  switch (desc->type)
    {
    case MEMPROF_OPTION_BOOL:
      return snprintf (buf, size, "%d", *(const bool *) field ? 1 : 0);
    case MEMPROF_OPTION_INT:
      return snprintf (buf, size, "%ld", *(const long *) field);
    case MEMPROF_OPTION_STRING:
    case MEMPROF_OPTION_ENUM:
      return snprintf (buf, size, "%s", field);
    }
  return -1;
}
