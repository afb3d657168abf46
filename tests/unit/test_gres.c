/* test_gres.c - --gpus and --gres as Slurm users write them, and a GPU type in a constraint. */
#include "check_main.h"
#include "gres.h"
#include <errno.h>

START_TEST(gpus_and_gres_forms) {
        int64_t n = -1;
        char type[GRES_TYPE_MAX];
        ck_assert_int_eq(gres_parse_gpus("2", &n, type), 0);
        ck_assert_int_eq(n, 2);
        ck_assert_str_eq(type, "");
        ck_assert_int_eq(gres_parse_gpus("a100:4", &n, type), 0);
        ck_assert_int_eq(n, 4);
        ck_assert_str_eq(type, "a100");
        ck_assert_int_eq(gres_parse_gpus("a100", &n, type), -EINVAL); /* --gpus wants a count */
        ck_assert_int_eq(gres_parse_gpus("", &n, type), -EINVAL);
        ck_assert_int_eq(gres_parse_gpus("-1", &n, type), -EINVAL);
        ck_assert_int_eq(gres_parse_gpus("1025", &n, type), -EINVAL); /* past RES_GPUS_MAX */
        ck_assert_int_eq(gres_parse_gpus("2x", &n, type), -EINVAL);
        ck_assert_int_eq(gres_parse_gpus("a b:2", &n, type), -EINVAL);
        ck_assert_int_eq(gres_parse_gpus(":2", &n, type), -EINVAL);

        ck_assert_int_eq(gres_parse("gpu", &n, type), 0);
        ck_assert_int_eq(n, 1); /* Slurm's default count */
        ck_assert_int_eq(gres_parse("gpu:3", &n, type), 0);
        ck_assert_int_eq(n, 3);
        ck_assert_str_eq(type, "");
        ck_assert_int_eq(gres_parse("gpu:a100", &n, type), 0);
        ck_assert_int_eq(n, 1);
        ck_assert_str_eq(type, "a100");
        ck_assert_int_eq(gres_parse("gpu:tesla-v100:2", &n, type), 0);
        ck_assert_int_eq(n, 2);
        ck_assert_str_eq(type, "tesla-v100");
        ck_assert_int_eq(gres_parse("gpu:0", &n, type), 0);
        ck_assert_int_eq(n, 0);
        ck_assert_int_eq(gres_parse("mps:100", &n, type), -EOPNOTSUPP);
        ck_assert_int_eq(gres_parse("gpus:2", &n, type), -EOPNOTSUPP);
        ck_assert_int_eq(gres_parse("gpu:", &n, type), -EINVAL);
        ck_assert_int_eq(gres_parse("gpu:a100:", &n, type), -EINVAL);
        ck_assert_int_eq(gres_parse("gpu:a100:2:3", &n, type), -EINVAL);
        ck_assert_int_eq(gres_parse(":2", &n, type), -EINVAL);
        ck_assert_int_eq(gres_parse("", &n, type), -EINVAL);
}
END_TEST

START_TEST(a_type_joins_each_alternative_of_the_constraint) {
        char buf[64];
        ck_assert_int_eq(gres_constraint(NULL, "a100", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "a100");
        ck_assert_int_eq(gres_constraint("", "a100", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "a100");
        ck_assert_int_eq(gres_constraint("ssd", "a100", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "ssd&a100");
        ck_assert_int_eq(gres_constraint("ssd,avx|nvme", "a100", buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "ssd,avx&a100|nvme&a100");
        ck_assert_int_eq(gres_constraint("ssd|nvme", "a100", buf, 12), -ENAMETOOLONG);
}
END_TEST

static Suite *gres_suite(void) {
        Suite *s = suite_create("gres");
        TCase *tc = tcase_create("gres");
        tcase_add_test(tc, gpus_and_gres_forms);
        tcase_add_test(tc, a_type_joins_each_alternative_of_the_constraint);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(gres_suite)
