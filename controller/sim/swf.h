/* swf.h - the Standard Workload Format of the Parallel Workloads Archive, as a job stream.
 *
 * One job per line, 18 whitespace-separated fields; lines starting with ';' are comments.
 * colony reads: 2 submit time, 4 run time, 5 allocated processors, 7 used memory (KB per
 * processor), 8 requested processors, 10 requested memory (KB per processor), and for
 * departments 12 user ID or 13 group ID ("u<id>", "g<id>"; "unknown" for -1). -1 means unknown:
 * requested values fall back to the allocated/used ones, then to defaults. Jobs with an unknown
 * run time (cancelled before they ran), processor count (neither requested nor allocated) or
 * submit time are skipped and counted. The file may be gzip'd, or "-" (standard input). A line whose times exceed
 * SWF_TIME_MAX seconds or whose memory exceeds RES_MEM_MAX is malformed: the simulator counts
 * time in int64 microseconds and memory in int64 bytes. */
#pragma once
#include "sim.h"
#include "trace.h"
#include <stddef.h>

#define SWF_TIME_MAX SIM_TIME_MAX

typedef struct swf_trace {
        sim_jobs jobs;
        size_t skipped;             /* lines without a run time */
        sim_names depts;            /* the jobs' sim_job.dept indexes these */
        size_t no_procs, no_submit; /* lines with a run time but no processor count / submit time */
} swf_trace;

/* Read a whole trace. mem_per_proc is used where the trace gives no memory; jobs' departments
 * come from the field dept_by names (SIM_DEPT_USER or _GROUP; SIM_DEPT_NONE leaves t->depts
 * empty and every dept 0). Arrival times are made relative to the first job and sorted. Returns 0, or
 * -errno with "path:line: reason" in err for the first malformed line (nothing is kept).
 * path may be gzip'd; "-" reads standard input. */
int swf_load(const char *path, int64_t mem_per_proc, sim_dept_key dept_by, swf_trace *out, char *err, size_t errlen);
/* Free the jobs and department names of t. */
void swf_free(swf_trace *t);
