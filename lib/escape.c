/*
 * escape.c - make untrusted bytes (tensor names, metadata, paths) safe to
 * print on a terminal.
 *
 * A safetensors header is attacker-controlled JSON: a tensor named
 * "\u001b]0;pwned\u0007" or "\u009b2J" would otherwise retitle or clear
 * the terminal of whoever audits the file (terminal escape injection).
 * Everything that could start an escape sequence or
 * move the cursor is written as a visible escape instead:
 *   \n \t \\           newline, tab, backslash
 *   \xHH (lowercase)   every other C0 control, DEL, each byte of a C1
 *                      control (U+0080..U+009F as UTF-8), each byte that is
 *                      not part of well-formed UTF-8, and each byte of the
 *                      bidirectional and line-breaking format characters
 *                      (U+061C, U+200E/200F, U+2028/2029, U+202A..202E,
 *                      U+2066..2069), which
 *                      reorder or break a line ("Trojan Source",
 *                      CVE-2021-42574), and the invisible zero-width
 *                      space and BOM (U+200B, U+FEFF), which make two
 *                      names look alike.
 * Well-formed, printable UTF-8 is copied unchanged, so names in any script
 * stay readable.
 *
 * UTF-8 rules: RFC 3629 section 4 (https://www.rfc-editor.org/rfc/rfc3629)
 * and Unicode 15, Table 3-7 "Well-Formed UTF-8 Byte Sequences".
 */
#include "nanaudit.h"

#include <stdlib.h> /* malloc */
#include <string.h> /* memcpy */

size_t na_utf8_seq_len(const void *p, size_t n)
{
    const unsigned char *s = (const unsigned char *)p;
    if (n == 0)
        return 0;
    unsigned c = s[0];
    size_t len;
    unsigned lo = 0x80, hi = 0xbf; /* allowed range of the second byte */
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2; /* C0 and C1 would be overlong forms of ASCII */
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0; /* E0 80..9F: overlong */
        if (c == 0xed)
            hi = 0x9f; /* ED A0..BF: UTF-16 surrogates */
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90; /* F0 80..8F: overlong */
        if (c == 0xf4)
            hi = 0x8f; /* F4 90..: above U+10FFFF */
    } else {
        return 0; /* continuation byte, C0, C1, F5..FF */
    }
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    return len;
}

int na_escape_dangerous(const void *p, size_t len)
{
    const unsigned char *s = p;
    if (len == 2) /* U+0080..U+009F; U+061C ARABIC LETTER MARK */
        return (s[0] == 0xc2 && s[1] < 0xa0) || (s[0] == 0xd8 && s[1] == 0x9c);
    if (len == 3 && s[0] == 0xef && s[1] == 0xbb && s[2] == 0xbf)
        return 1; /* U+FEFF ZERO WIDTH NO-BREAK SPACE (BOM): invisible */
    if (len != 3 || s[0] != 0xe2)
        return 0;
    unsigned cp = ((unsigned)(s[1] & 0x3f) << 6) | (s[2] & 0x3f); /* low 12 bits */
    cp |= 0x2000;
    /* ZWSP, LRM, RLM; the zero-width (non-)joiner stays: emoji and
     * Indic or Persian words use it */
    return cp == 0x200b || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

int na_escape_has_dangerous(const char *s)
{
    size_t n = s ? strlen(s) : 0;
    for (size_t i = 0; i < n;) {
        size_t len = na_utf8_seq_len(s + i, n - i);
        if (len > 1 && na_escape_dangerous(s + i, len))
            return 1;
        i += len ? len : 1;
    }
    return 0;
}

/* Output cursor: writes while the whole piece fits, counts always. Once a
 * piece does not fit, nothing more is written, so the output is always a
 * prefix made of whole pieces (never half an escape or half a character). */
typedef struct esc_out {
    char *out;
    size_t cap, used, need;
    int full;
} esc_out_t;

static void put(esc_out_t *o, const void *piece, size_t len)
{
    if (!o->full && o->cap > 0 && o->used + len <= o->cap - 1) {
        memcpy(o->out + o->used, piece, len);
        o->used += len;
    } else {
        o->full = 1;
    }
    o->need += len;
}

static void put_hex(esc_out_t *o, unsigned char b)
{
    static const char digits[] = "0123456789abcdef";
    char e[4] = {'\\', 'x', digits[b >> 4], digits[b & 15]};
    put(o, e, sizeof e);
}

static void put_escaped_bytes(esc_out_t *o, const unsigned char *s, size_t len)
{
    char e[4 * 4];
    esc_out_t tmp = {e, sizeof e + 1, 0, 0, 0};
    for (size_t i = 0; i < len; i++)
        put_hex(&tmp, s[i]);
    put(o, e, tmp.used); /* one piece: a character is escaped whole or not at all */
}

size_t na_escape_text(const char *str, char *out, size_t cap)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t n = strlen((const char *)s);
    esc_out_t o = {out, out ? cap : 0, 0, 0, 0};
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        if (c == '\n') {
            put(&o, "\\n", 2);
        } else if (c == '\t') {
            put(&o, "\\t", 2);
        } else if (c == '\\') {
            put(&o, "\\\\", 2);
        } else if (c < 0x20 || c == 0x7f) {
            put_hex(&o, c);
        } else {
            size_t len = na_utf8_seq_len(s + i, n - i);
            if (len == 0) {
                put_hex(&o, c); /* one bad byte; resynchronise on the next */
            } else if (na_escape_dangerous(s + i, len)) {
                put_escaped_bytes(&o, s + i, len);
                i += len;
                continue;
            } else {
                put(&o, s + i, len);
                i += len;
                continue;
            }
        }
        i++;
    }
    if (o.cap > 0)
        o.out[o.used] = '\0';
    return o.need;
}

char *na_escape_text_dup(const char *s)
{
    char probe[1];
    size_t need = na_escape_text(s, probe, sizeof probe) + 1;
    char *buf = malloc(need);
    if (buf)
        na_escape_text(s, buf, need);
    return buf;
}

/* 1 when code point c is East Asian Wide or Fullwidth (two terminal
 * columns): the main blocks of Unicode's EastAsianWidth.txt (UAX #11),
 * Hangul Jamo, CJK and its symbols, Hiragana..Yi, Hangul syllables, CJK
 * compatibility, fullwidth forms, the supplementary ideographic planes,
 * and the emoji blocks terminals draw wide. */
static int wide(unsigned c)
{
    return (c >= 0x1100 && c <= 0x115F) || (c >= 0x2E80 && c <= 0x303E) ||
           (c >= 0x3041 && c <= 0x33FF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xA000 && c <= 0xA4CF) ||
           (c >= 0xAC00 && c <= 0xD7A3) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0xFE30 && c <= 0xFE4F) || (c >= 0xFF00 && c <= 0xFF60) ||
           (c >= 0xFFE0 && c <= 0xFFE6) || (c >= 0x1F300 && c <= 0x1F64F) ||
           (c >= 0x1F900 && c <= 0x1F9FF) || (c >= 0x20000 && c <= 0x3FFFD);
}

size_t na_text_columns(const char *s)
{
    size_t w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        unsigned c = *p++;
        int more = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
        c &= more == 3 ? 0x07 : more == 2 ? 0x0F : more == 1 ? 0x1F : 0x7F;
        for (; more > 0 && (*p & 0xC0) == 0x80; more--)
            c = (c << 6) | (*p++ & 0x3F);
        w += 1 + (size_t)wide(c);
    }
    return w;
}
