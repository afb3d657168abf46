/* slurm_submit.c - bench_submit's loop over Slurm's C API: N clients, each submitting M held
 * batch jobs with slurm_submit_batch_job, one after another, each call returning once
 * slurmctld has answered. Prints the same JSON line as bench_submit (submit_loop.h).
 *
 *   slurm_submit --clients N --jobs M [--ids FILE]
 *
 * Not part of colony's build (the product must not depend on libslurm): submit.sh compiles it
 * with `cc -O2 slurm_submit.c submit_loop.c -lslurm` when it measures Slurm. The job is as
 * small as sbatch makes one: script "#!/bin/sh\ntrue\n", priority 0 (held, so nothing runs and
 * the queue only grows, as on colony's side), environment PATH only, output to /dev/null,
 * working directory /tmp. Each libslurm RPC opens its own connection to slurmctld: that is
 * the API's way, not a choice made here. */
#include "submit_loop.h"
#include <errno.h>
#include <getopt.h>
#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <string.h>
#include <unistd.h>

static const char usage[] = "usage: slurm_submit --clients N --jobs M [--ids FILE]\n";

static int slurm_open(void *ud, char err[LOOP_ERRLEN]) {
        job_desc_msg_t *d = ud;
        static char *env[] = { "PATH=/usr/bin:/bin", NULL };

        (void)err;
        slurm_init_job_desc_msg(d);
        d->script = "#!/bin/sh\ntrue\n";
        d->priority = 0;
        d->min_cpus = 1;
        d->user_id = getuid();
        d->group_id = getgid();
        d->std_out = "/dev/null";
        d->work_dir = "/tmp";
        d->environment = env;
        d->env_size = 1;
        d->name = "bench";
        return 0;
}

static int slurm_submit(void *ud, uint64_t *id, int *fatal, char err[LOOP_ERRLEN]) {
        submit_response_msg_t *resp = NULL;

        (void)fatal; /* each call has its own connection: a failure does not end the client */
        if (slurm_submit_batch_job(ud, &resp) != 0) {
                snprintf(err, LOOP_ERRLEN, "slurm_submit_batch_job: %s", slurm_strerror(slurm_get_errno()));
                return -EIO;
        }
        *id = resp->job_id;
        slurm_free_submit_response_response_msg(resp);
        return 0;
}

int main(int argc, char **argv) {
        static const struct option options[] = { LOOP_OPTIONS, { 0 } };
        char err[LOOP_ERRLEN] = "";
        job_desc_msg_t desc;
        loop_args a = { 0 };
        int o, r = 0;

        opterr = 0;
        while (r == 0 && (o = getopt_long(argc, argv, "", options, NULL)) != -1)
                r = loop_option(&a, o, optarg, err);
        if (r == 0 && optind < argc)
                r = -EINVAL, snprintf(err, LOOP_ERRLEN, "unexpected argument '%s'", argv[optind]);
        if (r < 0 || loop_check(&a, err) < 0) {
                fprintf(stderr, "slurm_submit: %s\n%s", err, usage);
                return 2;
        }
        slurm_init(NULL);
        r = loop_run(&a, &(loop_client){ .open = slurm_open, .submit = slurm_submit, .ud = &desc }, stdout);
        if (r < 0)
                fprintf(stderr, "slurm_submit: %s\n", strerror(-r));
        slurm_fini();
        return r == 0 ? 0 : 1;
}
