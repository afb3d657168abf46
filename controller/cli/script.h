/* script.h - batch scripts as sbatch reads them: the option lines at their head ("#COLONY" with
 * colony's submit options, "#SBATCH" with Slurm's, those colony shares translated to its own),
 * and the script's text read for storing with the job. Pure but for script_read; unit-tested. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* One option line: its number (from 1) and its options as colony's submit takes them. */
typedef struct script_line {
        unsigned lineno;
        bool sbatch; /* an "#SBATCH" line (else "#COLONY") */
        int argc;    /* argv[0] is the line's tag ("#SBATCH"), then the options */
        char **argv; /* NULL-terminated, malloc'ed with its strings */
} script_line;

/* A script's option lines, and a warning for each #SBATCH option colony does not have. */
typedef struct script_opts {
        script_line *lines;
        size_t n;
        char **warnings; /* "line 3: #SBATCH --partition: colony has no such option; ignored" */
        size_t nwarnings;
} script_opts;

/* The option lines of text: after an optional "#!" line, the lines that begin "#COLONY" or
 * "#SBATCH", up to the first line that is neither blank nor a comment (sbatch's rule). Words are
 * split at blanks, with '...' and "..." quoting; a word that begins with '#' ends the line.
 * #SBATCH's options take both forms (--opt=value, --opt value, -c 2, -c2); those colony shares
 * become colony's (--cpus-per-task: --cpus, --job-name: --name, ...), the others become warnings
 * (an unknown option's value, a next word not beginning with '-', goes with it). Returns 0 with
 * *out filled (script_opts_free), or -EINVAL (a quote not closed, an #SBATCH option without its
 * value) / -ENOMEM with "line N: reason" in err. */
int script_parse(const char *text, script_opts *out, char *err, size_t errlen);
/* Free what script_parse made. */
void script_opts_free(script_opts *o);

/* Read the script at path into malloc'ed *text: a regular file of at most JOB_SCRIPT_BYTES_MAX
 * bytes, without NUL bytes. Returns 0, or -errno with "path: reason" in err (the cap named). */
int script_read(const char *path, char **text, char *err, size_t errlen);
/* Whether path, given as a command with no "--" before it, is a batch script rather than a
 * program: a regular file that begins with "#!" or is not executable (a binary stays a command). */
bool script_is_batch(const char *path);
