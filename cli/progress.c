/* SPDX-License-Identifier: Apache-2.0 */
/* cli/progress.c: see progress.h. */
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include "progress.h"

const char *progress_format(char *buf, size_t size, size_t width, const char *label,
                            size_t done, size_t total, const char *what, double elapsed)
{
    char head[96], tail[48];
    if (total > 0)
        snprintf(head, sizeof head, "%s: %zu/%zu ", label, done, total);
    else
        snprintf(head, sizeof head, "%s: ", label);
    snprintf(tail, sizeof tail, " (%.0f s)", elapsed);
    /* one terminal line at most (a wrapped line cannot be overwritten with \r): the
     * item's name is cut, the count and the elapsed time stay */
    size_t fixed = strlen(head) + strlen(tail), room = width > fixed ? width - fixed : 0;
    size_t wl = strlen(what);
    if (wl <= room)
        snprintf(buf, size, "%s%s%s", head, what, tail);
    else if (room >= 3)
        snprintf(buf, size, "%s%.*s...%s", head, (int)(room - 3), what, tail);
    else
        snprintf(buf, size, "%s%s", head, tail + 1);
    return buf;
}

static double elapsed_s(const cli_progress *p)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - p->start.tv_sec) + 1e-9 * (double)(now.tv_nsec - p->start.tv_nsec);
}

static size_t term_width(void)
{
    struct winsize w;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 10)
        return (size_t)w.ws_col - 1;
    return 79;
}

/* Called with p->mu held. \033[K erases the rest of the line (a shorter line leaves no
 * trace of a longer one). */
static void draw(cli_progress *p)
{
    char line[512];
    progress_format(line, sizeof line, term_width(), p->label, p->done, p->total, p->what,
                    elapsed_s(p));
    fprintf(stderr, "\r%s\033[K", line);
    fflush(stderr);
}

static void *ticker(void *arg)
{
    cli_progress *p = arg;
    pthread_mutex_lock(&p->mu);
    while (!p->stop) {
        draw(p);
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        t.tv_nsec += 250000000L;
        if (t.tv_nsec >= 1000000000L) {
            t.tv_sec++;
            t.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->cv, &p->mu, &t);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

void progress_begin(cli_progress *p, const char *label, int json)
{
    memset(p, 0, sizeof *p);
    p->label = label;
    p->on = !json && isatty(STDERR_FILENO);
    if (!p->on)
        return;
    clock_gettime(CLOCK_MONOTONIC, &p->start);
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    snprintf(p->what, sizeof p->what, "starting");
    /* without the thread the line still updates at each step */
    p->ticking = pthread_create(&p->thread, NULL, ticker, p) == 0;
}

void progress_step(cli_progress *p, size_t done, size_t total, const char *what)
{
    if (!p->on)
        return;
    pthread_mutex_lock(&p->mu);
    p->done = done;
    p->total = total;
    snprintf(p->what, sizeof p->what, "%s", what);
    draw(p);
    pthread_mutex_unlock(&p->mu);
}

void progress_end(cli_progress *p)
{
    if (!p->on)
        return;
    pthread_mutex_lock(&p->mu);
    p->stop = 1;
    pthread_cond_signal(&p->cv);
    pthread_mutex_unlock(&p->mu);
    if (p->ticking)
        pthread_join(p->thread, NULL);
    fputs("\r\033[K", stderr);
    fflush(stderr);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    p->on = 0;
}
