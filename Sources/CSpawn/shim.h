#include <spawn.h>
#include <unistd.h>

// In glibc (posix_spawn_file_actions_addclosefrom_np since 2.34; Debian 12 has 2.36), but declared only
// for _GNU_SOURCE, which Swift's Glibc module does not define.

// Closes every descriptor from `from` up in the child.
int posix_spawn_file_actions_addclosefrom_np(posix_spawn_file_actions_t *actions, int from);

// pipe(2) with flags (O_CLOEXEC), atomically.
int pipe2(int pipefd[2], int flags);
