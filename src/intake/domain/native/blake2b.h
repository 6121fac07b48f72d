/* Keyed BLAKE2b (RFC 7693), as hashlib.blake2b(key=..., digest_size=8) computes it: the
 * learning filter's token hashes (domain/spam/hashing.py), which stored statistics are
 * counted under, so never anything but the same function. After RFC 7693's appendix C. */

#ifndef INTAKE_BLAKE2B_H
#define INTAKE_BLAKE2B_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct {
    uint8_t b[128];
    uint64_t h[8];
    uint64_t t[2];
    size_t c;
} blake2b_state;

static const uint64_t blake2b_iv[8] = {
    0x6A09E667F3BCC908ULL, 0xBB67AE8584CAA73BULL, 0x3C6EF372FE94F82BULL,
    0xA54FF53A5F1D36F1ULL, 0x510E527FADE682D1ULL, 0x9B05688C2B3E6C1FULL,
    0x1F83D9ABFB41BD6BULL, 0x5BE0CD19137E2179ULL,
};

static const uint8_t blake2b_sigma[12][16] = {
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
    {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
    {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
    {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
    {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
    {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
    {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
    {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
    {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0},
    {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
    {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
};

#define B2B_ROTR(x, y) (((x) >> (y)) ^ ((x) << (64 - (y))))
#define B2B_G(a, b, c, d, x, y)                                                             \
    do {                                                                                    \
        v[a] = v[a] + v[b] + (x);                                                           \
        v[d] = B2B_ROTR(v[d] ^ v[a], 32);                                                   \
        v[c] = v[c] + v[d];                                                                 \
        v[b] = B2B_ROTR(v[b] ^ v[c], 24);                                                   \
        v[a] = v[a] + v[b] + (y);                                                           \
        v[d] = B2B_ROTR(v[d] ^ v[a], 16);                                                   \
        v[c] = v[c] + v[d];                                                                 \
        v[b] = B2B_ROTR(v[b] ^ v[c], 63);                                                   \
    } while (0)

static void
blake2b_compress(blake2b_state *s, int last)
{
    uint64_t v[16], m[16];
    for (int i = 0; i < 8; i++) {
        v[i] = s->h[i];
        v[i + 8] = blake2b_iv[i];
    }
    v[12] ^= s->t[0];
    v[13] ^= s->t[1];
    if (last) {
        v[14] = ~v[14];
    }
#if PY_LITTLE_ENDIAN
    memcpy(m, s->b, sizeof(m));
#else
    for (int i = 0; i < 16; i++) {
        uint64_t word = 0;
        for (int k = 7; k >= 0; k--) {
            word = (word << 8) | s->b[8 * i + k];
        }
        m[i] = word;
    }
#endif
    for (int i = 0; i < 12; i++) {
        const uint8_t *r = blake2b_sigma[i];
        B2B_G(0, 4, 8, 12, m[r[0]], m[r[1]]);
        B2B_G(1, 5, 9, 13, m[r[2]], m[r[3]]);
        B2B_G(2, 6, 10, 14, m[r[4]], m[r[5]]);
        B2B_G(3, 7, 11, 15, m[r[6]], m[r[7]]);
        B2B_G(0, 5, 10, 15, m[r[8]], m[r[9]]);
        B2B_G(1, 6, 11, 12, m[r[10]], m[r[11]]);
        B2B_G(2, 7, 8, 13, m[r[12]], m[r[13]]);
        B2B_G(3, 4, 9, 14, m[r[14]], m[r[15]]);
    }
    for (int i = 0; i < 8; i++) {
        s->h[i] ^= v[i] ^ v[i + 8];
    }
}

static void
blake2b_update(blake2b_state *s, const uint8_t *in, size_t length)
{
    for (size_t i = 0; i < length; i++) {
        if (s->c == 128) {
            s->t[0] += s->c;
            if (s->t[0] < s->c) {
                s->t[1]++;
            }
            blake2b_compress(s, 0);
            s->c = 0;
        }
        s->b[s->c++] = in[i];
    }
}

/* An 8-byte digest keyed by `key` (at most 64 bytes). */
static void
blake2b_init_keyed(blake2b_state *s, const uint8_t *key, size_t key_length)
{
    for (int i = 0; i < 8; i++) {
        s->h[i] = blake2b_iv[i];
    }
    s->h[0] ^= 0x01010000ULL ^ ((uint64_t)key_length << 8) ^ 8;
    s->t[0] = s->t[1] = 0;
    s->c = 0;
    for (size_t i = key_length; i < 128; i++) {
        s->b[i] = 0;
    }
    if (key_length) {
        blake2b_update(s, key, key_length);
        s->c = 128;
    }
}

/* The keyed state with its key block compressed, for a message that follows it: what
 * every non-empty token's hash starts from, worked out once per key. */
static void
blake2b_after_key(blake2b_state *s)
{
    s->t[0] += 128;
    blake2b_compress(s, 0);
    s->c = 0;
}

/* The digest's 8 bytes read as a little-endian signed integer: the first state word. */
static int64_t
blake2b_final64(blake2b_state *s)
{
    s->t[0] += s->c;
    if (s->t[0] < s->c) {
        s->t[1]++;
    }
    while (s->c < 128) {
        s->b[s->c++] = 0;
    }
    blake2b_compress(s, 1);
    return (int64_t)s->h[0];
}

#endif
