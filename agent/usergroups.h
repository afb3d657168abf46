/* usergroups.h - a job user's supplementary groups, from the group database (NSS), looked up for
 * the launch or ahead of it.
 *
 * A standby shepherd looks up the groups of the user of the job before, while it waits for its
 * own job, so that the next job of that user finds them looked up already: with /etc read over
 * 9p (the TCG guest) the lookup took 5 ms of a launch's 21, and a remote directory (LDAP) costs
 * as much anywhere. The shepherd checks it when the job's request has come, before the go: a
 * lookup made ahead is used only while it is current (usergroups_current):
 * younger than USERGROUPS_TTL_MS, and /etc/passwd and /etc/group unchanged since, so that a
 * user added to a group locally (usermod, gpasswd) has it in the very next job. A remote
 * directory's change shows within USERGROUPS_TTL_MS, on top of the name service's own caches
 * (sssd keeps entries 90 minutes by default; Slurm's group cache 600 s, GroupUpdateTime). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/* How long a lookup made ahead is used, at most. */
#define USERGROUPS_TTL_MS 60000

/* What says the files the lookup read are the same: their inode, size and change time. */
typedef struct usergroups_stamp {
        dev_t dev;
        ino_t ino;
        off_t size;
        struct timespec mtime;
} usergroups_stamp;

typedef struct usergroups {
        uid_t uid;
        gid_t gid;   /* the primary group, first in list */
        gid_t *list; /* malloc'ed; NULL: none looked up */
        size_t n;
        int64_t looked_up_ms;      /* CLOCK_MONOTONIC */
        usergroups_stamp files[2]; /* /etc/passwd, /etc/group as they were just before */
} usergroups;

/* Look up uid's supplementary groups, with gid, into *g: just gid when uid has no passwd entry.
 * Returns 0 or -errno (g left empty). */
int usergroups_lookup(uid_t uid, gid_t gid, usergroups *g);
/* True when g holds a lookup of uid and gid still current at now_ms (CLOCK_MONOTONIC). */
bool usergroups_current(const usergroups *g, uid_t uid, gid_t gid, int64_t now_ms);
/* Free g's list and empty it. */
void usergroups_free(usergroups *g);
/* Look up this process's own groups once, so that the name service's modules and configuration
 * are loaded before the shepherds are forked from it and each finds them in place. */
void usergroups_warm(void);
