/* psi.c - pressure stall information: the kernel's text, and colony's JSON (psi.h). */
#include "psi.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define N_RESOURCES 3
static const char *const resource_names[N_RESOURCES + 1] = { "cpu", "memory", "io", NULL };

static psi_resource *resource(psi_stats *p, int i) { return i == 0 ? &p->cpu : i == 1 ? &p->memory : &p->io; }

static const psi_resource *const_resource(const psi_stats *p, int i) {
        return i == 0 ? &p->cpu : i == 1 ? &p->memory : &p->io;
}

int psi_parse(const char *text, psi_resource *out) {
        bool some = false;
        *out = (psi_resource){ 0 };
        for (const char *line = text; line && *line; line = strchr(line, '\n'), line = line ? line + 1 : NULL) {
                char kind[8];
                double avg10, avg60, avg300;
                uint64_t total;
                if (sscanf(line, "%7s avg10=%lf avg60=%lf avg300=%lf total=%" SCNu64, kind, &avg10, &avg60, &avg300,
                           &total) != 5 ||
                    !isfinite(avg10) || avg10 < 0)
                        return -EINVAL;
                if (strcmp(kind, "some") == 0) {
                        out->some_avg10 = avg10, out->some_total_usec = total;
                        some = true;
                } else if (strcmp(kind, "full") == 0) {
                        out->full_avg10 = avg10, out->full_total_usec = total;
                } else {
                        return -EINVAL;
                }
        }
        return some ? 0 : -EINVAL;
}

int psi_to_json(const psi_stats *p, cJSON *obj) {
        if (!p->known)
                return 0;
        cJSON *psi = cJSON_AddObjectToObject(obj, "psi");
        for (int i = 0; psi && i < N_RESOURCES; i++) {
                const psi_resource *r = const_resource(p, i);
                cJSON *o = cJSON_AddObjectToObject(psi, resource_names[i]);
                if (!o || !cJSON_AddNumberToObject(o, "some_avg10", r->some_avg10) ||
                    !cJSON_AddNumberToObject(o, "full_avg10", r->full_avg10) ||
                    !cJSON_AddNumberToObject(o, "some_usec", (double)r->some_total_usec) ||
                    !cJSON_AddNumberToObject(o, "full_usec", (double)r->full_total_usec))
                        return -ENOMEM;
        }
        return psi ? 0 : -ENOMEM;
}

static int get_percent(const cJSON *o, const char *field, double *out, char err[PROTO_ERRLEN]) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
        if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble > 100) {
                snprintf(err, PROTO_ERRLEN, "psi: %s: not a percentage", field);
                return -EINVAL;
        }
        *out = v->valuedouble;
        return 0;
}

int psi_from_json(const cJSON *obj, psi_stats *out, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "some_avg10", "full_avg10", "some_usec", "full_usec", NULL };
        const cJSON *psi = cJSON_GetObjectItemCaseSensitive(obj, "psi");
        *out = (psi_stats){ 0 };
        if (!psi)
                return 0;
        if (proto_check_fields(psi, resource_names, err) < 0)
                return -EINVAL;
        for (int i = 0; i < N_RESOURCES; i++) {
                const cJSON *o = cJSON_GetObjectItemCaseSensitive(psi, resource_names[i]);
                psi_resource *r = resource(out, i);
                int64_t some = 0, full = 0;
                if (!cJSON_IsObject(o) || proto_check_fields(o, fields, err) < 0 ||
                    get_percent(o, "some_avg10", &r->some_avg10, err) < 0 ||
                    get_percent(o, "full_avg10", &r->full_avg10, err) < 0 ||
                    proto_get_int(o, "some_usec", 0, INT64_MAX, &some, err) < 0 ||
                    proto_get_int(o, "full_usec", 0, INT64_MAX, &full, err) < 0) {
                        if (!cJSON_IsObject(o))
                                snprintf(err, PROTO_ERRLEN, "psi: %s: not an object", resource_names[i]);
                        return -EINVAL;
                }
                r->some_total_usec = (uint64_t)some;
                r->full_total_usec = (uint64_t)full;
        }
        out->known = true;
        return 0;
}
