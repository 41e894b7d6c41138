/* The runtime's log: one line per message, prefixed "memprof: ", written
   with write(2) from a stack buffer (no stdio, no allocation), so it can
   be used from inside malloc and from a signal handler.  log_reopen ()
   (memprof_reset) makes the next line open log_path again, as the option
   is then.  */

#define _GNU_SOURCE
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define LOG_LINE_MAX 1024

/* The lock of log_configure; bounded, since a signal handler may log.  */
#define LOG_LOCK_ATTEMPTS (1UL << 22)

static _Atomic int log_fd = 2;
/* The descriptor of the log file, once one was opened.  Every later file
   takes this same number (dup2), and a change back to stderr or stdout
   points it there: a line written while the log changes never goes to
   a descriptor that was closed and reused by the program.  */
static int log_file_fd = -1;
static spinlock_t log_lock = SPINLOCK_INIT;
static _Atomic bool log_reopen_pending;

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

/* Make FD (1 or 2, or a file just opened) the log.  */
static void
use_descriptor (int fd)
{
  if (log_file_fd < 0 && fd > 2)
    log_file_fd = fd;
  else if (log_file_fd >= 0 && fd != log_file_fd)
    {
      dup3 (fd, log_file_fd, O_CLOEXEC);
      if (fd > 2)
        close (fd);
    }
  atomic_store (&log_fd, log_file_fd >= 0 ? log_file_fd : fd);
}

void
log_configure (const char *path)
{
  char expanded[MEMPROF_OPTION_STRING_MAX];
  int fd;

  if (!spin_lock_within (&log_lock, LOG_LOCK_ATTEMPTS))
    return;
  if (strcmp (path, "stderr") == 0 || strcmp (path, "stdout") == 0)
    {
      use_descriptor (path[3] == 'e' ? 2 : 1);
      spin_unlock (&log_lock);
      return;
    }
  expand_pid (path, expanded, sizeof expanded);
  fd = open (expanded, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    {
      int error = errno;
      use_descriptor (2);
      spin_unlock (&log_lock);
      log_printf ("cannot open log_path '%s': %s; logging to stderr", expanded,
                  strerror (error));
      return;
    }
  use_descriptor (fd);
  spin_unlock (&log_lock);
}

void
log_reopen (void)
{
  atomic_store (&log_reopen_pending, true);
}

void
log_write (const char *buffer, size_t length)
{
  if (UNLIKELY (
          atomic_load_explicit (&log_reopen_pending, memory_order_relaxed))
      && atomic_exchange (&log_reopen_pending, false))
    log_configure (runtime_options.log_path);
  while (length > 0)
    {
      ssize_t written = write (atomic_load (&log_fd), buffer, length);
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
