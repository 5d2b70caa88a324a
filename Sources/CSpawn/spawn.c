// Starting a child process under a supervisor. Everything after fork runs in a copy of a multithreaded
// process, where only async-signal-safe functions may be called (signal-safety(7)): system calls, no
// allocation, no locks, no stdio.

#include "CSpawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void report(int descriptor, int32_t kind, int32_t value) {
    int32_t record[2] = {kind, value};
    while (write(descriptor, record, sizeof record) < 0 && errno == EINTR) {}
}

static long long milliseconds(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000 + now.tv_nsec / 1000000;
}

/// Waits up to `ms` milliseconds for one of the (blocked) signals in `set`.
static void await_signal(const sigset_t *set, long long ms) {
    if (ms < 0) ms = 0;
    struct timespec timeout = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000};
    sigtimedwait(set, NULL, &timeout);
}

/// Reaps every child that has ended; notes the program's status when it is among them.
static void reap(pid_t program, int *status, int *ended) {
    int reaped;
    pid_t pid;
    while ((pid = waitpid(-1, &reaped, WNOHANG)) > 0) {
        if (pid == program) {
            *status = reaped;
            *ended = 1;
        }
    }
}

static void close_from(int first) {
    if (close_range((unsigned)first, ~0U, 0) == 0) return;
    struct rlimit limit;
    int last = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 1 << 20
        ? (int)limit.rlim_cur : 1 << 16;
    for (int descriptor = first; descriptor < last; descriptor++) close(descriptor);
}

static _Noreturn void supervise(const char *path, char *const argv[], char *const envp[], const int streams[3],
                                int report_descriptor, int grace_ms, pid_t parent) {
    // Every signal stays blocked here (the caller blocked them all before forking); the ones awaited are
    // taken with sigtimedwait. Dispositions go back to their defaults, which the program inherits.
    for (int number = 1; number < NSIG; number++) {
        struct sigaction action = {0};
        action.sa_handler = SIG_DFL;
        sigaction(number, &action, NULL);
    }
    // Out of the caller's process group: whatever kills that group (a shell's job control, a test's
    // clean-up) must not take the supervisor down before the program.
    setpgid(0, 0);
    // This process's end is the caller's end. The parent-death signal also comes when only the thread
    // that forked ends; getppid tells the two apart (it changes only when the whole process has ended),
    // and checking it after prctl closes the window where the caller ended before prctl.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(127);
    // Descendants the program leaves behind come to the supervisor, which reaps them.
    prctl(PR_SET_CHILD_SUBREAPER, 1);

    // The streams become 0, 1 and 2 and the report descriptor 3 (closed by a successful exec); the rest
    // is closed: neither the supervisor nor the program may hold the caller's files, locks or pipes.
    int sources[4] = {streams[0], streams[1], streams[2], report_descriptor};
    int moved[4];
    for (int index = 0; index < 4; index++) {
        moved[index] = fcntl(sources[index], F_DUPFD, 4);
        if (moved[index] < 0) {
            report(report_descriptor, CSPAWN_REPORT_SETUP_ERROR, errno);
            _exit(127);
        }
    }
    for (int index = 0; index < 4; index++) {
        if (dup2(moved[index], index) < 0) {
            report(moved[3], CSPAWN_REPORT_SETUP_ERROR, errno);
            _exit(127);
        }
    }
    close_from(4);
    fcntl(3, F_SETFD, FD_CLOEXEC);

    sigset_t none;
    sigemptyset(&none);
    const pid_t supervisor = getpid();
    // vfork: the program shares this memory until it execs, so it only makes system calls.
    const pid_t program = vfork();
    if (program == 0) {
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (getppid() != supervisor) _exit(127);
        sigprocmask(SIG_SETMASK, &none, NULL);
        execve(path, argv, envp);
        report(3, CSPAWN_REPORT_EXEC_ERROR, errno);
        _exit(127);
    }
    if (program < 0) {
        report(3, CSPAWN_REPORT_SETUP_ERROR, errno);
        _exit(127);
    }
    // The program has exec'd (or failed to) and is the leader of its process group before the caller
    // hears its id, so the caller's signals to the group always find it.
    report(3, CSPAWN_REPORT_PROGRAM, program);
    close(3);

    sigset_t awaited;
    sigemptyset(&awaited);
    sigaddset(&awaited, SIGCHLD);
    sigaddset(&awaited, SIGTERM);
    int status = 0, ended = 0;
    // 0: the caller runs; 1: it ended and the program got SIGTERM; 2: SIGKILL too.
    int stage = 0;
    long long killAt = 0;
    for (;;) {
        reap(program, &status, &ended);
        if (ended) break;
        if (stage == 0 && getppid() != parent) {
            kill(-program, SIGTERM);
            stage = 1;
            killAt = milliseconds() + grace_ms;
        }
        if (stage == 1 && milliseconds() >= killAt) {
            kill(-program, SIGKILL);
            stage = 2;
        }
        // A second at most between checks: the parent-death signal is the fast path, not the only one.
        await_signal(&awaited, stage == 1 ? (killAt - milliseconds() < 1000 ? killAt - milliseconds() : 1000) : 1000);
    }

    // What the program left in its group goes with it; its descendants come here to be reaped.
    kill(-program, SIGKILL);
    const long long until = milliseconds() + 1000;
    for (;;) {
        int reaped;
        pid_t pid = waitpid(-1, &reaped, WNOHANG);
        if (pid > 0) continue;
        if (pid < 0 && errno == ECHILD) break;
        if (milliseconds() >= until) break;
        await_signal(&awaited, until - milliseconds());
    }

    // End as the program did.
    if (WIFSIGNALED(status)) {
        const int number = WTERMSIG(status);
        struct rlimit noCore = {0, 0};
        setrlimit(RLIMIT_CORE, &noCore);
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, number);
        kill(getpid(), number);
        sigprocmask(SIG_UNBLOCK, &one, NULL);
        _exit(128 + number);
    }
    _exit(WIFEXITED(status) ? WEXITSTATUS(status) : 127);
}

pid_t cspawn_supervised(const char *path, char *const argv[], char *const envp[], const int streams[3],
                        int report_descriptor, int grace_ms) {
    // No signal handler of the caller's may run in the copy before the supervisor resets them.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    const pid_t parent = getpid();
    // _Fork, not fork: no atfork handlers (the Swift runtime's, Dispatch's) run in a copy that only makes
    // system calls.
    const pid_t supervisor = _Fork();
    if (supervisor == 0) supervise(path, argv, envp, streams, report_descriptor, grace_ms, parent);
    const int saved = errno;
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    errno = saved;
    return supervisor;
}
