/* test_launchpack.c - a launch request through a standby shepherd's bytes and back
 * (agent/launchpack.h). */
#include "check_main.h"
#include "launchpack.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static char *argv_full[] = { "/bin/sh", "-c", "echo \"$X\"", "", NULL };
static char *env_full[] = { "X=1", "EMPTY=", "PATH=/usr/bin:/bin", NULL };
static const cg_device deny[] = { { 'c', 195, 1 }, { 'b', 8, 16 } };
static const double weights[] = { 3.0, 0.5 };

static job_spec spec_full(void) {
        return (job_spec){ .argv = argv_full,
                           .env = env_full,
                           .cwd = "/home/bob/run",
                           .stdout_path = "/home/bob/run/out",
                           .stderr_path = "/home/bob/run/err",
                           .umask = 027,
                           .script = "#!/bin/sh\necho hi\n",
                           .name = "not carried" };
}

static const cg_limits lim_full = { .mcpu = 1500,
                                    .mem = 64 << 20,
                                    .mem_high = 48 << 20,
                                    .pids = 4096,
                                    .cpu_weight = 250,
                                    .cpus = "0-1,3",
                                    .deny = deny,
                                    .ndeny = 2 };

static launch_req req_of(const job_spec *s, const cg_limits *l) {
        return (launch_req){ .spec = s,
                             .uid = 1000,
                             .gid = 100,
                             .cg_job = "dept-a/job-7",
                             .nofile = { .rlim_cur = 1024, .rlim_max = 4096 },
                             .truncate_output = true,
                             .lim = l,
                             .dept = "a",
                             .dept_weights = weights,
                             .ndept_weights = 2 };
}

static void assert_strv_eq(char **got, char **want) {
        size_t i = 0;

        for (; want && want[i]; i++) {
                ck_assert_ptr_nonnull(got[i]);
                ck_assert_str_eq(got[i], want[i]);
        }
        ck_assert_ptr_null(got[i]);
}

START_TEST(every_field_launch_reads_comes_back) {
        job_spec s = spec_full();
        launch_req req = req_of(&s, &lim_full);
        launch_unpacked u;
        char *buf;
        size_t len;

        ck_assert_int_eq(launch_pack(&req, 7, 42, &buf, &len), 0);
        ck_assert_int_eq(launch_unpack(buf, len, &u), 0);
        ck_assert_uint_eq(u.id, 7);
        ck_assert_uint_eq(u.exit_spare, 42);
        ck_assert_ptr_eq(u.req.spec, &u.spec);
        ck_assert_ptr_eq(u.req.lim, &u.lim);
        ck_assert_uint_eq(u.req.uid, 1000);
        ck_assert_uint_eq(u.req.gid, 100);
        ck_assert_str_eq(u.req.cg_job, "dept-a/job-7");
        ck_assert_uint_eq(u.req.nofile.rlim_cur, 1024);
        ck_assert_uint_eq(u.req.nofile.rlim_max, 4096);
        ck_assert(u.req.truncate_output);
        ck_assert_str_eq(u.req.dept, "a");
        ck_assert_uint_eq(u.req.ndept_weights, 2);
        ck_assert(u.req.dept_weights[0] == 3.0 && u.req.dept_weights[1] == 0.5);
        ck_assert_int_eq(u.lim.mcpu, 1500);
        ck_assert_int_eq(u.lim.mem, 64 << 20);
        ck_assert_int_eq(u.lim.mem_high, 48 << 20);
        ck_assert_int_eq(u.lim.pids, 4096);
        ck_assert_uint_eq(u.lim.cpu_weight, 250);
        ck_assert_str_eq(u.lim.cpus, "0-1,3");
        ck_assert_uint_eq(u.lim.ndeny, 2);
        ck_assert(memcmp(u.lim.deny, deny, sizeof(deny)) == 0);
        assert_strv_eq(u.spec.argv, argv_full);
        assert_strv_eq(u.spec.env, env_full);
        ck_assert_str_eq(u.spec.cwd, "/home/bob/run");
        ck_assert_str_eq(u.spec.stdout_path, "/home/bob/run/out");
        ck_assert_str_eq(u.spec.stderr_path, "/home/bob/run/err");
        ck_assert_int_eq(u.spec.umask, 027);
        ck_assert_str_eq(u.spec.script, "#!/bin/sh\necho hi\n");
        ck_assert_ptr_null(u.spec.name);
        launch_unpacked_free(&u);
        free(buf);
}
END_TEST

START_TEST(absent_fields_stay_absent) {
        char *argv[] = { "/bin/true", NULL };
        job_spec s = { .argv = argv };
        cg_limits lim = { .mcpu = 100, .mem = 1 << 20 };
        launch_req req = { .spec = &s, .cg_job = "job-1", .lim = &lim };
        launch_unpacked u;
        char *buf;
        size_t len;

        ck_assert_int_eq(launch_pack(&req, 1, 0, &buf, &len), 0);
        ck_assert_int_eq(launch_unpack(buf, len, &u), 0);
        ck_assert_ptr_null(u.req.dept);
        ck_assert_uint_eq(u.req.ndept_weights, 0);
        ck_assert_ptr_null(u.lim.cpus);
        ck_assert_uint_eq(u.lim.ndeny, 0);
        ck_assert_ptr_null(u.spec.cwd);
        ck_assert_ptr_null(u.spec.stdout_path);
        ck_assert_ptr_null(u.spec.stderr_path);
        ck_assert_ptr_null(u.spec.script);
        assert_strv_eq(u.spec.argv, argv);
        ck_assert_ptr_null(u.spec.env[0]); /* none: an empty one, which launch_job runs alike */
        ck_assert(!u.req.truncate_output);
        launch_unpacked_free(&u);
        free(buf);
}
END_TEST

/* Every cut of a request, and any byte past it, is refused: never read past the buffer (ASan). */
START_TEST(a_torn_or_padded_request_is_refused) {
        job_spec s = spec_full();
        launch_req req = req_of(&s, &lim_full);
        launch_unpacked u;
        char *buf, *copy;
        size_t len;

        ck_assert_int_eq(launch_pack(&req, 7, 42, &buf, &len), 0);
        for (size_t cut = 0; cut < len; cut++) {
                copy = malloc(cut ? cut : 1);
                memcpy(copy, buf, cut);
                ck_assert_int_eq(launch_unpack(copy, cut, &u), -EBADMSG);
                free(copy);
        }
        copy = malloc(len + 1);
        memcpy(copy, buf, len);
        copy[len] = 0;
        ck_assert_int_eq(launch_unpack(copy, len + 1, &u), -EBADMSG);
        free(copy);
        free(buf);
}
END_TEST

static Suite *launchpack_suite(void) {
        Suite *s = suite_create("launchpack");
        TCase *tc = tcase_create("launchpack");
        tcase_add_test(tc, every_field_launch_reads_comes_back);
        tcase_add_test(tc, absent_fields_stay_absent);
        tcase_add_test(tc, a_torn_or_padded_request_is_refused);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(launchpack_suite)
