/* See emit.h.  */

#include "emit.h"
#include "util.h"

#include <stdbool.h>
#include <string.h>

void
emit_json_string (FILE *out, const char *text)
{
  fputc ('"', out);
  for (const unsigned char *p = (const unsigned char *) text; *p; p++)
    switch (*p)
      {
      case '"':
        fputs ("\\\"", out);
        break;
      case '\\':
        fputs ("\\\\", out);
        break;
      case '\n':
        fputs ("\\n", out);
        break;
      case '\t':
        fputs ("\\t", out);
        break;
      case '\r':
        fputs ("\\r", out);
        break;
      default:
        if (*p < 0x20)
          fprintf (out, "\\u%04x", *p);
        else
          fputc (*p, out);
      }
  fputc ('"', out);
}

/* Characters that make a YAML plain scalar mean something else.  */
static bool
yaml_needs_quotes (const char *text)
{
  if (*text == '\0' || strchr ("-?:,[]{}#&*!|>'\"%@` ", *text) != NULL)
    return true;
  for (const unsigned char *p = (const unsigned char *) text; *p; p++)
    if (*p < 0x20 || *p == '\\' || (*p == ':' && (p[1] == ' ' || p[1] == '\0'))
        || (*p == ' ' && p[1] == '#') || *p == '"')
      return true;
  size_t length = strlen (text);
  return text[length - 1] == ' ';
}

void
emit_yaml_string (FILE *out, const char *text)
{
  if (!yaml_needs_quotes (text))
    fputs (text, out);
  else
    emit_json_string (out, text);
}

void
emit_html_text (FILE *out, const char *text)
{
  for (const char *p = text; *p; p++)
    {
      const char *entity = markup_entity (*p);
      if (entity)
        fputs (entity, out);
      else
        fputc (*p, out);
    }
}
