/* alpha_cli.c - upload, print and draw the controller's interference matrix (alpha_cli.h). */
#include "alpha_cli.h"
#include "alpha.h"
#include "client.h"
#include "jobs.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

int alpha_cli_upload(const cli *c, const char *sock, const cJSON *measured, uint64_t *version) {
        static const char *const fields[] = { "types", "alpha", "ci95_low", "ci95_high" };
        char err[ERRLEN];
        cJSON *req = proto_new("alpha_put"), *reply = NULL;
        for (size_t i = 0; req && i < sizeof(fields) / sizeof(fields[0]); i++) {
                const cJSON *f = cJSON_GetObjectItemCaseSensitive(measured, fields[i]);
                if (f)
                        cJSON_AddItemToObject(req, fields[i], cJSON_Duplicate(f, true));
        }
        int r = req ? client_call(sock, req, "alpha_stored", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err)) : -ENOMEM;
        int64_t v = 0;
        if (r == 0 && proto_get_int(reply, "version", 1, INT64_MAX, &v, err) != 0)
                r = -EBADMSG;
        cJSON_Delete(req);
        cJSON_Delete(reply);
        if (r < 0) {
                cli_error(c, "storing the matrix: %s", r == -ENOMEM ? "out of memory" : err);
                return EXIT_FAIL;
        }
        *version = (uint64_t)v;
        return 0;
}

int alpha_cli_upload_file(const cli *c, const char *sock, const char *path) {
        cJSON *doc;
        uint64_t version;
        int r = cli_read_json_object(c, path, &doc);
        if (r != 0)
                return r;
        r = alpha_cli_upload(c, sock, doc, &version);
        cJSON_Delete(doc);
        if (r == 0)
                printf("stored as interference matrix version %" PRIu64 "\n", version);
        return r;
}

static void print_table(const alpha_matrix *m) {
        char when[64] = "?";
        time_t t = (time_t)(m->time_usec / 1000000);
        struct tm tm;
        if (gmtime_r(&t, &tm))
                strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S UTC", &tm);
        printf("interference matrix version %" PRIu64 ", stored %s, %zu types\n", m->version, when, m->n);
        printf("alpha[row][column]: how much one job of type row slows a job of type column%s\n%-10s",
               m->ci_low ? " (95% interval)" : "", "");
        for (size_t b = 0; b < m->n; b++)
                printf(" %20s", m->types[b]);
        for (size_t a = 0; a < m->n; a++) {
                printf("\n%-10s", m->types[a]);
                for (size_t b = 0; b < m->n; b++) {
                        char cell[64];
                        size_t i = a * m->n + b;
                        if (m->ci_low)
                                snprintf(cell, sizeof(cell), "%.3f [%.3f,%.3f]", m->alpha[i], m->ci_low[i],
                                         m->ci_high[i]);
                        else
                                snprintf(cell, sizeof(cell), "%.3f", m->alpha[i]);
                        printf(" %20s", cell);
                }
        }
        printf("\n");
}

/* Draw m as a heatmap into png with gnuplot (the way contrib/plots does: pngcairo). */
static int draw(const cli *c, const alpha_matrix *m, const char *png) {
        FILE *gp = popen("gnuplot", "w");
        if (!gp) {
                cli_error(c, "--png: cannot run gnuplot: %s", strerror(errno));
                return EXIT_FAIL;
        }
        fprintf(gp, "set terminal pngcairo size %d,%d enhanced font \",11\"\nset output '", 240 + 90 * (int)m->n,
                160 + 80 * (int)m->n);
        for (const char *p = png; *p; p++) /* gnuplot's single quotes: '' is a quote */
                fprintf(gp, *p == '\'' ? "''" : "%c", *p);
        fprintf(gp,
                "'\nset title 'interference matrix version %" PRIu64 ": alpha[row][column]' noenhanced\n"
                "set xlabel 'slowed type (column)'\nset ylabel 'slowing type (row)'\n"
                "set palette defined (0 'white', 1 'yellow', 2 'red', 4 'dark-red')\nset cbrange [0:*]\n"
                "set yrange [] reverse\nunset key\n$alpha << EOD\n",
                m->version);
        for (size_t a = 0; a < m->n; a++)
                for (size_t b = 0; b < m->n; b++)
                        fprintf(gp, "%zu %zu %.6g\n", b, a, m->alpha[a * m->n + b]);
        fprintf(gp, "EOD\nset xtics (");
        for (size_t t = 0; t < m->n; t++)
                fprintf(gp, "%s'%s' %zu", t ? ", " : "", m->types[t], t);
        fprintf(gp, ") noenhanced\nset ytics (");
        for (size_t t = 0; t < m->n; t++)
                fprintf(gp, "%s'%s' %zu", t ? ", " : "", m->types[t], t);
        fprintf(gp, ") noenhanced\nplot $alpha using 1:2:3 with image, $alpha using 1:2:(sprintf('%%.2f', $3)) "
                    "with labels\n");
        int status = pclose(gp);
        if (status != 0) {
                cli_error(c, "--png: gnuplot failed (%s); is gnuplot (gnuplot-nox) installed?",
                          WIFEXITED(status) ? "exit status" : "killed");
                return EXIT_FAIL;
        }
        return 0;
}

int alpha_cli_show(const cli *c, const char *sock, uint64_t version, const char *png) {
        char err[ERRLEN];
        cJSON *req = proto_new("alpha_get"), *reply = NULL;
        if (req && version)
                cJSON_AddNumberToObject(req, "version", (double)version);
        int r = req ? client_call(sock, req, "alpha", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err)) : -ENOMEM;
        cJSON_Delete(req);
        alpha_matrix m = { 0 };
        if (r == 0 && alpha_from_json(reply, &m, err) < 0)
                r = -EBADMSG;
        if (r < 0) {
                cli_error(c, "%s", r == -ENOMEM ? "out of memory" : err);
                cJSON_Delete(reply);
                return EXIT_FAIL;
        }
        if (c->json) {
                cJSON_DeleteItemFromObjectCaseSensitive(reply, "type");
                char *text = proto_print_pretty(reply);
                if (text)
                        puts(text);
                free(text);
        } else
                print_table(&m);
        r = png ? draw(c, &m, png) : 0;
        alpha_free(&m);
        cJSON_Delete(reply);
        return r;
}
