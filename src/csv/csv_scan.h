/*
 * csv_scan.h - inside io: finding CSV delimiters sixteen bytes at a time.
 *
 * The loader's index pass and the read-back of deferred columns both spend
 * their time looking for the next comma in long runs of short numeric
 * fields. lm_csv_marks16 answers for sixteen bytes at once with bit masks
 * (bit i for byte i): SSE2 compares where the compiler targets it (every
 * x86-64), otherwise the same masks from two eight-byte words (SWAR), so
 * both builds take the same branches. Defining LM_CSV_SWAR forces the
 * portable words, to test them on x86-64 too.
 */
#ifndef LUMEN_IO_CSV_SCAN_H
#define LUMEN_IO_CSV_SCAN_H
#include <stdint.h>
#include <string.h>

#if defined(__SSE2__) && !defined(LM_CSV_SWAR)
#include <emmintrin.h>
#define LM_CSV_SCAN_SSE2 1
#endif

/* The delimiters of sixteen bytes: comma, the bytes that end the fast
 * paths (a quote, LF, CR), the decimal digits and the points. */
typedef struct lm_csv_marks {
  unsigned comma, stop, digit, point;
} lm_csv_marks;

#ifndef LM_CSV_SCAN_SSE2
/* Bytes of w equal to b: 0x80 in those bytes, 0 elsewhere (exact: no borrow
 * crosses bytes). */
static inline uint64_t lm_csv_swar_eq(uint64_t w, unsigned char b) {
  uint64_t t = w ^ (0x0101010101010101ULL * b);
  uint64_t y = ((t & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL) | t;
  return ~(y | 0x7F7F7F7F7F7F7F7FULL);
}

/* Bytes of w that are decimal digits: 0x80 in those bytes. */
static inline uint64_t lm_csv_swar_digit(uint64_t w) {
  /* a byte b is a digit when b - '0' < 10 as an unsigned byte: b >= '0'
   * (high bit of b + 0x50 with b's own high bit clear) and b <= '9' */
  uint64_t low = w & 0x7F7F7F7F7F7F7F7FULL;
  uint64_t ge0 = low + 0x5050505050505050ULL;  /* 0x80 set when low >= 0x30 */
  uint64_t le9 = ~(low + 0x4646464646464646ULL); /* 0x80 clear when low >= 0x3A */
  return ge0 & le9 & ~w & 0x8080808080808080ULL;
}

/* The high bits of the eight bytes of m (each 0x80 or 0) as eight bits. */
static inline unsigned lm_csv_swar_bits(uint64_t m) {
  return (unsigned)(((m >> 7) * 0x0102040810204080ULL) >> 56);
}
#endif

/* lm_csv_count16: the bits set in a 16-bit mask (the x86-64 baseline has
 * no popcount instruction, and the compiler's fallback is a call). */
static inline unsigned lm_csv_count16(unsigned m) {
  m = m - ((m >> 1) & 0x5555u);
  m = (m & 0x3333u) + ((m >> 2) & 0x3333u);
  m = (m + (m >> 4)) & 0x0F0Fu;
  return (m + (m >> 8)) & 0x1Fu;
}

/* lm_csv_marks16: the marks of the sixteen bytes at p (all readable). */
static inline lm_csv_marks lm_csv_marks16(const char *p) {
  lm_csv_marks m;
#ifdef LM_CSV_SCAN_SSE2
  __m128i x = _mm_loadu_si128((const __m128i *)(const void *)p);
  __m128i d = _mm_sub_epi8(x, _mm_set1_epi8('0'));
  m.comma = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8(',')));
  m.stop = (unsigned)_mm_movemask_epi8(_mm_or_si128(
      _mm_cmpeq_epi8(x, _mm_set1_epi8('"')),
      _mm_or_si128(_mm_cmpeq_epi8(x, _mm_set1_epi8('\n')), _mm_cmpeq_epi8(x, _mm_set1_epi8('\r')))));
  m.digit = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d));
  m.point = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, _mm_set1_epi8('.')));
#else
  m.comma = m.stop = m.digit = m.point = 0;
  for (int half = 0; half < 2; half++) {
    uint64_t w, b;
    memcpy(&w, p + 8 * half, 8);
    /* the bytes in memory order: byte 0 lowest on little-endian machines */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    w = __builtin_bswap64(w);
#endif
    b = lm_csv_swar_eq(w, '"') | lm_csv_swar_eq(w, '\n') | lm_csv_swar_eq(w, '\r');
    m.comma |= lm_csv_swar_bits(lm_csv_swar_eq(w, ',')) << (8 * half);
    m.stop |= lm_csv_swar_bits(b) << (8 * half);
    m.digit |= lm_csv_swar_bits(lm_csv_swar_digit(w)) << (8 * half);
    m.point |= lm_csv_swar_bits(lm_csv_swar_eq(w, '.')) << (8 * half);
  }
#endif
  return m;
}

/* lm_csv_count64: the bits set in a 64-bit mask. */
static inline unsigned lm_csv_count64(uint64_t m) {
  m = m - ((m >> 1) & 0x5555555555555555ULL);
  m = (m & 0x3333333333333333ULL) + ((m >> 2) & 0x3333333333333333ULL);
  m = (m + (m >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return (unsigned)((m * 0x0101010101010101ULL) >> 56);
}

/* The marks of sixty-four bytes, as 64-bit masks. */
typedef struct lm_csv_marks64 {
  uint64_t comma, stop, digit, point;
} lm_csv_marks64;

/* lm_csv_marks64: the marks of the sixty-four bytes at p (all readable). */
static inline lm_csv_marks64 lm_csv_marks64_at(const char *p) {
  lm_csv_marks64 m = {0, 0, 0, 0};
  for (int k = 0; k < 4; k++) {
    lm_csv_marks q = lm_csv_marks16(p + 16 * k);
    m.comma |= (uint64_t)q.comma << (16 * k);
    m.stop |= (uint64_t)q.stop << (16 * k);
    m.digit |= (uint64_t)q.digit << (16 * k);
    m.point |= (uint64_t)q.point << (16 * k);
  }
  return m;
}

/* lm_csv_fast_number: the value of field [s, e) when it is up to 15
 * digits with at most one point between them (*v set, 1): the mantissa
 * and the power of ten are exact doubles, so one division rounds
 * correctly, as lm_parse_number does; 0 for anything else, which the
 * caller converts the general way. */
static const double lm_csv_pow10[16] = {1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,
                                        1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};

static inline int lm_csv_fast_number(const char *s, const char *e, double *v) {
  if (e <= s || e - s >= 16) return 0;
  uint64_t u = 0;
  int frac = -1;
  for (const char *p = s; p < e; p++) {
    if ((unsigned)(*p - '0') < 10) {
      u = u * 10 + (uint64_t)(*p - '0');
      if (frac >= 0) frac++;
    } else if (*p == '.' && frac < 0 && p > s) {
      frac = 0;
    } else {
      return 0;
    }
  }
  if (frac == 0) return 0; /* "5." */
  *v = frac < 0 ? (double)u : (double)u / lm_csv_pow10[frac];
  return 1;
}

#endif
