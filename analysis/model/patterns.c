/* Keeping and dropping contexts by regular expressions: see patterns.h.  */

#include "patterns.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

/* Compile EXPRESSION into a new entry of *LIST; WHERE names it in a
   message ("--focus", "FILE:LINE").  */
static void
add_expression (regex_t **list, size_t *count, const char *expression,
                const char *where)
{
  *list = xrealloc (*list, (*count + 1) * sizeof **list);
  int status = regcomp (&(*list)[*count], expression, REG_EXTENDED | REG_NOSUB);
  if (status != 0)
    {
      char message[256];
      regerror (status, &(*list)[*count], message, sizeof message);
      die (EXIT_BAD_INPUT, "%s: bad regular expression '%s': %s", where,
           expression, message);
    }
  ++*count;
}

/* Each line of PATH that is not blank or a comment (#) is an expression
   to ignore.  */
static void
read_suppressions (struct session_patterns *patterns, const char *path)
{
  struct mapped_file file;
  char error[1024];
  if (map_file (path, &file, error, sizeof error) != 0)
    die (EXIT_BAD_INPUT, "--suppressions: %s", error);
  char *text = xmalloc (file.size + 1);
  memcpy (text, file.data, file.size);
  text[file.size] = '\0';
  unmap_file (&file);
  if (memchr (text, '\0', file.size) != NULL)
    die (EXIT_BAD_INPUT,
         "%s: a NUL byte: a suppressions file is text, one regular "
         "expression a line",
         path);
  unsigned line_number = 0;
  char *save = NULL;
  for (char *line = text; line != NULL; line = save)
    {
      save = strchr (line, '\n');
      if (save != NULL)
        *save++ = '\0';
      line_number++;
      size_t length = strlen (line);
      while (length > 0
             && (line[length - 1] == ' ' || line[length - 1] == '\t'
                 || line[length - 1] == '\r'))
        line[--length] = '\0';
      while (*line == ' ' || *line == '\t')
        line++;
      if (*line == '\0' || *line == '#')
        continue;
      char *where = xasprintf ("%s:%u", path, line_number);
      add_expression (&patterns->ignore, &patterns->ignore_count, line, where);
      free (where);
    }
  free (text);
}

bool
patterns_option (struct session_patterns *patterns, int argc, char **argv,
                 int *index)
{
  static const char *const names[]
      = { "--focus", "--ignore", "--suppressions" };
  const char *arg = argv[*index];
  for (int n = 0; n < 3; n++)
    {
      size_t length = strlen (names[n]);
      const char *value;
      if (strncmp (arg, names[n], length) != 0)
        continue;
      if (arg[length] == '=')
        value = arg + length + 1;
      else if (arg[length] == '\0')
        {
          if (*index + 1 >= argc)
            die (EXIT_BAD_INPUT, "%s needs %s", names[n],
                 n == 2 ? "a file name" : "a regular expression");
          value = argv[++*index];
        }
      else
        continue;
      if (n == 0)
        add_expression (&patterns->focus, &patterns->focus_count, value,
                        names[n]);
      else if (n == 1)
        add_expression (&patterns->ignore, &patterns->ignore_count, value,
                        names[n]);
      else
        read_suppressions (patterns, value);
      return true;
    }
  return false;
}

static bool
matches (const regex_t *list, size_t count, const struct view_frame *frame)
{
  for (size_t i = 0; i < count; i++)
    if (regexec (&list[i], frame->name, 0, NULL, 0) == 0
        || (frame->function != NULL
            && regexec (&list[i], frame->function, 0, NULL, 0) == 0)
        || (frame->file[0] != '\0'
            && regexec (&list[i], frame->file, 0, NULL, 0) == 0))
      return true;
  return false;
}

void
patterns_apply (const struct session_patterns *patterns,
                struct session *session)
{
  if (patterns->focus_count == 0 && patterns->ignore_count == 0)
    return;
  struct profile *profile = &session->profile;
  bool *keep = xmalloc (profile->context_count + 1);
  struct view_frame *frames = NULL;
  size_t capacity = 0;
  for (size_t c = 0; c < profile->context_count; c++)
    {
      size_t n = session_frames (session, &profile->contexts[c], false, &frames,
                                 &capacity);
      bool focused = patterns->focus_count == 0, ignored = false;
      for (size_t f = 0; f < n; f++)
        {
          focused
              = focused
                || matches (patterns->focus, patterns->focus_count, &frames[f]);
          ignored = ignored
                    || matches (patterns->ignore, patterns->ignore_count,
                                &frames[f]);
        }
      keep[c] = focused && !ignored;
    }
  free (frames);
  profile_keep_contexts (profile, keep);
  free (keep);
}

void
patterns_free (struct session_patterns *patterns)
{
  for (size_t i = 0; i < patterns->focus_count; i++)
    regfree (&patterns->focus[i]);
  for (size_t i = 0; i < patterns->ignore_count; i++)
    regfree (&patterns->ignore[i]);
  free (patterns->focus);
  free (patterns->ignore);
}
