/* launchpack.h - a launch request flattened into bytes, for a shepherd forked before its job
 * came (shepherd_spawn_standby), and rebuilt there.
 *
 * It carries what launch_cgroup and launch_job read, and only that: of the job's spec its
 * argv, env, cwd, output paths, umask and script. A field they come to read must be added
 * here too (test_launchpack checks each one's round trip). */
#pragma once
#include "launch.h"
#include <stddef.h>
#include <stdint.h>

/* A request rebuilt by launch_unpack: req points into the rest, whose strings point into the
 * buffer it was read from. req.cg and req.progress_fd are the caller's to set. */
typedef struct launch_unpacked {
        launch_req req;
        job_spec spec; /* argv and env malloc'ed arrays, the strings in the buffer */
        cg_limits lim;
        cg_device *deny;
        double *dept_weights;
        uint64_t id;         /* the job's */
        uint64_t exit_spare; /* the spare file for its exit (jobsync_take_spare), 0: none */
} launch_unpacked;

/* Flatten req (its cg and progress_fd are not carried) with id and exit_spare into *buf
 * (malloc'ed) of *len bytes. Returns 0 or -ENOMEM. */
int launch_pack(const launch_req *req, uint64_t id, uint64_t exit_spare, char **buf, size_t *len);
/* Rebuild a request from buf's len bytes, which must outlive *out. Returns 0, -EBADMSG when
 * they are not one whole request, or -ENOMEM. */
int launch_unpack(const char *buf, size_t len, launch_unpacked *out);
/* Free what launch_unpack allocated (not the buffer). */
void launch_unpacked_free(launch_unpacked *u);
