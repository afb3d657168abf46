/* family.h - the simulator's MapReduce jobs: a family of map tasks and reduce tasks where no
 * reduce starts before the family's last map has ended (Tran and Beck, "Report: Google data
 * center scheduling", sections 6-7), and its flow time. Internal to controller/sim. */
#pragma once
#include "sim.h"

typedef struct sim_family sim_family;

typedef struct sim_families {
        sim_family *v; /* by family number - 1 */
        size_t n, cap;
        uint64_t *of_job; /* by job id - 1: family number << 1 | is a reduce, 0 for a lone job */
        size_t of_job_cap;
} sim_families;

/* Take the arriving task j (j->family > 0) at time now. A reduce whose family has maps still to
 * end is copied into the family and *held is set: it is released by fam_task_ended. Returns 0,
 * -EINVAL for a family out of order, or -ENOMEM. */
int fam_task_arrives(sim_families *f, const sim_job *j, double now, bool *held);
/* Job id is task t of its family (the controller accepted it). Returns 0 or -ENOMEM. */
int fam_task_accepted(sim_families *f, uint64_t id, const sim_job *t);
/* Task t will never run (the controller refused it) at now: its family has no flow time; a map
 * may release the held reduces, as fam_task_ended. */
void fam_task_refused(sim_families *f, const sim_job *t, double now, sim_job **release, size_t *nrelease);
/* Job id ended at now after running ran seconds. When it was its family's last map, *release
 * points to the family's held reduces (*nrelease of them, valid until the next call); else
 * *nrelease is 0. */
void fam_task_ended(sim_families *f, uint64_t id, double now, double ran, sim_job **release, size_t *nrelease);
/* The family number of job id, 0 for a lone job. */
uint64_t fam_of_job(const sim_families *f, uint64_t id);
/* Whether job id is a reduce task. */
bool fam_is_reduce(const sim_families *f, uint64_t id);
/* The flow times of the families that ran whole (arrival to the end of the last reduce), and
 * the ideal ones (the longest map plus the longest reduce: every task started the moment it
 * could, as on unlimited machines), into out. Returns 0 or -ENOMEM. */
int fam_figures(const sim_families *f, sim_result *out);
/* Free what f holds. */
void fam_free(sim_families *f);
