#ifndef CSPAWN_H
#define CSPAWN_H

#include <sys/types.h>

// What Swift cannot do for a child process: run code between fork and exec (only async-signal-safe calls
// are allowed there, and Swift's runtime may allocate or take locks at any call), and glibc functions
// Swift's Glibc module leaves out (declared only for _GNU_SOURCE).

// pipe(2) with flags (O_CLOEXEC), atomically.
int pipe2(int pipefd[2], int flags);

// What the supervisor writes on the report descriptor: records of two int32 values, a kind and a value.
// The program runs; the value is its process id (its process group's id too).
#define CSPAWN_REPORT_PROGRAM 1
// The program could not be executed; the value is execve's errno.
#define CSPAWN_REPORT_EXEC_ERROR 2
// The supervisor could not set the program up (a descriptor, a fork); the value is the errno.
#define CSPAWN_REPORT_SETUP_ERROR 3

// Starts `path` (an absolute or relative path, never looked up in PATH) with `argv` and `envp` (both
// NULL-terminated) under a supervisor: a small process forked from this one that stays while the program
// runs, so the program and everything it starts end with this process however it ends, SIGKILL included.
//
// - The program runs in a process group of its own (its id is the program's process id), its standard
//   streams are `streams[0..2]`, every other descriptor is closed, its signals are at their defaults and
//   unblocked. The supervisor is in a process group of its own too, apart from the caller's.
// - The supervisor reports the program's process id (or why it could not start) on `report`, the write
//   end of a close-on-exec pipe, and closes it: the caller reads records until the end of the pipe.
// - When the program ends, the supervisor kills what is left in its process group (SIGKILL), reaps every
//   descendant handed to it (it is their subreaper) for up to a second, and ends as the program did: the
//   same exit status, or killed by the same signal. Waiting for the supervisor is waiting for the program.
// - When this process ends (the supervisor's parent-death signal, checked with getppid: the signal also
//   comes when only the thread that forked ends), the supervisor sends SIGTERM to the program's process
//   group, then SIGKILL after `grace_ms` milliseconds.
// - The program gets SIGKILL if the supervisor itself is killed.
//
// Returns the supervisor's process id, or -1 with errno set when it could not be forked.
pid_t cspawn_supervised(const char *path, char *const argv[], char *const envp[], const int streams[3],
                        int report, int grace_ms);

#endif
