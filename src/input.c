#include "input.h"
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

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

/* Directories are walked depth first; the final list is sorted as a whole, so the
 * order of files never depends on the file system. */
static int walk(const char *dir, pathlist *l, char *err, size_t errsz)
{
	DIR *d = opendir(dir);
	if (!d) {
		snprintf(err, errsz, "%s: cannot list directory: %s", dir, strerror(errno));
		return -1;
	}
	struct dirent *e;
	int rc = 0;
	while (rc == 0 && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		size_t n = strlen(dir) + strlen(e->d_name) + 2;
		char *p = hm_xrealloc(NULL, n);
		snprintf(p, n, "%s%s%s", dir, ends_with(dir, "/") ? "" : "/", e->d_name);
		struct stat st;
		if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
			rc = walk(p, l, err, errsz);
			free(p);
		} else if (ends_with(p, ".json") || ends_with(p, ".json.gz")) {
			pathlist_add(l, p);
		} else {
			free(p);
		}
	}
	closedir(d);
	return rc;
}

int hm_input_expand(char **paths, int npaths, char ***out, int *nout, char *err, size_t errsz)
{
	pathlist all = {0};
	int rc = -1;
	for (int i = 0; i < npaths; i++) {
		struct stat st;
		if (stat(paths[i], &st) != 0) {
			snprintf(err, errsz, "%s: %s", paths[i], strerror(errno));
			rc = errno == ENOENT || errno == ENOTDIR ? -2 : -1;
			goto fail;
		}
		if (!S_ISDIR(st.st_mode)) {
			pathlist_add(&all, hm_xstrdup(paths[i]));
			continue;
		}
		pathlist found = {0};
		if (walk(paths[i], &found, err, errsz) != 0) {
			for (size_t j = 0; j < found.n; j++)
				free(found.v[j]);
			free(found.v);
			goto fail;
		}
		if (found.n)
			qsort(found.v, found.n, sizeof *found.v, cmp_str);
		for (size_t j = 0; j < found.n; j++)
			pathlist_add(&all, found.v[j]);
		free(found.v);
	}
	*out = all.v;
	*nout = (int)all.n;
	return 0;
fail:
	for (size_t j = 0; j < all.n; j++)
		free(all.v[j]);
	free(all.v);
	return rc;
}

struct hm_src {
	FILE *f;
	int gzip, zdone, zinit;
	int pending; /* an error happened after some output: report it on the next read */
	z_stream z;
	unsigned char in[1 << 17];
	uint64_t size, pos;
	char err[256];
};

hm_src *hm_src_open(const char *path, char *err, size_t errsz)
{
	FILE *f = fopen(path, "rb");
	struct stat st;
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
	int c1 = getc(f), c2 = getc(f);
	s->gzip = c1 == 0x1f && c2 == 0x8b;
	rewind(f);
	return s;
}

static long raw_read(hm_src *s, void *buf, size_t cap)
{
	size_t n = fread(buf, 1, cap, s->f);
	if (n == 0 && ferror(s->f)) {
		snprintf(s->err, sizeof s->err, "read error: %s", strerror(errno));
		return -1;
	}
	s->pos += n;
	return (long)n;
}

/* Inflate with zlib, gzip framing (windowBits 15 + 16); after a member ends,
 * another member may follow (as `cat a.gz b.gz` makes), anything else is an error. */
static long gz_read(hm_src *s, char *buf, size_t cap)
{
	if (!s->zinit) {
		if (inflateInit2(&s->z, 15 + 16) != Z_OK) {
			snprintf(s->err, sizeof s->err, "cannot start gzip decoder");
			return -1;
		}
		s->zinit = 1;
	}
	s->z.next_out = (unsigned char *)buf;
	s->z.avail_out = (unsigned)(cap > (1u << 30) ? (1u << 30) : cap);
	while (s->z.avail_out == (unsigned)(cap > (1u << 30) ? (1u << 30) : cap) && !s->zdone) {
		if (s->z.avail_in == 0) {
			long n = raw_read(s, s->in, sizeof s->in);
			if (n < 0)
				return -1;
			if (n == 0) {
				snprintf(s->err, sizeof s->err,
					 "gzip stream is truncated (the file ends inside compressed data at byte %llu)",
					 (unsigned long long)s->pos);
				return -1;
			}
			s->z.next_in = s->in;
			s->z.avail_in = (unsigned)n;
		}
		int rc = inflate(&s->z, Z_NO_FLUSH);
		if (rc == Z_STREAM_END) {
			/* Another member? Peek at the two bytes that follow. */
			if (s->z.avail_in < 2) {
				memmove(s->in, s->z.next_in, s->z.avail_in);
				long n = raw_read(s, s->in + s->z.avail_in, sizeof s->in - s->z.avail_in);
				if (n < 0)
					return -1;
				s->z.next_in = s->in;
				s->z.avail_in += (unsigned)n;
			}
			if (s->z.avail_in == 0) {
				s->zdone = 1;
			} else if (s->z.avail_in >= 2 && s->z.next_in[0] == 0x1f && s->z.next_in[1] == 0x8b) {
				inflateReset(&s->z);
			} else {
				snprintf(s->err, sizeof s->err,
					 "unexpected bytes after the end of the gzip stream (compressed byte %llu)",
					 (unsigned long long)(s->pos - s->z.avail_in));
				return -1;
			}
		} else if (rc != Z_OK && rc != Z_BUF_ERROR) {
			snprintf(s->err, sizeof s->err, "corrupt gzip data near compressed byte %llu: %s",
				 (unsigned long long)(s->pos - s->z.avail_in), s->z.msg ? s->z.msg : "inflate failed");
			return -1;
		}
	}
	return (long)((unsigned char *)s->z.next_out - (unsigned char *)buf);
}

/* Bytes decoded before an error are delivered first, so the error's offset in the
 * decompressed JSON is where the damage starts. */
long hm_src_read(hm_src *s, char *buf, size_t cap)
{
	if (s->pending)
		return -1;
	if (!s->gzip)
		return raw_read(s, buf, cap);
	unsigned char *start = (unsigned char *)buf;
	long n = gz_read(s, buf, cap);
	if (n < 0 && s->zinit && s->z.next_out > start) {
		s->pending = 1;
		return (long)(s->z.next_out - start);
	}
	return n;
}

const char *hm_src_error(const hm_src *s) { return s->err; }
uint64_t hm_src_file_pos(const hm_src *s) { return s->pos; }
uint64_t hm_src_file_size(const hm_src *s) { return s->size; }
int hm_src_is_gzip(const hm_src *s) { return s->gzip; }

void hm_src_close(hm_src *s)
{
	if (!s)
		return;
	if (s->zinit)
		inflateEnd(&s->z);
	fclose(s->f);
	free(s);
}
