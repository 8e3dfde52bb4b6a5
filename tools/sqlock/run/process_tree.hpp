// The job `sqlock run` guards: its command and everything the command
// started, however it detached (background `&`, double fork, setsid).
//
// sqlock makes itself a child subreaper (Linux PR_SET_CHILD_SUBREAPER): a
// process whose parent dies is re-parented to sqlock instead of to init, so
// every descendant stays in sqlock's process tree and the tree is found by
// following parent ids in /proc. A descendant alive has a living ancestor
// that is sqlock's own child, so "sqlock has no children" means "the job has
// ended". Elsewhere (no /proc, no subreaper) the job is the command alone.
#pragma once

#include <sys/types.h>

#include <vector>

namespace sqlock_cli {

/// Makes this process a child subreaper. False where that is not supported.
bool become_subreaper() noexcept;

/// The living (not zombie) descendants of this process, read from /proc.
/// Empty where /proc is not available.
std::vector<pid_t> descendants();

/// Sends `signo` to this process's living children: the command and every
/// process re-parented to us because its parent ended (each the root of what
/// is left of its branch). A process whose parent still lives is left to that
/// parent, as a shell handles its own children. Returns how many.
int signal_children(int signo) noexcept;

/// Sends `signo` to every living descendant and to `fallback` (the command,
/// for systems without /proc). Any signal but SIGKILL reaches the processes
/// that lived before it was sent, never one the job starts in answer to it
/// (a SIGTERM trap's clean-up runs whole). SIGKILL repeats the walk until it
/// finds no process it has not signalled yet, so a process forked meanwhile
/// is reached too (up to a few rounds). Returns how many were signalled.
int signal_job(int signo, pid_t fallback) noexcept;

}  // namespace sqlock_cli
