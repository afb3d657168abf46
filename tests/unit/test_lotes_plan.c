/* test_lotes_plan.c - the controller's side of live LoTES (controller/daemon/lotes_plan.h): the config
 * sections, and plans solved on the worker thread and swapped in by a real sd-event loop, for
 * configured and learned classes, again when a machine joins; configured classes asking GPUs. */
#include "check_main.h"
#include "lotes_plan.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MiB ((int64_t)1 << 20)

static int persist(void *u, const job *j) {
        (void)u, (void)j;
        return 0;
}
static void launch(void *u, ctl_node *n, const job *j) { (void)u, (void)n, (void)j; }
static void cancel(void *u, ctl_node *n, const job *j, int g) { (void)u, (void)n, (void)j, (void)g; }
static void terminal(void *u, const job *j) { (void)u, (void)j; }
static const ctl_actions actions = { .persist = persist, .launch = launch, .cancel = cancel, .terminal = terminal };

static int rescheduled;
static void resched(void *u) {
        (void)u;
        rescheduled++;
}

/* Load text as a config file. */
static void load(const char *text, config *cfg) {
        char path[] = "/tmp/test_lotes_plan-XXXXXX", err[256];
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        ck_assert_int_eq(config_load(path, cfg, err, sizeof(err)), 0);
        unlink(path);
}

START_TEST(config_sections) {
        config cfg = { 0 };
        char err[256];
        ctl_lotes_options o = CTL_LOTES_DEFAULTS;
        load("[lotes]\nwindow_s = 30\nmax_classes = 2\ndrift_percent = 50\n[lotes_classes]\n"
             "small = 0.5 64M 2 1.5\nbig = 2 1G 30 0.1\n",
             &cfg);
        ck_assert_int_eq(ctl_lotes_options_from_config(&cfg, &o, err, sizeof(err)), 0);
        ck_assert_double_eq(o.window_s, 30);
        ck_assert_uint_eq(o.max_classes, 2);
        ck_assert_double_eq(o.drift, 0.5);
        ck_assert_uint_eq(o.classes.n, 2);
        ck_assert_str_eq(o.classes.name[0], "small");
        ck_assert_int_eq(o.classes.req[0].mcpu, 500);
        ck_assert_int_eq(o.classes.req[0].mem, 64 * MiB);
        ck_assert_double_eq(o.classes.runtime[0], 2);
        ck_assert_double_eq(o.classes.rate[0], 1.5);
        ck_assert_str_eq(o.classes.name[1], "big");
        ctl_lotes_options_free(&o);
        config_free(&cfg);

        const char *bad[] = { "[lotes_classes]\nx = 0.5 64M\n",
                              "[lotes_classes]\nx = 0.5 64M 0 1\n",
                              "[lotes_classes]\nx = 0 64M 1 1\n",
                              "[lotes_classes]\nx = 1 64M 1 1 extra\n",
                              "[lotes_classes]\nx = 1 64M 1 1 gpu:0\n",
                              "[lotes_classes]\nx = 1 64M 1 1 gpu:1x\n",
                              "[lotes_classes]\nx = 1 64M 1 1 gpu:1 more\n",
                              "[lotes]\nwindow_s = soon\n" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ctl_lotes_options b = CTL_LOTES_DEFAULTS;
                load(bad[i], &cfg);
                ck_assert_int_eq(ctl_lotes_options_from_config(&cfg, &b, err, sizeof(err)), -EINVAL);
                ck_assert_msg(strstr(err, ":2: ") != NULL, "'%s' does not name line 2", err);
                ctl_lotes_options_free(&b);
                config_free(&cfg);
        }
}
END_TEST

typedef struct world {
        sd_event *e;
        ctl_state st;
        ctl_lotes *l;
} world;

static void world_new(world *w, ctl_lotes_options *o) {
        sched_dispatcher *d;
        ck_assert_int_eq(lotes_live_new(1, &d), 0);
        ctl_config cfg = { .dispatcher = d, .max_pending = 100, .agent_timeout_usec = 5000000 };
        ck_assert_int_eq(sd_event_new(&w->e), 0);
        ctl_init(&w->st, &cfg, &actions, NULL);
        ck_assert_int_eq(ctl_lotes_new(w->e, &w->st, o, resched, NULL, &w->l), 0);
        rescheduled = 0;
}

static void world_free(world *w) {
        ctl_lotes_free(w->l);
        ctl_free(&w->st);
        sd_event_unref(w->e);
}

static void node_up(world *w, const char *name, int64_t mcpu, int64_t mem) {
        ctl_node *n;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(ctl_node_up(&w->st, name, (res_t){ .mcpu = mcpu, .mem = mem }, "v2", "/", NULL, 0, NULL,
                                     (ctl_time){ 1, 1 }, &n, err),
                         0);
}

/* Run the loop until the worker's plan is swapped in (resched counts it). */
static void until_plan(world *w, int plans) {
        for (int i = 0; i < 200 && rescheduled < plans; i++)
                ck_assert_int_ge(sd_event_run(w->e, 50000), 0);
        ck_assert_int_eq(rescheduled, plans);
}

START_TEST(configured_classes_are_planned_and_replanned_on_a_join) {
        world w;
        config cfg = { 0 };
        char err[256];
        ctl_lotes_options o = CTL_LOTES_DEFAULTS;
        load("[lotes_classes]\nsmall = 0.5 64M 2 3\nbig = 2 1G 30 1\n", &cfg);
        ck_assert_int_eq(ctl_lotes_options_from_config(&cfg, &o, err, sizeof(err)), 0);
        config_free(&cfg);
        world_new(&w, &o);
        ck_assert_str_eq(ctl_lotes_status(w.l), "lotes: first-fit until the first plan");
        ctl_lotes_tick(w.l, 1000000); /* no machine: nothing to plan for */
        ck_assert_ptr_null(lotes_live_model(w.st.cfg.dispatcher));
        node_up(&w, "a", 4000, 4096 * MiB);
        ctl_lotes_tick(w.l, 2000000);
        until_plan(&w, 1);
        const lotes_model *m = lotes_live_model(w.st.cfg.dispatcher);
        ck_assert_ptr_nonnull(m);
        ck_assert_uint_eq(m->problem.nconfigs, 1);
        ck_assert_str_eq(m->classes[0].name, "small");
        ck_assert_double_eq_tol(m->classes[0].alpha, 0.75, 1e-12);
        ck_assert_msg(strncmp(ctl_lotes_status(w.l), "lotes: plan 1, 2 classes on 1 configurations", 44) == 0, "%s",
                      ctl_lotes_status(w.l));
        ctl_lotes_tick(w.l, 3000000); /* nothing changed: no new solve */
        for (int i = 0; i < 5; i++)
                ck_assert_int_ge(sd_event_run(w.e, 10000), 0);
        ck_assert_int_eq(rescheduled, 1);
        node_up(&w, "b", 8000, 8192 * MiB);
        ctl_lotes_tick(w.l, 4000000);
        until_plan(&w, 2);
        ck_assert_uint_eq(lotes_live_model(w.st.cfg.dispatcher)->problem.nconfigs, 2);
        world_free(&w);
}
END_TEST

static void submit(world *w, int64_t mcpu, int64_t mem, int64_t at) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .req = { .mcpu = mcpu, .mem = mem } };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(ctl_submit(&w->st, 0, 0, "root", &spec, at, &id, err), 0);
        job_spec_free(&spec);
}

START_TEST(learned_classes_from_the_jobs_submitted) {
        world w;
        ctl_lotes_options o = CTL_LOTES_DEFAULTS;
        o.window_s = 100;
        world_new(&w, &o);
        node_up(&w, "a", 4000, 4096 * MiB);
        ctl_lotes_tick(w.l, 1000000); /* no job yet: no class */
        ck_assert_int_eq(rescheduled, 0);
        for (int i = 0; i < 6; i++)
                submit(&w, i % 3 ? 500 : 2000, i % 3 ? 64 * MiB : 1024 * MiB, 1000000 + i);
        ctl_lotes_tick(w.l, 2000000);
        until_plan(&w, 1);
        const lotes_model *m = lotes_live_model(w.st.cfg.dispatcher);
        ck_assert_uint_eq(m->mix.n, 2);
        ck_assert_double_eq_tol(m->classes[0].alpha, 4.0 / 6, 1e-12); /* 0.5 cores, the first in order */
        ck_assert_str_eq(m->classes[0].name, "~0.5c/64M");
        world_free(&w);
}
END_TEST

/* A class may ask GPUs ("gpu:N"): its jobs are planned onto the machines that have them, and a
 * class of GPUs gets no share of a cluster without any. */
START_TEST(configured_classes_with_gpus) {
        world w;
        config cfg = { 0 };
        char err[256];
        ctl_lotes_options o = CTL_LOTES_DEFAULTS;
        ctl_node *n;
        load("[lotes_classes]\nsmall = 0.5 64M 2 3\ntrain = 2 1G 60 0.5 gpu:1\n", &cfg);
        ck_assert_int_eq(ctl_lotes_options_from_config(&cfg, &o, err, sizeof(err)), 0);
        config_free(&cfg);
        ck_assert_int_eq(o.classes.req[0].gpus, 0);
        ck_assert_int_eq(o.classes.req[1].gpus, 1);
        ck_assert_int_eq(o.classes.req[1].mcpu, 2000);
        world_new(&w, &o);
        node_up(&w, "cpu", 4000, 4096 * MiB);
        ctl_lotes_tick(w.l, 1000000);
        until_plan(&w, 1);
        const lotes_model *m = lotes_live_model(w.st.cfg.dispatcher);
        ck_assert_str_eq(m->classes[1].name, "train");
        ck_assert_double_eq(m->classes[1].alpha, 0); /* no GPU anywhere: it fits no machine */
        ck_assert_int_eq(ctl_node_up(&w.st, "gpu", (res_t){ .mcpu = 8000, .mem = 8192 * MiB, .gpus = 2 }, "v2", "/",
                                     NULL, 0, NULL, (ctl_time){ 1, 1 }, &n, err),
                         0);
        ctl_lotes_tick(w.l, 2000000);
        until_plan(&w, 2);
        m = lotes_live_model(w.st.cfg.dispatcher);
        ck_assert_uint_eq(m->problem.nconfigs, 2);
        ck_assert_double_gt(m->classes[1].alpha, 0);
        world_free(&w);
}
END_TEST

static Suite *lotes_plan_suite(void) {
        Suite *s = suite_create("lotes_plan");
        TCase *tc = tcase_create("plan");
        tcase_set_timeout(tc, 30);
        tcase_add_test(tc, config_sections);
        tcase_add_test(tc, configured_classes_are_planned_and_replanned_on_a_join);
        tcase_add_test(tc, learned_classes_from_the_jobs_submitted);
        tcase_add_test(tc, configured_classes_with_gpus);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(lotes_plan_suite)
