#define _GNU_SOURCE
#include "input.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef HAVE_ISAL
#include <isa-l/igzip_lib.h>
#else
#include <zlib.h>
#endif

typedef struct pathlist {
	char **v;
	size_t n, cap;
} pathlist;

static void pathlist_add(pathlist *l, char *p)
{
	hm_grow(&l->v, &l->cap, l->n + 1, sizeof *l->v);
	l->v[l->n++] = p;
}

static int ends_with(const char *s, const char *suf)
{
	size_t n = strlen(s), m = strlen(suf);
	return n >= m && strcmp(s + n - m, suf) == 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The directories a walk has entered, by device and inode: a symbolic link back up
 * the tree (ln -s . self) or two links to one folder would otherwise list the same
 * files again, or never end. Open addressing, at most half full. */
typedef struct dirset {
	struct dirkey { dev_t dev; ino_t ino; int used; } *v;
	size_t n, cap; /* cap: 0 or a power of two */
} dirset;

/* Adds (dev, ino); returns 0 when it was there already. */
static int dirset_add(dirset *s, dev_t dev, ino_t ino)
{
	if (2 * (s->n + 1) > s->cap) {
		dirset old = *s;
		s->cap = old.cap ? 2 * old.cap : 64;
		s->v = hm_xcalloc(s->cap, sizeof *s->v);
		s->n = 0;
		for (size_t i = 0; i < old.cap; i++)
			if (old.v[i].used)
				dirset_add(s, old.v[i].dev, old.v[i].ino);
		free(old.v);
	}
	size_t i = (size_t)(((uint64_t)ino * 0x9e3779b97f4a7c15ull) ^ (uint64_t)dev) & (s->cap - 1);
	for (; s->v[i].used; i = (i + 1) & (s->cap - 1))
		if (s->v[i].dev == dev && s->v[i].ino == ino)
			return 0;
	s->v[i] = (struct dirkey){dev, ino, 1};
	s->n++;
	return 1;
}

static char *join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = hm_xrealloc(NULL, n);
	snprintf(p, n, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", name);
	return p;
}

/* Directories are walked depth first, each once, the names of each in sorted order: when
 * two links lead to one directory, the name it is listed under never depends on the file
 * system (nor does the order of files: the final list is sorted as a whole). A walk takes
 * regular files (symbolic links to them too) named *.json or *.json.gz, and memory snapshots
 * named *.pickle or *.pickle.gz (not *.pkl, which other pickles share): a FIFO or device
 * there would block the run or never end. A name that cannot be looked at (a dangling
 * link) and a directory that cannot be listed go on the list as they are: reading them
 * fails, and that is reported (or skipped, with --keep-going) like any unreadable trace. */
static void walk(const char *dir, dirset *seen, pathlist *l)
{
	DIR *d = opendir(dir);
	if (!d) {
		pathlist_add(l, hm_xstrdup(dir));
		return;
	}
	pathlist names = {0};
	struct dirent *e;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			pathlist_add(&names, join(dir, e->d_name));
	closedir(d);
	if (names.n)
		qsort(names.v, names.n, sizeof *names.v, cmp_str);
	for (size_t i = 0; i < names.n; i++) {
		char *p = names.v[i];
		struct stat st;
		int ok = stat(p, &st) == 0, named = ends_with(p, ".json") || ends_with(p, ".json.gz") ||
						       ends_with(p, ".pickle") || ends_with(p, ".pickle.gz");
		if (ok && S_ISDIR(st.st_mode)) {
			if (dirset_add(seen, st.st_dev, st.st_ino))
				walk(p, seen, l);
			free(p);
		} else if (named && (!ok || S_ISREG(st.st_mode))) {
			pathlist_add(l, p);
		} else {
			free(p);
		}
	}
	free(names.v);
}

int hm_input_expand(char **paths, int npaths, char ***out, int *nout, char *err, size_t errsz)
{
	pathlist all = {0};
	for (int i = 0; i < npaths; i++) {
		struct stat st;
		if (stat(paths[i], &st) != 0) {
			snprintf(err, errsz, "%s: %s", paths[i], strerror(errno));
			int rc = errno == ENOENT || errno == ENOTDIR ? -2 : -1;
			for (size_t j = 0; j < all.n; j++)
				free(all.v[j]);
			free(all.v);
			return rc;
		}
		if (!S_ISDIR(st.st_mode)) {
			pathlist_add(&all, hm_xstrdup(paths[i]));
			continue;
		}
		pathlist found = {0};
		dirset seen = {0};
		dirset_add(&seen, st.st_dev, st.st_ino);
		walk(paths[i], &seen, &found);
		free(seen.v);
		if (found.n)
			qsort(found.v, found.n, sizeof *found.v, cmp_str);
		for (size_t j = 0; j < found.n; j++)
			pathlist_add(&all, found.v[j]);
		free(found.v);
	}
	*out = all.v;
	*nout = (int)all.n;
	return 0;
}

/* Gzip members are inflated with ISA-L where the build found it (about 5x faster than
 * zlib on traces, measured in README "Performance"), else with zlib. A gzip source
 * inflates on its own thread, a few buffers ahead of the parser. */
#define NSLOT 4
#define SLOT_BYTES (4u << 20)
#define SLOT_CAP (HM_SRC_HEADROOM + SLOT_BYTES + 4096) /* room before and after the inflated bytes */

static void start_thread(hm_src *s);

typedef struct slot {
	char *buf;
	long n; /* bytes; 0 at the end; -1 after an error */
	int full;
} slot;

struct hm_src {
	FILE *f;
	int gzip, zdone, zinit;
	int pending; /* an error happened after some output: report it on the next read */
#ifdef HAVE_ISAL
	struct inflate_state isal;
	unsigned char *next_in;
	uint32_t avail_in;
#else
	z_stream z;
#endif
	unsigned char in[1 << 17];
	unsigned char peek[2]; /* the first bytes of the file, read to tell gzip from JSON */
	unsigned npeek;        /* how many of them are still to be handed out */
	char *dhead;           /* the first decoded bytes, read by hm_src_peek to tell formats apart */
	size_t nhead, head_at; /* how many are still to be handed out, from where */
	int peeked, held;      /* held: hm_src_peek met the end or an error (held_rc), said after head */
	long held_rc;
	uint64_t size, pos; /* pos: file bytes consumed (read with atomics across threads) */
	uint64_t text;      /* bytes of text it holds, a guess for gzip (hm_src_text_size) */
	char err[256];
	/* the inflating thread */
	pthread_t thread;
	int started, threaded, stop;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	slot slots[NSLOT];
	int head, tail;
	size_t off; /* consumer's offset in slots[head] */
};

hm_src *hm_src_open(const char *path, char *err, size_t errsz)
{
	return hm_src_open_threads(path, 1, err, errsz);
}

/* A gzip file's text, guessed before inflating it: ten times the file (traces compress 10
 * to 25 times), or more where the last member's trailer says so. The trailer holds the
 * member's size modulo 4 GiB, taken as the smallest size with that remainder that is no
 * smaller than the file: exact for one member under 4 GiB. A pipe has no trailer to read
 * ahead, and a file of several members says only its last one's size. Readers size their
 * columns from it: a guess too low makes them grow by copying into fresh memory (a 1 GiB
 * trace of memory events that gzip compresses 15 times: 120 MiB more of it). */
static uint64_t inflated_size(int fd, const struct stat *st)
{
	uint64_t size = (uint64_t)st->st_size, low = size * 10;
	unsigned char t[4];
	if (!S_ISREG(st->st_mode) || size < 18 || pread(fd, t, 4, st->st_size - 4) != 4)
		return low;
	uint64_t isize = (uint64_t)t[0] | (uint64_t)t[1] << 8 | (uint64_t)t[2] << 16 | (uint64_t)t[3] << 24;
	if (isize < size)
		isize += (size - isize + 0xffffffffu) >> 32 << 32;
	return isize > low ? isize : low;
}

/* The first two bytes tell gzip from JSON. They are read and kept (raw_read hands them
 * out first), never read again by seeking: a pipe, a FIFO or <(...) cannot seek. A
 * directory here is one the walk could not list: opening it says why. */
hm_src *hm_src_open_threads(const char *path, int threaded, char *err, size_t errsz)
{
	struct stat st;
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		DIR *d = opendir(path);
		snprintf(err, errsz, "%s: %s%s", path, d ? "is a directory" : "cannot list directory: ",
			 d ? "" : strerror(errno));
		if (d)
			closedir(d);
		return NULL;
	}
	FILE *f = fopen(path, "rb");
	if (!f || fstat(fileno(f), &st) != 0) {
		snprintf(err, errsz, "%s: cannot open: %s", path, strerror(errno));
		if (f)
			fclose(f);
		return NULL;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, errsz, "%s: is a directory", path);
		fclose(f);
		return NULL;
	}
	hm_src *s = hm_xcalloc(1, sizeof *s);
	s->f = f;
	s->size = (uint64_t)st.st_size;
	s->npeek = (unsigned)fread(s->peek, 1, sizeof s->peek, f);
	if (ferror(f)) {
		snprintf(err, errsz, "%s: cannot read: %s", path, strerror(errno));
		fclose(f);
		free(s);
		return NULL;
	}
	s->gzip = s->npeek == 2 && s->peek[0] == 0x1f && s->peek[1] == 0x8b;
	s->text = s->gzip ? inflated_size(fileno(f), &st) : s->size;
	if (s->gzip && threaded)
		start_thread(s);
	return s;
}

static long raw_read(hm_src *s, void *buf, size_t cap)
{
	size_t h = s->npeek < cap ? s->npeek : cap;
	memcpy(buf, s->peek, h);
	memmove(s->peek, s->peek + h, s->npeek - h);
	s->npeek -= (unsigned)h;
	size_t n = h + fread((char *)buf + h, 1, cap - h, s->f);
	if (n == 0 && ferror(s->f)) {
		snprintf(s->err, sizeof s->err, "read error: %s", strerror(errno));
		return -1;
	}
	__atomic_add_fetch(&s->pos, n, __ATOMIC_RELAXED);
	return (long)n;
}

#ifdef HAVE_ISAL
static const char *isal_error(int rc)
{
	switch (rc) {
	case ISAL_INVALID_BLOCK: return "invalid block";
	case ISAL_INVALID_SYMBOL: return "invalid symbol";
	case ISAL_INVALID_LOOKBACK: return "invalid distance too far back";
	case ISAL_INVALID_WRAPPER: return "invalid gzip header";
	case ISAL_UNSUPPORTED_METHOD: return "unsupported compression method";
	case ISAL_INCORRECT_CHECKSUM: return "checksum mismatch";
	default: return "inflate failed";
	}
}
#endif

/* Make sure at least two input bytes are buffered (or the file has ended), to look at
 * what follows a gzip member. */
static int more_input(hm_src *s, unsigned char **next, uint32_t *avail)
{
	if (*avail >= 2)
		return 0;
	memmove(s->in, *next, *avail);
	long n = raw_read(s, s->in + *avail, sizeof s->in - *avail);
	if (n < 0)
		return -1;
	*next = s->in;
	*avail += (uint32_t)n;
	return 0;
}

/* More compressed bytes into s->in while a member is open: the file ending here means the
 * stream was cut. Returns how many, or -1. */
static long compressed_input(hm_src *s)
{
	long n = raw_read(s, s->in, sizeof s->in);
	if (n == 0)
		snprintf(s->err, sizeof s->err, "gzip stream is truncated (the file ends inside compressed data at byte %llu)",
			 (unsigned long long)s->pos);
	return n > 0 ? n : -1;
}

/* Inflate gzip framing; after a member ends, another member may follow (as `cat a.gz b.gz`
 * makes), anything else is an error. */
static long gz_read(hm_src *s, char *buf, size_t cap)
{
	uint32_t want = (uint32_t)(cap > (1u << 30) ? (1u << 30) : cap);
#ifdef HAVE_ISAL
	if (!s->zinit) {
		isal_inflate_init(&s->isal);
		s->isal.crc_flag = ISAL_GZIP;
		s->zinit = 1;
	}
	s->isal.next_out = (uint8_t *)buf;
	s->isal.avail_out = want;
	while (s->isal.avail_out == want && !s->zdone) {
		if (s->isal.avail_in == 0) {
			long n = compressed_input(s);
			if (n < 0)
				return -1;
			s->isal.next_in = s->in;
			s->isal.avail_in = (uint32_t)n;
		}
		int rc = isal_inflate(&s->isal);
		if (rc < 0) {
			snprintf(s->err, sizeof s->err, "corrupt gzip data near compressed byte %llu: %s",
				 (unsigned long long)(s->pos - s->isal.avail_in), isal_error(rc));
			return -1;
		}
		if (s->isal.block_state == ISAL_BLOCK_FINISH) {
			unsigned char *next = s->isal.next_in;
			uint32_t avail = s->isal.avail_in;
			if (more_input(s, &next, &avail) < 0)
				return -1;
			if (avail == 0) {
				s->zdone = 1;
			} else if (avail >= 2 && next[0] == 0x1f && next[1] == 0x8b) {
				uint8_t *out = s->isal.next_out;
				uint32_t left = s->isal.avail_out;
				isal_inflate_reset(&s->isal);
				s->isal.crc_flag = ISAL_GZIP;
				s->isal.next_out = out;
				s->isal.avail_out = left;
			} else {
				snprintf(s->err, sizeof s->err, "unexpected bytes after the end of the gzip stream (compressed byte %llu)",
					 (unsigned long long)(s->pos - avail));
				return -1;
			}
			s->isal.next_in = next;
			s->isal.avail_in = avail;
		}
	}
	return (long)((char *)s->isal.next_out - buf);
#else
	if (!s->zinit) {
		if (inflateInit2(&s->z, 15 + 16) != Z_OK) {
			snprintf(s->err, sizeof s->err, "cannot start gzip decoder");
			return -1;
		}
		s->zinit = 1;
	}
	s->z.next_out = (unsigned char *)buf;
	s->z.avail_out = want;
	while (s->z.avail_out == want && !s->zdone) {
		if (s->z.avail_in == 0) {
			long n = compressed_input(s);
			if (n < 0)
				return -1;
			s->z.next_in = s->in;
			s->z.avail_in = (unsigned)n;
		}
		int rc = inflate(&s->z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END) {
			uint32_t avail = s->z.avail_in;
			if (more_input(s, &s->z.next_in, &avail) < 0)
				return -1;
			s->z.avail_in = avail;
			if (avail == 0) {
				s->zdone = 1;
			} else if (avail >= 2 && s->z.next_in[0] == 0x1f && s->z.next_in[1] == 0x8b) {
				inflateReset(&s->z);
			} else {
				snprintf(s->err, sizeof s->err, "unexpected bytes after the end of the gzip stream (compressed byte %llu)",
					 (unsigned long long)(s->pos - avail));
				return -1;
			}
		} else if (rc != Z_OK && rc != Z_BUF_ERROR) {
			snprintf(s->err, sizeof s->err, "corrupt gzip data near compressed byte %llu: %s",
				 (unsigned long long)(s->pos - s->z.avail_in), s->z.msg ? s->z.msg : "inflate failed");
			return -1;
		}
	}
	return (long)((unsigned char *)s->z.next_out - (unsigned char *)buf);
#endif
}

/* Bytes decoded before an error are delivered first, so the error's offset in the
 * decompressed JSON is where the damage starts. */
static long gz_read_whole(hm_src *s, char *buf, size_t cap)
{
	if (s->pending)
		return -1;
#ifdef HAVE_ISAL
	long n = gz_read(s, buf, cap);
	long made = s->zinit ? (long)((char *)s->isal.next_out - buf) : 0;
#else
	long n = gz_read(s, buf, cap);
	long made = s->zinit ? (long)((char *)s->z.next_out - buf) : 0;
#endif
	if (n < 0 && made > 0) {
		s->pending = 1;
		return made;
	}
	return n;
}

/* The inflating thread fills slots in order; the parser empties them in order. */
static void *inflater(void *arg)
{
	hm_src *s = arg;
	for (;;) {
		pthread_mutex_lock(&s->mu);
		while ((s->slots[s->tail].full || !s->slots[s->tail].buf) && !s->stop)
			pthread_cond_wait(&s->cv, &s->mu); /* a slot taken by the reader waits for a buffer (hm_src_give) */
		int stop = s->stop;
		slot *sl = &s->slots[s->tail];
		pthread_mutex_unlock(&s->mu);
		if (stop)
			return NULL;
		long n = gz_read_whole(s, sl->buf + HM_SRC_HEADROOM, SLOT_BYTES);
		pthread_mutex_lock(&s->mu);
		sl->n = n;
		sl->full = 1;
		s->tail = (s->tail + 1) % NSLOT;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		if (n <= 0)
			return NULL;
	}
}

static void start_thread(hm_src *s)
{
	if (s->started)
		return;
	for (int i = 0; i < NSLOT; i++)
		s->slots[i].buf = hm_xrealloc(NULL, SLOT_CAP);
	pthread_mutex_init(&s->mu, NULL);
	pthread_cond_init(&s->cv, NULL);
	s->started = 1;
	s->threaded = pthread_create(&s->thread, NULL, inflater, s) == 0;
	if (s->threaded)
		pthread_setname_np(s->thread, "hmem-inflate"); /* for perf and top */
}

void hm_src_inflate_on_thread(hm_src *s)
{
	if (s->gzip && !s->held) /* held: the peek met the end or an error, which stays */
		start_thread(s); /* the thread goes on from the state the caller's reads left */
}

static long src_read(hm_src *s, char *buf, size_t cap)
{
	if (!s->gzip)
		return raw_read(s, buf, cap);
	if (!s->threaded)
		return gz_read_whole(s, buf, cap);
	pthread_mutex_lock(&s->mu);
	while (!s->slots[s->head].full)
		pthread_cond_wait(&s->cv, &s->mu);
	slot *sl = &s->slots[s->head];
	pthread_mutex_unlock(&s->mu);
	if (sl->n <= 0)
		return sl->n; /* the end or the error stays: every later read says the same */
	size_t n = (size_t)sl->n - s->off < cap ? (size_t)sl->n - s->off : cap;
	memcpy(buf, sl->buf + HM_SRC_HEADROOM + s->off, n);
	s->off += n;
	if (s->off == (size_t)sl->n) {
		s->off = 0;
		pthread_mutex_lock(&s->mu);
		sl->full = 0;
		s->head = (s->head + 1) % NSLOT;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
	}
	return (long)n;
}

/* The bytes hm_src_peek looked at come first, then what follows them; an end or error met
 * after some bytes is said on the next read (as every source says it again). */
long hm_src_read(hm_src *s, char *buf, size_t cap)
{
	if (!s->nhead && !s->held)
		return src_read(s, buf, cap);
	size_t h = s->nhead < cap ? s->nhead : cap;
	memcpy(buf, s->dhead + s->head_at, h);
	s->head_at += h, s->nhead -= h;
	if (s->held)
		return h ? (long)h : s->held_rc;
	if (h == cap)
		return (long)h;
	long m = src_read(s, buf + h, cap - h);
	if (m > 0)
		return (long)h + m;
	s->held = 1, s->held_rc = m;
	return (long)h;
}

/* One read of a size the source reads anyway (a gzip stream inflated into a few bytes at
 * a time ends its reads elsewhere), again while it gives fewer than 16 bytes. */
#define PEEK_BYTES (64u << 10)

size_t hm_src_peek(hm_src *s, const unsigned char **head)
{
	if (!s->peeked) {
		s->peeked = 1;
		s->dhead = hm_xrealloc(NULL, PEEK_BYTES);
		while (s->nhead < 16) {
			long m = src_read(s, s->dhead + s->nhead, PEEK_BYTES - s->nhead);
			if (m <= 0) {
				s->held = 1, s->held_rc = m;
				break;
			}
			s->nhead += (size_t)m;
		}
	}
	*head = (const unsigned char *)s->dhead + s->head_at;
	return s->nhead;
}

/* The inflated bytes are handed over in the buffer they were inflated into: no copy. */
long hm_src_take(hm_src *s, char **buf, size_t *cap, size_t *at)
{
	if (!s->threaded || s->nhead)
		return -2;
	pthread_mutex_lock(&s->mu);
	while (!s->slots[s->head].full)
		pthread_cond_wait(&s->cv, &s->mu);
	slot *sl = &s->slots[s->head];
	long n = s->off ? -2 : sl->n; /* partly copied out by hm_src_read: go on that way */
	if (n > 0) {
		*buf = sl->buf, *cap = SLOT_CAP, *at = HM_SRC_HEADROOM;
		sl->buf = NULL;
		sl->full = 0;
		s->head = (s->head + 1) % NSLOT;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	return n;
}

void hm_src_give(hm_src *s, char *buf, size_t cap)
{
	pthread_mutex_lock(&s->mu);
	int i = 0; /* the first slot without a buffer, in the order the inflater fills them */
	while (i < NSLOT && s->slots[(s->tail + i) % NSLOT].buf)
		i++;
	if (i < NSLOT) {
		if (cap < SLOT_CAP) { /* a reader's own buffer, too small for a slot */
			free(buf);
			buf = hm_xrealloc(NULL, SLOT_CAP);
		}
		s->slots[(s->tail + i) % NSLOT].buf = buf;
		buf = NULL;
		pthread_cond_broadcast(&s->cv);
	}
	pthread_mutex_unlock(&s->mu);
	free(buf); /* more buffers than slots: not needed */
}

const char *hm_src_error(const hm_src *s) { return s->err; }
uint64_t hm_src_file_pos(const hm_src *s) { return __atomic_load_n(&s->pos, __ATOMIC_RELAXED); }
uint64_t hm_src_file_size(const hm_src *s) { return s->size; }
int hm_src_is_gzip(const hm_src *s) { return s->gzip; }
uint64_t hm_src_text_size(const hm_src *s) { return s->text; }

void hm_src_close(hm_src *s)
{
	if (!s)
		return;
	if (s->threaded) {
		pthread_mutex_lock(&s->mu);
		s->stop = 1;
		pthread_cond_broadcast(&s->cv);
		pthread_mutex_unlock(&s->mu);
		pthread_join(s->thread, NULL);
	}
	for (int i = 0; i < NSLOT; i++)
		free(s->slots[i].buf);
	free(s->dhead);
	if (s->started) {
		pthread_mutex_destroy(&s->mu);
		pthread_cond_destroy(&s->cv);
	}
#ifndef HAVE_ISAL
	if (s->zinit)
		inflateEnd(&s->z);
#endif
	fclose(s->f);
	free(s);
}
