/* cli.h - what every `colony` subcommand shares: the invocation, the options all of them take
 * (--json, --socket, --dir, --help), the dispatch (colony's own main() and colony-offline's,
 * which runs the offline commands: colony.c, offline.c), and the one-line error convention
 * ("colony: <cmd>: <reason>" on stderr; exit 1 for the controller or the connection, 2 for
 * usage). Subcommands return an exit status; only main() exits. */
#pragma once
#include "log.h"
#include <cjson/cJSON.h>
#include <getopt.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

#define EXIT_FAIL  1
#define EXIT_USAGE 2

struct cli;

typedef struct cli_command {
        const char *name;
        const char *summary;  /* one line for `colony --help`; NULL for colony-offline's (colony.c lists them) */
        const char *usage;    /* the whole `colony <name> --help` text */
        bool stop_at_operand; /* options end at the first operand (submit: the command's own) */
        int (*run)(struct cli *c, int argc, char **argv);
} cli_command;

typedef struct cli {
        const cli_command *command;
        const char *socket; /* --socket PATH, or NULL */
        const char *dir;    /* --dir DIR, or NULL */
        bool json;          /* --json: print the controller's reply as JSON */
        char **argv;        /* main()'s, whole: what colony hands colony-offline */
} cli;

/* main() of colony and of colony-offline: the global options, then run the command of commands
 * (NULL-terminated) that the first operand names, with the rest. Returns the exit status. */
int cli_main(const cli_command *const *commands, int argc, char **argv);

/* Subcommands number their own getopt_long values from here; below are the common ones. */
enum { CLI_OPT_JSON = 0x100, CLI_OPT_SOCKET, CLI_OPT_DIR, CLI_OPT_HELP, CLI_OPT_OWN };

/* What cli_getopt returns besides an option value of the subcommand's own. */
enum { CLI_OPTS_DONE = 0, CLI_OPTS_HELP = -1, CLI_OPTS_BAD = -2 };

/* Next option of c->command's argv: handles the common options itself and returns the value of
 * one of own (a {0}-terminated table, values >= CLI_OPT_OWN) for the caller to handle.
 * Returns CLI_OPTS_DONE at the first operand (optind), CLI_OPTS_HELP after printing the
 * usage, CLI_OPTS_BAD after printing a usage error. main() resets getopt before run(). */
int cli_getopt(cli *c, int argc, char **argv, const struct option *own);
/* cli_getopt with short options too, in getopt's syntax ("o:e:"): returns their letter. */
int cli_getopt_short(cli *c, int argc, char **argv, const struct option *own, const char *shorts);
/* The exit status for a non-option cli_getopt result: 0 after --help, EXIT_USAGE otherwise. */
int cli_opts_status(int r);

/* Parse the options of a command that takes only the common ones and no operand. Returns -1
 * to go on, else the exit status to return (0 after --help, EXIT_USAGE). */
int cli_no_operands(cli *c, int argc, char **argv);
/* The end of a command's option loop, whose last cli_getopt result is r, for a command that
 * takes no operand: r's exit status when it is not CLI_OPTS_DONE, a usage error for an operand
 * at optind. Returns -1 to go on, else the exit status to return. */
int cli_opts_end(const cli *c, int r, int argc, char **argv);

/* Print "colony: <cmd>: <message>" on stderr. */
void cli_error(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* cli_error, then return EXIT_USAGE. */
int cli_usage_error(const cli *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Read a JSON object from path into *doc (cJSON_Delete). Returns 0, or EXIT_FAIL after printing
 * why not. */
int cli_read_json_object(const cli *c, const char *path, cJSON **doc);

/* Set by the SIGINT/SIGTERM/SIGHUP handler cli_catch_signals installs (demo), so that waits
 * give up and the cluster is still stopped. */
extern volatile sig_atomic_t cli_interrupted;
/* Install that handler (without SA_RESTART, so blocking calls return EINTR). */
void cli_catch_signals(void);

extern const cli_command cmd_submit, cmd_queue, cmd_show, cmd_cancel, cmd_wait;
extern const cli_command cmd_nodes, cmd_up, cmd_down, cmd_demo, cmd_place, cmd_sim, cmd_fair, cmd_history, cmd_coloc,
        cmd_lotes, cmd_measure, cmd_shares, cmd_reload, cmd_events;
extern const cli_command cmd_drain, cmd_resume; /* drain.c */
extern const cli_command cmd_run, cmd_attach;   /* run.c */

struct lotes_problem;
struct lotes_alloc;
struct lotes_plan;
/* LoTES's offline stages on p, timed (lotes.c): stage 1 into *a, stage 2 into *plan (the caller
 * frees both with lotes_alloc_free and lotes_plan_free), their CPU seconds in seconds[].
 * Returns 0, or -errno with the reason in err and nothing to free. */
int cli_lotes_solve(const struct lotes_problem *p, struct lotes_alloc *a, struct lotes_plan *plan, double seconds[2],
                    char *err, size_t errlen);
