/* alpha.c - the stored interference matrix: JSON in and out, checked (see alpha.h). */
#include "alpha.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void alpha_free(alpha_matrix *m) {
        for (size_t i = 0; m->types && i < m->n; i++)
                free(m->types[i]);
        free(m->types);
        free(m->alpha);
        free(m->ci_low);
        free(m->ci_high);
        *m = (alpha_matrix){ 0 };
}

long alpha_type_index(const alpha_matrix *m, const char *name) {
        for (size_t i = 0; name && i < m->n; i++)
                if (strcmp(m->types[i], name) == 0)
                        return (long)i;
        return -1;
}

static bool good_name(const char *s) {
        size_t n = strlen(s);
        if (n == 0 || n > ALPHA_MAX_NAME)
                return false;
        for (size_t i = 0; i < n; i++)
                if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-", s[i]))
                        return false;
        return true;
}

static int read_types(const cJSON *o, alpha_matrix *m, char err[PROTO_ERRLEN]) {
        const cJSON *types = cJSON_GetObjectItemCaseSensitive(o, "types"), *t;
        int n = cJSON_GetArraySize(types);
        if (!cJSON_IsArray(types) || n < 1 || n > ALPHA_MAX_TYPES) {
                snprintf(err, PROTO_ERRLEN, "types: want an array of 1 to %d type names", ALPHA_MAX_TYPES);
                return -EINVAL;
        }
        if (!(m->types = calloc((size_t)n, sizeof(*m->types))))
                return -ENOMEM;
        cJSON_ArrayForEach(t, types) {
                if (!cJSON_IsString(t) || !good_name(t->valuestring)) {
                        snprintf(err, PROTO_ERRLEN, "types[%zu]: want a name of 1 to %d letters, digits, '_', '.', '-'",
                                 m->n, ALPHA_MAX_NAME);
                        return -EINVAL;
                }
                if (alpha_type_index(m, t->valuestring) >= 0) {
                        snprintf(err, PROTO_ERRLEN, "types: '%s' is given twice", t->valuestring);
                        return -EINVAL;
                }
                if (!(m->types[m->n] = strdup(t->valuestring)))
                        return -ENOMEM;
                m->n++;
        }
        return 0;
}

/* o[field], an n x n array of finite numbers (>= 0 when nonneg), into *out (allocated). */
static int read_square(const cJSON *o, const char *field, size_t n, bool nonneg, double **out, char err[PROTO_ERRLEN]) {
        const cJSON *rows = cJSON_GetObjectItemCaseSensitive(o, field);
        if (!cJSON_IsArray(rows) || (size_t)cJSON_GetArraySize(rows) != n) {
                snprintf(err, PROTO_ERRLEN, "%s: want %zu rows, one per type", field, n);
                return -EINVAL;
        }
        if (!(*out = calloc(n * n, sizeof(double))))
                return -ENOMEM;
        for (size_t a = 0; a < n; a++) {
                const cJSON *row = cJSON_GetArrayItem(rows, (int)a);
                if (!cJSON_IsArray(row) || (size_t)cJSON_GetArraySize(row) != n) {
                        snprintf(err, PROTO_ERRLEN, "%s[%zu]: want %zu numbers, one per type", field, a, n);
                        return -EINVAL;
                }
                for (size_t b = 0; b < n; b++) {
                        const cJSON *x = cJSON_GetArrayItem(row, (int)b);
                        /* cJSON reads NaN and infinities as null, and huge values as inf */
                        if (!cJSON_IsNumber(x) || !isfinite(x->valuedouble)) {
                                snprintf(err, PROTO_ERRLEN, "%s[%zu][%zu]: not a finite number", field, a, b);
                                return -EINVAL;
                        }
                        if (nonneg && x->valuedouble < 0) {
                                snprintf(err, PROTO_ERRLEN, "%s[%zu][%zu]: %g is negative", field, a, b,
                                         x->valuedouble);
                                return -EINVAL;
                        }
                        (*out)[a * n + b] = x->valuedouble;
                }
        }
        return 0;
}

static int read_intervals(const cJSON *o, alpha_matrix *m, char err[PROTO_ERRLEN]) {
        bool low = cJSON_HasObjectItem(o, "ci95_low"), high = cJSON_HasObjectItem(o, "ci95_high");
        int r;
        if (low != high) {
                snprintf(err, PROTO_ERRLEN, "ci95_low and ci95_high come together");
                return -EINVAL;
        }
        if (!low)
                return 0;
        if ((r = read_square(o, "ci95_low", m->n, false, &m->ci_low, err)) < 0 ||
            (r = read_square(o, "ci95_high", m->n, false, &m->ci_high, err)) < 0)
                return r;
        for (size_t i = 0; i < m->n * m->n; i++)
                if (m->ci_low[i] > m->ci_high[i]) {
                        snprintf(err, PROTO_ERRLEN, "ci95_low[%zu][%zu] is above ci95_high", i / m->n, i % m->n);
                        return -EINVAL;
                }
        return 0;
}

int alpha_from_json(const cJSON *o, alpha_matrix *out, char err[PROTO_ERRLEN]) {
        alpha_matrix m = { 0 };
        int64_t version = 0, time = 0;
        int r = read_types(o, &m, err);
        if (r == 0)
                r = read_square(o, "alpha", m.n, true, &m.alpha, err);
        if (r == 0)
                r = read_intervals(o, &m, err);
        if (r == 0 && (proto_get_int(o, "version", 0, INT64_MAX, &version, err) == -EINVAL ||
                       proto_get_int(o, "time_usec", 0, INT64_MAX, &time, err) == -EINVAL))
                r = -EINVAL;
        if (r == -ENOMEM)
                snprintf(err, PROTO_ERRLEN, "out of memory");
        if (r < 0) {
                alpha_free(&m);
                return r;
        }
        m.version = (uint64_t)version;
        m.time_usec = time;
        *out = m;
        return 0;
}

static cJSON *square(const double *v, size_t n) {
        cJSON *rows = cJSON_CreateArray();
        for (size_t a = 0; rows && a < n; a++) {
                cJSON *row = cJSON_CreateDoubleArray(v + a * n, (int)n);
                if (!row || !cJSON_AddItemToArray(rows, row)) {
                        cJSON_Delete(row);
                        cJSON_Delete(rows);
                        return NULL;
                }
        }
        return rows;
}

int alpha_to_json(const alpha_matrix *m, cJSON *o) {
        cJSON *types = cJSON_CreateStringArray((const char *const *)m->types, (int)m->n);
        bool ok = types && cJSON_AddItemToObject(o, "types", types);
        if (!ok)
                cJSON_Delete(types);
        ok = ok && cJSON_AddItemToObject(o, "alpha", square(m->alpha, m->n));
        if (m->ci_low)
                ok = ok && cJSON_AddItemToObject(o, "ci95_low", square(m->ci_low, m->n)) &&
                     cJSON_AddItemToObject(o, "ci95_high", square(m->ci_high, m->n));
        if (m->version)
                ok = ok && cJSON_AddNumberToObject(o, "version", (double)m->version) &&
                     cJSON_AddNumberToObject(o, "time_usec", (double)m->time_usec);
        return ok ? 0 : -ENOMEM;
}
