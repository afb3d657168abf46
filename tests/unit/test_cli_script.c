/* test_cli_script.c - batch scripts' option lines as sbatch reads them, and their text. */
#include "check_main.h"
#include "job.h"
#include "script.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Line i's options joined by spaces (after its tag). */
static const char *joined(const script_opts *o, size_t i) {
        static char buf[512];
        buf[0] = 0;
        for (int k = 1; k < o->lines[i].argc; k++)
                snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "%s%s", k > 1 ? " " : "", o->lines[i].argv[k]);
        ck_assert_ptr_null(o->lines[i].argv[o->lines[i].argc]);
        return buf;
}

START_TEST(sbatch_options_colony_shares_become_its_own) {
        const char *text = "#!/bin/bash\n"
                           "#SBATCH --cpus-per-task=2 --mem=100M --time=1\n"
                           "#SBATCH -J fit -o out-%j.txt -e%x.err\n"
                           "#SBATCH --job-name \"two words\" -c 4 --hold\n"
                           "#SBATCH --exclusive=user --array=0-9%2 -d afterok:1 -w a,b -x c -C ssd -D /tmp\n"
                           "#SBATCH --gres=gpu:a100:2 -G 1 --gpus=v100:4\n";
        char err[256] = "";
        script_opts o;

        ck_assert_int_eq(script_parse(text, &o, err, sizeof(err)), 0);
        ck_assert_uint_eq(o.n, 5);
        ck_assert_uint_eq(o.nwarnings, 0);
        ck_assert_uint_eq(o.lines[0].lineno, 2);
        ck_assert(o.lines[0].sbatch);
        ck_assert_str_eq(o.lines[0].argv[0], "#SBATCH");
        ck_assert_str_eq(joined(&o, 0), "--cpus 2 --mem 100M --time 1");
        ck_assert_str_eq(joined(&o, 1), "--name fit --output out-%j.txt --error %x.err");
        ck_assert_str_eq(joined(&o, 2), "--name two words --cpus 4 --hold");
        ck_assert_int_eq(o.lines[2].argc, 6); /* "two words" is one word */
        ck_assert_str_eq(joined(&o, 3), "--exclusive --array 0-9%2 --dependency afterok:1 --nodelist a,b "
                                        "--exclude c --constraint ssd --chdir /tmp");
        ck_assert_str_eq(joined(&o, 4), "--gres gpu:a100:2 --gpus 1 --gpus v100:4");
        script_opts_free(&o);
}
END_TEST

START_TEST(options_colony_lacks_are_warnings_with_their_values) {
        const char *text = "#!/bin/sh\n#SBATCH --partition gpu --account=lab -p short --mem 1G\n"
                           "#SBATCH --mail-type=END --requeue --overcommit\n";
        char err[256] = "";
        script_opts o;

        ck_assert_int_eq(script_parse(text, &o, err, sizeof(err)), 0);
        ck_assert_uint_eq(o.nwarnings, 5);
        ck_assert_str_eq(o.warnings[0], "line 2: #SBATCH --partition: colony has no such option; ignored");
        ck_assert_str_eq(o.warnings[1], "line 2: #SBATCH --account: colony has no such option; ignored");
        ck_assert_str_eq(o.warnings[2], "line 2: #SBATCH -p: colony has no such option; ignored");
        ck_assert_str_eq(o.warnings[3], "line 3: #SBATCH --mail-type: colony has no such option; ignored");
        ck_assert_str_eq(o.warnings[4], "line 3: #SBATCH --overcommit: colony has no such option; ignored");
        /* the unknown options' values are theirs, not stray words */
        ck_assert_str_eq(joined(&o, 0), "--mem 1G");
        ck_assert_str_eq(joined(&o, 1), "--requeue");
        script_opts_free(&o);
}
END_TEST

START_TEST(colony_lines_pass_verbatim_and_lines_end_at_the_first_command) {
        const char *text = "#!/bin/sh\n"
                           "# a comment\n"
                           "\n"
                           "#COLONY --cpus 0.5 --group phys/a  # the rest is a comment\n"
                           "#SBATCHED is a comment, as is #COLONYX\n"
                           "   # an indented comment\n"
                           "echo hello\n"
                           "#SBATCH --mem 1G\n";
        char err[256] = "";
        script_opts o;

        ck_assert_int_eq(script_parse(text, &o, err, sizeof(err)), 0);
        ck_assert_uint_eq(o.n, 1);
        ck_assert_uint_eq(o.lines[0].lineno, 4);
        ck_assert(!o.lines[0].sbatch);
        ck_assert_str_eq(o.lines[0].argv[0], "#COLONY");
        ck_assert_str_eq(joined(&o, 0), "--cpus 0.5 --group phys/a");
        script_opts_free(&o);

        /* no "#!" line: line 1 may be an option line */
        ck_assert_int_eq(script_parse("#SBATCH -t 5\nsleep 1\n", &o, err, sizeof(err)), 0);
        ck_assert_uint_eq(o.n, 1);
        ck_assert_uint_eq(o.lines[0].lineno, 1);
        ck_assert_str_eq(joined(&o, 0), "--time 5");
        script_opts_free(&o);
}
END_TEST

START_TEST(bad_lines_are_refused_by_number) {
        char err[256] = "";
        script_opts o;

        ck_assert_int_eq(script_parse("#!/bin/sh\n#SBATCH --mem\n", &o, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "line 2: #SBATCH --mem needs a value");
        ck_assert_int_eq(script_parse("#!/bin/sh\n\n#COLONY --name 'open\n", &o, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "line 3: a quote is not closed");
        ck_assert_uint_eq(o.n, 0);
        ck_assert_ptr_null(o.lines);
}
END_TEST

START_TEST(the_text_is_read_within_its_cap) {
        char path[] = "/tmp/test_cli_script.XXXXXX", err[256] = "", *text = NULL;
        int fd = mkstemp(path);
        char *big = malloc(JOB_SCRIPT_BYTES_MAX + 1);

        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, "#!/bin/sh\necho hi\n", 18), 18);
        ck_assert(script_is_batch(path)); /* "#!" */
        ck_assert_int_eq(script_read(path, &text, err, sizeof(err)), 0);
        ck_assert_str_eq(text, "#!/bin/sh\necho hi\n");
        free(text);
        memset(big, 'x', JOB_SCRIPT_BYTES_MAX + 1);
        ck_assert_int_eq(write(fd, big, JOB_SCRIPT_BYTES_MAX + 1 - 18), JOB_SCRIPT_BYTES_MAX + 1 - 18);
        ck_assert_int_eq(script_read(path, &text, err, sizeof(err)), -E2BIG);
        ck_assert_ptr_null(text);
        ck_assert_ptr_nonnull(strstr(err, "more than the 65536 bytes a batch script may have"));
        ck_assert_int_eq(ftruncate(fd, 4), 0);
        ck_assert_int_eq(pwrite(fd, "a\0b\n", 4, 0), 4);
        ck_assert_int_eq(script_read(path, &text, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "NUL"));
        close(fd);
        unlink(path);
        free(big);
        ck_assert(!script_is_batch("/bin/sh")); /* a program, executable */
        ck_assert(!script_is_batch("/nonexistent"));
        ck_assert(!script_is_batch("/tmp"));
}
END_TEST

static Suite *cli_script_suite(void) {
        Suite *s = suite_create("cli_script");
        TCase *tc = tcase_create("script");
        tcase_add_test(tc, sbatch_options_colony_shares_become_its_own);
        tcase_add_test(tc, options_colony_lacks_are_warnings_with_their_values);
        tcase_add_test(tc, colony_lines_pass_verbatim_and_lines_end_at_the_first_command);
        tcase_add_test(tc, bad_lines_are_refused_by_number);
        tcase_add_test(tc, the_text_is_read_within_its_cap);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(cli_script_suite)
