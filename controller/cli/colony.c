/* colony.c - the `colony` command. It runs the commands that talk to the controller or start
 * processes itself, and hands the offline ones (place, sim, fair, coloc, lotes: the policies
 * and the simulator, with GLPK) to colony-offline with the same argv, so that colony, which
 * every job command and script loop starts, loads only libc and libcjson. */
#include "cli.h"
#include "devcluster.h"
#include "waitopts.h"
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#ifndef COLONY_LIBEXECDIR
#error "COLONY_LIBEXECDIR must be defined by the build"
#endif
#define OFFLINE_PROG "colony-offline"

/* Exec colony-offline, next to colony first (a build tree) then installed, with colony's whole
 * argv: it parses the global options and the command again, and its exit status is colony's. */
static int run_offline(cli *c, int argc, char **argv) {
        char path[PATH_MAX];

        (void)argc;
        (void)argv;
        if (dev_find_program(OFFLINE_PROG, COLONY_LIBEXECDIR, path, sizeof(path)) < 0) {
                cli_error(c, "%s is neither next to colony nor in %s", OFFLINE_PROG, COLONY_LIBEXECDIR);
                return EXIT_FAIL;
        }
        execv(path, c->argv);
        cli_error(c, "cannot run %s: %s", path, strerror(errno));
        return EXIT_FAIL;
}

static const cli_command offline_place = { "place", "run one placement cycle of a policy on given machines and jobs",
                                           NULL, false, run_offline };
static const cli_command offline_sim = { "sim", "simulate a workload with the scheduling core on a virtual clock", NULL,
                                         false, run_offline };
static const cli_command offline_fair = { "fair",
                                          "share a cluster among a tree of departments under a fair-share algorithm",
                                          NULL, false, run_offline };
static const cli_command offline_coloc = { "coloc", "colocate jobs with types by a colocation-cost algorithm, offline",
                                           NULL, false, run_offline };
static const cli_command offline_lotes = { "lotes", "solve LoTES's offline stages on a workload and print the plan",
                                           NULL, false, run_offline };

static const cli_command *const commands[] = {
        &cmd_submit,    &cmd_queue,   &cmd_show,   &cmd_cancel,    &cmd_wait,    &cmd_history,  &cmd_nodes,
        &cmd_up,        &cmd_down,    &cmd_demo,   &offline_place, &offline_sim, &offline_fair, &offline_coloc,
        &offline_lotes, &cmd_measure, &cmd_shares, &cmd_reload,    &cmd_events,  &cmd_drain,    &cmd_resume,
        &cmd_hold,      &cmd_release, &cmd_update, &cmd_run,       &cmd_attach,  NULL,
};

int main(int argc, char **argv) { return cli_main(commands, argc, argv); }
