#include "outfile.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Temporary files being written, for the signal handler to remove (issue 11): a run
 * stopped by Ctrl-C or kill leaves no "*.tmp.*" behind. Slots are claimed atomically and
 * a name is freed only after its slot is cleared, so the handler reads only live names. */
#define TMP_SLOTS 64
static char *tmp_names[TMP_SLOTS];
static const int fatal_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE};

void hm_out_remove_tmp(void)
{
	for (int i = 0; i < TMP_SLOTS; i++) {
		char *name = __atomic_load_n(&tmp_names[i], __ATOMIC_SEQ_CST);
		if (name)
			unlink(name);
	}
}

static void remove_tmp_and_die(int sig)
{
	hm_out_remove_tmp();
	/* SA_RESETHAND restored the default action: the signal, pending until this handler
	 * returns, then ends the process as it would have without us. */
	raise(sig);
}

/* Once: handle the signals that end a run; those ignored when hmem started (nohup, a
 * background job's SIGINT) stay ignored. */
static void catch_signals(void)
{
	static int done;
	if (done)
		return;
	done = 1;
	for (size_t i = 0; i < sizeof fatal_signals / sizeof *fatal_signals; i++) {
		struct sigaction old, sa;
		if (sigaction(fatal_signals[i], NULL, &old) != 0 || old.sa_handler == SIG_IGN)
			continue;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = remove_tmp_and_die;
		sa.sa_flags = SA_RESETHAND;
		sigemptyset(&sa.sa_mask);
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* The slot + 1 holding name, 0 when none is free (more than TMP_SLOTS outputs at once:
 * written as well, but not removed on a signal). */
static int tmp_register(char *name)
{
	catch_signals();
	for (int i = 0; i < TMP_SLOTS; i++) {
		char *none = NULL;
		if (__atomic_compare_exchange_n(&tmp_names[i], &none, name, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return i + 1;
	}
	return 0;
}

static void tmp_unregister(int slot)
{
	if (slot > 0)
		__atomic_store_n(&tmp_names[slot - 1], NULL, __ATOMIC_SEQ_CST);
}

/* The directory part of path, malloc'd: "." without a slash, "/" for "/x". */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return hm_xstrdup(".");
	size_t n = slash == path ? 1 : (size_t)(slash - path);
	char *d = hm_xrealloc(NULL, n + 1);
	memcpy(d, path, n);
	d[n] = 0;
	return d;
}

/* Whether path lies in /proc (canonically): its fd links (where /dev/stdout, /dev/fd/N
 * and process substitution lead) name open files, not paths to replace. *own: in this
 * process's own /proc/PID/fd. */
static int in_proc(const char *path, int *own)
{
	char *d = dir_of(path), *real = realpath(d, NULL), mine[64];
	snprintf(mine, sizeof mine, "/proc/%ld/fd", (long)getpid());
	int yes = real && strncmp(real, "/proc/", 6) == 0;
	*own = real && strcmp(real, mine) == 0;
	free(real), free(d);
	return yes;
}

/* Where writing path goes (issue 11): symlinks are followed to the file they name, so a
 * link to a regular file stays a link and its target is replaced. The result (malloc'd)
 * is written in place (*in_place) when it exists and is not a regular file (a device, a
 * FIFO, a socket) or is reached through /proc's fd links (/dev/stdout, /proc/self/fd/N);
 * *fd is then the descriptor of this process it names, or -1. *st is filled when it
 * exists (st_nlink 0 otherwise). */
static char *out_target(const char *path, int *in_place, int *fd, struct stat *st)
{
	char *p = hm_xstrdup(path);
	*in_place = 0, *fd = -1;
	memset(st, 0, sizeof *st);
	for (int hops = 0; hops < 40; hops++) {
		struct stat l;
		if (lstat(p, &l) != 0 || !S_ISLNK(l.st_mode))
			break;
		int own;
		if (in_proc(p, &own)) {
			const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
			char *end;
			long n = strtol(base, &end, 10);
			if (own && *base && !*end && n >= 0 && n < 1 << 20)
				*fd = (int)n;
			*in_place = 1;
			break;
		}
		char buf[4096];
		ssize_t n = readlink(p, buf, sizeof buf - 1);
		if (n <= 0)
			break;
		buf[n] = 0;
		char *slash = strrchr(p, '/'), *next;
		if (buf[0] == '/' || !slash) {
			next = hm_xstrdup(buf);
		} else {
			size_t dl = (size_t)(slash - p) + 1;
			next = hm_xrealloc(NULL, dl + (size_t)n + 1);
			memcpy(next, p, dl);
			memcpy(next + dl, buf, (size_t)n + 1);
		}
		free(p);
		p = next;
	}
	if (stat(p, st) != 0)
		memset(st, 0, sizeof *st);
	else if (!S_ISREG(st->st_mode))
		*in_place = 1;
	return p;
}

int hm_out_file_id(const char *path, struct stat *st, char **canon)
{
	*canon = NULL;
	if (strcmp(path, "-") == 0)
		return 0;
	int in_place, fd;
	char *p = out_target(path, &in_place, &fd, st);
	if (in_place) {
		free(p);
		return 0;
	}
	/* A name not made yet has no inode: its canonical directory and last part. */
	char *dir = dir_of(p), *real = realpath(dir, NULL);
	const char *base = strrchr(p, '/') ? strrchr(p, '/') + 1 : p;
	size_t n = strlen(real ? real : dir) + strlen(base) + 2;
	*canon = hm_xrealloc(NULL, n);
	snprintf(*canon, n, "%s/%s", real ? real : dir, base);
	free(real), free(dir), free(p);
	return 1;
}

int hm_out_open(hm_out *o, const char *path, char *err, size_t errsz)
{
	memset(o, 0, sizeof *o);
	if (strcmp(path, "-") == 0) {
		o->f = stdout;
		return 0;
	}
	int in_place, own_fd;
	struct stat st;
	o->path = out_target(path, &in_place, &own_fd, &st);
	int fd;
	if (in_place) {
		/* A descriptor of this process is shared (its offset, O_APPEND), not reopened. */
		fd = own_fd >= 0 ? fcntl(own_fd, F_DUPFD_CLOEXEC, 3)
				 : open(o->path, O_WRONLY | O_CLOEXEC | (S_ISREG(st.st_mode) ? O_TRUNC : 0));
		if (fd >= 0 && !(o->f = fdopen(fd, "w")))
			close(fd), fd = -1;
		if (fd < 0) {
			snprintf(err, errsz, "%s: cannot write: %s", path, strerror(errno));
			free(o->path);
			memset(o, 0, sizeof *o);
			return -1;
		}
		return 0;
	}
	size_t n = strlen(o->path) + 16;
	o->tmp = hm_xrealloc(NULL, n);
	snprintf(o->tmp, n, "%s.tmp.XXXXXX", o->path);
	fd = mkstemp(o->tmp);
	if (fd >= 0)
		o->slot = tmp_register(o->tmp);
	if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
		snprintf(err, errsz, "%s: cannot write: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd), unlink(o->tmp);
		tmp_unregister(o->slot);
		free(o->path), free(o->tmp);
		memset(o, 0, sizeof *o);
		return -1;
	}
	if (st.st_nlink) {
		/* The file replaced keeps its owner (where allowed) and mode: a 0600 report
		 * stays private. */
		if (fchown(fd, st.st_uid, st.st_gid) != 0 && fchown(fd, (uid_t)-1, st.st_gid) != 0) {
			/* not ours to give away: the new file is the user's own */
		}
		fchmod(fd, st.st_mode & 07777);
	} else {
		mode_t mask = umask(0);
		umask(mask);
		fchmod(fd, 0666 & ~mask); /* as a plain fopen would have made it */
	}
	return 0;
}

int hm_out_commit(hm_out *o, char *err, size_t errsz)
{
	if (!o->f)
		return 0;
	int bad = fflush(o->f) != 0 || ferror(o->f);
	int saved = errno;
	if (o->f == stdout) {
		o->f = NULL;
		if (bad)
			snprintf(err, errsz, "standard output: write error: %s", strerror(saved));
		return bad ? -1 : 0;
	}
	if (fclose(o->f) != 0 && !bad)
		bad = 1, saved = errno;
	o->f = NULL;
	if (!bad && o->tmp && rename(o->tmp, o->path) != 0)
		bad = 1, saved = errno;
	if (bad) {
		snprintf(err, errsz, "%s: write failed: %s", o->path, strerror(saved));
		if (o->tmp)
			unlink(o->tmp);
	}
	tmp_unregister(o->slot);
	free(o->path), free(o->tmp);
	o->path = o->tmp = NULL;
	return bad ? -1 : 0;
}

void hm_out_abort(hm_out *o)
{
	if (o->f && o->f != stdout) {
		fclose(o->f);
		if (o->tmp)
			unlink(o->tmp); /* in place (a device, a FIFO): nothing to remove */
	}
	tmp_unregister(o->slot);
	free(o->path), free(o->tmp);
	memset(o, 0, sizeof *o);
}

/* write(2) until every byte is out. */
static int write_full(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w, n -= (size_t)w;
	}
	return 0;
}

int hm_out_write_at(int dirfd, const char *dirname, const char *name, const void *data, size_t len, char *err,
		    size_t errsz)
{
	static unsigned counter;
	struct stat st;
	mode_t mode;
	if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISREG(st.st_mode)) {
		mode = st.st_mode & 07777;
	} else {
		mode_t mask = umask(0);
		umask(mask);
		mode = 0666 & ~mask;
	}
	size_t n = strlen(name) + 32, dn = strlen(dirname) + n + 2;
	char *tmp = hm_xrealloc(NULL, n), *full = hm_xrealloc(NULL, dn);
	int fd = -1;
	for (int tries = 0; fd < 0 && tries < 100; tries++) {
		unsigned r = (unsigned)getpid() * 2654435761u ^ (unsigned)(uint64_t)(hm_now() * 1e9) ^ ++counter * 40503u;
		snprintf(tmp, n, "%s.tmp.%08x", name, r);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		snprintf(err, errsz, "%s/%s: cannot write: %s", dirname, name, strerror(errno));
		free(tmp), free(full);
		return -1;
	}
	snprintf(full, dn, "%s/%s", dirname, tmp);
	int slot = tmp_register(full);
	int bad = fchmod(fd, mode) != 0 || write_full(fd, data, len) != 0;
	int saved = errno;
	if (close(fd) != 0 && !bad)
		bad = 1, saved = errno;
	if (!bad && renameat(dirfd, tmp, dirfd, name) != 0)
		bad = 1, saved = errno;
	if (bad) {
		unlinkat(dirfd, tmp, 0);
		snprintf(err, errsz, "%s/%s: write failed: %s", dirname, name, strerror(saved));
	}
	tmp_unregister(slot);
	free(tmp), free(full);
	return bad ? -1 : 0;
}
