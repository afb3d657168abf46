/* cli.c - what colony and colony-offline share (cli.h): global options, subcommand dispatch,
 * option parsing, error lines, the interrupt flag. */
#include "cli.h"
#include "fileio.h"
#include "format.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef COLONY_VERSION
#error "COLONY_VERSION must be defined by the build"
#endif

static const struct option common_options[] = {
        { "json", no_argument, NULL, CLI_OPT_JSON },
        { "socket", required_argument, NULL, CLI_OPT_SOCKET },
        { "dir", required_argument, NULL, CLI_OPT_DIR },
        { "help", no_argument, NULL, CLI_OPT_HELP },
};
#define N_COMMON    (sizeof(common_options) / sizeof(common_options[0]))
#define MAX_OPTIONS 48

volatile sig_atomic_t cli_interrupted;

static void on_signal(int sig) { cli_interrupted = sig; }

void cli_catch_signals(void) {
        struct sigaction sa = { .sa_handler = on_signal };

        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
}

static void verror(const cli *c, const char *fmt, va_list ap) {
        char *text;

        fflush(stdout); /* keep the order in which things happened when both go to one place */
        if (vasprintf(&text, fmt, ap) < 0)
                text = NULL;
        /* errors quote what users gave (names, paths, argv): one line, escaped as all output */
        fmt_line(stderr, "colony: %s%s%s", c->command ? c->command->name : "", c->command ? ": " : "",
                 text ? text : "out of memory");
        free(text);
}

void cli_error(const cli *c, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        verror(c, fmt, ap);
        va_end(ap);
}

int cli_usage_error(const cli *c, const char *fmt, ...) {
        va_list ap;

        va_start(ap, fmt);
        verror(c, fmt, ap);
        va_end(ap);
        return EXIT_USAGE;
}

/* Handle getopt_long's complaint about argv[optind - 1]. */
static int bad_option(const cli *c, int r, char **argv) {
        const char *arg = argv[optind - 1];
        char hint[64];

        snprintf(hint, sizeof(hint), "see colony %s%s--help", c->command ? c->command->name : "",
                 c->command ? " " : "");
        if (r == ':')
                cli_error(c, "option '%s' needs a value (%s)", arg, hint);
        else if (optopt && (size_t)optopt < 0x100 && arg[0] == '-' && arg[1] != '-')
                cli_error(c, "unknown option '-%c' (%s)", optopt, hint);
        else
                cli_error(c, "unknown option '%s' (%s)", arg, hint);
        return CLI_OPTS_BAD;
}

int cli_getopt(cli *c, int argc, char **argv, const struct option *own) {
        return cli_getopt_short(c, argc, argv, own, "");
}

int cli_getopt_short(cli *c, int argc, char **argv, const struct option *own, const char *shorts) {
        struct option all[MAX_OPTIONS];
        char optstring[64];
        size_t n = 0;
        int r;

        for (; own && own[n].name && n < MAX_OPTIONS - N_COMMON - 1; n++)
                all[n] = own[n];
        memcpy(all + n, common_options, sizeof(common_options));
        all[n + N_COMMON] = (struct option){ 0 };

        opterr = 0;
        snprintf(optstring, sizeof(optstring), "%s%s", c->command->stop_at_operand ? "+:" : ":", shorts);
        r = getopt_long(argc, argv, optstring, all, NULL);
        switch (r) {
        case -1: return CLI_OPTS_DONE;
        case CLI_OPT_JSON: c->json = true; return cli_getopt_short(c, argc, argv, own, shorts);
        case CLI_OPT_SOCKET: c->socket = optarg; return cli_getopt_short(c, argc, argv, own, shorts);
        case CLI_OPT_DIR: c->dir = optarg; return cli_getopt_short(c, argc, argv, own, shorts);
        case CLI_OPT_HELP: fputs(c->command->usage, stdout); return CLI_OPTS_HELP;
        case '?':
        case ':': return bad_option(c, r, argv);
        default: return r;
        }
}

int cli_opts_status(int r) { return r == CLI_OPTS_HELP ? 0 : EXIT_USAGE; }

int cli_no_operands(cli *c, int argc, char **argv) {
        int o;

        while ((o = cli_getopt(c, argc, argv, NULL)) > 0)
                ;
        return cli_opts_end(c, o, argc, argv);
}

int cli_read_json_object(const cli *c, const char *path, cJSON **doc) {
        char *text = NULL;
        int r = file_read_small(path, 0, &text);
        if (r < 0) {
                cli_error(c, "%s: %s", path, strerror(-r));
                return EXIT_FAIL;
        }
        *doc = cJSON_Parse(text);
        free(text);
        if (!cJSON_IsObject(*doc)) {
                cJSON_Delete(*doc);
                *doc = NULL;
                cli_error(c, "%s: not a JSON object", path);
                return EXIT_FAIL;
        }
        return 0;
}

static void usage(const cli_command *const *commands, FILE *f) {
        fputs("Usage: colony [--socket PATH | --dir DIR] [--json] COMMAND [options] [args]\n"
              "Submit and follow jobs on a colony cluster, or run a local one.\n\nCommands:\n",
              f);
        for (size_t i = 0; commands[i]; i++)
                if (commands[i]->summary)
                        fprintf(f, "  %-8s %s\n", commands[i]->name, commands[i]->summary);
                else
                        fprintf(f, "  %s\n", commands[i]->name);
        fputs("\nOptions (before or after the command):\n"
              "  --socket PATH  the controller's socket\n"
              "  --dir DIR      the cluster directory; its socket is DIR/controller.sock\n"
              "  --json         print the controller's replies as JSON\n"
              "  --help         show this help (colony COMMAND --help: that command's)\n"
              "  --version      show the version\n\n"
              "The socket is --socket, else DIR/controller.sock for --dir, else $COLONY_SOCKET,\n"
              "else controller.sock in /run/colony (root), $XDG_RUNTIME_DIR/colony or\n"
              "/tmp/colony-UID.\n",
              f);
}

/* Parse the options before the command into c. Returns -1 to go on, else an exit status. */
static int parse_global(cli *c, const cli_command *const *commands, int argc, char **argv) {
        enum { OPT_VERSION = CLI_OPT_OWN };
        static const struct option options[] = {
                { "json", no_argument, NULL, CLI_OPT_JSON },     { "socket", required_argument, NULL, CLI_OPT_SOCKET },
                { "dir", required_argument, NULL, CLI_OPT_DIR }, { "help", no_argument, NULL, CLI_OPT_HELP },
                { "version", no_argument, NULL, OPT_VERSION },   { 0 },
        };
        int r;

        opterr = 0;
        while ((r = getopt_long(argc, argv, "+:", options, NULL)) != -1) {
                switch (r) {
                case CLI_OPT_JSON: c->json = true; break;
                case CLI_OPT_SOCKET: c->socket = optarg; break;
                case CLI_OPT_DIR: c->dir = optarg; break;
                case CLI_OPT_HELP: usage(commands, stdout); return 0;
                case OPT_VERSION: printf("colony %s\n", COLONY_VERSION); return 0;
                default: bad_option(c, r, argv); return EXIT_USAGE;
                }
        }
        if (optind >= argc) {
                usage(commands, stderr);
                return EXIT_USAGE;
        }
        return -1;
}

int cli_main(const cli_command *const *commands, int argc, char **argv) {
        cli c = { .argv = argv };
        int r;

        /* A controller that goes away mid-request is an error reply, not a silent death. */
        signal(SIGPIPE, SIG_IGN);
        r = parse_global(&c, commands, argc, argv);
        if (r >= 0)
                return r;
        for (size_t i = 0; commands[i]; i++)
                if (strcmp(commands[i]->name, argv[optind]) == 0)
                        c.command = commands[i];
        if (!c.command) {
                cli_error(&c, "unknown command '%s' (see colony --help)", argv[optind]);
                return EXIT_USAGE;
        }
        argv += optind;
        argc -= optind;
        optind = 0; /* glibc: start over, reading the optstring's mode again */
        return c.command->run(&c, argc, argv);
}

int cli_opts_end(const cli *c, int r, int argc, char **argv) {
        if (r < 0)
                return cli_opts_status(r);
        if (optind < argc)
                return cli_usage_error(c, "unexpected argument '%s'", argv[optind]);
        return -1;
}
