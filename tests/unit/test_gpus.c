/* test_gpus.c - the agent's GPUs: which job holds which, what its cgroup denies it, and the
 * device nodes they are found as (stand-ins made with mknod in a temporary directory). */
#include "check_main.h"
#include "gpufind.h"
#include "gpus.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* Four GPUs c 195:200..203, none held. */
static void four(gpus *g) {
        *g = (gpus){ .n = 4 };
        for (size_t i = 0; i < 4; i++)
                g->dev[i].dev = (cg_device){ .type = 'c', .major = 195, .minor = 200 + (uint32_t)i };
}

START_TEST(jobs_take_distinct_gpus_and_are_denied_the_others) {
        gpus g;
        char buf[GPUS_LIST_MAX];
        cg_device deny[GPUS_MAX];
        four(&g);
        ck_assert_int_eq(gpus_take(&g, 7, 2, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0,1");
        ck_assert_int_eq(gpus_take(&g, 8, 1, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "2");
        ck_assert_int_eq(gpus_take(&g, 9, 0, buf, sizeof(buf)), 0); /* none asked: none given */
        ck_assert_str_eq(buf, "");
        ck_assert_int_eq(gpus_take(&g, 10, 2, buf, sizeof(buf)), -EBUSY); /* one free: nothing taken */
        ck_assert_uint_eq(g.holder[3], 0);
        /* job 7 may open 0 and 1: its cgroup denies 2 and 3 */
        ck_assert_uint_eq(gpus_deny(&g, 7, deny), 2);
        ck_assert_uint_eq(deny[0].minor, 202);
        ck_assert_uint_eq(deny[1].minor, 203);
        ck_assert_int_eq(deny[0].type, 'c');
        ck_assert_uint_eq(deny[0].major, 195);
        /* a job of no GPU is denied all of them */
        ck_assert_uint_eq(gpus_deny(&g, 9, deny), 4);
        gpus_release(&g, 7);
        ck_assert_int_eq(gpus_take(&g, 10, 2, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0,1"); /* the lowest free first */
        ck_assert_int_eq(gpus_take(&g, 11, 1, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "3");
        ck_assert_uint_eq(gpus_deny(&g, 11, deny), 3);
}
END_TEST

START_TEST(a_restarted_agent_holds_what_the_records_say) {
        gpus g;
        char buf[GPUS_LIST_MAX];
        four(&g);
        ck_assert_int_eq(gpus_hold(&g, 5, "1,3"), 0);
        ck_assert_int_eq(gpus_hold(&g, 6, "3"), -EINVAL); /* job 5's */
        ck_assert_int_eq(gpus_hold(&g, 6, "4"), -EINVAL); /* not ours */
        ck_assert_int_eq(gpus_hold(&g, 6, "0,"), -EINVAL);
        ck_assert_int_eq(gpus_hold(&g, 6, "0,0"), -EINVAL);
        ck_assert_int_eq(gpus_hold(&g, 6, "-1"), -EINVAL);
        ck_assert_int_eq(gpus_hold(&g, 6, "x"), -EINVAL);
        ck_assert_uint_eq(g.holder[0], 0); /* nothing marked by a refusal */
        ck_assert_int_eq(gpus_take(&g, 6, 2, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0,2");
}
END_TEST

static char dir[] = "/tmp/test_gpus-XXXXXX";

/* Make dir/name a device node (type 'c' or 'b'); a directory for type 'd', a file for 'f'. */
static void make(const char *name, char type, unsigned minor) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        if (type == 'd')
                ck_assert_int_eq(mkdir(path, 0755), 0);
        else if (type == 'f')
                ck_assert_int_eq(mknod(path, S_IFREG | 0600, 0), 0);
        else
                ck_assert_int_eq(mknod(path, (type == 'c' ? S_IFCHR : S_IFBLK) | 0600, makedev(195, minor)), 0);
}

START_TEST(devices_are_found_in_order_and_named_ones_checked) {
        char err[256], list[1024];
        gpus g;
        if (!mkdtemp(dir))
                ck_abort_msg("mkdtemp");
        make("nvidia10", 'c', 210);
        make("nvidia2", 'c', 202);
        make("nvidiactl", 'c', 255); /* the control node: not a GPU */
        make("nvidia-uvm", 'c', 254);
        make("dri", 'd', 0);
        make("dri/renderD128", 'c', 128);
        make("dri/card0", 'c', 0);
        make("plain", 'f', 0);
        ck_assert_int_eq(gpufind_host(&g, dir, err, sizeof(err)), 0);
        ck_assert_uint_eq(g.n, 3);
        ck_assert(strstr(g.dev[0].path, "/nvidia2") != NULL);
        ck_assert(strstr(g.dev[1].path, "/nvidia10") != NULL); /* by number, not by name */
        ck_assert(strstr(g.dev[2].path, "/dri/renderD128") != NULL);
        ck_assert_uint_eq(g.dev[1].dev.minor, 210);
        ck_assert_int_eq(g.dev[1].dev.type, 'c');

        snprintf(list, sizeof(list), "%s/nvidia10,%s/nvidia2", dir, dir);
        ck_assert_int_eq(gpufind_paths(&g, list, err, sizeof(err)), 0);
        ck_assert_uint_eq(g.n, 2);
        ck_assert_uint_eq(g.dev[0].dev.minor, 210); /* the list's order */
        snprintf(list, sizeof(list), "%s/nvidia2,%s/plain", dir, dir);
        ck_assert_int_eq(gpufind_paths(&g, list, err, sizeof(err)), -ENODEV);
        ck_assert(strstr(err, "plain: not a device node") != NULL);
        snprintf(list, sizeof(list), "%s/nvidia7", dir);
        ck_assert_int_eq(gpufind_paths(&g, list, err, sizeof(err)), -ENOENT);
        ck_assert(strstr(err, "nvidia7: No such file or directory") != NULL);
        snprintf(list, sizeof(list), "%s/nvidia2,,%s/nvidia10", dir, dir);
        ck_assert_int_eq(gpufind_paths(&g, list, err, sizeof(err)), -EINVAL);

        const char *names[] = { "nvidia10",       "nvidia2",   "nvidiactl", "nvidia-uvm",
                                "dri/renderD128", "dri/card0", "dri",       "plain" };
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                char path[256];
                snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
                ck_assert_int_eq(i == 6 ? rmdir(path) : unlink(path), 0);
        }
        ck_assert_int_eq(rmdir(dir), 0);
        ck_assert_int_eq(gpufind_host(&g, "/nonexistent-dev", err, sizeof(err)), 0);
        ck_assert_uint_eq(g.n, 0);
}
END_TEST

static Suite *gpus_suite(void) {
        Suite *s = suite_create("gpus");
        TCase *tc = tcase_create("gpus");
        tcase_add_test(tc, jobs_take_distinct_gpus_and_are_denied_the_others);
        tcase_add_test(tc, a_restarted_agent_holds_what_the_records_say);
        if (geteuid() == 0) /* mknod of a device node */
                tcase_add_test(tc, devices_are_found_in_order_and_named_ones_checked);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(gpus_suite)
