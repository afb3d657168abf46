/* gpufind.c - the device nodes of the agent's GPUs (gpufind.h). */
#include "gpufind.h"
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

/* Append path's device to g. Returns 0, or -errno with err. */
static int add_device(gpus *g, const char *path, char *err, size_t errlen) {
        struct stat st;
        if (g->n >= GPUS_MAX) {
                snprintf(err, errlen, "GPU %s: more than %d GPUs", path, GPUS_MAX);
                return -E2BIG;
        }
        if (strlen(path) >= GPUS_PATH_MAX) {
                snprintf(err, errlen, "GPU %.64s...: path too long", path);
                return -ENAMETOOLONG;
        }
        if (stat(path, &st) < 0) {
                int r = -errno;
                snprintf(err, errlen, "GPU %s: %s", path, strerror(-r));
                return r;
        }
        if (!S_ISCHR(st.st_mode) && !S_ISBLK(st.st_mode)) {
                snprintf(err, errlen, "GPU %s: not a device node", path);
                return -ENODEV;
        }
        gpu_dev *d = &g->dev[g->n];
        snprintf(d->path, sizeof(d->path), "%s", path);
        d->dev = (cg_device){ .type = S_ISCHR(st.st_mode) ? 'c' : 'b',
                              .major = major(st.st_rdev),
                              .minor = minor(st.st_rdev) };
        g->holder[g->n++] = 0;
        return 0;
}

int gpufind_paths(gpus *g, const char *list, char *err, size_t errlen) {
        g->n = 0;
        for (const char *p = list; *p;) {
                size_t len = strcspn(p, ",");
                char path[GPUS_PATH_MAX + 1];
                int r;
                if (len == 0 || len > GPUS_PATH_MAX) {
                        snprintf(err, errlen, "GPU devices '%s': %s", list, len ? "a path too long" : "an empty path");
                        return -EINVAL;
                }
                snprintf(path, sizeof(path), "%.*s", (int)len, p);
                if ((r = add_device(g, path, err, errlen)) < 0)
                        return r;
                p += len + (p[len] == ',');
        }
        return 0;
}

/* The number N of a name prefixN (digits only after prefix), or -1. */
static long numbered(const char *name, const char *prefix) {
        size_t k = strlen(prefix);
        char *end;
        if (strncmp(name, prefix, k) != 0 || name[k] < '0' || name[k] > '9')
                return -1;
        long n = strtol(name + k, &end, 10);
        return *end ? -1 : n;
}

static int by_number(const void *a, const void *b) {
        long x = *(const long *)a, y = *(const long *)b;
        return (x > y) - (x < y);
}

/* Append the devices dir/prefixN (N in order) to g. A missing dir holds none. */
static int add_numbered(gpus *g, const char *dir, const char *prefix, char *err, size_t errlen) {
        long num[GPUS_MAX];
        size_t k = 0;
        DIR *d = opendir(dir);
        struct dirent *e;
        int r = 0;
        if (!d)
                return 0;
        while ((e = readdir(d)) && k < GPUS_MAX) {
                long n = numbered(e->d_name, prefix);
                if (n >= 0)
                        num[k++] = n;
        }
        closedir(d);
        qsort(num, k, sizeof(*num), by_number);
        for (size_t i = 0; i < k && r == 0; i++) {
                char path[GPUS_PATH_MAX + 32];
                snprintf(path, sizeof(path), "%s/%s%ld", dir, prefix, num[i]);
                r = add_device(g, path, err, errlen);
        }
        return r;
}

int gpufind_host(gpus *g, const char *dev, char *err, size_t errlen) {
        char dri[GPUS_PATH_MAX];
        int r;
        g->n = 0;
        snprintf(dri, sizeof(dri), "%s/dri", dev);
        if ((r = add_numbered(g, dev, "nvidia", err, errlen)) < 0)
                return r;
        return add_numbered(g, dri, "renderD", err, errlen);
}
