// Preloaded into a process the bench runs under valgrind (libSigsuspendCopy.so): valgrind 3.19
// rewrites the signal mask that sigsuspend is handed in place, and libdispatch hands it one in
// read-only memory when a Swift program's main thread ends (_dispatch_sigsuspend), so valgrind
// faults and stops. This sigsuspend hands the kernel a copy on the stack instead.
#define _GNU_SOURCE
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

int sigsuspend(const sigset_t *mask) {
    sigset_t copy = *mask;
    return (int)syscall(SYS_rt_sigsuspend, &copy, _NSIG / 8);
}
