/* offline.c - colony-offline: colony's offline commands (place, sim, fair, coloc, lotes), which
 * run the policies and the simulator in-process and so load GLPK. colony execs it for them with
 * its own argv (colony.c); it is not meant to be run by hand. */
#include "cli.h"

static const cli_command *const commands[] = {
        &cmd_place, &cmd_sim, &cmd_fair, &cmd_coloc, &cmd_lotes, NULL,
};

int main(int argc, char **argv) { return cli_main(commands, argc, argv); }
