/* waitopts.h - when a job may start, from the command line: submit's --after, --afterok,
 * --afternotok, --afterany, --dependency, --singleton, --hold, --begin and --nice, and the
 * commands hold, release and update (waitopts.c). */
#pragma once
#include "cli.h"
#include "job.h"

/* getopt values of submit's start options, after its own. */
enum {
        WAITOPT_AFTER = CLI_OPT_OWN + 64,
        WAITOPT_AFTEROK,
        WAITOPT_AFTERNOTOK,
        WAITOPT_AFTERANY,
        WAITOPT_DEPENDENCY,
        WAITOPT_SINGLETON,
        WAITOPT_HOLD,
        WAITOPT_BEGIN,
        WAITOPT_NICE,
};

/* The entries of submit's option table for them. */
#define WAITOPT_SUBMIT_OPTIONS                                                                                         \
        { "after", required_argument, NULL, WAITOPT_AFTER }, { "afterok", required_argument, NULL, WAITOPT_AFTEROK },  \
                { "afternotok", required_argument, NULL, WAITOPT_AFTERNOTOK },                                         \
                { "afterany", required_argument, NULL, WAITOPT_AFTERANY },                                             \
                { "dependency", required_argument, NULL, WAITOPT_DEPENDENCY },                                         \
                { "singleton", no_argument, NULL, WAITOPT_SINGLETON }, { "hold", no_argument, NULL, WAITOPT_HOLD },    \
                { "begin", required_argument, NULL, WAITOPT_BEGIN }, {                                                 \
                "nice", required_argument, NULL, WAITOPT_NICE                                                          \
        }

/* The lines of submit's usage for them. */
#define WAITOPT_SUBMIT_USAGE                                                                                           \
        "  --afterok IDS    start once the jobs IDS (a comma list; an array's first id: the whole\n"                   \
        "                   array) completed; ended cancelled if one of them does not\n"                               \
        "  --afternotok IDS start once they ended otherwise (failed, cancelled...)\n"                                  \
        "  --afterany IDS   start once they ended, however\n"                                                          \
        "  --after IDS      start once they started\n"                                                                 \
        "  --singleton      start once no job of yours with its name runs\n"                                           \
        "  -d, --dependency D\n"                                                                                       \
        "                   as Slurm writes it: afterok:1:2,afterany:3 (',': all; '?' is not\n"                        \
        "                   supported)\n"                                                                              \
        "  -H, --hold       submit it held: pending until `colony release`\n"                                          \
        "  -b, --begin TIME pending until TIME: now+60, now+1hour, 16:00, 2026-11-27T08:00\n"                          \
        "  --nice N         0 to 10000 (negative: root only): higher starts after your other jobs\n"                   \
        "                   of its group\n"

/* Apply start option opt (a WAITOPT_ value, or Slurm's short 'd', 'H', 'b') with arg to s: s->dependency is malloc'ed
 * (the caller frees it). Returns -1 to go on, or an exit status after printing why. */
int waitopt_submit(const cli *c, int opt, const char *arg, job_spec *s);

extern const cli_command cmd_hold, cmd_release, cmd_update;
