/* fuzz_config.c - the daemons' "key = value" config files (shared/config.c): the typed getters
 * over whatever keys the input set, and the controller's [departments] (controller/core/depts.c). */
#include "config.h"
#include "depts.h"
#include "fairorder.h"
#include "units.h"
#include <errno.h>
#include <string.h>
#include "fuzz_file.h"
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Every typed getter on every key, as colony-controller(8) and colony-agent(8) options are read. */
static void get_all(const config *cfg) {
        static const char *const none[] = { NULL }, *const any[] = { "agent.*", "controller.*", "departments.*", NULL };
        char err[256];
        int64_t v;
        for (size_t i = 0; i < cfg->n; i++) {
                const char *key = cfg->entries[i].key;
                (void)config_get(cfg, key);
                (void)config_get_size(cfg, key, &v, err, sizeof(err));
                if (config_get_mem(cfg, key, &v, err, sizeof(err)) == 0 && v < (1 << 20))
                        abort(); /* a job's or host's memory is at least 1M */
                (void)config_get_cpus(cfg, key, &v, err, sizeof(err));
                (void)config_get_uint(cfg, key, INT64_MAX, &v, err, sizeof(err));
        }
        (void)config_check_keys(cfg, none, err, sizeof(err));
        (void)config_check_keys(cfg, any, err, sizeof(err));
}

/* The department tree, each department's weights as a launch carries them, who may submit, and
 * the fair order's tree: every leaf is its own node there, and anything else is (none). */
static void get_depts(const config *cfg) {
        char err[256];
        double w[JOB_GROUP_LEVELS_MAX];
        depts d;
        fairorder fo;
        if (depts_from_config(cfg, &d, err, sizeof(err)) < 0)
                return;
        if (fairorder_init(&fo, &d, FAIR_MCH) < 0)
                abort();
        for (size_t i = 0; i < d.n; i++) {
                if (depts_find(&d, d.v[i].path) != &d.v[i] ||
                    depts_weights(&d, d.v[i].path, w, JOB_GROUP_LEVELS_MAX) < 1)
                        abort();
                int user = depts_may_submit(&d, d.v[i].path, 1000, "alice", err, sizeof(err));
                int root = depts_may_submit(&d, d.v[i].path, 0, "root", err, sizeof(err));
                if (d.v[i].leaf ? root != 0 || (user != 0 && user != -EPERM) : root != -EINVAL || user != -EINVAL)
                        abort();
                /* none, unlimited or a minute: a limit allowed is a limit a job can have */
                static const int64_t asks[] = { 0, JOB_TIME_UNLIMITED, 60000000 };
                for (size_t k = 0; k < sizeof(asks) / sizeof(asks[0]); k++) {
                        int64_t limit = asks[k];
                        if (depts_time_limit(&d, d.v[i].path, 0, 3600000000, &limit, err, sizeof(err)) == 0 &&
                            (limit < 0 || limit > UNITS_TIME_MAX_USEC))
                                abort();
                }
                const char *name = fo.nodes[fairorder_dept(&fo, d.v[i].path)].name;
                if (strcmp(name, d.v[i].leaf ? d.v[i].path : FAIRORDER_DEFAULT) != 0)
                        abort();
        }
        fairorder_free(&fo);
        depts_free(&d);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        config cfg;
        char err[256];
        if (config_load(fuzz_file(data, size), &cfg, err, sizeof(err)) == 0) {
                get_all(&cfg);
                get_depts(&cfg);
                config_free(&cfg);
        }
        return 0;
}
