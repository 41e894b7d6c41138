/* options.c: defaults, lookup, formatting and MEMPROF_OPTIONS parsing.
   Every expected value below is taken from runtime/options.def by hand,
   never from the code under test.  */

#include <stdio.h>
#include <string.h>

#include "options.h"
#include "unit.h"

#define SOURCE "UNIT_OPTIONS"
#define MAX_REPORTS 8

/* The lines given to the report callback.  */
struct report_log
{
  int count;
  char lines[MAX_REPORTS][600];
};

static void
collect_report (void *cookie, const char *line)
{
  struct report_log *log = cookie;
  if (log->count < MAX_REPORTS)
    snprintf (log->lines[log->count], sizeof log->lines[0], "%s", line);
  log->count++;
}

/* Parse TEXT into OPTIONS (as they are), recording reports in LOG.  */
static int
parse_into (struct memprof_options *options, struct report_log *log,
            const char *text)
{
  memset (log, 0, sizeof *log);
  return options_parse (options, text, SOURCE, collect_report, log);
}

static void
assert_contains (const char *line, const char *fragment)
{
  size_t length = strlen (line);
  /* Long lines are shown by their last 160 bytes.  */
  ck_assert_msg (strstr (line, fragment) != NULL,
                 "report line \"%s%s\" lacks \"%s\"", length > 160 ? "..." : "",
                 length > 160 ? line + length - 160 : line, fragment);
}

/* Options with every value away from its default, so that "kept its
   previous value" cannot be confused with "reset to the default".  */
static void
set_non_default_options (struct memprof_options *options)
{
  struct report_log log;
  options_set_defaults (options);
  ck_assert_int_eq (parse_into (options, &log,
                                "profile_file=/tmp/keep.%p:log_path=stdout:"
                                "print_text=1:verbosity=2:histogram=1:"
                                "max_stack_depth=64:write_profile=0:help=1"),
                    0);
  ck_assert_int_eq (log.count, 0);
}

/* ---- Defaults and the table ---- */

START_TEST (test_defaults_match_options_def)
{
  struct memprof_options options;
  memset (&options, 0x5a, sizeof options);
  options_set_defaults (&options);
  ck_assert_str_eq (options.profile_file, "memprof.profraw.%p");
  ck_assert_str_eq (options.log_path, "stderr");
  ck_assert (!options.print_text);         /* print_text, 0 */
  ck_assert_int_eq (options.verbosity, 0); /* verbosity, 0 */
  ck_assert (!options.histogram);          /* histogram, 0 */
  ck_assert_int_eq (options.max_stack_depth, 30);
  ck_assert (options.write_profile); /* write_profile, 1 */
  ck_assert (!options.help);         /* help, 0 */
}
END_TEST

/* The entries of runtime/options.def, counted in the file itself.  */
static size_t
count_options_def_entries (void)
{
  FILE *def = fopen ("../../runtime/options.def", "r");
  char line[512];
  size_t entries = 0;

  ck_assert_ptr_nonnull (def);
  while (fgets (line, sizeof line, def) != NULL)
    if (strncmp (line, "MEMPROF_BOOL (", 14) == 0
        || strncmp (line, "MEMPROF_INT (", 13) == 0
        || strncmp (line, "MEMPROF_STRING (", 16) == 0
        || strncmp (line, "MEMPROF_ENUM (", 14) == 0)
      entries++;
  fclose (def);
  return entries;
}

START_TEST (test_table_describes_options_def)
{
  const struct memprof_option_desc *desc;

  ck_assert_uint_ge (memprof_option_count, 9);
  ck_assert_uint_eq (memprof_option_count, count_options_def_entries ());
  desc = options_find ("max_stack_depth", 15);
  ck_assert_ptr_nonnull (desc);
  ck_assert_int_eq (desc->type, MEMPROF_OPTION_INT);
  ck_assert_int_eq (desc->minimum, 1);
  ck_assert_int_eq (desc->maximum, 256);
  ck_assert_str_eq (desc->default_text, "30");
  ck_assert_uint_eq (desc->offset,
                     offsetof (struct memprof_options, max_stack_depth));
  desc = options_find ("write_profile", 13);
  ck_assert_ptr_nonnull (desc);
  ck_assert_int_eq (desc->type, MEMPROF_OPTION_BOOL);
  ck_assert_str_eq (desc->default_text, "1");
  desc = options_find ("log_path", 8);
  ck_assert_ptr_nonnull (desc);
  ck_assert_int_eq (desc->type, MEMPROF_OPTION_STRING);
  ck_assert_str_eq (desc->default_text, "stderr");
}
END_TEST

START_TEST (test_find_uses_exact_length)
{
  const struct memprof_option_desc *desc;

  desc = options_find ("verbosity", 9);
  ck_assert_ptr_nonnull (desc);
  ck_assert_str_eq (desc->name, "verbosity");
  ck_assert_int_eq (desc->minimum, 0);
  ck_assert_int_eq (desc->maximum, 3);
  /* The first 4 bytes of "helpful" are "help".  */
  desc = options_find ("helpful", 4);
  ck_assert_ptr_nonnull (desc);
  ck_assert_str_eq (desc->name, "help");
  ck_assert_ptr_null (options_find ("verb", 4));         /* a prefix */
  ck_assert_ptr_null (options_find ("verbosity_x", 11)); /* longer */
  ck_assert_ptr_null (options_find ("VERBOSITY", 9));    /* case matters */
  ck_assert_ptr_null (options_find ("", 0));
}
END_TEST

START_TEST (test_format_value)
{
  struct memprof_options options;
  char buf[64];

  options_set_defaults (&options);
  /* "memprof.profraw.%p" is 18 characters.  */
  ck_assert_int_eq (options_format_value (&options,
                                          options_find ("profile_file", 12),
                                          buf, sizeof buf),
                    18);
  ck_assert_str_eq (buf, "memprof.profraw.%p");
  ck_assert_int_eq (options_format_value (&options,
                                          options_find ("max_stack_depth", 15),
                                          buf, sizeof buf),
                    2);
  ck_assert_str_eq (buf, "30");
  ck_assert_int_eq (options_format_value (&options,
                                          options_find ("write_profile", 13),
                                          buf, sizeof buf),
                    1);
  ck_assert_str_eq (buf, "1");
  ck_assert_int_eq (options_format_value (&options, options_find ("help", 4),
                                          buf, sizeof buf),
                    1);
  ck_assert_str_eq (buf, "0");
  /* A short buffer gets the first 7 characters; the full length is 18.  */
  ck_assert_int_eq (options_format_value (
                        &options, options_find ("profile_file", 12), buf, 8),
                    18);
  ck_assert_str_eq (buf, "memprof");
}
END_TEST

/* ---- Good input ---- */

static const struct
{
  const char *spelling;
  bool value;
} bool_spellings[] = {
  { "1", true },   { "0", false },  { "true", true }, { "false", false },
  { "yes", true }, { "no", false }, { "on", true },   { "off", false },
};

START_TEST (test_bool_spellings)
{
  struct memprof_options options;
  struct report_log log;
  char text[64];
  bool expected = bool_spellings[_i].value;

  options_set_defaults (&options);
  options.print_text = !expected; /* start from the other value */
  snprintf (text, sizeof text, "print_text=%s", bool_spellings[_i].spelling);
  ck_assert_int_eq (parse_into (&options, &log, text), 0);
  ck_assert_int_eq (log.count, 0);
  ck_assert_msg (options.print_text == expected, "%s gave %d", text,
                 options.print_text);
}
END_TEST

START_TEST (test_int_limits)
{
  struct memprof_options options;
  struct report_log log;

  options_set_defaults (&options);
  ck_assert_int_eq (parse_into (&options, &log, "verbosity=3"), 0);
  ck_assert_int_eq (options.verbosity, 3); /* maximum */
  ck_assert_int_eq (parse_into (&options, &log, "verbosity=0"), 0);
  ck_assert_int_eq (options.verbosity, 0); /* minimum */
  ck_assert_int_eq (parse_into (&options, &log, "max_stack_depth=1"), 0);
  ck_assert_int_eq (options.max_stack_depth, 1); /* minimum */
  ck_assert_int_eq (parse_into (&options, &log, "max_stack_depth=256"), 0);
  ck_assert_int_eq (options.max_stack_depth, 256); /* maximum */
  ck_assert_int_eq (log.count, 0);
}
END_TEST

START_TEST (test_string_values)
{
  struct memprof_options options;
  struct report_log log;
  char text[1100];

  options_set_defaults (&options);
  ck_assert_int_eq (
      parse_into (&options, &log, "profile_file=/tmp/x.%p.profraw"), 0);
  ck_assert_str_eq (options.profile_file, "/tmp/x.%p.profraw");
  ck_assert_int_eq (parse_into (&options, &log, "log_path=stdout"), 0);
  ck_assert_str_eq (options.log_path, "stdout");
  /* Only the first '=' separates key and value.  */
  ck_assert_int_eq (parse_into (&options, &log, "log_path=a=b"), 0);
  ck_assert_str_eq (options.log_path, "a=b");
  /* 1023 bytes is the longest value (1024 with the NUL).  */
  snprintf (text, sizeof text, "profile_file=%01023d", 7);
  ck_assert_int_eq (parse_into (&options, &log, text), 0);
  ck_assert_uint_eq (strlen (options.profile_file), 1023);
  ck_assert_str_eq (options.profile_file, text + 13);
  ck_assert_int_eq (log.count, 0);
}
END_TEST

START_TEST (test_several_keys)
{
  struct memprof_options options;
  struct report_log log;

  options_set_defaults (&options);
  ck_assert_int_eq (parse_into (&options, &log,
                                "verbosity=2:print_text=yes:max_stack_depth=64:"
                                "log_path=/tmp/l.%p:write_profile=off"),
                    0);
  ck_assert_int_eq (log.count, 0);
  ck_assert_int_eq (options.verbosity, 2);
  ck_assert (options.print_text);
  ck_assert_int_eq (options.max_stack_depth, 64);
  ck_assert_str_eq (options.log_path, "/tmp/l.%p");
  ck_assert (!options.write_profile);
  /* Untouched options keep their defaults.  */
  ck_assert_str_eq (options.profile_file, "memprof.profraw.%p");
  ck_assert (!options.histogram);
}
END_TEST

START_TEST (test_empty_items_are_harmless)
{
  struct memprof_options options;
  struct report_log log;

  options_set_defaults (&options);
  ck_assert_int_eq (
      parse_into (&options, &log, "verbosity=1::max_stack_depth=2"), 0);
  ck_assert_int_eq (options.verbosity, 1);
  ck_assert_int_eq (options.max_stack_depth, 2);
  ck_assert_int_eq (parse_into (&options, &log, "verbosity=3:"), 0);
  ck_assert_int_eq (options.verbosity, 3);
  ck_assert_int_eq (parse_into (&options, &log, ":help=1"), 0);
  ck_assert (options.help);
  ck_assert_int_eq (parse_into (&options, &log, ":::"), 0);
  ck_assert_int_eq (parse_into (&options, &log, ""), 0);
  ck_assert_int_eq (
      options_parse (&options, NULL, SOURCE, collect_report, &log), 0);
  ck_assert_int_eq (log.count, 0);
  ck_assert_int_eq (options.verbosity, 3);
  ck_assert_int_eq (options.max_stack_depth, 2);
}
END_TEST

START_TEST (test_later_item_wins)
{
  struct memprof_options options;
  struct report_log log;

  options_set_defaults (&options);
  ck_assert_int_eq (parse_into (&options, &log, "verbosity=1:verbosity=2"), 0);
  ck_assert_int_eq (options.verbosity, 2);
}
END_TEST

/* ---- Bad input: one line each, option kept ---- */

/* One bad item: the text, a fragment naming the key or the text, a
   fragment saying what was expected, and one saying what happens.  */
static const struct
{
  const char *text;
  const char *names;
  const char *expected;
  const char *outcome;
} bad_items[] = {
  { "no_such_option=1", "'no_such_option'", "unknown option", "ignored" },
  { "=1", "''", "unknown option", "ignored" },
  { "verbosity", "'verbosity'", "not key=value", "ignored" },
  { "verbosity=4", "verbosity", "an integer from 0 to 3", "keeping 2" },
  { "verbosity=-1", "verbosity", "an integer from 0 to 3", "keeping 2" },
  { "max_stack_depth=0", "max_stack_depth", "an integer from 1 to 256",
    "keeping 64" },
  { "max_stack_depth=257", "max_stack_depth", "an integer from 1 to 256",
    "keeping 64" },
  { "max_stack_depth=abc", "max_stack_depth", "an integer from 1 to 256",
    "keeping 64" },
  { "max_stack_depth=12x", "max_stack_depth", "an integer from 1 to 256",
    "keeping 64" },
  { "max_stack_depth=", "max_stack_depth", "an integer from 1 to 256",
    "keeping 64" },
  /* 2^63: strtol reports ERANGE.  */
  { "max_stack_depth=9223372036854775808", "max_stack_depth",
    "an integer from 1 to 256", "keeping 64" },
  { "profile_file=", "profile_file", "a non-empty text",
    "keeping /tmp/keep.%p" },
  { "log_path=", "log_path", "a non-empty text", "keeping stdout" },
  { "print_text=maybe", "print_text", "0 or 1", "keeping 1" },
  { "print_text=2", "print_text", "0 or 1", "keeping 1" },
  { "print_text=", "print_text", "0 or 1", "keeping 1" },
  { "help=yess", "help", "0 or 1", "keeping 1" },
};

START_TEST (test_bad_item_reported_once_and_ignored)
{
  struct memprof_options options, before;
  struct report_log log;

  set_non_default_options (&options);
  before = options;
  ck_assert_int_eq (parse_into (&options, &log, bad_items[_i].text), 1);
  ck_assert_int_eq (log.count, 1);
  assert_contains (log.lines[0], SOURCE ": ");
  assert_contains (log.lines[0], bad_items[_i].names);
  assert_contains (log.lines[0], bad_items[_i].expected);
  assert_contains (log.lines[0], bad_items[_i].outcome);
  ck_assert_msg (memcmp (&options, &before, sizeof options) == 0,
                 "\"%s\" changed the options", bad_items[_i].text);
}
END_TEST

START_TEST (test_bad_items_among_good_ones)
{
  struct memprof_options options;
  struct report_log log;

  options_set_defaults (&options);
  /* 4 problems: bogus, max_stack_depth=999, profile_file=, nokey.  */
  ck_assert_int_eq (parse_into (&options, &log,
                                "verbosity=2:bogus=1:max_stack_depth=999:"
                                "print_text=on:profile_file=:log_path=stdout:"
                                "nokey"),
                    4);
  ck_assert_int_eq (log.count, 4);
  assert_contains (log.lines[0], "'bogus'");
  assert_contains (log.lines[1], "'999' for max_stack_depth");
  assert_contains (log.lines[2], "for profile_file");
  assert_contains (log.lines[3], "'nokey'");
  /* The good items applied...  */
  ck_assert_int_eq (options.verbosity, 2);
  ck_assert (options.print_text);
  ck_assert_str_eq (options.log_path, "stdout");
  /* ...the bad ones left their defaults.  */
  ck_assert_int_eq (options.max_stack_depth, 30);
  ck_assert_str_eq (options.profile_file, "memprof.profraw.%p");
}
END_TEST

START_TEST (test_overlong_string_rejected)
{
  struct memprof_options options, before;
  struct report_log log;
  char text[1200];

  set_non_default_options (&options);
  before = options;
  /* A 1024-byte value does not fit with its NUL.  */
  snprintf (text, sizeof text, "profile_file=%01024d", 7);
  ck_assert_int_eq (parse_into (&options, &log, text), 1);
  ck_assert_int_eq (log.count, 1);
  ck_assert (memcmp (&options, &before, sizeof options) == 0);
  ck_assert_str_eq (options.profile_file, "/tmp/keep.%p");
}
END_TEST

/* A report about a very long bad value (a string option is refused at
   1024 bytes) must still name the option and say what was expected: the
   value is quoted only in part.  */
START_TEST (test_overlong_string_report_names_option)
{
  struct memprof_options options;
  struct report_log log;
  char text[1200];

  set_non_default_options (&options);
  snprintf (text, sizeof text, "profile_file=%01024d", 7);
  ck_assert_int_eq (parse_into (&options, &log, text), 1);
  ck_assert_int_eq (log.count, 1);
  assert_contains (log.lines[0], "profile_file");
  assert_contains (log.lines[0], "shorter than 1024 bytes");
}
END_TEST

Suite *
options_suite (void)
{
  Suite *suite = suite_create ("options");
  TCase *table = tcase_create ("table");
  TCase *good = tcase_create ("good input");
  TCase *bad = tcase_create ("bad input");

  tcase_add_test (table, test_defaults_match_options_def);
  tcase_add_test (table, test_table_describes_options_def);
  tcase_add_test (table, test_find_uses_exact_length);
  tcase_add_test (table, test_format_value);
  suite_add_tcase (suite, table);

  tcase_add_loop_test (good, test_bool_spellings, 0,
                       sizeof bool_spellings / sizeof bool_spellings[0]);
  tcase_add_test (good, test_int_limits);
  tcase_add_test (good, test_string_values);
  tcase_add_test (good, test_several_keys);
  tcase_add_test (good, test_empty_items_are_harmless);
  tcase_add_test (good, test_later_item_wins);
  suite_add_tcase (suite, good);

  tcase_add_loop_test (bad, test_bad_item_reported_once_and_ignored, 0,
                       sizeof bad_items / sizeof bad_items[0]);
  tcase_add_test (bad, test_bad_items_among_good_ones);
  tcase_add_test (bad, test_overlong_string_rejected);
  tcase_add_test (bad, test_overlong_string_report_names_option);
  suite_add_tcase (suite, bad);
  return suite;
}
