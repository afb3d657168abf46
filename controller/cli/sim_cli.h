/* sim_cli.h - what colony sim's two halves share: the options and inputs (sim_cli.c) and the
 * reports printed from a result (sim_report.c). */
#pragma once
#include "cli.h"
#include "google.h"
#include "instance.h"
#include "lotes.h"
#include "trace.h"
#include "sim.h"
#include "swf.h"
#include "workload.h"
#include <stdio.h>

typedef struct sim_options {
        const char *workload_name;
        const wl_spec *workload;
        wl_generated generated; /* lotes-phi, lotes-omega */
        bool lotes_capacity;    /* --capacity lotes: --load is a fraction of LoTES's lambda* */
        size_t njobs, scale;
        double load;
        uint64_t seed;
        const char *trace, *google, *machines, *google_machines;
        res_t google_scale; /* a machine of normalized capacity 1.0 */
        const char *policy;
        const char *alpha; /* --alpha FILE (--policy coloc) */
        bool dispatcher;   /* the policy has queues of its own: --order does not apply */
        int64_t mem_per_proc;
        sim_dept_key dept_by;
        bool dept_by_given;
        bool csv;
        const char *jobs_csv, *depts_csv; /* "-": standard output */
} sim_options;

typedef struct sim_input {
        wl_source synthetic;
        swf_trace trace;
        google_trace google;
        google_machines google_cluster;
        inst_machines file;
        res_t *machines;
        double arrival_rate, fluid_capacity; /* synthetic workloads only */
        wl_lotes lotes;                      /* LoTES's inputs and plan, when --policy lotes or --capacity lotes */
        lotes_alloc alloc;
        lotes_plan plan;
        bool planned;
        FILE *jobs_csv; /* --jobs-csv, open while the simulation runs */
} sim_input;

/* Print r as the options ask: JSON, the utilization samples as CSV, or a summary with the
 * departments' figures; and write --depts-csv. Returns an exit status (errors printed). */
int sim_report(cli *c, const sim_options *so, const sim_config *cfg, const sim_input *in, const sim_result *r);
/* Write the header of the --jobs-csv table to f. */
void sim_jobs_csv_header(FILE *f);
/* sim_each_job_fn: one row of the --jobs-csv table, to the FILE *data. Returns 0 or -EIO. */
int sim_jobs_csv_row(void *data, const sim_job_record *r);
