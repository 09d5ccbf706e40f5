/* pack: a column of int64 values (HM_NONE among them) kept in blocks of 64 rows, each
 * block as a base and the offsets from it in the fewest bytes that hold them: 0 (every
 * row the same), 1, 2, 4, or the values themselves (8). Columns whose neighbouring rows
 * are close (a running total, a counter, a value that seldom changes) take 0 to 4 bytes a
 * row instead of 8, and a block that does not fit costs only itself. Plain C, no Lua.
 *
 * Rows are appended in order; the block being filled stays as values (a block of width 8
 * over tail) until its 64th row.
 * Reading a row is a few instructions (hm_pack_get); hm_pack_set rewrites one (tests,
 * and a window that moves rows). Encoded blocks live in chunks that are never moved, so
 * appending never copies what is there.
 *
 * Ownership: a zeroed hm_pack is empty and valid; everything it points to is its own and
 * freed by hm_pack_free. */
#ifndef HM_PACK_H
#define HM_PACK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define HM_PACK_ROWS 64

typedef struct hm_packblk {
	int64_t base;  /* the smallest value other than HM_NONE (w 0: every row's value) */
	uint8_t *off;  /* HM_PACK_ROWS offsets of w bytes from base, in a chunk; w 8: values */
	uint8_t w;     /* 0, 1, 2, 4 or 8 */
	uint8_t none;  /* the largest offset of width w stands for HM_NONE */
} hm_packblk;

typedef struct hm_pack {
	size_t n;             /* rows */
	hm_packblk *blk;      /* n / HM_PACK_ROWS encoded blocks */
	size_t capblk;
	int64_t *tail;        /* the rows of the block being filled, as values */
	uint8_t **chunk;      /* where the offsets live */
	size_t nchunk, capchunk, chunksz, used; /* the last chunk's size, and bytes taken in it */
} hm_pack;

/* Room for about rows rows (a guess; appends grow past it). */
void hm_pack_reserve(hm_pack *p, size_t rows);
/* Opens a block for row n, and encodes the full tail block (hm_pack_add calls them). */
void hm_pack_open(hm_pack *p);
void hm_pack_flush(hm_pack *p);
void hm_pack_free(hm_pack *p);
/* Gives back the room reserved past the rows there are. */
void hm_pack_fit(hm_pack *p);
/* Row i (< n) becomes v. */
void hm_pack_set(hm_pack *p, size_t i, int64_t v);
/* All n rows into out (room for n). */
void hm_pack_copy(const hm_pack *p, int64_t *out);
/* The rows of block b (rows b * HM_PACK_ROWS on, up to n) as values into out. */
void hm_pack_block(const hm_pack *p, size_t b, int64_t *out);
/* Bytes held (for tests and the README's figures). */
size_t hm_pack_bytes(const hm_pack *p);

static inline void hm_pack_add(hm_pack *p, int64_t v)
{
	if (p->n % HM_PACK_ROWS == 0)
		hm_pack_open(p);
	p->tail[p->n % HM_PACK_ROWS] = v;
	if (++p->n % HM_PACK_ROWS == 0)
		hm_pack_flush(p);
}

static inline int64_t hm_pack_get(const hm_pack *p, size_t i)
{
	size_t r = i % HM_PACK_ROWS;
	const hm_packblk *k = &p->blk[i / HM_PACK_ROWS];
	uint64_t o;
	switch (k->w) {
	case 0: return k->base;
	case 1: o = k->off[r]; break;
	case 2: { uint16_t x; memcpy(&x, k->off + 2 * r, 2); o = x; } break;
	case 4: { uint32_t x; memcpy(&x, k->off + 4 * r, 4); o = x; } break;
	default: { int64_t x; memcpy(&x, k->off + 8 * r, 8); return x; }
	}
	/* Most blocks hold no HM_NONE: tested first, it spares the code's shift on every read
	 * (hot loops read a packed column per event). */
	if (__builtin_expect(k->none, 0) && o == ((uint64_t)1 << 8 * k->w) - 1)
		return INT64_MIN; /* HM_NONE */
	return (int64_t)((uint64_t)k->base + o);
}

/* A reader of one column for loops that visit rows in about increasing order (events in
 * time order, which is mostly file order): it decodes a row's whole block once, and the
 * next rows of that block are then a compare and a load. Valid while the column is not
 * changed (hm_pack_set, hm_pack_add); on the caller's stack. */
typedef struct hm_packrd {
	const hm_pack *p;
	size_t blk; /* the block in v; SIZE_MAX: none yet */
	int64_t v[HM_PACK_ROWS];
} hm_packrd;

static inline void hm_packrd_init(hm_packrd *r, const hm_pack *p)
{
	r->p = p;
	r->blk = SIZE_MAX;
}

static inline int64_t hm_packrd_get(hm_packrd *r, size_t i)
{
	if (__builtin_expect(i / HM_PACK_ROWS != r->blk, 0)) {
		r->blk = i / HM_PACK_ROWS;
		hm_pack_block(r->p, r->blk, r->v);
	}
	return r->v[i % HM_PACK_ROWS];
}

#endif
