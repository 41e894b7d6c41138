/* The runtime's log: one line per message, prefixed "memprof: ", written
   with write(2) from a stack buffer (no stdio, no allocation), so it can
   be used from inside malloc.  */

#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOG_LINE_MAX 1024

static int log_fd = 2;

/* Expand %p in PATTERN into the process id.  */
static void
expand_pid (const char *pattern, char *out, size_t size)
{
  size_t used = 0;
  for (const char *p = pattern; *p != '\0' && used + 1 < size; p++)
    {
      if (p[0] == '%' && p[1] == 'p')
        {
          int n = snprintf (out + used, size - used, "%d", (int) getpid ());
          used += n > 0 ? (size_t) n : 0;
          p++;
        }
      else
        out[used++] = *p;
    }
  out[used < size ? used : size - 1] = '\0';
}

void
log_configure (const char *path)
{
  char expanded[MEMPROF_OPTION_STRING_MAX];
  int fd;

  if (strcmp (path, "stderr") == 0)
    {
      log_fd = 2;
      return;
    }
  if (strcmp (path, "stdout") == 0)
    {
      log_fd = 1;
      return;
    }
  expand_pid (path, expanded, sizeof expanded);
  fd = open (expanded, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      log_fd = 2;
      log_printf ("cannot open log_path '%s': %s; logging to stderr", expanded,
                  strerror (errno));
      return;
    }
  log_fd = fd;
}

void
log_write (const char *buffer, size_t length)
{
  while (length > 0)
    {
      ssize_t written = write (log_fd, buffer, length);
      if (written < 0 && errno == EINTR)
        continue;
      if (written <= 0)
        return;
      buffer += written;
      length -= written;
    }
}

void
log_printf (const char *format, ...)
{
  char line[LOG_LINE_MAX];
  size_t used;
  va_list args;
  int saved_errno = errno;

  memcpy (line, "memprof: ", 9);
  va_start (args, format);
  int n = vsnprintf (line + 9, sizeof line - 10, format, args);
  va_end (args);
  used = 9
         + (n < 0                           ? 0
            : (size_t) n < sizeof line - 10 ? (size_t) n
                                            : sizeof line - 11);
  line[used++] = '\n';
  log_write (line, used);
  errno = saved_errno;
}
