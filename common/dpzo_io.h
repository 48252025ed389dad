/* SPDX-License-Identifier: Apache-2.0 */
/* common/dpzo_io.h: how dpzo reads and writes files (docs/files.md).
 *
 * Writes replace a regular file atomically: the bytes go to a temporary in the same folder
 * (an unnamed O_TMPFILE where the filesystem has one, linked under a random hidden name at
 * the last moment; else a file created with O_CREAT|O_EXCL|O_NOFOLLOW under a random name),
 * are fsync'ed, renamed over the destination, and the folder is fsync'ed. A killed writer
 * leaves the old file or the new one, never a mixture. A symbolic link at the destination is
 * written through to its regular target (the temporary goes in the target's folder); a
 * device, FIFO or "-" (stdout) is written directly where the caller allows it
 * (DPZO_IO_DIRECT), else refused; a directory is refused. Nothing is ever replaced that is
 * not a regular file.
 *
 * Reads take regular files only (symbolic links to them are followed): the file is opened
 * without blocking and checked with fstat before any byte is read, so a FIFO, device or
 * directory is refused at once, and every reader has a size limit.
 *
 * This module sits below the library's status codes: each function returns 0 on success or
 * -1 with a one-line message in err (naming the file and the rule it broke); the callers turn
 * that into a dpzo_status (library) or an exit code (CLI). Nothing here prints or exits. */
#ifndef DPZO_IO_H
#define DPZO_IO_H

#include <stdio.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Room for a message (a path and a sentence). */
#define DPZO_IO_ERRMAX 1024

/* Size limits of the readers (bytes; docs/files.md lists them). */
#define DPZO_IO_MIB ((size_t)1 << 20)
#define DPZO_IO_LIMIT_PROFILE (64 * DPZO_IO_MIB)    /* noise profiles (a few kB) */
#define DPZO_IO_LIMIT_CONFIG (16 * DPZO_IO_MIB)     /* training configurations */
#define DPZO_IO_LIMIT_CLAIM (64 * DPZO_IO_MIB)      /* audit claim files */
#define DPZO_IO_LIMIT_GRID (64 * DPZO_IO_MIB)       /* LMO search grids */
#define DPZO_IO_LIMIT_JSON (64 * DPZO_IO_MIB)       /* other JSON inputs (schedules, scores) */
#define DPZO_IO_LIMIT_LOG (1 * DPZO_IO_MIB)         /* logs read back (gnuplot's) */
#define DPZO_IO_LIMIT_PICTURE (256 * DPZO_IO_MIB)   /* a rendered plot copied to its place */
/* A checkpoint's own size follows from its contents; this bounds what is read at all. */
#define DPZO_IO_LIMIT_CHECKPOINT ((size_t)16 << 30) /* 16 GiB */
/* An IDX file's data, decompressed (the header's sizes are checked against it first). */
#define DPZO_IO_LIMIT_IDX ((size_t)16 << 30)        /* 16 GiB */

/* Writing flags. */
#define DPZO_IO_DIRECT 1u /* a device, FIFO or "-" (stdout) is written directly, not refused */
#define DPZO_IO_NAMED 2u  /* tests: a named temporary even where O_TMPFILE works */

/* Reads all of the regular file path (at most limit bytes) into a new buffer, NUL-terminated
 * (the terminator is not counted in *len). what names the file in messages ("profile"). */
int dpzo_io_read_file(const char *path, const char *what, size_t limit, char **out, size_t *len,
                      char *err, size_t errlen);

/* Opens the regular file path for reading (a link is followed) and returns its descriptor
 * (close-on-exec), or -1 with a message; *size gets its size (NULL: not wanted). A file
 * larger than limit is refused. */
int dpzo_io_open_read(const char *path, const char *what, size_t limit, long long *size,
                      char *err, size_t errlen);

/* Writes n bytes to path: atomically when path is (or links to) a regular file or does not
 * exist, directly to a device, FIFO or "-" when flags has DPZO_IO_DIRECT (else refused).
 * A new file gets mode 0644 (less the umask), a replaced file keeps its mode and owner. */
int dpzo_io_write_file(const char *path, const char *what, const void *buf, size_t n,
                       unsigned flags, char *err, size_t errlen);

/* Checks, before the work whose result goes to path, that path can be written as
 * dpzo_io_write_file (same flags) or dpzo_io_open_append (DPZO_IO_DIRECT) will write it, so
 * that a run does not spend its time (or a privacy budget) and then lose the result. Nothing
 * at path is created, truncated or changed: a regular file or a missing one needs a folder
 * that exists and takes a new file (probed with a temporary of one byte, unnamed where the
 * filesystem allows it, removed at once); a device gets an empty write (/dev/full refuses
 * it); a FIFO is opened without waiting (no reader: refused) and that descriptor is kept
 * for the real write, so the reader sees no end-of-file in between; a directory, a dangling
 * link, a read-only filesystem are refused. 0, or -1 with a message naming path. */
int dpzo_io_check_output(const char *path, const char *what, unsigned flags, char *err,
                         size_t errlen);

/* A writer for code that prints with stdio: the bytes collect in memory, and
 * dpzo_io_out_commit writes them with dpzo_io_write_file (so a writer killed midway leaves
 * the old file). */
typedef struct dpzo_io_out dpzo_io_out;
/* NULL when out of memory (message in err). */
dpzo_io_out *dpzo_io_out_open(const char *path, const char *what, unsigned flags, char *err,
                              size_t errlen);
FILE *dpzo_io_out_stream(dpzo_io_out *o);
/* Writes and frees; -1 with a message when the stream or the write failed. */
int dpzo_io_out_commit(dpzo_io_out *o, char *err, size_t errlen);
/* Frees without writing anything. */
void dpzo_io_out_discard(dpzo_io_out *o);

/* An appended stream (a metrics log): a symbolic link is resolved to its target; a regular
 * file is opened for appending (created with mode 0644 when missing, emptied first when
 * truncate is set); a device or FIFO is opened for writing directly (no truncation; a FIFO
 * without a reader is refused rather than waited for); a directory is refused. *regular
 * tells which (NULL: not wanted). Returns NULL with a message on failure. */
FILE *dpzo_io_open_append(const char *path, const char *what, int truncate, int *regular,
                          char *err, size_t errlen);

/* The name a temporary for dest gets: the folder of dest, then "." base ".tmp." and 16 random
 * hex digits (documented so that a stray one can be recognised). For tests. */
#define DPZO_IO_TMP_TAG ".tmp."

#ifdef __cplusplus
}
#endif
#endif
