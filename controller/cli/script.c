/* script.c - batch scripts' option lines and text (script.h). */
#include "script.h"
#include "job.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* An sbatch option colony shares: its long name, its short letter (0: none), colony's long
 * name, and whether it takes a value. */
typedef struct sbatch_opt {
        const char *name;
        char letter;
        const char *colony;
        bool value;
} sbatch_opt;

static const sbatch_opt sbatch_opts[] = {
        { "cpus-per-task", 'c', "cpus", true },
        { "mem", 0, "mem", true },
        { "time", 't', "time", true },
        { "array", 'a', "array", true },
        { "output", 'o', "output", true },
        { "error", 'e', "error", true },
        { "job-name", 'J', "name", true },
        { "dependency", 'd', "dependency", true },
        { "begin", 'b', "begin", true },
        { "nice", 0, "nice", true },
        { "hold", 'H', "hold", false },
        { "constraint", 'C', "constraint", true },
        { "nodelist", 'w', "nodelist", true },
        { "exclude", 'x', "exclude", true },
        { "exclusive", 0, "exclusive", false },
        { "chdir", 'D', "chdir", true },
        { "requeue", 0, "requeue", false },
        { "gpus", 'G', "gpus", true },
        { "gres", 0, "gres", true },
        { "open-mode", 0, "open-mode", true },
};

/* A growing NULL-terminated vector of malloc'ed strings. */
typedef struct strvec {
        char **v;
        int n;
} strvec;

static int vec_add(strvec *s, const char *text, size_t len) {
        char **grown = realloc(s->v, (size_t)(s->n + 2) * sizeof(char *));
        if (!grown)
                return -ENOMEM;
        s->v = grown;
        if (!(s->v[s->n] = strndup(text, len)))
                return -ENOMEM;
        s->v[++s->n] = NULL;
        return 0;
}

static void vec_free(strvec *s) {
        for (int i = 0; i < s->n; i++)
                free(s->v[i]);
        free(s->v);
        *s = (strvec){ 0 };
}

/* The words of line (len bytes) into words: split at blanks, quotes removed, up to a word
 * beginning with '#'. Returns 0, -EINVAL (a quote not closed) or -ENOMEM. */
static int split_words(const char *line, size_t len, strvec *words) {
        const char *end = line + len;
        char *word = malloc(len + 1);
        int r = word ? 0 : -ENOMEM;

        while (r == 0) {
                size_t n = 0;
                while (line < end && (*line == ' ' || *line == '\t' || *line == '\r'))
                        line++;
                if (line == end || *line == '#')
                        break;
                while (line < end && *line != ' ' && *line != '\t' && *line != '\r') {
                        if (*line == '\'' || *line == '"') {
                                const char *close = memchr(line + 1, *line, (size_t)(end - line - 1));
                                if (!close) {
                                        r = -EINVAL;
                                        break;
                                }
                                memcpy(word + n, line + 1, (size_t)(close - line - 1));
                                n += (size_t)(close - line - 1);
                                line = close + 1;
                        } else
                                word[n++] = *line++;
                }
                if (r == 0)
                        r = vec_add(words, word, n);
        }
        free(word);
        return r;
}

static const sbatch_opt *sbatch_find(const char *name, size_t len, char letter) {
        for (size_t i = 0; i < sizeof(sbatch_opts) / sizeof(sbatch_opts[0]); i++)
                if (letter ? sbatch_opts[i].letter == letter
                           : strlen(sbatch_opts[i].name) == len && strncmp(sbatch_opts[i].name, name, len) == 0)
                        return &sbatch_opts[i];
        return NULL;
}

static int warn(script_opts *o, unsigned lineno, const char *word, size_t len) {
        char *w, **grown = realloc(o->warnings, (o->nwarnings + 1) * sizeof(char *));

        if (!grown)
                return -ENOMEM;
        o->warnings = grown;
        if (asprintf(&w, "line %u: #SBATCH %.*s: colony has no such option; ignored", lineno, (int)len, word) < 0)
                return -ENOMEM;
        o->warnings[o->nwarnings++] = w;
        return 0;
}

/* #SBATCH's words (words->v[1..]) as colony's options into opts (after the tag), or warnings. */
static int translate(script_opts *o, unsigned lineno, const strvec *words, strvec *opts, char *err, size_t errlen) {
        for (int i = 1; i < words->n; i++) {
                const char *w = words->v[i], *value = NULL, *eq = strchr(w, '=');
                const sbatch_opt *opt;
                size_t len;
                char colony[64];
                int r;

                if (w[0] != '-' || !w[1]) {
                        if ((r = warn(o, lineno, w, strlen(w))) < 0)
                                return r;
                        continue;
                }
                if (w[1] == '-') { /* --name=value or --name value */
                        len = eq ? (size_t)(eq - w - 2) : strlen(w + 2);
                        opt = sbatch_find(w + 2, len, 0);
                        value = eq ? eq + 1 : NULL;
                        len += 2;
                } else { /* -c2 or -c 2 */
                        opt = sbatch_find(NULL, 0, w[1]);
                        value = w[2] ? w + 2 : NULL;
                        len = 2;
                }
                /* an unknown option's value is the next word unless that is an option */
                bool wants = opt ? opt->value : !value && i + 1 < words->n && words->v[i + 1][0] != '-';
                if (wants && !value) {
                        if (i + 1 >= words->n) {
                                snprintf(err, errlen, "line %u: #SBATCH %s needs a value", lineno, w);
                                return -EINVAL;
                        }
                        value = words->v[++i];
                }
                if (!opt) {
                        if ((r = warn(o, lineno, w, len)) < 0)
                                return r;
                        continue;
                }
                snprintf(colony, sizeof(colony), "--%s", opt->colony);
                /* a flag's value (--exclusive=user) says more than colony can do: the flag alone */
                if ((r = vec_add(opts, colony, strlen(colony))) < 0 ||
                    (opt->value && (r = vec_add(opts, value, strlen(value))) < 0))
                        return r;
        }
        return 0;
}

/* Add the option line (tag and the words after it) to o. */
static int add_line(script_opts *o, unsigned lineno, bool sbatch, const char *rest, size_t len, char *err,
                    size_t errlen) {
        strvec words = { 0 }, opts = { 0 };
        int r = vec_add(&opts, sbatch ? "#SBATCH" : "#COLONY", 7);

        if (r == 0)
                r = vec_add(&words, "", 0);
        if (r == 0 && (r = split_words(rest, len, &words)) == -EINVAL)
                snprintf(err, errlen, "line %u: a quote is not closed", lineno);
        if (r == 0 && sbatch)
                r = translate(o, lineno, &words, &opts, err, errlen);
        for (int i = 1; r == 0 && !sbatch && i < words.n; i++)
                r = vec_add(&opts, words.v[i], strlen(words.v[i]));
        vec_free(&words);
        script_line *grown = r == 0 ? realloc(o->lines, (o->n + 1) * sizeof(*grown)) : NULL;
        if (r == 0 && !grown)
                r = -ENOMEM;
        if (r < 0) {
                vec_free(&opts);
                return r;
        }
        o->lines = grown;
        o->lines[o->n++] = (script_line){ .lineno = lineno, .sbatch = sbatch, .argc = opts.n, .argv = opts.v };
        return 0;
}

int script_parse(const char *text, script_opts *out, char *err, size_t errlen) {
        const char *line = text;
        unsigned lineno = 1;
        int r = 0;

        *out = (script_opts){ 0 };
        if (strncmp(line, "#!", 2) == 0) {
                line += strcspn(line, "\n");
                line += *line == '\n';
                lineno++;
        }
        for (; *line && r == 0; lineno++) {
                size_t len = strcspn(line, "\n"), blank = strspn(line, " \t\r");
                bool sbatch = strncmp(line, "#SBATCH", 7) == 0, colony = strncmp(line, "#COLONY", 7) == 0;

                /* "#SBATCHX" is a comment; the tag stands alone */
                if ((sbatch || colony) && len > 7 && line[7] != ' ' && line[7] != '\t')
                        sbatch = colony = false;
                if (sbatch || colony)
                        r = add_line(out, lineno, sbatch, line + 7, len - 7, err, errlen);
                else if (blank < len && line[blank] != '#')
                        break; /* the first command: option lines end */
                line += len + (line[len] == '\n');
        }
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        if (r < 0)
                script_opts_free(out);
        return r;
}

void script_opts_free(script_opts *o) {
        for (size_t i = 0; i < o->n; i++) {
                strvec v = { .v = o->lines[i].argv, .n = o->lines[i].argc };
                vec_free(&v);
        }
        for (size_t i = 0; i < o->nwarnings; i++)
                free(o->warnings[i]);
        free(o->lines);
        free(o->warnings);
        *o = (script_opts){ 0 };
}

int script_read(const char *path, char **text, char *err, size_t errlen) {
        int fd = open(path, O_RDONLY | O_CLOEXEC), r = fd < 0 ? -errno : 0;
        const char *why = NULL;
        char *buf = NULL;
        struct stat st;
        size_t n = 0;

        *text = NULL;
        if (r == 0 && fstat(fd, &st) < 0)
                r = -errno;
        else if (r == 0 && !S_ISREG(st.st_mode))
                r = -EINVAL, why = "not a regular file";
        else if (r == 0 && !(buf = malloc(JOB_SCRIPT_BYTES_MAX + 2)))
                r = -ENOMEM;
        /* one byte past the cap, so that a file that grew since the fstat is caught too */
        while (r == 0 && n <= JOB_SCRIPT_BYTES_MAX) {
                ssize_t got = read(fd, buf + n, JOB_SCRIPT_BYTES_MAX + 1 - n);
                if (got < 0 && errno != EINTR)
                        r = -errno;
                if (got == 0)
                        break;
                n += got > 0 ? (size_t)got : 0;
        }
        if (fd >= 0)
                close(fd);
        if (r == 0 && n > JOB_SCRIPT_BYTES_MAX)
                r = -E2BIG;
        else if (r == 0 && memchr(buf, 0, n))
                r = -EINVAL, why = "has NUL bytes: not a script";
        if (r == 0) {
                buf[n] = 0;
                *text = buf;
                return 0;
        }
        free(buf);
        if (r == -E2BIG)
                snprintf(err, errlen, "%s: more than the %d bytes a batch script may have", path, JOB_SCRIPT_BYTES_MAX);
        else
                snprintf(err, errlen, "%s: %s", path, why ? why : strerror(-r));
        return r;
}

bool script_is_batch(const char *path) {
        char head[2] = { 0 };
        struct stat st;
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
        bool batch = false;

        if (fd < 0)
                return false;
        if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
                batch = (read(fd, head, 2) == 2 && head[0] == '#' && head[1] == '!') || access(path, X_OK) < 0;
        close(fd);
        return batch;
}
