// Loaded into redis-server with LD_PRELOAD, this keeps every write to an append-only file (a
// path ending in ".aof") in the process's memory until Redis calls fsync or fdatasync on it.
// A `kill -9` then loses exactly what was not yet fsynced: what a power cut may lose at worst
// (the kernel would have written some of it back on its own; here nothing is). The drill uses it
// to show what each `appendfsync` setting keeps when the host, not only the process, goes down.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define TRACKED_FDS 4096

// Bytes written to an AOF descriptor since its last fsync, not yet given to the kernel.
struct Unsynced {
    int tracked;
    char *bytes;
    size_t length;
    size_t capacity;
};

static struct Unsynced unsynced[TRACKED_FDS];
// Redis writes the AOF on its main thread and fsyncs it on a background one (everysec).
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);
static int (*real_close)(int);

static void resolveSymbols(void) {
    real_open = dlsym(RTLD_NEXT, "open");
    real_open64 = dlsym(RTLD_NEXT, "open64");
    real_write = dlsym(RTLD_NEXT, "write");
    real_writev = dlsym(RTLD_NEXT, "writev");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    real_close = dlsym(RTLD_NEXT, "close");
}

static pthread_once_t resolved = PTHREAD_ONCE_INIT;

// Another library's constructor may call write before ours has run, so every wrapper resolves.
static void resolve(void) { pthread_once(&resolved, resolveSymbols); }

__attribute__((constructor)) static void announce(void) {
    resolve();
    static const char banner[] = "power-cut shim: writes to *.aof stay in memory until fsync\n";
    real_write(2, banner, sizeof banner - 1);
}

static int isTracked(int fd) {
    return fd >= 0 && fd < TRACKED_FDS && __atomic_load_n(&unsynced[fd].tracked, __ATOMIC_ACQUIRE);
}

static int isAppendOnlyFile(const char *path) {
    size_t length = path ? strlen(path) : 0;
    return length > 4 && strcmp(path + length - 4, ".aof") == 0;
}

static int opened(int fd, const char *path) {
    if (fd >= 0 && fd < TRACKED_FDS && isAppendOnlyFile(path)) {
        pthread_mutex_lock(&lock);
        unsynced[fd].length = 0;
        __atomic_store_n(&unsynced[fd].tracked, 1, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&lock);
    }
    return fd;
}

static int hold(int fd, const void *bytes, size_t length) {
    struct Unsynced *pending = &unsynced[fd];
    if (pending->length + length > pending->capacity) {
        size_t capacity = pending->capacity ? pending->capacity : 1 << 16;
        while (capacity < pending->length + length) capacity *= 2;
        char *grown = realloc(pending->bytes, capacity);
        if (!grown) return -1;
        pending->bytes = grown;
        pending->capacity = capacity;
    }
    memcpy(pending->bytes + pending->length, bytes, length);
    pending->length += length;
    return 0;
}

// Gives the held bytes to the kernel; called with the lock held.
static int release(int fd) {
    struct Unsynced *pending = &unsynced[fd];
    size_t done = 0;
    while (done < pending->length) {
        ssize_t written = real_write(fd, pending->bytes + done, pending->length - done);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            // Keep what is left so a later fsync retries it, as the kernel would.
            memmove(pending->bytes, pending->bytes + done, pending->length - done);
            pending->length -= done;
            return -1;
        }
        done += (size_t)written;
    }
    pending->length = 0;
    return 0;
}

// `open` and `open64` take a mode only when they may create the file.
static int openTracked(int (*real)(const char *, int, ...), const char *path, int flags, va_list arguments) {
    mode_t mode = (flags & (O_CREAT | O_TMPFILE)) ? va_arg(arguments, mode_t) : 0;
    return opened(real(path, flags, mode), path);
}

int open(const char *path, int flags, ...) {
    resolve();
    va_list arguments;
    va_start(arguments, flags);
    int fd = openTracked(real_open, path, flags, arguments);
    va_end(arguments);
    return fd;
}

int open64(const char *path, int flags, ...) {
    resolve();
    va_list arguments;
    va_start(arguments, flags);
    int fd = openTracked(real_open64, path, flags, arguments);
    va_end(arguments);
    return fd;
}

ssize_t write(int fd, const void *bytes, size_t length) {
    resolve();
    if (!isTracked(fd)) return real_write(fd, bytes, length);
    pthread_mutex_lock(&lock);
    int failed = hold(fd, bytes, length);
    pthread_mutex_unlock(&lock);
    if (failed) {
        errno = ENOMEM;
        return -1;
    }
    return (ssize_t)length;
}

ssize_t writev(int fd, const struct iovec *vectors, int count) {
    resolve();
    if (!isTracked(fd)) return real_writev(fd, vectors, count);
    ssize_t total = 0;
    pthread_mutex_lock(&lock);
    for (int index = 0; index < count; index++) {
        if (hold(fd, vectors[index].iov_base, vectors[index].iov_len)) {
            pthread_mutex_unlock(&lock);
            errno = ENOMEM;
            return -1;
        }
        total += (ssize_t)vectors[index].iov_len;
    }
    pthread_mutex_unlock(&lock);
    return total;
}

static int releaseThen(int fd, int (*sync)(int)) {
    if (isTracked(fd)) {
        pthread_mutex_lock(&lock);
        int failed = release(fd);
        pthread_mutex_unlock(&lock);
        if (failed) return -1;
    }
    return sync(fd);
}

int fsync(int fd) {
    resolve();
    return releaseThen(fd, real_fsync);
}

int fdatasync(int fd) {
    resolve();
    return releaseThen(fd, real_fdatasync);
}

// A closed file keeps what it was given (kinder than a power cut, which could lose it too).
int close(int fd) {
    resolve();
    if (isTracked(fd)) {
        pthread_mutex_lock(&lock);
        release(fd);
        __atomic_store_n(&unsynced[fd].tracked, 0, __ATOMIC_RELEASE);
        pthread_mutex_unlock(&lock);
    }
    return real_close(fd);
}
