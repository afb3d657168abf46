/* test_depts.c - the controller's [departments]: paths, weights, parents, and what a job's
 * group turns into for the agent. */
#include "check_main.h"
#include "depts.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char err[256];

/* Load text as a config file and read its departments into d. */
static int load(const char *text, depts *d) {
        char path[] = "/tmp/colony-test-depts-XXXXXX";
        int fd = mkstemp(path);
        config cfg;
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), 0);
        unlink(path);
        int r = depts_from_config(&cfg, d, err, sizeof(err));
        config_free(&cfg);
        return r;
}

START_TEST(a_tree_with_weights_per_level) {
        depts d;
        double w[JOB_GROUP_LEVELS_MAX];
        ck_assert_int_eq(load("[controller]\npolicy = first-fit\n[departments]\nphysics = 3\nphysics/astro = 0.5\n"
                              "cs = 1\n",
                              &d),
                         0);
        ck_assert_uint_eq(d.n, 3);
        ck_assert_double_eq(depts_find(&d, "physics/astro")->weight, 0.5);
        ck_assert_ptr_null(depts_find(&d, "physics/hep"));
        ck_assert_ptr_null(depts_find(&d, "phys"));
        ck_assert_int_eq(depts_weights(&d, "physics/astro", w, JOB_GROUP_LEVELS_MAX), 2);
        ck_assert_double_eq(w[0], 3);
        ck_assert_double_eq(w[1], 0.5);
        ck_assert_int_eq(depts_weights(&d, "cs/new", w, JOB_GROUP_LEVELS_MAX), 2);
        ck_assert_double_eq(w[1], 1); /* not configured: a default share */
        ck_assert_int_eq(depts_weights(&d, "a/b/c", w, 2), -E2BIG);
        depts_free(&d);
        ck_assert_int_eq(load("[controller]\npolicy = first-fit\n", &d), 0);
        ck_assert_uint_eq(d.n, 0);
}
END_TEST

START_TEST(caps_and_user_lists) {
        depts d;
        char why[256] = "";
        /* the sections in any order: caps and users name departments listed further down */
        ck_assert_int_eq(load("[department_users]\nphysics = alice, bob\nphysics/astro = carol alice\ncs =\n"
                              "[department_caps]\nphysics = 0.5\n[departments]\nphysics = 3\nphysics/astro = 1\n"
                              "physics/hep = 1\ncs = 1\nmath = 1\n",
                              &d),
                         0);
        ck_assert_double_eq(depts_find(&d, "physics")->cap, 0.5);
        ck_assert_double_eq(depts_find(&d, "cs")->cap, 1);
        ck_assert(!depts_find(&d, "physics")->leaf);
        ck_assert(depts_find(&d, "physics/astro")->leaf);
        /* every level's list must name the user */
        ck_assert_int_eq(depts_may_submit(&d, "physics/astro", 1000, "alice", why, sizeof(why)), 0);
        ck_assert_int_eq(depts_may_submit(&d, "physics/hep", 1001, "bob", why, sizeof(why)), 0);
        ck_assert_int_eq(depts_may_submit(&d, "physics/astro", 1001, "bob", why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "user bob may not submit to 'physics/astro' ([department_users] physics/astro)");
        ck_assert_int_eq(depts_may_submit(&d, "physics/astro", 1002, "carol", why, sizeof(why)), -EPERM);
        ck_assert_str_eq(why, "user carol may not submit to 'physics/astro' ([department_users] physics)");
        ck_assert_int_eq(depts_may_submit(&d, "cs", 1000, "alice", why, sizeof(why)), -EPERM); /* empty: root only */
        ck_assert_int_eq(depts_may_submit(&d, "cs", 0, "root", why, sizeof(why)), 0);
        ck_assert_int_eq(depts_may_submit(&d, "math", 1002, "carol", why, sizeof(why)), 0); /* no list: open */
        ck_assert_int_eq(depts_may_submit(&d, NULL, 1002, "carol", why, sizeof(why)), 0);
        ck_assert_int_eq(depts_may_submit(&d, "physics", 0, "root", why, sizeof(why)), -EINVAL);
        ck_assert_str_eq(why, "department 'physics' has sub-departments: submit to one of them");
        ck_assert_int_eq(depts_may_submit(&d, "chemistry", 0, "root", why, sizeof(why)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(why, "unknown department 'chemistry'"));
        depts_free(&d);
}
END_TEST

START_TEST(bad_departments_name_their_line) {
        static const struct {
                const char *text, *want;
        } cases[] = {
                { "[departments]\nphysics = 0\n", ":2: departments.physics: weight '0'" },
                { "[departments]\nphysics = -1\n", "weight '-1'" },
                { "[departments]\nphysics = lots\n", "weight 'lots'" },
                { "[departments]\nphysics = 1e9\n", "weight '1e9'" },
                { "[departments]\nphysics/astro = 1\n", ":2: departments.physics/astro: its parent physics" },
                { "[departments]\na = 1\na/.. = 1\n", ":3: departments.a/..: 'a/..' is not a department path" },
                { "[departments]\nmy dept = 1\n", "is not a department path" },
                { "[departments]\na = 1\n[department_caps]\nb = 0.5\n",
                  ":4: department_caps.b: 'b' is not in [departments]" },
                { "[departments]\na = 1\n[department_caps]\na = 0\n", "cap '0' is not a fraction in (0, 1]" },
                { "[departments]\na = 1\n[department_caps]\na = 1.5\n", "cap '1.5'" },
                { "[departments]\na = 1\n[department_caps]\na = half\n", "cap 'half'" },
                { "[departments]\na = 1\n[department_users]\na = alice b;ob\n", "'b;ob' is not a user name" },
                { "[departments]\na = 1\n[department_users]\nz = alice\n", "department_users.z: 'z' is not in" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                depts d;
                ck_assert_int_eq(load(cases[i].text, &d), -EINVAL);
                ck_assert_msg(strstr(err, cases[i].want), "case %zu: '%s' lacks '%s'", i, err, cases[i].want);
                ck_assert_uint_eq(d.n, 0);
        }
}
END_TEST

START_TEST(groups_below_a_department_and_parents) {
        depts d;
        ck_assert_int_eq(load("[departments]\nphysics = 3\nphysics/astro = 1\ncs = 1\n", &d), 0);
        ck_assert(depts_in("physics", "physics"));
        ck_assert(depts_in("physics/astro/x", "physics"));
        ck_assert(!depts_in("physicsx", "physics"));
        ck_assert(!depts_in("phys", "physics"));
        ck_assert(!depts_in(NULL, "physics"));
        ck_assert_ptr_eq(depts_parent(&d, "physics/astro"), depts_find(&d, "physics"));
        ck_assert_ptr_null(depts_parent(&d, "physics"));
        ck_assert_ptr_null(depts_parent(&d, "bio/x")); /* a parent not configured */
        depts_free(&d);
}
END_TEST

START_TEST(time_limits_from_the_deepest_department) {
        depts d;
        int64_t t;
        const int64_t M = 60000000;
        ck_assert_int_eq(load("[departments]\nphysics = 1\nphysics/astro = 1\ncs = 1\n"
                              "[department_default_time]\nphysics = 30\n"
                              "[department_max_time]\nphysics = 2:00:00\nphysics/astro = 60\n",
                              &d),
                         0);
        t = 0; /* none given: the deepest default, the controller's below none */
        ck_assert_int_eq(depts_time_limit(&d, "physics/astro", 10 * M, 0, &t, err, sizeof(err)), 0);
        ck_assert_int_eq(t, 30 * M);
        t = 0;
        ck_assert_int_eq(depts_time_limit(&d, "cs", 10 * M, 0, &t, err, sizeof(err)), 0);
        ck_assert_int_eq(t, 10 * M);
        t = 0; /* no default anywhere: the maximum */
        ck_assert_int_eq(depts_time_limit(&d, NULL, 0, 5 * M, &t, err, sizeof(err)), 0);
        ck_assert_int_eq(t, 5 * M);
        t = JOB_TIME_UNLIMITED; /* unlimited: the deepest maximum */
        ck_assert_int_eq(depts_time_limit(&d, "physics/astro", 0, 0, &t, err, sizeof(err)), 0);
        ck_assert_int_eq(t, 60 * M);
        t = JOB_TIME_UNLIMITED;
        ck_assert_int_eq(depts_time_limit(&d, "cs", 0, 0, &t, err, sizeof(err)), 0);
        ck_assert_int_eq(t, 0);
        t = 61 * M;
        ck_assert_int_eq(depts_time_limit(&d, "physics/astro", 0, 0, &t, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "time limit 1:01:00 is over the maximum 1:00:00 (department_max_time of physics/astro)");
        t = 121 * M;
        ck_assert_int_eq(depts_time_limit(&d, "cs", 0, 120 * M, &t, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "time limit 2:01:00 is over the maximum 2:00:00 (the controller's max_time)");
        depts_free(&d);
        ck_assert_int_eq(load("[departments]\nphysics = 1\n[department_max_time]\nphysics = 1h\n", &d), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "'1h' is not a time limit"));
        ck_assert_int_eq(load("[departments]\nphysics = 1\n[department_max_time]\ncs = 60\n", &d), -EINVAL);
}
END_TEST

static Suite *depts_suite(void) {
        Suite *s = suite_create("depts");
        TCase *tc = tcase_create("depts");
        tcase_add_test(tc, a_tree_with_weights_per_level);
        tcase_add_test(tc, bad_departments_name_their_line);
        tcase_add_test(tc, groups_below_a_department_and_parents);
        tcase_add_test(tc, caps_and_user_lists);
        tcase_add_test(tc, time_limits_from_the_deepest_department);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(depts_suite)
