/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/profile.h: noise profiles. One versioned, validated, self-describing JSON file
 * for every noise the trainer can add (Gaussian, LMO): the noise parameters, the
 * clipping bound they are scaled by, how the run is accounted, the epsilon it costs
 * (with the kind of bound that epsilon is), what the noise was chosen to optimise, who
 * wrote it, and a SHA-256 checksum of all of that. docs/profile.md documents every
 * field.
 *
 * Reading validates everything (format, schema version, every field's presence, type
 * and range, the consistency of the choices, the checksum) and fails with a message
 * that names the field. Verifying recomputes the guarantee from the parameters with
 * the accountant the profile names: a profile may claim more epsilon than needed,
 * never less. */
#ifndef DPZO_PROFILE_H
#define DPZO_PROFILE_H

#include <stddef.h>
#include <stdint.h>
#include "dpzo/status.h"
#include "dpzo/lmo.h"

#ifdef __cplusplus
extern "C" {
#endif

#define DPZO_PROFILE_FORMAT "dpzo-noise-profile"
#define DPZO_PROFILE_SCHEMA_VERSION 1

/* The work a per-step RDP curve may ask of dpzo_profile_verify (docs/profile.md, 2.2).
 * Where verification recomputes the curve (gaussian profiles; lmo profiles without
 * sampling, and with clip "l1" only with bound "mgf"; never in paper mode), each order
 * alpha counts alpha + DPZO_PROFILE_ORDER_WORK units and the curve at most
 * DPZO_PROFILE_MAX_WORK. The certified bound of an order costs time roughly in proportion
 * to alpha (the Poisson-sampled Gaussian: 14.5 s of CPU at alpha = 1e6, 1.4 s at 1e5 on a
 * 2-core Xeon) plus a part of its own (about 9 ms near alpha = 1, the exact LMO bound):
 * the costliest curves within the limit took 2.9 and 3.5 s there. Every reader and the
 * writer (dpzo_profile_validate) refuse more, before any work; dpzo profile gaussian's 28
 * orders count 8589.5. */
#define DPZO_PROFILE_ORDER_WORK 250.0
#define DPZO_PROFILE_MAX_WORK 100000.0

typedef enum { DPZO_NOISE_GAUSSIAN = 0, DPZO_NOISE_LMO = 1 } dpzo_noise_kind;

/* A profile in memory. Strings are NUL-terminated; "" stands for a JSON null where the
 * field may be null, NaN for a null number, 0 for a null count. */
typedef struct {
    /* ---- noise */
    dpzo_noise_kind kind;
    double noise_multiplier;   /* gaussian: s, the noise is N(0, (s C)^2) per coordinate */
    dpzo_lmo lmo;              /* lmo: the mixture parameters (exp_rate is a rate) */
    double sensitivity;        /* C: the clipping bound the accounting assumes (> 0) */
    char clip[16];             /* "l2" (gaussian); "scalar" or "l1" (lmo);
                                  "l2-paper" (lmo, accountant "paper" only) */
    unsigned queries_per_step; /* 1 (schema version 1) */
    /* ---- accounting */
    char accountant[16];       /* gaussian: "rdp", "pld", "prv"; lmo: "rdp", "pld", "paper" */
    char bound[16];            /* lmo: "best", "mgf", "exact", "pure"; gaussian: "" */
    char sampling[16];         /* "poisson", "wor", "none" */
    double sampling_rate;      /* q (wor: batch/dataset; none: 1) */
    uint64_t batch_size, dataset_size; /* wor only, else 0 */
    uint64_t steps;            /* T >= 1 */
    double delta;              /* in (0, 1) */
    char adjacency[16];        /* "add-remove" (poisson, none) or "replace-one" (wor) */
    double epsilon;            /* total epsilon of the run */
    char epsilon_bound[64];    /* "proven-upper" or, accountant "paper" only,
                                  "paper-claim (guarantee not established)" */
    double order;              /* RDP order achieving epsilon, NaN = null */
    double eps0;               /* lmo: per-step pure-DP epsilon of the unsampled mechanism
                                  (upper bound; clip l1: the vector bound), NaN = null */
    size_t n_orders;           /* per-step RDP curve of one step as accounted (after */
    double *orders, *rdp;      /* sampling); owned, malloc'ed; 0/NULL = null. +inf allowed */
    /* ---- objective of the noise search (has_objective 0 = null) */
    int has_objective;
    char objective[16];        /* "usefulness", "mean-abs", "variance", "max-epsilon" */
    double objective_value;    /* may be +inf */
    double usefulness_gamma, usefulness, mean_abs, variance; /* NaN = null; variance may be +inf */
    char grid[64];             /* name of the search grid, "" = null */
    long grid_index;           /* index in that grid, -1 = null */
    /* ---- provenance */
    char version[16];          /* dpzo version that wrote it */
    char command[512];         /* command line or program that made it */
    char created[32];          /* UTC, "YYYY-MM-DDTHH:MM:SSZ" ("" when writing: now) */
    /* ---- checksum (filled by dpzo_profile_to_json, checked by dpzo_profile_from_json) */
    char sha256[65];
} dpzo_profile;

/* Empty profile: numbers NaN or 0, strings "", queries_per_step 1, grid_index -1,
 * version DPZO_VERSION. */
void dpzo_profile_init(dpzo_profile *p);
/* Frees the owned arrays (the struct itself is the caller's); p may be reused after
 * dpzo_profile_init. */
void dpzo_profile_free(dpzo_profile *p);
/* Replaces the per-step RDP curve by a copy of (orders[i], rdp[i]), i < n (n 0: null). */
dpzo_status dpzo_profile_set_rdp(dpzo_ctx *ctx, dpzo_profile *p, const double *orders,
                                 const double *rdp, size_t n);

/* Every rule a profile file must satisfy (docs/profile.md), on the struct. */
dpzo_status dpzo_profile_validate(dpzo_ctx *ctx, const dpzo_profile *p);

/* Validates p, fills p->sha256 (and p->created with the current UTC time when it is
 * empty) and returns the pretty-printed JSON (malloc'ed: free() or dpzo_free() it; no trailing newline). Numbers
 * are written so that they read back as the same doubles. */
dpzo_status dpzo_profile_to_json(dpzo_ctx *ctx, dpzo_profile *p, char **json);
/* Parses and validates a profile (DPZO_EPARSE: not JSON, wrong format or schema version,
 * a missing, unknown, duplicated or mistyped field, a checksum mismatch; DPZO_EINVAL: a
 * value out of range or inconsistent). `out` needs no initialisation; on failure it
 * holds no allocation. */
dpzo_status dpzo_profile_from_json(dpzo_ctx *ctx, const char *json, dpzo_profile *out);
dpzo_status dpzo_profile_read_file(dpzo_ctx *ctx, const char *path, dpzo_profile *out);
/* dpzo_profile_to_json, then the file (with a trailing newline). */
dpzo_status dpzo_profile_write_file(dpzo_ctx *ctx, dpzo_profile *p, const char *path);

/* The checksum rule on any JSON object text: SHA-256 of its canonical form (the object
 * without its top-level "sha256" member, object keys sorted by byte value at every
 * level, no whitespace, numbers as docs/profile.md says). `canonical` may be NULL;
 * otherwise it receives the canonical text (malloc'ed). Does not validate fields. */
dpzo_status dpzo_profile_checksum(dpzo_ctx *ctx, const char *json, char sha256[65],
                                  char **canonical);

/* ---- Verification ---------------------------------------------------------------- */

typedef struct {
    int ok;                    /* 1: every recomputed bound is within what the profile
                                  states (recomputed <= stored * (1 + 1e-9) + 1e-12) */
    double epsilon_recomputed; /* proven upper bound from the parameters (NaN: paper) */
    double epsilon_lower;      /* pld / prv: the proven lower end there, else NaN */
    double order;              /* rdp: the order that achieved it, else NaN */
    double eps0_recomputed;    /* lmo with eps0 recorded: its proven upper bound, else NaN */
    size_t rdp_checked;        /* per-step RDP values recomputed (0: curve not checked) */
    double rdp_worst_ratio;    /* max recomputed / stored over those (NaN if none) */
    char detail[256];          /* one line: why it is (not) ok */
} dpzo_profile_check;

/* Recomputes the guarantee of p (validated first):
 *  - gaussian, rdp: dpzo_event_epsilon (improved conversion, continuous orders) of the
 *    sampled Gaussian composed T times; pld / prv: dpzo_pld_epsilon with the default
 *    discretisation; the per-step curve, if present, by dpzo_event_rdp_certified;
 *  - lmo, rdp: dpzo_lmo_epsilon with the profile's sensitivity, bound, sampling, steps
 *    and delta (vector_l1 for clip "l1"), which also gives eps0 (the vector bound for
 *    l1); the per-step curve (sampling "none" only; for l1 only with bound "mgf") by
 *    dpzo_lmo_rdp; lmo, pld: the same RDP bound, then dpzo_lmo_pld_epsilon at grid 1e-3
 *    (and 1e-4, 1e-5 while the stored epsilon is still below the bound): the recomputed
 *    epsilon is the smallest proven upper bound, epsilon_lower the PLD's largest lower end;
 *  - accountant "paper": nothing is proven; ok = 0.
 * A profile that does not verify is not an error: the status is DPZO_OK and out->ok 0. */
dpzo_status dpzo_profile_verify(dpzo_ctx *ctx, const dpzo_profile *p, dpzo_profile_check *out);
/* An lmo profile's accounting context as options of dpzo_lmo_epsilon (all its steps). */
dpzo_lmo_account_options dpzo_profile_lmo_options(const dpzo_profile *p);

/* ---- Gaussian profiles ------------------------------------------------------------ */

typedef struct {
    double epsilon, delta;    /* target (epsilon > 0, 0 < delta < 1) */
    const char *accountant;   /* "rdp" (NULL), "pld" or "prv" */
    double sensitivity;       /* C > 0 (0: 1) */
    const char *sampling;     /* "poisson" (NULL), "wor" or "none" */
    double sampling_rate;     /* poisson: q in (0, 1] */
    uint64_t batch_size, dataset_size; /* wor: 1 <= batch <= dataset */
    uint64_t steps;           /* T >= 1 */
    double tolerance;         /* relative tolerance on sigma (<= 0: 1e-6 rdp, 1e-4 pld/prv) */
    const char *command;      /* provenance (NULL: "dpzo_profile_gaussian") */
    const char *created;      /* provenance timestamp (NULL: now) */
} dpzo_profile_gaussian_spec;

/* The smallest noise multiplier meeting the target (Poisson: dpzo_calibrate_noise or
 * dpzo_calibrate_noise_pld; wor and none: bisection on the same proven bound), its
 * recomputed epsilon and, for rdp, the per-step RDP curve at 28 orders in [1.25, 512].
 * `out` needs no initialisation; free it with dpzo_profile_free. */
dpzo_status dpzo_profile_gaussian(dpzo_ctx *ctx, const dpzo_profile_gaussian_spec *spec,
                                  dpzo_profile *out);

/* The winner of an LMO search (dpzo_lmo_search with options `opts`, result `r`) as a noise
 * profile: what `dpzo lmo search -o` writes. grid_name: dpzo_lmo_grid_name of the searched
 * grid (NULL: "custom"); clip: "scalar", "l1" or, paper mode only, "l2-paper" (NULL: from
 * opts->account.vector_l1); command: the provenance line (NULL: none; cut to fit, marked
 * "..."); `created` is left empty (dpzo_profile_to_json stamps the time; writing validates
 * the whole profile). `out` needs no initialisation; free it with dpzo_profile_free. */
dpzo_status dpzo_profile_from_lmo_search(dpzo_ctx *ctx, const dpzo_lmo_search_options *opts,
                                         const dpzo_lmo_search_result *r, const char *grid_name,
                                         const char *clip, const char *command,
                                         dpzo_profile *out);

#ifdef __cplusplus
}
#endif
#endif
