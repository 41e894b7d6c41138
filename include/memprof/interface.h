/* The public API of libmemprof, for programs that want to control their
   own profiling.  Link with `pkg-config --libs memprof`.  Every function
   is safe to call from any thread; none of them may be called from a
   signal handler.  */

#ifndef MEMPROF_INTERFACE_H
#define MEMPROF_INTERFACE_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Write a complete profile now, as the runtime does at exit: every
   allocation freed so far, plus every allocation live at this moment
   (folded into a copy, so it is not counted twice when it is freed later).
   The file is named by the profile_file option; without %n in it, each
   dump replaces the previous file (atomically, by rename).  Its side
   file, NAME.extra, is written with it (unless write_extra=0).
   Returns 0 on success, -1 if the profile could not be written (the
   reason is printed once on the runtime's log).  */
int memprof_dump (void);

/* Forget every allocation context recorded so far (allocations freed
   before this call), and the accesses counted so far to the program's
   global variables.  Allocations live now are still recorded when they
   are freed.  The log file (log_path) is closed: its next line opens
   log_path again, as the option is then.  */
void memprof_reset (void);

/* Set one option as MEMPROF_OPTIONS would ("key=value").  Returns 0 on
   success, -1 (with a line on the runtime's log) when the key is unknown
   or the value is bad, in which case nothing changes.  Options that only
   matter at start-up (histogram, handle_abort, handle_fatal_signals) keep
   their start-up value.  */
int memprof_set_option (const char *key_equals_value);

/* Copy the current value of option NAME, as text, into BUF (at most SIZE
   bytes, always NUL-terminated when SIZE > 0).  Returns the length of the
   full value, or -1 when NAME is not an option.  */
int memprof_get_option (const char *name, char *buf, size_t size);

/* The malloc API trace (docs/trace.md): every call of the malloc family
   and of C++ new and delete, with its thread, arguments, result and
   time, written compressed into the file named by the trace_file option.
   MEMPROF_OPTIONS=trace=1 starts it at start-up; these functions control
   it.  None of them may be called while another of them runs in a
   different thread for the same purpose (they are serialized, not
   reentrant from signal handlers).  */

/* Start a trace: a new file (trace_file, %n counting the traces started),
   recording from now on.  Returns 0 when a trace is recording now (also
   when one already was; a paused trace is resumed), -1 when the file
   cannot be created or the writer thread cannot start (logged).  */
int memprof_trace_start (void);

/* Stop the trace: everything recorded goes into the file, which gets its
   final name.  Returns 0 when the file is complete, -1 when no trace was
   started or the file could not be written (logged; no file is left).  */
int memprof_trace_stop (void);

/* Stop recording calls, and start again; the file stays open.  Calls made
   while paused are not in the trace.  Both return 0, or -1 when no trace
   is started.  */
int memprof_trace_pause (void);
int memprof_trace_resume (void);

/* Write everything recorded so far: when it returns, the file (under its
   final name) holds every call that returned before memprof_trace_sync
   was called, in every thread, and can be read while the program runs on.
   memprof_dump () does the same.  Returns 0, or -1 when no trace is
   started or the file could not be written.  */
int memprof_trace_sync (void);

/* Forget what was recorded and not yet written, and start the file anew:
   after it the file holds only calls made after memprof_trace_reset.
   Returns 0, or -1 when no trace is started or the file could not be
   truncated (a trace_file that is a FIFO or a device is never).  */
int memprof_trace_reset (void);

/* ---- LLVM's names (sanitizer/memprof_interface.h and
   sanitizer/allocator_interface.h), for code written for clang's
   runtime ---- */

/* memprof_dump () and memprof_reset () under LLVM's names.  */
int __memprof_profile_dump (void);
void __memprof_profile_reset (void);

/* Options compiled into the program: the runtime's definition is weak and
   returns ""; a program may define its own.  Read at start-up, before
   MEMPROF_OPTIONS, which overrides it.  */
const char *__memprof_default_options (void);

/* Call MALLOC_HOOK after every allocation of the program (pointer and
   requested size) and FREE_HOOK before every free of a non-null pointer.
   Returns the pair's slot (1 to 5), or 0 when a hook is null or the five
   slots are taken.  Hooks cannot be removed.  */
int __sanitizer_install_malloc_and_free_hooks (
    void (*malloc_hook) (const volatile void *pointer, size_t size),
    void (*free_hook) (const volatile void *pointer));

#ifdef __cplusplus
}
#endif

#endif /* MEMPROF_INTERFACE_H */
