/*
 * clockshift: an LD_PRELOAD library that shifts a process's wall clock.
 *
 * The offset (signed nanoseconds, decimal text) is read from the file named by
 * the environment variable QUORUMLOCK_CLOCK_OFFSET_FILE and added to
 * CLOCK_REALTIME and CLOCK_REALTIME_COARSE in clock_gettime(), to
 * gettimeofday() and to time(). Every other clock, CLOCK_MONOTONIC above all,
 * passes through untouched: Redis stalls if its monotonic clock goes back.
 *
 * Rules that keep it safe inside redis-server (jemalloc, setproctitle):
 *  - no malloc, no dlsym, no stdio: the kernel is called directly with syscall();
 *  - the file name is copied at load time, because setproctitle later
 *    overwrites the original environment strings;
 *  - the offset is cached and the file re-read at most every REREAD_NS, so the
 *    cost stays low; threads race benignly on two relaxed atomics.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))
#define NANOS_PER_SECOND 1000000000LL
#define REREAD_NS 2000000LL /* 2 ms */

static char offset_file[4096];
static int64_t cached_offset_ns;
static int64_t next_read_ns; /* CLOCK_MONOTONIC deadline for the next read */

__attribute__((constructor)) static void clockshift_init(void) {
    const char *name = getenv("QUORUMLOCK_CLOCK_OFFSET_FILE");
    if (name != NULL && strlen(name) < sizeof offset_file) {
        strcpy(offset_file, name);
    }
}

static int raw_clock_gettime(clockid_t clock, struct timespec *ts) {
    return (int) syscall(SYS_clock_gettime, clock, ts);
}

/* Parses an optional '-' and decimal digits; returns 0 if the text is not a number. */
static int parse_offset(const char *text, long length, int64_t *out) {
    long i = 0;
    int negative = 0;
    int64_t value = 0;
    if (i < length && text[i] == '-') {
        negative = 1;
        i++;
    }
    long first_digit = i;
    for (; i < length && text[i] >= '0' && text[i] <= '9'; i++) {
        value = value * 10 + (text[i] - '0');
    }
    if (i == first_digit) {
        return 0;
    }
    *out = negative ? -value : value;
    return 1;
}

static int64_t read_offset_file(int64_t previous) {
    char text[32];
    long fd = syscall(SYS_openat, AT_FDCWD, offset_file, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return previous;
    }
    long length = syscall(SYS_read, fd, text, sizeof text);
    syscall(SYS_close, fd);
    int64_t offset;
    return length > 0 && parse_offset(text, length, &offset) ? offset : previous;
}

static int64_t current_offset_ns(void) {
    if (offset_file[0] == '\0') {
        return 0;
    }
    struct timespec now;
    raw_clock_gettime(CLOCK_MONOTONIC, &now);
    int64_t now_ns = (int64_t) now.tv_sec * NANOS_PER_SECOND + now.tv_nsec;
    int64_t offset = __atomic_load_n(&cached_offset_ns, __ATOMIC_RELAXED);
    if (now_ns >= __atomic_load_n(&next_read_ns, __ATOMIC_RELAXED)) {
        __atomic_store_n(&next_read_ns, now_ns + REREAD_NS, __ATOMIC_RELAXED);
        offset = read_offset_file(offset);
        __atomic_store_n(&cached_offset_ns, offset, __ATOMIC_RELAXED);
    }
    return offset;
}

static void shift(struct timespec *ts, int64_t offset_ns) {
    int64_t nanos = ts->tv_nsec + offset_ns % NANOS_PER_SECOND;
    ts->tv_sec += offset_ns / NANOS_PER_SECOND + nanos / NANOS_PER_SECOND;
    nanos %= NANOS_PER_SECOND;
    if (nanos < 0) {
        nanos += NANOS_PER_SECOND;
        ts->tv_sec -= 1;
    }
    ts->tv_nsec = nanos;
}

EXPORT int clock_gettime(clockid_t clock, struct timespec *ts) {
    int result = raw_clock_gettime(clock, ts);
    if (result == 0 && (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE)) {
        shift(ts, current_offset_ns());
    }
    return result;
}

EXPORT int gettimeofday(struct timeval *tv, void *tz) {
    if (tz != NULL) {
        memset(tz, 0, sizeof(struct timezone));
    }
    struct timespec ts; /* glibc declares tv nonnull */
    if (clock_gettime(CLOCK_REALTIME, &ts) != 0) {
        return -1;
    }
    tv->tv_sec = ts.tv_sec;
    tv->tv_usec = ts.tv_nsec / 1000;
    return 0;
}

EXPORT time_t time(time_t *out) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    if (out != NULL) {
        *out = ts.tv_sec;
    }
    return ts.tv_sec;
}
