/* SPDX-License-Identifier: Apache-2.0 */
/* common/dpzo_io.c: safe reads and atomic writes (dpzo_io.h, docs/files.md).
 *
 * Temporaries. Where the filesystem supports O_TMPFILE (ext4, xfs, btrfs, tmpfs), the new
 * content is written to an unnamed file of the destination's folder, fsync'ed, then linked
 * under ".BASE.tmp.PID.HEX" (linkat never follows a link at the new name and fails if the
 * name exists: it is retried with another random name) and renamed over BASE at once: a
 * named temporary exists only between those two calls. Elsewhere the temporary is created
 * under that name with O_CREAT|O_EXCL|O_NOFOLLOW (again: nothing planted at the name is
 * followed or reused), written, fsync'ed and renamed. A writer killed with the name in place
 * leaves that file; the next successful write of the same destination removes such files
 * whose process is gone (owned by this user, regular, not links). */
#include "dpzo_io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    if (err != NULL && errlen > 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static const char *kind_name(mode_t m)
{
    if (S_ISDIR(m))
        return "a directory";
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    return "not a regular file";
}

/* ---- reading ----------------------------------------------------------------------- */

int dpzo_io_open_read(const char *path, const char *what, size_t limit, long long *size,
                      char *err, size_t errlen)
{
    if (path == NULL || path[0] == '\0')
        return fail(err, errlen, "%s: no file name given", what);
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below anyway */
    int fd;
    do
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0)
        return fail(err, errlen, "%s '%s': cannot open (%s)", what, path, strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        int e = errno;
        close(fd);
        return fail(err, errlen, "%s '%s': cannot stat: %s", what, path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        close(fd);
        return fail(err, errlen, "%s '%s': is %s, only regular files are read", what, path,
                    kind_name(sb.st_mode));
    }
    if (sb.st_size < 0 || (unsigned long long)sb.st_size > (unsigned long long)limit) {
        close(fd);
        return fail(err, errlen, "%s '%s': %lld bytes, more than the limit of %zu bytes", what,
                    path, (long long)sb.st_size, limit);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    if (size != NULL)
        *size = (long long)sb.st_size;
    return fd;
}

int dpzo_io_read_file(const char *path, const char *what, size_t limit, char **out, size_t *len,
                      char *err, size_t errlen)
{
    *out = NULL;
    if (len != NULL)
        *len = 0;
    long long size = 0;
    int fd = dpzo_io_open_read(path, what, limit, &size, err, errlen);
    if (fd < 0)
        return -1;
    /* the file may grow while it is read: read at most limit + 1 bytes in all */
    size_t cap = (size_t)size + 1, n = 0;
    char *buf = malloc(cap + 1);
    if (buf == NULL) {
        close(fd);
        return fail(err, errlen, "%s '%s': out of memory (%zu bytes)", what, path, cap + 1);
    }
    for (;;) {
        if (n == cap) {
            if (cap > limit)
                break;
            size_t ncap = cap * 2 > limit + 1 ? limit + 1 : cap * 2;
            char *nb = realloc(buf, ncap + 1);
            if (nb == NULL) {
                free(buf);
                close(fd);
                return fail(err, errlen, "%s '%s': out of memory (%zu bytes)", what, path,
                            ncap + 1);
            }
            buf = nb;
            cap = ncap;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            return fail(err, errlen, "%s '%s': read error: %s", what, path, strerror(e));
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    if (n > limit) {
        free(buf);
        return fail(err, errlen, "%s '%s': more than the limit of %zu bytes", what, path, limit);
    }
    buf[n] = '\0';
    *out = buf;
    if (len != NULL)
        *len = n;
    return 0;
}

/* ---- writing ----------------------------------------------------------------------- */

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return -1;
        if (w == 0) {
            errno = EIO;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Where path leads: kind 0 a missing file (create), 1 a regular file, 2 something written
 * directly (device, FIFO, "-"). dest gets the path to replace or open (a link resolved). */
typedef struct {
    int kind;
    char dest[PATH_MAX];
    struct stat sb; /* kind 1, 2 */
} target;

static int resolve(const char *path, const char *what, unsigned flags, target *t, char *err,
                   size_t errlen)
{
    memset(t, 0, sizeof *t);
    if (path == NULL || path[0] == '\0')
        return fail(err, errlen, "%s: no file name given", what);
    if (strcmp(path, "-") == 0) {
        if (!(flags & DPZO_IO_DIRECT))
            return fail(err, errlen, "%s: '-' (standard output) is not accepted here", what);
        t->kind = 2;
        snprintf(t->dest, sizeof t->dest, "-");
        return 0;
    }
    if (strlen(path) >= sizeof t->dest)
        return fail(err, errlen, "%s '%s': path too long", what, path);
    struct stat lsb;
    if (lstat(path, &lsb) != 0) {
        if (errno != ENOENT)
            return fail(err, errlen, "%s '%s': %s", what, path, strerror(errno));
        t->kind = 0;
        snprintf(t->dest, sizeof t->dest, "%s", path);
        return 0;
    }
    if (S_ISLNK(lsb.st_mode)) {
        if (realpath(path, t->dest) == NULL)
            return fail(err, errlen,
                        "%s '%s': a symbolic link whose target cannot be resolved (%s): refusing "
                        "to write",
                        what, path, strerror(errno));
        if (stat(t->dest, &t->sb) != 0)
            return fail(err, errlen, "%s '%s': its target %s: %s", what, path, t->dest,
                        strerror(errno));
    } else {
        snprintf(t->dest, sizeof t->dest, "%s", path);
        t->sb = lsb;
    }
    if (S_ISREG(t->sb.st_mode)) {
        t->kind = 1;
        return 0;
    }
    if (S_ISDIR(t->sb.st_mode))
        return fail(err, errlen, "%s '%s': is a directory", what, path);
    if (!(flags & DPZO_IO_DIRECT) || S_ISSOCK(t->sb.st_mode))
        return fail(err, errlen,
                    "%s '%s': is %s; only a regular file can hold it (it is never replaced)",
                    what, path, kind_name(t->sb.st_mode));
    t->kind = 2;
    return 0;
}

/* FIFOs that dpzo_io_check_output found a reader on: the descriptor it opened stays open
 * until the real write takes it over (open_direct), because closing it would give the reader
 * end-of-file (a `cat FIFO` would exit) and the real write would then find no reader. */
#define HELD_MAX 16
static struct {
    int fd;
    dev_t dev;
    ino_t ino;
} held[HELD_MAX];
static int n_held;
static pthread_mutex_t held_lock = PTHREAD_MUTEX_INITIALIZER;

static void hold_fifo(int fd, const struct stat *sb)
{
    pthread_mutex_lock(&held_lock);
    int kept = 0;
    for (int i = 0; i < n_held && !kept; i++)
        kept = held[i].dev == sb->st_dev && held[i].ino == sb->st_ino; /* one is enough */
    if (!kept && n_held < HELD_MAX) {
        held[n_held].fd = fd;
        held[n_held].dev = sb->st_dev;
        held[n_held].ino = sb->st_ino;
        n_held++;
        fd = -1;
    }
    pthread_mutex_unlock(&held_lock);
    if (fd >= 0)
        close(fd);
}

/* The held descriptor of this FIFO (taken out of the table), or -1. */
static int take_held(const struct stat *sb)
{
    int fd = -1;
    pthread_mutex_lock(&held_lock);
    for (int i = 0; i < n_held; i++)
        if (held[i].dev == sb->st_dev && held[i].ino == sb->st_ino) {
            fd = held[i].fd;
            held[i] = held[--n_held];
            break;
        }
    pthread_mutex_unlock(&held_lock);
    return fd;
}

/* Opens a device or FIFO for writing without creating, truncating or waiting for a reader. */
static int open_direct(const target *t, const char *path, const char *what, char *err,
                       size_t errlen)
{
    if (strcmp(t->dest, "-") == 0) {
        int fd = dup(STDOUT_FILENO);
        if (fd < 0)
            return fail(err, errlen, "%s: cannot use standard output: %s", what,
                        strerror(errno));
        return fd;
    }
    int fd = S_ISFIFO(t->sb.st_mode) ? take_held(&t->sb) : -1;
    if (fd >= 0) {
        int fl = fcntl(fd, F_GETFL);
        if (fl >= 0)
            (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
        return fd;
    }
    do
        fd = open(t->dest, O_WRONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) {
        if (errno == ENXIO)
            return fail(err, errlen, "%s '%s': a FIFO with no reader: refusing to wait", what,
                        path);
        return fail(err, errlen, "%s '%s': cannot open (%s)", what, path, strerror(errno));
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || S_ISREG(sb.st_mode) || S_ISDIR(sb.st_mode)) {
        close(fd);
        return fail(err, errlen, "%s '%s': changed while being opened", what, path);
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}

/* The folder and base name of dest ("." when it has no slash). */
static int split(const char *dest, char *dir, size_t dirlen, const char **base)
{
    const char *slash = strrchr(dest, '/');
    if (slash == NULL) {
        snprintf(dir, dirlen, ".");
        *base = dest;
    } else {
        size_t k = slash == dest ? 1 : (size_t)(slash - dest);
        if (k >= dirlen)
            return -1;
        memcpy(dir, dest, k);
        dir[k] = '\0';
        *base = slash + 1;
    }
    return (*base)[0] == '\0' ? -1 : 0;
}

static int tmp_name(char *out, size_t outlen, const char *base)
{
    uint64_t r = 0;
    if (getrandom(&r, sizeof r, GRND_NONBLOCK) != (ssize_t)sizeof r) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        r ^= (uint64_t)ts.tv_nsec * 0x9e3779b97f4a7c15ull ^ (uint64_t)ts.tv_sec ^
             ((uint64_t)getpid() << 32) ^ (uint64_t)(uintptr_t)out;
    }
    int k = snprintf(out, outlen, ".%s" DPZO_IO_TMP_TAG "%ld.%016llx", base, (long)getpid(),
                     (unsigned long long)r);
    return k < 0 || (size_t)k >= outlen ? -1 : 0;
}

/* Removes ".BASE.tmp.PID.*" files of dir left by processes that are gone. */
static void clean_stale(int dfd, const char *base)
{
    int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    DIR *d = fdopendir(fd);
    if (d == NULL) {
        close(fd);
        return;
    }
    size_t bl = strlen(base), tl = strlen(DPZO_IO_TMP_TAG);
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        const char *s = e->d_name;
        if (s[0] != '.' || strncmp(s + 1, base, bl) != 0 ||
            strncmp(s + 1 + bl, DPZO_IO_TMP_TAG, tl) != 0)
            continue;
        char *end;
        errno = 0;
        long pid = strtol(s + 1 + bl + tl, &end, 10);
        if (errno != 0 || pid <= 0 || *end != '.' || strlen(end + 1) != 16)
            continue;
        if (pid == (long)getpid() || kill((pid_t)pid, 0) == 0 || errno != ESRCH)
            continue;
        struct stat sb;
        if (fstatat(dfd, s, &sb, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(sb.st_mode) &&
            sb.st_uid == geteuid())
            (void)unlinkat(dfd, s, 0);
    }
    closedir(d);
}

/* The process's umask, read without changing it: umask(2) can only be read by setting it,
 * which would race with files that other threads create meanwhile (the library is called
 * from several threads). Linux reports it in /proc/self/status (4.7 and later); where that
 * line is missing, the most restrictive mask (077) is assumed: a new file is then private,
 * never more open than the user asked for. */
static mode_t process_umask(void)
{
    mode_t um = 077;
    FILE *f = fopen("/proc/self/status", "re");
    if (f == NULL)
        return um;
    char line[256];
    while (fgets(line, sizeof line, f) != NULL) {
        unsigned v;
        if (sscanf(line, "Umask: %o", &v) == 1) {
            um = (mode_t)(v & 0777);
            break;
        }
    }
    fclose(f);
    return um;
}

/* The folder of t's destination (its descriptor in *dfd) and a new temporary file in it,
 * as the atomic replacement writes it: unnamed (O_TMPFILE) where the filesystem allows and
 * flags has no DPZO_IO_NAMED, else a name from tmp_name created exclusively (*named = 1, the
 * name in name[]). Returns the temporary's descriptor, or -1 with the message in err (and
 * nothing left open). */
static int open_temp(const target *t, const char *path, const char *what, unsigned flags,
                     char dir[PATH_MAX], char name[NAME_MAX + 1], const char **basep, int *dfd,
                     int *named, char *err, size_t errlen)
{
    const char *base;
    *named = 0;
    if (split(t->dest, dir, PATH_MAX, &base) != 0)
        return fail(err, errlen, "%s '%s': not a file name", what, path);
    *basep = base; /* inside t->dest */
    if (strlen(base) + 40 > NAME_MAX)
        return fail(err, errlen, "%s '%s': file name too long for a temporary beside it", what,
                    path);
    *dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (*dfd < 0)
        return fail(err, errlen, "%s '%s': cannot write: cannot open its folder %s (%s)", what,
                    path, dir, strerror(errno));
    int fd = -1;
    if (!(flags & DPZO_IO_NAMED))
        fd = openat(*dfd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
    if (fd >= 0)
        return fd;
    /* no O_TMPFILE here: a named temporary, created exclusively */
    for (int tries = 0; tries < 100 && fd < 0; tries++) {
        if (tmp_name(name, NAME_MAX + 1, base) != 0)
            break;
        fd = openat(*dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd < 0 && errno != EEXIST && errno != EINTR)
            break;
    }
    if (fd < 0) {
        int e = errno;
        close(*dfd);
        return fail(err, errlen, "%s '%s': cannot write: cannot create a temporary in %s (%s)",
                    what, path, dir, strerror(e));
    }
    *named = 1;
    return fd;
}

static int write_replace(const target *t, const char *path, const char *what,
                         const unsigned char *buf, size_t n, unsigned flags, char *err,
                         size_t errlen)
{
    char dir[PATH_MAX], name[NAME_MAX + 1];
    const char *base;
    int dfd, named; /* named: the temporary has a name to remove on failure */
    int fd = open_temp(t, path, what, flags, dir, name, &base, &dfd, &named, err, errlen);
    if (fd < 0)
        return -1;
    mode_t mode = t->kind == 1 ? (t->sb.st_mode & 07777) : 0644;
    int e = 0;
    int bad = write_all(fd, buf, n) != 0;
    if (!bad && t->kind == 1) {
        /* the replacement keeps the old file's owner (best effort) and mode */
        if (fchown(fd, t->sb.st_uid, t->sb.st_gid) != 0) {
            /* not permitted: it stays ours */
        }
    }
    if (!bad)
        bad = fchmod(fd, t->kind == 1 ? mode : (mode & ~process_umask())) != 0;
    bad = bad || fsync(fd) != 0;
    if (bad)
        e = errno;
    if (!bad && !named) {
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
        for (int tries = 0; tries < 100; tries++) {
            if (tmp_name(name, sizeof name, base) != 0) {
                e = ENAMETOOLONG;
                break;
            }
            if (linkat(fd, "", dfd, name, AT_EMPTY_PATH) == 0 ||
                linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW) == 0) {
                named = 1;
                break;
            }
            e = errno;
            if (e != EEXIST)
                break;
        }
        bad = !named;
    }
    if (close(fd) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (!bad && renameat(dfd, name, dfd, base) != 0) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        if (named)
            (void)unlinkat(dfd, name, 0);
        close(dfd);
        return fail(err, errlen, "%s '%s': cannot write: %s", what, path,
                    strerror(e != 0 ? e : EIO));
    }
    named = 0;
    if (fsync(dfd) != 0) {
        e = errno;
        close(dfd);
        return fail(err, errlen, "%s '%s': written, but its folder %s cannot be synced: %s", what,
                    path, dir, strerror(e));
    }
    clean_stale(dfd, base);
    close(dfd);
    return 0;
}

int dpzo_io_write_file(const char *path, const char *what, const void *buf, size_t n,
                       unsigned flags, char *err, size_t errlen)
{
    target t;
    if (resolve(path, what, flags, &t, err, errlen) != 0)
        return -1;
    if (t.kind != 2)
        return write_replace(&t, path, what, buf, n, flags, err, errlen);
    int fd = open_direct(&t, path, what, err, errlen);
    if (fd < 0)
        return -1;
    int bad = write_all(fd, buf, n) != 0;
    int e = errno;
    if (close(fd) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad)
        return fail(err, errlen, "%s '%s': write error: %s", what, path, strerror(e));
    return 0;
}

/* ---- checking an output before the work -------------------------------------------- */

int dpzo_io_check_output(const char *path, const char *what, unsigned flags, char *err,
                         size_t errlen)
{
    target t;
    if (resolve(path, what, flags, &t, err, errlen) != 0)
        return -1;
    if (t.kind == 2) {
        /* the real write's own open: a FIFO without a reader is refused, never waited for */
        int fd = open_direct(&t, path, what, err, errlen);
        if (fd < 0)
            return -1;
        if (strcmp(t.dest, "-") != 0 && S_ISFIFO(t.sb.st_mode)) {
            hold_fifo(fd, &t.sb);
            return 0;
        }
        /* an empty write: a device that refuses every write (/dev/full) says so now */
        int bad = write(fd, "", 0) < 0;
        int e = errno;
        close(fd);
        if (bad)
            return fail(err, errlen, "%s '%s': cannot write: %s", what, path, strerror(e));
        return 0;
    }
    /* a regular file or a new one: the real write puts a temporary in the folder and renames
     * it, so the folder must exist and take a new file; the file itself is not touched */
    char dir[PATH_MAX], name[NAME_MAX + 1];
    const char *base;
    int dfd, named;
    int fd = open_temp(&t, path, what, flags, dir, name, &base, &dfd, &named, err, errlen);
    if (fd < 0)
        return -1;
    /* one byte: a filesystem without room says so now, not after the work */
    int bad = write_all(fd, (const unsigned char *)"", 1) != 0;
    int e = errno;
    close(fd);
    if (named)
        (void)unlinkat(dfd, name, 0);
    close(dfd);
    if (bad)
        return fail(err, errlen, "%s '%s': cannot write in its folder %s: %s", what, path, dir,
                    strerror(e));
    return 0;
}

/* ---- stdio writers ----------------------------------------------------------------- */

struct dpzo_io_out {
    FILE *f;
    char *buf;
    size_t len;
    unsigned flags;
    char *path, *what;
};

dpzo_io_out *dpzo_io_out_open(const char *path, const char *what, unsigned flags, char *err,
                              size_t errlen)
{
    target t;
    if (resolve(path, what, flags, &t, err, errlen) != 0) /* refuse early, before the work */
        return NULL;
    dpzo_io_out *o = calloc(1, sizeof *o);
    if (o != NULL) {
        o->path = strdup(path);
        o->what = strdup(what);
        o->flags = flags;
        o->f = open_memstream(&o->buf, &o->len);
    }
    if (o == NULL || o->path == NULL || o->what == NULL || o->f == NULL) {
        dpzo_io_out_discard(o);
        fail(err, errlen, "%s '%s': out of memory", what, path);
        return NULL;
    }
    return o;
}

FILE *dpzo_io_out_stream(dpzo_io_out *o) { return o->f; }

void dpzo_io_out_discard(dpzo_io_out *o)
{
    if (o == NULL)
        return;
    if (o->f != NULL)
        fclose(o->f);
    free(o->buf);
    free(o->path);
    free(o->what);
    free(o);
}

int dpzo_io_out_commit(dpzo_io_out *o, char *err, size_t errlen)
{
    int bad = ferror(o->f) != 0;
    bad |= fclose(o->f) != 0;
    o->f = NULL;
    int rc = bad ? fail(err, errlen, "%s '%s': out of memory while formatting", o->what, o->path)
                 : dpzo_io_write_file(o->path, o->what, o->buf, o->len, o->flags, err, errlen);
    dpzo_io_out_discard(o);
    return rc;
}

/* ---- appended streams -------------------------------------------------------------- */

FILE *dpzo_io_open_append(const char *path, const char *what, int truncate, int *regular,
                          char *err, size_t errlen)
{
    target t;
    if (resolve(path, what, DPZO_IO_DIRECT, &t, err, errlen) != 0)
        return NULL;
    int fd;
    if (t.kind == 2) {
        fd = open_direct(&t, path, what, err, errlen);
    } else {
        /* the resolved name: O_NOFOLLOW refuses a link planted there since */
        int fl = O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
        do
            fd = open(t.dest, fl, 0644);
        while (fd < 0 && errno == EINTR);
        if (fd < 0) {
            fail(err, errlen, "%s '%s': cannot open (%s)", what, path, strerror(errno));
        } else {
            struct stat sb;
            if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
                close(fd);
                fd = fail(err, errlen, "%s '%s': changed while being opened", what, path);
            } else if (truncate && ftruncate(fd, 0) != 0) {
                int e = errno;
                close(fd);
                fd = fail(err, errlen, "%s '%s': cannot empty: %s", what, path, strerror(e));
            } else {
                int f2 = fcntl(fd, F_GETFL);
                if (f2 >= 0)
                    (void)fcntl(fd, F_SETFL, f2 & ~O_NONBLOCK);
            }
        }
    }
    if (fd < 0)
        return NULL;
    FILE *f = fdopen(fd, "a");
    if (f == NULL) {
        int e = errno;
        close(fd);
        fail(err, errlen, "%s '%s': %s", what, path, strerror(e));
        return NULL;
    }
    if (regular != NULL)
        *regular = t.kind != 2;
    return f;
}
