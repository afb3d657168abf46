/* keyring-poke - what a job sees of the kernel's keyrings, for isolation.sh (no keyutils needed).
 *
 *   keyring-poke show NAME      print "session=ID owner=UID key=SERIAL" (SERIAL 0: NAME is not
 *                               found from the session keyring)
 *   keyring-poke add NAME       add the user key NAME to the session keyring, then show it
 *   keyring-poke session CMD..  run CMD in a new session keyring of its own (as a login gets)
 *
 * Exit status 0, or 1 with a one-line reason on stderr. */
#include <errno.h>
#include <linux/keyctl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static long keyctl(int cmd, unsigned long a, unsigned long b, unsigned long c, unsigned long d) {
        return syscall(SYS_keyctl, cmd, a, b, c, d);
}

static int fail(const char *what) {
        fprintf(stderr, "keyring-poke: %s: %s\n", what, strerror(errno));
        return 1;
}

/* Print the session keyring, its owner (from its description "keyring;UID;..."), and NAME. */
static int show(const char *name) {
        char desc[256] = "";
        long ses = keyctl(KEYCTL_GET_KEYRING_ID, (unsigned long)KEY_SPEC_SESSION_KEYRING, 0, 0, 0);
        long key = keyctl(KEYCTL_SEARCH, (unsigned long)KEY_SPEC_SESSION_KEYRING, (unsigned long)"user",
                          (unsigned long)name, 0);
        unsigned uid = 0;

        if (ses < 0)
                return fail("session keyring");
        if (key < 0 && errno != ENOKEY && errno != EACCES)
                return fail("search the session keyring");
        if (keyctl(KEYCTL_DESCRIBE, (unsigned long)ses, (unsigned long)desc, sizeof(desc) - 1, 0) < 0 ||
            sscanf(desc, "keyring;%u;", &uid) != 1)
                return fail("describe the session keyring");
        printf("session=%ld owner=%u key=%ld\n", ses, uid, key < 0 ? 0L : key);
        return 0;
}

int main(int argc, char **argv) {
        if (argc >= 3 && strcmp(argv[1], "show") == 0)
                return show(argv[2]);
        if (argc >= 3 && strcmp(argv[1], "add") == 0) {
                if (syscall(SYS_add_key, "user", argv[2], "planted", 7, KEY_SPEC_SESSION_KEYRING) < 0)
                        return fail("add_key");
                return show(argv[2]);
        }
        if (argc >= 3 && strcmp(argv[1], "session") == 0) {
                if (keyctl(KEYCTL_JOIN_SESSION_KEYRING, 0, 0, 0, 0) < 0)
                        return fail("join a new session keyring");
                execv(argv[2], argv + 2);
                return fail(argv[2]);
        }
        fprintf(stderr, "usage: keyring-poke show|add NAME, or keyring-poke session CMD [ARG...]\n");
        return 1;
}
