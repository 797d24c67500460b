/* gateway-spam-classify's compiled client: what spamc is to spamd, for a procmail or maildrop rule.
 *
 *     gateway-spam-classify [--data DIR] [--ham-cutoff X] [--spam-cutoff Y] FILE|-
 *
 * It reads the message (at most MAX_MESSAGE bytes, as the Python command does), hands it to the long-lived
 * classifier (`gateway-spam-classify --serve`) over `classify.sock` in the data folder, with the Python command's
 * request, and prints and exits as that command does: the verdict and score on standard output (exit 0 spam,
 * 1 ham, 2 unsure), or an error sentence on standard error (3 error, 4 not mail). The classifier decides all of
 * that; this program only carries bytes.
 *
 * The socket is trusted only when it is a socket (not a link), owned by this user, with no permission for group
 * or others, and when the process listening on it runs as this user (the kernel's SO_PEERCRED, where there is
 * one). Whenever no trusted classifier answers with a well-formed line (no socket, refused, untrusted, 10 seconds
 * without an answer), and for every argument this program does not take itself (--here, --help, --serve,
 * --command, a cutoff not written as plain digits, a file name past ASCII, anything unexpected), it executes the
 * Python command with the same arguments, which judges the message itself: the verdict is never lost. A message
 * already read from standard input is handed to it through a pipe (never written to a file).
 *
 * `gateway spam client` builds it with the system's C compiler and these definitions, so that the limits and
 * words are the Python command's own: GATEWAY_PYTHON and GATEWAY_DELIVER (the Python command, started as
 * `GATEWAY_PYTHON -I -S GATEWAY_DELIVER`), MAX_MESSAGE, PROTOCOL and SOCKET_NAME. C99 and POSIX, with Linux's
 * SO_PEERCRED when the system has it.
 */
#define _GNU_SOURCE /* struct ucred, for SO_PEERCRED */
#include <errno.h>
#include <fcntl.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#if !defined(GATEWAY_PYTHON) || !defined(GATEWAY_DELIVER) || !defined(MAX_MESSAGE) || !defined(PROTOCOL) \
    || !defined(SOCKET_NAME) || !defined(REPLY_TIMEOUT_SECONDS)
#error "build this file with `gateway spam client`, which defines the Python command, its limits and words"
#endif

enum { ERROR = 3, NOT_MAIL = 4, REPLY_MAX = 65536 };

static int given_count;
static char **given;          /* the arguments, as given, for the Python command */
static char *message;         /* what was read of the message */
static size_t message_size;
static int from_input;        /* whether it came on standard input (else the Python command reads the file) */

/* Run the Python command with this program's arguments (and --here first when this program already asked a
 * classifier that did not answer, so it is not asked twice). Never returns. */
static void judge_in_python(int here) {
    char **argv = calloc((size_t)given_count + 6, sizeof *argv);
    int n = 0, i;
    if (argv == NULL) {
        fputs("error: out of memory\n", stderr);
        exit(ERROR);
    }
    argv[n++] = GATEWAY_PYTHON;
    argv[n++] = "-I";
    argv[n++] = "-S";
    argv[n++] = GATEWAY_DELIVER;
    if (here)
        argv[n++] = "--here";
    for (i = 1; i < given_count; i++)
        argv[n++] = given[i];
    if (from_input) { /* standard input was read: a child writes it into a pipe the command reads */
        int ends[2];
        pid_t writer;
        if (pipe(ends) != 0 || (writer = fork()) < 0) {
            fprintf(stderr, "error: cannot hand the message over: %s\n", strerror(errno));
            exit(ERROR);
        }
        if (writer == 0) {
            size_t done = 0;
            ssize_t wrote;
            close(ends[0]);
            while (done < message_size && (wrote = write(ends[1], message + done, message_size - done)) > 0)
                done += (size_t)wrote;
            _exit(0);
        }
        close(ends[1]);
        if (dup2(ends[0], STDIN_FILENO) < 0)
            exit(ERROR);
        close(ends[0]);
    }
    execv(GATEWAY_PYTHON, argv);
    fprintf(stderr, "error: cannot start %s (%s): build this client again with `gateway spam client`\n",
            GATEWAY_PYTHON, strerror(errno));
    exit(ERROR);
}

/* A cutoff this program takes itself: plain digits with at most one point, from 0 to 1 (anything else, Python's
 * float() decides). */
static int plain_cutoff(const char *text, double *value) {
    const char *c;
    int digits = 0, points = 0;
    for (c = text; *c; c++) {
        if (*c >= '0' && *c <= '9')
            digits++;
        else if (*c == '.' && !points)
            points++;
        else
            return 0;
    }
    if (!digits)
        return 0;
    *value = strtod(text, NULL);
    return *value >= 0.0 && *value <= 1.0;
}

/* The data folder as the Python command finds it: $XDG_DATA_HOME unless blank, else ~/.local/share; then
 * gateway/plugins/spam. NULL when the Python command should decide (a name this program would not read alike). */
static char *default_data(void) {
    const char *base = getenv("XDG_DATA_HOME"), *c, *home;
    char *folder;
    int blank = 1;
    size_t size;
    for (c = base ? base : ""; *c; c++) {
        if ((unsigned char)*c >= 0x80)
            return NULL; /* Python's idea of blank covers Unicode spaces */
        if (!strchr(" \t\n\v\f\r\x1c\x1d\x1e\x1f", *c))
            blank = 0;
    }
    if (blank) {
        struct passwd *entry;
        home = getenv("HOME");
        if (home == NULL)
            home = (entry = getpwuid(getuid())) ? entry->pw_dir : NULL;
        if (home == NULL)
            return NULL;
        size = strlen(home);
        while (size > 0 && home[size - 1] == '/')
            size--;
        folder = malloc(size + 64);
        if (folder != NULL)
            sprintf(folder, "%.*s/.local/share/gateway/plugins/spam", (int)size, home);
        return folder;
    }
    size = strlen(base);
    folder = malloc(size + 32);
    if (folder != NULL)
        sprintf(folder, "%s%sgateway/plugins/spam", base, base[size - 1] == '/' ? "" : "/");
    return folder;
}

static int send_all(int connection, const char *bytes, size_t size) {
    ssize_t sent;
    while (size > 0) {
        do
            sent = send(connection, bytes, size, 0);
        while (sent < 0 && errno == EINTR);
        if (sent <= 0)
            return 0;
        bytes += sent;
        size -= (size_t)sent;
    }
    return 1;
}

/* A stream connected to a trusted classifier on DATA's socket, or -1. */
static int classifier(const char *data) {
    char *path = malloc(strlen(data) + sizeof SOCKET_NAME + 2);
    struct sockaddr_un address;
    struct stat found;
    struct timeval timeout = {REPLY_TIMEOUT_SECONDS, 0};
    int connection, folder = -1, ok;
    if (path == NULL)
        return -1;
    sprintf(path, "%s%s%s", data, *data && data[strlen(data) - 1] != '/' ? "/" : "", SOCKET_NAME);
    if (lstat(path, &found) != 0 || !S_ISSOCK(found.st_mode) || found.st_uid != getuid()
        || (found.st_mode & 077) != 0)
        return -1;
    memset(&address, 0, sizeof address);
    address.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof address.sun_path) { /* too long for AF_UNIX: named through its folder */
        char *slash = strrchr(path, '/');
        *slash = '\0';
        if ((folder = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
            return -1;
        snprintf(address.sun_path, sizeof address.sun_path, "/proc/self/fd/%d/%s", folder, SOCKET_NAME);
    } else {
        strcpy(address.sun_path, path);
    }
    connection = socket(AF_UNIX, SOCK_STREAM, 0);
    if (connection < 0 || fcntl(connection, F_SETFD, FD_CLOEXEC) != 0) /* not the Python command's */
        return -1;
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
    setsockopt(connection, SOL_SOCKET, SO_SNDTIMEO, &timeout, sizeof timeout);
    ok = connect(connection, (struct sockaddr *)&address, sizeof address) == 0;
    if (folder >= 0)
        close(folder);
#ifdef SO_PEERCRED
    if (ok) { /* the process that listens runs as this user */
        struct ucred peer;
        socklen_t size = sizeof peer;
        ok = getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &size) == 0 && peer.uid == getuid();
    }
#endif
    if (!ok) {
        close(connection);
        return -1;
    }
    return connection;
}

int main(int argc, char **argv) {
    const char *data = NULL, *file = NULL;
    double cutoff;
    char cutoff_words[2][32];
    const char *words[2] = {"-", "-"}; /* "-" leaves the model's cutoff */
    char header[96], reply[REPLY_MAX + 1], *about, *text;
    size_t used = 0, capacity = 0;
    ssize_t got;
    int i, input, connection, code;

    given_count = argc;
    given = argv;
    signal(SIGPIPE, SIG_IGN);
    for (i = 1; i < argc; i++) {
        int which = !strcmp(argv[i], "--ham-cutoff") ? 0 : !strcmp(argv[i], "--spam-cutoff") ? 1 : -1;
        if ((which >= 0 || !strcmp(argv[i], "--data")) && i + 1 < argc) {
            if (which < 0)
                data = argv[++i];
            else if (plain_cutoff(argv[++i], &cutoff)) { /* %.17g reads back as the very double */
                snprintf(cutoff_words[which], sizeof cutoff_words[which], "%.17g", cutoff);
                words[which] = cutoff_words[which];
            } else {
                judge_in_python(0);
            }
        } else if (file == NULL && (!strcmp(argv[i], "-") || argv[i][0] != '-')) {
            const char *c;
            for (c = argv[i]; *c; c++)
                if ((unsigned char)*c >= 0x80)
                    judge_in_python(0); /* Python writes such a name its own way in an error line */
            file = argv[i];
        } else {
            judge_in_python(0); /* --here, --help, --serve, --command, a missing value, something unexpected */
        }
    }
    if (file == NULL || (data == NULL && (data = default_data()) == NULL))
        judge_in_python(0);
    input = strcmp(file, "-") ? open(file, O_RDONLY | O_CLOEXEC) : STDIN_FILENO;
    for (got = 1; input >= 0 && got > 0 && used < (size_t)MAX_MESSAGE;) { /* cut at MAX_MESSAGE, as Python's */
        if (used == capacity) {
            char *grown;
            capacity = capacity ? capacity * 2 : 65536;
            if (capacity > (size_t)MAX_MESSAGE)
                capacity = (size_t)MAX_MESSAGE;
            if ((grown = realloc(message, capacity)) == NULL) {
                fputs("error: out of memory\n", stderr);
                return ERROR;
            }
            message = grown;
        }
        do
            got = read(input, message + used, capacity - used);
        while (got < 0 && errno == EINTR);
        if (got < 0)
            input = -1;
        else
            used += (size_t)got;
    }
    if (input < 0) {
        fprintf(stderr, "error: %s: %s\n", file, strerror(errno));
        return ERROR;
    }
    message_size = used;
    from_input = !strcmp(file, "-");
    if ((connection = classifier(data)) < 0)
        judge_in_python(0);
    snprintf(header, sizeof header, PROTOCOL " %s %s\n", words[0], words[1]);
    if (!send_all(connection, header, strlen(header)) || !send_all(connection, message, used)
        || shutdown(connection, SHUT_WR) != 0)
        judge_in_python(1);
    for (used = 0; used < REPLY_MAX; used += (size_t)got) {
        do
            got = recv(connection, reply + used, REPLY_MAX - used, 0);
        while (got < 0 && errno == EINTR);
        if (got <= 0)
            break;
    }
    if (got < 0 || used >= REPLY_MAX) /* no answer in time, or more than any the classifier gives */
        judge_in_python(1);
    close(connection);
    while (used > 0 && reply[used - 1] == '\n')
        used--;
    reply[used] = '\0';
    /* `CODE ABOUT TEXT`, as the Python command checks it, else not the classifier's reply. A reply this program
     * would not print as Python does (a byte past ASCII, say of a folder's name in an error) is left to the Python
     * command too: judging the message itself, it writes the very line the classifier's same function gave. */
    for (i = 0; (size_t)i < used; i++)
        if (reply[i] == '\0' || (unsigned char)reply[i] >= 0x80)
            judge_in_python(1);
    about = strchr(reply, ' ');
    text = about ? strchr(about + 1, ' ') : NULL;
    if (about == NULL || text == NULL || about == reply || strspn(reply, "0123456789") != (size_t)(about - reply)
        || text != about + 2 || (about[1] != '0' && about[1] != '1') || !text[1])
        judge_in_python(1);
    if (about - reply > 9 || (code = atoi(reply)) > NOT_MAIL) /* digits alone, so never below 0 */
        judge_in_python(1);
    if (code < ERROR)
        printf("%s\n", text + 1);
    else if (about[1] == '1')
        fprintf(stderr, "error: %s: %s\n", file, text + 1);
    else
        fprintf(stderr, "error: %s\n", text + 1);
    return fflush(stdout) == 0 ? code : ERROR;
}
