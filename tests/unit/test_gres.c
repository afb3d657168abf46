/* test_gres.c - --gpus and --gres as Slurm users write them, and a GPU type in a constraint. */
#include "check_main.h"
#include "gres.h"
#include <errno.h>
#include <stdbool.h>

/* An option's value, whether --gres (else --gpus) reads it, and what it gives. */
static const struct {
        const char *arg;
        bool gres;
        int r;
        int64_t n;
        const char *type;
} forms[] = {
        { "2", false, 0, 2, "" },
        { "a100:4", false, 0, 4, "a100" },
        { "a100", false, -EINVAL, 0, "" }, /* --gpus wants a count */
        { "", false, -EINVAL, 0, "" },
        { "-1", false, -EINVAL, 0, "" },
        { "1025", false, -EINVAL, 0, "" }, /* past RES_GPUS_MAX */
        { "2x", false, -EINVAL, 0, "" },
        { "a b:2", false, -EINVAL, 0, "" },
        { ":2", false, -EINVAL, 0, "" },
        { "gpu", true, 0, 1, "" }, /* Slurm's default count */
        { "gpu:3", true, 0, 3, "" },
        { "gpu:a100", true, 0, 1, "a100" },
        { "gpu:tesla-v100:2", true, 0, 2, "tesla-v100" },
        { "gpu:0", true, 0, 0, "" },
        { "mps:100", true, -EOPNOTSUPP, 0, "" },
        { "gpus:2", true, -EOPNOTSUPP, 0, "" },
        { "gpu:", true, -EINVAL, 0, "" },
        { "gpu:a100:", true, -EINVAL, 0, "" },
        { "gpu:a100:2:3", true, -EINVAL, 0, "" },
        { ":2", true, -EINVAL, 0, "" },
        { "", true, -EINVAL, 0, "" },
};

START_TEST(gpus_and_gres_forms) {
        int64_t n = 0;
        char type[GRES_TYPE_MAX];
        int r = forms[_i].gres ? gres_parse(forms[_i].arg, &n, type) : gres_parse_gpus(forms[_i].arg, &n, type);
        ck_assert_msg(r == forms[_i].r, "'%s': %d, want %d", forms[_i].arg, r, forms[_i].r);
        if (r == 0) {
                ck_assert_int_eq(n, forms[_i].n);
                ck_assert_str_eq(type, forms[_i].type);
        }
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
        tcase_add_loop_test(tc, gpus_and_gres_forms, 0, sizeof(forms) / sizeof(forms[0]));
        tcase_add_test(tc, a_type_joins_each_alternative_of_the_constraint);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(gres_suite)
