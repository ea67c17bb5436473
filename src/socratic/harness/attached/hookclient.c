/* The hook command an attached agent runs, compiled: hookclient.py's fast path in C.
 *
 *   hookclient PYTHON CLIENT_DIR [--flags F] [--block W] EVENT [--session S --scenarios X]
 *
 * It finds the session from the workspace marker, sends the agent's payload to the
 * session's server over its Unix socket (the exchange hookclient.py describes), prints the
 * answer and acknowledges it. Whatever it does not handle itself (no marker found, no
 * server listening, the server gone mid-answer, arguments it does not know) it hands to
 * the Python client, unchanged, with the payload back on its stdin: that one starts the
 * server, or runs the hook without it, and refuses a stop it cannot judge.
 *
 * Why C: a Python interpreter takes 8 ms of CPU to start, and Claude Code starts a
 * turn's hooks together; 16 of them on 2 CPUs queued for 100 ms. socratic builds its
 * candidates with nvcc, which needs a host C compiler, so one is there to build this.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

static char **g_argv;          /* our argv: PYTHON CLIENT_DIR then the client's arguments */
static int g_argc;
static char *g_payload;
static size_t g_payload_len;

/* The Python client, with the payload (if any) on its stdin again. */
static void fallback(void) {
    /* CLIENT_DIR is its first argument, taken off before the client reads the rest */
    char *code = "import sys; sys.path.append(sys.argv.pop(1)); import hookclient; "
                 "sys.exit(hookclient.main(sys.argv[1:]))";
    if (g_payload != NULL) {
        int fd = memfd_create("payload", 0);
        if (fd >= 0) {
            size_t off = 0;
            while (off < g_payload_len) {
                ssize_t w = write(fd, g_payload + off, g_payload_len - off);
                if (w <= 0) break;
                off += (size_t)w;
            }
            lseek(fd, 0, SEEK_SET);
            dup2(fd, 0);
            close(fd);
        }
    }
    char **args = calloc((size_t)g_argc + 5, sizeof *args);
    int n = 0;
    args[n++] = g_argv[1];
    args[n++] = "-I";
    args[n++] = "-S";
    args[n++] = "-c";
    args[n++] = code;
    args[n++] = g_argv[2];
    for (int i = 3; i < g_argc; i++) args[n++] = g_argv[i];
    args[n] = NULL;
    execv(g_argv[1], args);
    fprintf(stderr, "socratic: error: cannot run %s: %s\n", g_argv[1], strerror(errno));
    exit(1);
}

static char *read_all(int fd, size_t *len) {
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (n == cap) buf = realloc(buf, cap *= 2);
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break;
        n += (size_t)r;
    }
    *len = n;
    return buf;
}

/* The session named by a marker file, or NULL (an escaped value: the Python client). */
static char *marker_session(const char *path) {
    FILE *f = fopen(path, "r");
    if (!f) return NULL;
    char text[PATH_MAX * 2];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = 0;
    const char *key = "\"session\": \"";
    char *p = strstr(text, key);
    if (!p) return NULL;
    p += strlen(key);
    char *end = strchr(p, '"');
    if (!end || end == p) return NULL;
    *end = 0;
    if (strchr(p, '\\')) return NULL;
    return strdup(p);
}

static char *find_session(const char *start) {
    char dir[PATH_MAX], marker[PATH_MAX + 32];
    if (!start || !*start || !realpath(start, dir)) return NULL;
    for (;;) {
        struct stat st;
        snprintf(marker, sizeof marker, "%s/.socratic-session", strcmp(dir, "/") ? dir : "");
        if (stat(marker, &st) == 0 && S_ISREG(st.st_mode)) return marker_session(marker);
        char *slash = strrchr(dir, '/');
        if (!slash || slash == dir) {
            if (strcmp(dir, "/") == 0) return NULL;
            strcpy(dir, "/");
            continue;
        }
        *slash = 0;
    }
}

static int send_all(int s, const char *p, size_t n) {
    while (n) {
        ssize_t w = send(s, p, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

static int write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* A JSON string of `s` (the refusal's reason). */
static void json_string(FILE *out, const char *s) {
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

int main(int argc, char **argv) {
    g_argv = argv;
    g_argc = argc;
    if (argc < 4) {
        fprintf(stderr, "socratic: error: hookclient: usage: PYTHON CLIENT_DIR [...] EVENT\n");
        return 1;
    }
    const char *block = "block";
    int i = 3;
    while (i + 1 < argc && (!strcmp(argv[i], "--flags") || !strcmp(argv[i], "--block"))) {
        if (!strcmp(argv[i], "--block")) block = argv[i + 1];
        i += 2;
    }
    if (i >= argc) fallback();
    const char *event = argv[i];
    const char *kind = "hook", *scenarios = "";
    char *session = NULL;
    struct timeval tv;
    gettimeofday(&tv, NULL);
    if (!strcmp(event, "evaluate")) {
        kind = "evaluate";
        int j = i + 1;
        for (; j + 1 < argc; j += 2) {
            if (!strcmp(argv[j], "--session")) session = argv[j + 1];
            else if (!strcmp(argv[j], "--scenarios")) scenarios = argv[j + 1];
            else fallback();
        }
        if (j != argc || !session || strpbrk(scenarios, "\t\n")) fallback();
    } else {
        if (i + 1 != argc) fallback();
        g_payload = read_all(0, &g_payload_len);
        session = getenv("SOCRATIC_SESSION");
        if (!session || !*session) {
            char cwd[PATH_MAX];
            const char *starts[3] = {getenv("CLAUDE_PROJECT_DIR"), getenv("GEMINI_PROJECT_DIR"),
                                     getcwd(cwd, sizeof cwd)};
            session = NULL;
            for (int k = 0; k < 3 && !session; k++) session = find_session(starts[k]);
        }
        if (!session) fallback();  /* it reads the payload's cwd */
    }
    const char *off = getenv("SOCRATIC_HOOK_SERVER");
    if (off && !strcmp(off, "0")) fallback();
    struct stat st;
    if (stat(session, &st) != 0) fallback();  /* (the Python client starts the server) */
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    snprintf(addr.sun_path, sizeof addr.sun_path, "/tmp/socratic-%u/%lx-%lx.sock",
             (unsigned)getuid(), (unsigned long)st.st_dev, (unsigned long)st.st_ino);
    int s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s < 0 || connect(s, (struct sockaddr *)&addr, sizeof addr) != 0) fallback();
    char head[1024];
    int hn = snprintf(head, sizeof head, "socratic-hook/1\t%s\t%s\t%ld.%06ld\t%zu\t%s\n", kind,
                      event, (long)tv.tv_sec, (long)tv.tv_usec, g_payload_len, scenarios);
    if (hn <= 0 || (size_t)hn >= sizeof head) fallback();
    if (send_all(s, head, (size_t)hn) || send_all(s, g_payload ? g_payload : "", g_payload_len))
        fallback();
    /* the reply: its header line, then exactly the bytes it announces */
    size_t cap = 1 << 16, got = 0;
    char *reply = malloc(cap);
    char *nl = NULL;
    char code[32];
    int ack = 0;
    size_t n_out = 0, n_err = 0, need = 0;
    for (;;) {
        if (nl && got - (size_t)(nl + 1 - reply) >= need) break;
        if (got == cap) {
            size_t at = nl ? (size_t)(nl - reply) : 0;
            reply = realloc(reply, cap *= 2);
            if (nl) nl = reply + at;
        }
        ssize_t r = recv(s, reply + got, cap - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) fallback();  /* the server went away mid-answer */
        got += (size_t)r;
        if (!nl && (nl = memchr(reply, '\n', got)) != NULL) {
            *nl = 0;
            if (sscanf(reply, "%31[^\t]\t%d\t%zu\t%zu", code, &ack, &n_out, &n_err) != 4)
                fallback();
            need = n_out + n_err;
        }
    }
    char *body = nl + 1;
    if (!strcmp(code, "fail")) {
        char *why = strndup(body, n_out);
        if (!strcmp(event, "stop")) {
            printf("{\"decision\": ");
            json_string(stdout, block);
            printf(", \"reason\": ");
            char reason[8192];
            snprintf(reason, sizeof reason, "socratic could not judge this stop (%s). The goal "
                     "is unchecked, so the stop is refused: carry on with the task, and stop "
                     "again later.", why);
            json_string(stdout, reason);
            printf("}\n");
            fprintf(stderr, "socratic: error: %s (the stop was refused)\n", why);
            return 0;
        }
        fprintf(stderr, "socratic: error: %s\n", why);
        return 1;
    }
    if (write_all(1, body, n_out) != 0) return 1;  /* the agent is gone: no ack */
    write_all(2, body + n_out, n_err);
    if (ack) {  /* printed: the questions it carried count as delivered */
        char buf[16];
        if (send_all(s, "ack\n", 4) == 0)
            while (recv(s, buf, sizeof buf, 0) > 0) {
            }
    }
    return atoi(code);
}
