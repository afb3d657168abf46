/* jobdir.h - the agent's state directory (default /run/colony/<agent>): one set of files per
 * job (jobfile.h says which and what they hold), written so that a crash of the agent at any
 * instant leaves either the old content or the new one, never a torn file (jobdir.c says why
 * none needs to survive a crash of the machine). */
#pragma once
#include "jobfile.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Create the directory (mode 0700, root's; missing parents 0755), or make an existing one
 * so. Returns 0 or -errno with the path and reason in err. */
int jobdir_open(const char *dir, char *err, size_t errlen);
/* Replace the job's file of that kind with text atomically, not durably: write a temporary
 * file and rename it over the old one, so that a crash of the process leaves the old content or
 * the new one (a crash of the machine may leave neither). Returns 0 or -errno. */
int jobdir_replace(const char *dir, uint64_t id, jobfile_kind kind, const char *text);
/* Read the job's file of that kind into malloc'ed *text. Returns 0, -ENOENT or -errno. */
int jobdir_read(const char *dir, uint64_t id, jobfile_kind kind, char **text);
/* Remove every file of the job (a missing one is fine). Returns 0 or the first -errno. */
int jobdir_remove(const char *dir, uint64_t id);
/* Remove the job's file of that kind only (a missing one is fine). Returns 0 or -errno. */
int jobdir_remove_kind(const char *dir, uint64_t id, jobfile_kind kind);
/* The ids that have at least one file, ascending, in malloc'ed *ids. Temporary files left by
 * a write of the agent that a crash cut short are removed on the way; a temporary exit file,
 * which may be a live shepherd's write in progress, stays until jobdir_remove. A missing
 * directory has none.
 * Returns 0 or -errno. */
int jobdir_list(const char *dir, uint64_t **ids, size_t *n);
/* Remove the directory, its spares included, if it holds nothing else. Returns 0, -ENOTEMPTY
 * or -errno. */
int jobdir_close(const char *dir);

/* Spare files, so that a job costs the file system no inode made and none freed: the files of a
 * job done with become spares (jobdir_retire), and the next job's files are spares renamed into
 * place (jobdir_take_spare) before they are written. A spare is ".spare-<n>", n > 0 a number
 * its owner (the agent's jobsync) hands out once; what it holds means nothing. */
#define JOBDIR_SPARES_MAX 256 /* the most an agent keeps: 1 MiB of 4 KiB blocks at most */
/* Rename spare number n to the temporary name of the job's file of that kind, which
 * jobdir_replace then writes and renames into place. Returns 0, -ENOENT when another process took
 * the spare (jobdir_replace then makes the file), or -errno. */
int jobdir_take_spare(const char *dir, uint64_t n, uint64_t id, jobfile_kind kind);
/* As jobdir_remove (all) or jobdir_remove_kind(JOBFILE_DONE), but each file goes to spare
 * number *next, *next counting up while below limit, and is removed once it reaches it (or if
 * that spare exists). Returns 0 or the first -errno. */
int jobdir_retire(const char *dir, uint64_t id, bool all, uint64_t *next, uint64_t limit);
/* Remove every spare (an agent's start and its last stop: no live process counts on one).
 * Returns 0 or -errno. */
int jobdir_clear_spares(const char *dir);
