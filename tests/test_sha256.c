/* SPDX-License-Identifier: Apache-2.0 */
/* tests/test_sha256.c: SHA-256 (common/dpzo_sha256.c, libsodium's crypto_hash_sha256), the
 * checksum of profiles, claims, checkpoints and the run fingerprint. FIPS 180-4's example
 * messages (the NIST examples document: one block "abc", two blocks 448 bits, the 896-bit
 * message, a million 'a'), the empty message, and digests recorded from dpzo's earlier
 * hand-written SHA-256 (before issue 29 took it from libsodium): messages of lengths around
 * the padding boundaries, whole and fed in pieces, so that every checksum written before the
 * change still verifies. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "testutil.h"
#include "dpzo_sha256.h"

static void to_hex(const unsigned char d[32], char hex[65])
{
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static void test_fips_vectors(void **state)
{
    (void)state;
    static const struct {
        const char *msg, *hex;
    } v[] = {
        {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
        {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
        {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", /* 448 bits */
         "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
        {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopq"
         "klmnopqrlmnopqrsmnopqrstnopqrstu", /* 896 bits */
         "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
    };
    char hex[65];
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
        dpzo__sha256_hex(v[i].msg, strlen(v[i].msg), hex);
        assert_string_equal(hex, v[i].hex);
    }
    const size_t n = 1000000;
    char *a = malloc(n);
    assert_non_null(a);
    memset(a, 'a', n);
    dpzo__sha256_hex(a, n, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* the same million, incrementally in uneven pieces (empty ones included) */
    static const size_t pieces[] = {0, 1, 63, 64, 65, 7, 128, 1000, 55, 56, 0, 4096};
    const size_t np = sizeof pieces / sizeof *pieces;
    dpzo__sha256 s;
    dpzo__sha256_init(&s);
    size_t done = 0;
    for (size_t k = 0; done < n; k++) {
        size_t m = pieces[k % np] < n - done ? pieces[k % np] : n - done;
        dpzo__sha256_update(&s, a + done, m);
        done += m;
    }
    unsigned char d[32];
    dpzo__sha256_final(&s, d);
    to_hex(d, hex);
    assert_string_equal(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    free(a);
}

/* Recorded from the hand-written SHA-256 (commit 00211cd): bytes from splitmix64(seed 7),
 * the low byte of each draw, and the prefix of each length. */
static const struct {
    size_t n;
    const char *hex;
} RECORDED[] = {
    {1, "414a21e525a759e3ffeb22556be6348a92d5a13e40b61a0805f36f18c2909513"},
    {3, "fba8be1215bd374e1b526bebbfc5c9a952934d7be4d2b98943ce9e235e51291f"},
    {55, "519b243fead0dd093f263cefc442e8571f26c08e87e3746a8ee510da8c751a5b"},
    {56, "369ba22faa1bee61b3e9aac27513711bc4004c05d2397f9699814fdbc8476c6e"},
    {57, "ebc338525a4d19ef7f13ab94b1d97602777977576c0c5bf9477a2dd627508259"},
    {63, "3ac03a94c6399796dfda6704c0f2c92fea3c7e03f07c4b01a211b611ca4d4d0e"},
    {64, "04ac00cb61948e18f680d51b141bfb76c96e10150ecf8ceccb67ef8eb2581759"},
    {65, "ee06f52b97db3272502c84b869ef1a72d9066e443b4ffff456e1ca3be8723336"},
    {111, "93289fdb47f123a0167335ecb8055ca9880130adb6c2807df8fea0ee1354bd83"},
    {112, "870b4210937777b73583aac5b10bea7b6032f3c581feb812a00adef666cf25d5"},
    {119, "e1ff5618fd451ca72f7e289237b4bb823546a21772180c31bcc38f316f96f043"},
    {120, "9c38ba2b536469726a0fcf8751d15e7736478a257fa036913c3d36aa5c5f5ae6"},
    {127, "edacc47790fc07f3de8b2b5888b67ebbc2f277c8a12d7f547778663f96601f05"},
    {128, "1b5f2af5af282fde40132011aa75746a7574b563854707d1d4eea0f9a231260e"},
    {129, "b7f7692ef98bde30eba9b69c962f62d4c22c4c4284bd06867543a7c15bb7a2bc"},
    {1000, "0492d5aed571f2fd7d4a43382f4adaded2c9611acff5f8c0f6b8b231a4afec66"},
    {4097, "55ed7cb2d075e77f3acc0e8ad0bfb45519913c3774557278a7fe06d2a2a8c77b"},
};

static void test_recorded_digests(void **state)
{
    (void)state;
    unsigned char buf[4097];
    uint64_t rng = 7;
    for (size_t i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)test_splitmix(&rng);
    char hex[65];
    for (size_t i = 0; i < sizeof RECORDED / sizeof *RECORDED; i++) {
        dpzo__sha256_hex(buf, RECORDED[i].n, hex);
        assert_string_equal(hex, RECORDED[i].hex);
    }
    /* all 4097 bytes in pieces, crossing block boundaries in both directions */
    static const size_t pieces[] = {0, 1, 62, 1, 64, 200, 3, 1000, 2766};
    dpzo__sha256 s;
    dpzo__sha256_init(&s);
    size_t done = 0;
    for (size_t k = 0; k < sizeof pieces / sizeof *pieces; k++) {
        dpzo__sha256_update(&s, buf + done, pieces[k]);
        done += pieces[k];
    }
    assert_int_equal(done, sizeof buf);
    unsigned char d[32];
    dpzo__sha256_final(&s, d);
    to_hex(d, hex);
    assert_string_equal(hex, RECORDED[sizeof RECORDED / sizeof *RECORDED - 1].hex);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fips_vectors),
        cmocka_unit_test(test_recorded_digests),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
