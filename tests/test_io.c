/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_io.c: common/dpzo_io (docs/files.md): atomic writes that never replace
 * anything but a regular file, links written through, planted temporaries not followed,
 * readers that refuse FIFOs, devices, directories and oversized files at once. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>
#include "dpzo_io.h"

static char dir[1024];
static char err[DPZO_IO_ERRMAX];

static const char *at(const char *name)
{
    static char buf[4][PATH_MAX];
    static int k;
    k = (k + 1) % 4;
    snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
    return buf[k];
}

static void put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static char *get(const char *path)
{
    char *s = NULL;
    size_t n;
    if (dpzo_io_read_file(path, "test", 1 << 20, &s, &n, err, sizeof err) != 0)
        fail_msg("read %s: %s", path, err);
    return s;
}

static void assert_content(const char *path, const char *want)
{
    char *s = get(path);
    assert_string_equal(s, want);
    free(s);
}

/* Names in the folder besides the given ones (count of strays). */
static int strays(const char *const *keep, int nkeep)
{
    DIR *d = opendir(dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        int known = 0;
        for (int i = 0; i < nkeep; i++)
            known |= strcmp(e->d_name, keep[i]) == 0;
        if (!known) {
            fprintf(stderr, "stray file: %s\n", e->d_name);
            n++;
        }
    }
    closedir(d);
    return n;
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof dir, "%s/io_test_XXXXXX", DPZO_TEST_TMP);
    return mkdtemp(dir) == NULL;
}

static int teardown(void **state)
{
    (void)state;
    char cmd[PATH_MAX + 16];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    return system(cmd) != 0;
}

static void test_write_new_and_replace(void **state)
{
    (void)state;
    mode_t um = umask(022);
    assert_int_equal(dpzo_io_write_file(at("a.json"), "test", "one", 3, 0, err, sizeof err), 0);
    assert_content(at("a.json"), "one");
    struct stat sb;
    assert_int_equal(stat(at("a.json"), &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0644);
    /* a replaced file keeps its mode */
    assert_int_equal(chmod(at("a.json"), 0600), 0);
    assert_int_equal(dpzo_io_write_file(at("a.json"), "test", "two!", 4, 0, err, sizeof err), 0);
    assert_content(at("a.json"), "two!");
    assert_int_equal(stat(at("a.json"), &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0600);
    assert_int_equal(sb.st_size, 4);
    const char *keep[] = {"a.json"};
    assert_int_equal(strays(keep, 1), 0);
    /* a new file under another umask: 0644 & ~027 (read from /proc, umask left unchanged) */
    umask(027);
    assert_int_equal(dpzo_io_write_file(at("b.json"), "test", "b", 1, 0, err, sizeof err), 0);
    assert_int_equal(stat(at("b.json"), &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0640);
    assert_int_equal(umask(027), 027);
    unlink(at("b.json"));
    umask(um);
    unlink(at("a.json"));
}

static void test_symlink_destination_written_through(void **state)
{
    (void)state;
    assert_int_equal(mkdir(at("sub"), 0755), 0);
    put(at("sub/target"), "old");
    assert_int_equal(symlink("sub/target", at("link")), 0);
    assert_int_equal(dpzo_io_write_file(at("link"), "test", "new", 3, 0, err, sizeof err), 0);
    struct stat sb;
    assert_int_equal(lstat(at("link"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode)); /* the link stays a link */
    assert_content(at("sub/target"), "new");
    const char *keep[] = {"sub", "link"};
    assert_int_equal(strays(keep, 2), 0);
    /* a dangling link is refused (its target is not created) */
    assert_int_equal(symlink("nowhere/x", at("dangling")), 0);
    assert_int_equal(dpzo_io_write_file(at("dangling"), "test", "x", 1, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "symbolic link"));
    unlink(at("dangling"));
    unlink(at("link"));
    unlink(at("sub/target"));
    rmdir(at("sub"));
}

static void test_planted_temporary_not_followed(void **state)
{
    (void)state;
    put(at("victim"), "precious");
    /* the old temporary names: PATH.tmp and PATH.tmpPID */
    assert_int_equal(symlink(at("victim"), at("run.ckpt.tmp")), 0);
    char pidname[64];
    snprintf(pidname, sizeof pidname, "run.ckpt.tmp%ld", (long)getpid());
    assert_int_equal(symlink(at("victim"), at(pidname)), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(dpzo_io_write_file(at("run.ckpt"), "checkpoint", "state", 5, 0, err,
                                            sizeof err),
                         0);
    assert_content(at("victim"), "precious");
    assert_content(at("run.ckpt"), "state");
    const char *keep[] = {"victim", "run.ckpt.tmp", "run.ckpt", pidname};
    assert_int_equal(strays(keep, 4), 0);
    unlink(at("run.ckpt.tmp"));
    unlink(at(pidname));
    unlink(at("run.ckpt"));
    unlink(at("victim"));
}

static void test_fifo_and_devices_never_replaced(void **state)
{
    (void)state;
    assert_int_equal(mkfifo(at("fifo"), 0644), 0);
    struct stat sb;
    /* not allowed: refused, still a FIFO */
    assert_int_equal(dpzo_io_write_file(at("fifo"), "test", "x", 1, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "FIFO"));
    assert_int_equal(lstat(at("fifo"), &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    /* allowed but no reader: refused at once rather than waited for */
    assert_int_equal(
        dpzo_io_write_file(at("fifo"), "test", "x", 1, DPZO_IO_DIRECT, err, sizeof err), -1);
    assert_non_null(strstr(err, "no reader"));
    /* allowed with a reader: the bytes go through the FIFO */
    int rd = open(at("fifo"), O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    assert_int_equal(
        dpzo_io_write_file(at("fifo"), "test", "hello", 5, DPZO_IO_DIRECT, err, sizeof err), 0);
    char got[8] = "";
    assert_int_equal(read(rd, got, sizeof got), 5);
    assert_memory_equal(got, "hello", 5);
    close(rd);
    assert_int_equal(lstat(at("fifo"), &sb), 0);
    assert_true(S_ISFIFO(sb.st_mode));
    unlink(at("fifo"));
    /* devices: refused without DPZO_IO_DIRECT, written directly with it, never replaced */
    assert_int_equal(dpzo_io_write_file("/dev/null", "test", "x", 1, 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "character device"));
    assert_int_equal(dpzo_io_write_file("/dev/full", "checkpoint", "x", 1, 0, err, sizeof err),
                     -1);
    assert_int_equal(
        dpzo_io_write_file("/dev/null", "test", "x", 1, DPZO_IO_DIRECT, err, sizeof err), 0);
    assert_int_equal(
        dpzo_io_write_file("/dev/full", "test", "x", 1, DPZO_IO_DIRECT, err, sizeof err), -1);
    assert_non_null(strstr(err, "write error"));
    assert_int_equal(lstat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_int_equal(lstat("/dev/full", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    /* a directory is refused either way; "-" only where allowed */
    assert_int_equal(dpzo_io_write_file(dir, "test", "x", 1, DPZO_IO_DIRECT, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "directory"));
    assert_int_equal(dpzo_io_write_file("-", "test", "x", 1, 0, err, sizeof err), -1);
}

static void test_readers_refuse_non_regular(void **state)
{
    (void)state;
    char *s = NULL;
    size_t n;
    assert_int_equal(mkfifo(at("fifo"), 0644), 0);
    /* a FIFO without a writer would block a plain open forever */
    assert_int_equal(dpzo_io_read_file(at("fifo"), "profile", 100, &s, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "FIFO"));
    assert_non_null(strstr(err, "profile"));
    unlink(at("fifo"));
    assert_int_equal(dpzo_io_read_file("/dev/zero", "grid", 100, &s, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "character device"));
    assert_int_equal(dpzo_io_read_file(dir, "config", 100, &s, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "directory"));
    assert_null(s);
    /* size limits: at the limit read, one byte over refused with the limit named */
    put(at("ten"), "0123456789");
    assert_int_equal(dpzo_io_read_file(at("ten"), "claim", 10, &s, &n, err, sizeof err), 0);
    assert_int_equal(n, 10);
    assert_string_equal(s, "0123456789");
    free(s);
    s = NULL;
    assert_int_equal(dpzo_io_read_file(at("ten"), "claim", 9, &s, &n, err, sizeof err), -1);
    assert_non_null(strstr(err, "limit of 9 bytes"));
    /* a link to a regular file is followed */
    assert_int_equal(symlink("ten", at("tenlink")), 0);
    assert_content(at("tenlink"), "0123456789");
    long long size = -1;
    int fd = dpzo_io_open_read(at("tenlink"), "IDX", 100, &size, err, sizeof err);
    assert_true(fd >= 0);
    assert_int_equal(size, 10);
    close(fd);
    assert_int_equal(dpzo_io_open_read("/dev/zero", "IDX", 100, NULL, err, sizeof err), -1);
    unlink(at("tenlink"));
    unlink(at("ten"));
}

static void test_stdio_writer(void **state)
{
    (void)state;
    put(at("report.md"), "old report");
    dpzo_io_out *o = dpzo_io_out_open(at("report.md"), "report", 0, err, sizeof err);
    assert_non_null(o);
    fprintf(dpzo_io_out_stream(o), "# new %d\n", 42);
    /* not committed yet: the old file is whole */
    assert_content(at("report.md"), "old report");
    assert_int_equal(dpzo_io_out_commit(o, err, sizeof err), 0);
    assert_content(at("report.md"), "# new 42\n");
    o = dpzo_io_out_open(at("report.md"), "report", 0, err, sizeof err);
    fputs("half", dpzo_io_out_stream(o));
    dpzo_io_out_discard(o);
    assert_content(at("report.md"), "# new 42\n");
    assert_null(dpzo_io_out_open("/dev/null", "report", 0, err, sizeof err));
    const char *keep[] = {"report.md"};
    assert_int_equal(strays(keep, 1), 0);
    unlink(at("report.md"));
}

static void test_append_stream(void **state)
{
    (void)state;
    put(at("m.jsonl"), "line1\n");
    int reg = -1;
    FILE *f = dpzo_io_open_append(at("m.jsonl"), "metrics", 0, &reg, err, sizeof err);
    assert_non_null(f);
    assert_int_equal(reg, 1);
    fputs("line2\n", f);
    fclose(f);
    assert_content(at("m.jsonl"), "line1\nline2\n");
    assert_int_equal(symlink("m.jsonl", at("mlink")), 0);
    f = dpzo_io_open_append(at("mlink"), "metrics", 1, &reg, err, sizeof err);
    assert_non_null(f);
    fputs("fresh\n", f);
    fclose(f);
    assert_content(at("m.jsonl"), "fresh\n");
    struct stat sb;
    assert_int_equal(lstat(at("mlink"), &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));
    f = dpzo_io_open_append("/dev/null", "metrics", 1, &reg, err, sizeof err);
    assert_non_null(f);
    assert_int_equal(reg, 0);
    fclose(f);
    assert_int_equal(lstat("/dev/null", &sb), 0);
    assert_true(S_ISCHR(sb.st_mode));
    assert_null(dpzo_io_open_append(dir, "metrics", 0, &reg, err, sizeof err));
    unlink(at("mlink"));
    unlink(at("m.jsonl"));
}

static void test_stale_temporaries_cleaned(void **state)
{
    (void)state;
    pid_t child = fork();
    assert_true(child >= 0);
    if (child == 0)
        _exit(0);
    int status;
    assert_int_equal(waitpid(child, &status, 0), child);
    char dead[128], live[128];
    snprintf(dead, sizeof dead, ".p.json" DPZO_IO_TMP_TAG "%ld.0123456789abcdef", (long)child);
    snprintf(live, sizeof live, ".p.json" DPZO_IO_TMP_TAG "%ld.0123456789abcdef",
             (long)getppid());
    put(at(dead), "left by a killed writer");
    put(at(live), "a running writer's");
    assert_int_equal(dpzo_io_write_file(at("p.json"), "profile", "{}", 2, 0, err, sizeof err), 0);
    struct stat sb;
    assert_int_equal(lstat(at(dead), &sb), -1);
    assert_int_equal(lstat(at(live), &sb), 0);
    const char *keep[] = {"p.json", live};
    assert_int_equal(strays(keep, 2), 0);
    unlink(at(live));
    unlink(at("p.json"));
}

/* The named temporary (filesystems without O_TMPFILE): same rules. */
static void test_named_temporary(void **state)
{
    (void)state;
    put(at("victim"), "precious");
    assert_int_equal(symlink(at("victim"), at("n.json.tmp")), 0);
    put(at("n.json"), "old");
    assert_int_equal(chmod(at("n.json"), 0640), 0);
    for (int i = 0; i < 3; i++)
        assert_int_equal(dpzo_io_write_file(at("n.json"), "test", "named", 5, DPZO_IO_NAMED,
                                            err, sizeof err),
                         0);
    assert_content(at("n.json"), "named");
    assert_content(at("victim"), "precious");
    struct stat sb;
    assert_int_equal(stat(at("n.json"), &sb), 0);
    assert_int_equal(sb.st_mode & 07777, 0640);
    const char *keep[] = {"victim", "n.json.tmp", "n.json"};
    assert_int_equal(strays(keep, 3), 0);
    unlink(at("n.json.tmp"));
    unlink(at("n.json"));
    unlink(at("victim"));
}

/* A write that fails midway (the file size limit) leaves the old file whole and no
 * temporary, with either kind of temporary. */
static void test_failed_write_cleans_up(void **state)
{
    (void)state;
    static char big[5000];
    memset(big, 'x', sizeof big);
    for (unsigned flags = 0; flags <= DPZO_IO_NAMED; flags += DPZO_IO_NAMED) {
        put(at("f.json"), "old content");
        pid_t pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            signal(SIGXFSZ, SIG_IGN);
            struct rlimit rl = {1000, 1000};
            setrlimit(RLIMIT_FSIZE, &rl);
            int rc = dpzo_io_write_file(at("f.json"), "test", big, sizeof big, flags, err,
                                        sizeof err);
            _exit(rc == -1 && strstr(err, "cannot write") != NULL ? 0 : 1);
        }
        int status;
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_content(at("f.json"), "old content");
        const char *keep[] = {"f.json"};
        assert_int_equal(strays(keep, 1), 0);
    }
    unlink(at("f.json"));
}

/* dpzo_io_check_output (issue 28, item 6): refuses what the real write would refuse or fail
 * on, and creates, empties or changes nothing. Its own folder, removed at the end. */
static void test_check_output(void **state)
{
    (void)state;
    assert_int_equal(mkdir(at("chk"), 0755), 0);
    const char *f = at("chk/new.json");
    assert_int_equal(dpzo_io_check_output(f, "out", 0, err, sizeof err), 0);
    struct stat sb;
    assert_int_equal(lstat(f, &sb), -1); /* not created */
    put(at("chk/old.json"), "old");
    assert_int_equal(stat(at("chk/old.json"), &sb), 0);
    struct timespec mtime = sb.st_mtim;
    assert_int_equal(dpzo_io_check_output(at("chk/old.json"), "out", 0, err, sizeof err), 0);
    assert_content(at("chk/old.json"), "old");
    assert_int_equal(stat(at("chk/old.json"), &sb), 0);
    assert_true(sb.st_mtim.tv_sec == mtime.tv_sec && sb.st_mtim.tv_nsec == mtime.tv_nsec);
    /* refused, each naming the path */
    assert_int_equal(dpzo_io_check_output(at("chk"), "out", 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "is a directory"));
    assert_int_equal(dpzo_io_check_output(at("chk/no/x"), "out", 0, err, sizeof err), -1);
    assert_non_null(strstr(err, "chk/no/x"));
    assert_int_equal(dpzo_io_check_output("/dev/full", "out", DPZO_IO_DIRECT, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "/dev/full"));
    assert_int_equal(dpzo_io_check_output("/dev/full", "out", 0, err, sizeof err), -1);
    assert_int_equal(dpzo_io_check_output("/dev/null", "out", DPZO_IO_DIRECT, err, sizeof err),
                     0);
    assert_int_equal(dpzo_io_check_output("/proc/self/x", "out", 0, err, sizeof err), -1);
    assert_int_equal(mkfifo(at("chk/fifo"), 0644), 0);
    assert_int_equal(dpzo_io_check_output(at("chk/fifo"), "out", DPZO_IO_DIRECT, err, sizeof err),
                     -1);
    assert_non_null(strstr(err, "no reader"));
    /* with a reader: accepted, and the real write reaches it though the check closed
     * nothing in between */
    int rfd = open(at("chk/fifo"), O_RDONLY | O_NONBLOCK);
    assert_true(rfd >= 0);
    assert_int_equal(dpzo_io_check_output(at("chk/fifo"), "out", DPZO_IO_DIRECT, err, sizeof err),
                     0);
    assert_int_equal(dpzo_io_write_file(at("chk/fifo"), "out", "hi", 2, DPZO_IO_DIRECT, err,
                                        sizeof err),
                     0);
    char b[4] = {0};
    assert_int_equal(read(rfd, b, sizeof b), 2);
    assert_memory_equal(b, "hi", 2);
    close(rfd);
    /* nothing left behind: no probe file */
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "test $(ls -a '%s' | wc -l) -eq 4", at("chk"));
    assert_int_equal(system(cmd), 0); /* ., .., old.json, fifo */
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", at("chk"));
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_write_new_and_replace),
        cmocka_unit_test(test_symlink_destination_written_through),
        cmocka_unit_test(test_planted_temporary_not_followed),
        cmocka_unit_test(test_fifo_and_devices_never_replaced),
        cmocka_unit_test(test_readers_refuse_non_regular),
        cmocka_unit_test(test_stdio_writer),
        cmocka_unit_test(test_append_stream),
        cmocka_unit_test(test_stale_temporaries_cleaned),
        cmocka_unit_test(test_named_temporary),
        cmocka_unit_test(test_failed_write_cleans_up),
        cmocka_unit_test(test_check_output),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
