/* Packed int64 columns (see pack.h). */
#include "pack.h"
#include "jscan.h"
#include "util.h"

#include <stdlib.h>

/* Offsets go to chunks that double from CHUNK_MIN (a small trace takes a little) to
 * CHUNK_MAX: a column's last chunk costs only the pages it has touched. A block takes at
 * most 512 bytes of one. */
#define CHUNK_MIN (1u << 10)
#define CHUNK_MAX (256u << 10)

/* The block list takes 24 bytes per 64 rows and is touched as it fills: reserved up
 * front for the rows the file is guessed to hold (address space; pages as they fill), so it
 * is not copied as it grows. Growing past the reservation is hm_grow's, as without one. */
void hm_pack_reserve(hm_pack *p, size_t rows)
{
	size_t need = rows / HM_PACK_ROWS + 1;
	if (need <= p->capblk)
		return;
	hm_packblk *b = realloc(p->blk, need * sizeof *b);
	if (b) /* else the blocks grow as they come */
		p->blk = b, p->capblk = need;
}

/* Room for len bytes of offsets. */
static uint8_t *room(hm_pack *p, size_t len)
{
	if (!p->nchunk || p->used + len > p->chunksz) {
		p->chunksz = !p->nchunk ? CHUNK_MIN : p->chunksz < CHUNK_MAX ? 2 * p->chunksz : CHUNK_MAX;
		hm_grow(&p->chunk, &p->capchunk, p->nchunk + 1, sizeof *p->chunk);
		p->chunk[p->nchunk++] = hm_xrealloc(NULL, p->chunksz);
		p->used = 0;
	}
	uint8_t *q = p->chunk[p->nchunk - 1] + p->used;
	p->used += len;
	return q;
}

/* The block of the 64 values v, its offsets written to fresh room. Widths are chosen so
 * that every offset and the HM_NONE code fit: the span is computed in uint64 (values are
 * any int64). Loops the compiler vectorizes (the Makefile's -ftree-vectorize), built twice
 * where GCC targets x86-64: as the baseline (SSE2, which has no 64-bit compare: the minimum
 * and maximum stay scalar) and for AVX2 (encode below). */
static inline __attribute__((always_inline)) hm_packblk encode_rows(hm_pack *p, const int64_t *v)
{
	hm_packblk k = {INT64_MIN, NULL, 0, 0};
	/* Two running minima and maxima over the even and the odd rows: each is a chain of
	 * dependent steps, and every block of every packed column is encoded as the file is
	 * read. HM_NONE is INT64_MIN: it never raises a maximum. */
	int64_t lo = INT64_MAX, hi = INT64_MIN, lo1 = INT64_MAX, hi1 = INT64_MIN;
	for (size_t r = 0; r < HM_PACK_ROWS; r += 2) {
		lo = v[r] < lo ? v[r] : lo;
		hi = v[r] > hi ? v[r] : hi;
		lo1 = v[r + 1] < lo1 ? v[r + 1] : lo1;
		hi1 = v[r + 1] > hi1 ? v[r + 1] : hi1;
	}
	lo = lo1 < lo ? lo1 : lo;
	hi = hi1 > hi ? hi1 : hi;
	size_t nnone = 0;
	if (lo == INT64_MIN) { /* some rows are HM_NONE: the smallest of the others */
		lo = INT64_MAX;
		for (size_t r = 0; r < HM_PACK_ROWS; r++) {
			nnone += v[r] == INT64_MIN;
			lo = v[r] != INT64_MIN && v[r] < lo ? v[r] : lo;
		}
	}
	k.none = nnone > 0;
	if (nnone == HM_PACK_ROWS || (!k.none && lo == hi)) { /* one value in every row (HM_NONE included) */
		k.base = k.none ? INT64_MIN : lo, k.none = 0;
		return k;
	}
	uint64_t span = (uint64_t)hi - (uint64_t)lo + k.none; /* the largest code: wraps only past 2^64 - 1 */
	k.w = span <= UINT8_MAX && span >= (uint64_t)k.none ? 1 : span <= UINT16_MAX && span >= (uint64_t)k.none ? 2
	      : span <= UINT32_MAX && span >= (uint64_t)k.none ? 4 : 8;
	k.base = lo;
	k.off = room(p, (size_t)k.w * HM_PACK_ROWS);
	if (k.w == 8) {
		memcpy(k.off, v, 8 * HM_PACK_ROWS);
		k.none = 0;
		return k;
	}
	uint64_t code = UINT64_MAX >> (64 - 8 * k.w);
#define OFFSETS(type)                                                                                   \
	for (size_t r = 0; r < HM_PACK_ROWS; r++) {                                                     \
		type x = (type)(v[r] == INT64_MIN ? code : (uint64_t)v[r] - (uint64_t)lo);              \
		memcpy(k.off + sizeof x * r, &x, sizeof x);                                             \
	}
	if (k.w == 1)
		OFFSETS(uint8_t)
	else if (k.w == 2)
		OFFSETS(uint16_t)
	else
		OFFSETS(uint32_t)
#undef OFFSETS
	return k;
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__)
__attribute__((target("avx2"))) static hm_packblk encode_avx2(hm_pack *p, const int64_t *v)
{
	return encode_rows(p, v);
}
#define HAVE_ENCODE_AVX2 1
#endif

/* AVX2's build where the CPU has it, as the block scan chooses (HMEM_SIMD=base keeps to the
 * baseline: jscan.h). Not target_clones: its resolver would run before ThreadSanitizer's
 * runtime has started, and that build would crash as it loads. */
static hm_packblk encode(hm_pack *p, const int64_t *v)
{
#ifdef HAVE_ENCODE_AVX2
	if (hm_jscan_simd() >= 1)
		return encode_avx2(p, v);
#endif
	return encode_rows(p, v);
}

void hm_pack_open(hm_pack *p)
{
	size_t b = p->n / HM_PACK_ROWS;
	hm_grow(&p->blk, &p->capblk, b + 1, sizeof *p->blk);
	if (!p->tail)
		p->tail = hm_xrealloc(NULL, HM_PACK_ROWS * sizeof *p->tail);
	p->blk[b] = (hm_packblk){0, (uint8_t *)p->tail, 8, 0};
}

void hm_pack_flush(hm_pack *p)
{
	p->blk[p->n / HM_PACK_ROWS - 1] = encode(p, p->tail);
}

void hm_pack_set(hm_pack *p, size_t i, int64_t v)
{
	size_t b = i / HM_PACK_ROWS;
	if (p->blk[b].off == (uint8_t *)p->tail) {
		p->tail[i % HM_PACK_ROWS] = v;
		return;
	}
	int64_t rows[HM_PACK_ROWS];
	for (size_t r = 0; r < HM_PACK_ROWS; r++)
		rows[r] = hm_pack_get(p, b * HM_PACK_ROWS + r);
	rows[i % HM_PACK_ROWS] = v;
	p->blk[b] = encode(p, rows); /* the old offsets stay in their chunk, unused */
}

void hm_pack_copy(const hm_pack *p, int64_t *out)
{
	for (size_t i = 0; i < p->n; i++)
		out[i] = hm_pack_get(p, i);
}

void hm_pack_block(const hm_pack *p, size_t b, int64_t *out)
{
	const hm_packblk *k = &p->blk[b];
	if (k->w == 8) { /* the block being filled among them: only its rows up to n */
		size_t n = p->n - b * HM_PACK_ROWS;
		memcpy(out, k->off, (n < HM_PACK_ROWS ? n : HM_PACK_ROWS) * sizeof *out);
		return;
	}
	/* The other blocks are whole: loops of a constant count, in vector instructions (the
	 * Makefile's -ftree-vectorize). Decoded without the HM_NONE test, which then mends the
	 * few rows it concerns (as hm_pack_get reads them). */
	if (k->w == 0) {
		for (size_t r = 0; r < HM_PACK_ROWS; r++)
			out[r] = k->base;
		return;
	}
#define VALUES(type)                                                                                    \
	for (size_t r = 0; r < HM_PACK_ROWS; r++) {                                                     \
		type x;                                                                                 \
		memcpy(&x, k->off + sizeof x * r, sizeof x);                                            \
		out[r] = (int64_t)((uint64_t)k->base + x);                                              \
	}
	if (k->w == 1)
		VALUES(uint8_t)
	else if (k->w == 2)
		VALUES(uint16_t)
	else
		VALUES(uint32_t)
#undef VALUES
	if (k->none) {
		uint64_t code = UINT64_MAX >> (64 - 8 * k->w);
		for (size_t r = 0; r < HM_PACK_ROWS; r++)
			if ((uint64_t)out[r] - (uint64_t)k->base == code)
				out[r] = INT64_MIN;
	}
}

size_t hm_pack_bytes(const hm_pack *p)
{
	size_t n = 0;
	for (size_t i = 0, c = CHUNK_MIN; i < p->nchunk; i++, c = c < CHUNK_MAX ? 2 * c : CHUNK_MAX)
		n += c;
	return p->capblk * sizeof *p->blk + n;
}

void hm_pack_fit(hm_pack *p)
{
	size_t nb = (p->n + HM_PACK_ROWS - 1) / HM_PACK_ROWS;
	if (p->capblk > nb) { /* a block of its size: shrunk in place, a small one leaves a hole */
		hm_packblk *q = hm_xrealloc(NULL, (nb ? nb : 1) * sizeof *q);
		memcpy(q, p->blk, nb * sizeof *q);
		free(p->blk);
		p->blk = q, p->capblk = nb ? nb : 1;
	}
}

void hm_pack_free(hm_pack *p)
{
	for (size_t i = 0; i < p->nchunk; i++)
		free(p->chunk[i]);
	free(p->chunk);
	free(p->blk);
	free(p->tail);
	memset(p, 0, sizeof *p);
}
