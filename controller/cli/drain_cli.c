/* drain_cli.c - colony drain and colony resume: take a node out of placement and back (root). */
#include "cli.h"
#include "client.h"
#include "proto.h"
#include <getopt.h>
#include <stdio.h>

#define DRAIN_TIMEOUT_MS 30000

static const char drain_usage[] =
        "Usage: colony drain NODE [--reason TEXT]\n"
        "Place no new job on NODE: the jobs running there finish, then it is drained. Root only.\n"
        "The drain is stored: it outlives a restart of the controller and of the node's agent.\n"
        "Undo it with colony resume NODE.\n\n"
        "  --reason TEXT    why, shown by colony nodes (default: \"drained\")\n";

static const char resume_usage[] = "Usage: colony resume NODE\n"
                                   "Let colony place jobs on a drained NODE again. Root only.\n";

/* Print a "drained" or "resumed" reply. Returns 0. */
static int print_node_state(const cli *c, const cJSON *reply) {
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(reply, "node"),
                    *state = cJSON_GetObjectItemCaseSensitive(reply, "state");
        (void)c;
        printf("%s: %s\n", cJSON_IsString(node) ? node->valuestring : "?",
               cJSON_IsString(state) ? state->valuestring : "?");
        return 0;
}

/* Send {type, node: NODE, reason} for argv's one operand. Returns an exit status. */
static int node_command(cli *c, int argc, char **argv, const char *type, const char *want, bool with_reason) {
        enum { OPT_REASON = CLI_OPT_OWN };
        static const struct option drain_options[] = { { "reason", required_argument, NULL, OPT_REASON }, { 0 } };
        static const struct option no_options[] = { { 0 } };
        const char *reason = NULL;
        int o;
        while ((o = cli_getopt(c, argc, argv, with_reason ? drain_options : no_options)) > 0)
                reason = optarg;
        if (o < 0)
                return cli_opts_status(o);
        if (optind + 1 != argc)
                return cli_usage_error(c, "give one node (colony %s NODE)", type);
        cJSON *req = proto_new(type);
        if (!req || !cJSON_AddStringToObject(req, "node", argv[optind]) ||
            (reason && !cJSON_AddStringToObject(req, "reason", reason))) {
                cJSON_Delete(req);
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        return client_print(c, req, want, NULL, DRAIN_TIMEOUT_MS, print_node_state);
}

static int run_drain(cli *c, int argc, char **argv) { return node_command(c, argc, argv, "drain", "drained", true); }

static int run_resume(cli *c, int argc, char **argv) { return node_command(c, argc, argv, "resume", "resumed", false); }

const cli_command cmd_drain = { "drain", "place no new job on a node (root)", drain_usage, false, run_drain };
const cli_command cmd_resume = { "resume", "place jobs on a drained node again (root)", resume_usage, false,
                                 run_resume };
