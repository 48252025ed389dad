/* SPDX-License-Identifier: Apache-2.0 */
/* dpzo/audit_claim.h: claim files and claims whose mechanism is a noise profile or the
 * LMO noise. This part of the audit lives in noisesearch/ because it reads profiles and
 * knows the LMO noise; the checking itself is the accountant's (dpzo/audit.h).
 *
 * A claim file (docs/audit.md, section 2) is JSON: one claim
 *   {"format": "dpzo-claim", "name": ..., "source": ..., "mechanism": {...},
 *    "sampling": {...}, "steps": T | "epochs": E, "epsilon": e, "delta": d, ...}
 * or several, {"format": "dpzo-claims", "source": ..., "claims": [{...}, ...]}. In place of
 * "mechanism", "sampling" and "steps" a claim may state "event": an event written as JSON
 * (dpzo/event.h, dpzo_event_parse_json). A noise
 * profile (dpzo/profile.h) is also accepted as a claim: its noise, accounting and stored
 * epsilon. Every key is checked; an error names the file and the key. */
#ifndef DPZO_AUDIT_CLAIM_H
#define DPZO_AUDIT_CLAIM_H

#include "dpzo/audit.h"
#include "dpzo/lmo.h"
#include "dpzo/profile.h"

#ifdef __cplusplus
extern "C" {
#endif

/* EVENT: the claim states an event (docs/accountant.md section 7) in place of "mechanism",
 * "sampling" and "steps"; it is checked by epsilon(delta) of that event (docs/audit.md
 * section 2: "Claims about any event"). */
typedef enum {
    DPZO_CLAIM_NOISE_GAUSSIAN = 0,
    DPZO_CLAIM_NOISE_LMO = 1,
    DPZO_CLAIM_NOISE_EVENT = 2
} dpzo_claim_noise;

typedef enum {
    DPZO_CLAIM_ATTACK_NONE = 0,
    DPZO_CLAIM_ATTACK_COUNTS,
    DPZO_CLAIM_ATTACK_ONE_RUN
} dpzo_claim_attack;

typedef struct {
    char name[160];
    char source[640];          /* the citation: paper, table or section, or file */
    char note[800];
    dpzo_claim claim;
    dpzo_claim_noise noise;
    dpzo_lmo lmo;              /* noise LMO: the noise is C X (docs/lmo.md) */
    char profile[512];         /* the profile the mechanism came from ("" if none) */
    /* An attack on the same run (optional). */
    dpzo_claim_attack attack;
    dpzo_attack_counts counts;              /* ATTACK_COUNTS */
    uint64_t canaries, guesses, correct;    /* ATTACK_ONE_RUN */
    double attack_confidence;               /* default 0.95 */
    double attack_delta;                    /* default: the claim's delta */
    /* noise EVENT: the event's JSON text (compact), in the same allocation as the specs;
     * NULL otherwise. Only claim.epsilon and claim.delta of `claim` are then meaningful. */
    const char *event_json;
} dpzo_claim_spec;

void dpzo_claim_spec_init(dpzo_claim_spec *spec);

/* Parses a claim file's text. `dir` is the directory that relative profile paths are
 * resolved against (NULL: the current one); `what` names the file in messages. *specs is
 * malloc'ed (free() or dpzo_free() it). DPZO_EPARSE for malformed files, DPZO_EINVAL for values out of
 * range. */
dpzo_status dpzo_claims_from_json(dpzo_ctx *ctx, const char *json, const char *dir,
                                  const char *what, dpzo_claim_spec **specs, size_t *n);
dpzo_status dpzo_claims_read_file(dpzo_ctx *ctx, const char *path, dpzo_claim_spec **specs,
                                  size_t *n);
/* A profile as a claim: its noise, sampling, steps, delta and stored epsilon. */
dpzo_status dpzo_claim_spec_from_profile(dpzo_ctx *ctx, const dpzo_profile *p,
                                         dpzo_claim_spec *spec);

/* The LMO noise as an audit mechanism (scalar release of C X per step). `lmo` must stay
 * alive while `mech` is used. Bounds: upper = min(LMO RDP accountant, LMO PLD), lower =
 * the LMO PLD's lower end on a realised pair (Poisson and full batches: the mechanism
 * itself; fixed batches: the Poisson pair at q = B/n; shuffled: none). */
dpzo_status dpzo_lmo_audit_mechanism(dpzo_ctx *ctx, const dpzo_lmo *lmo,
                                     dpzo_audit_mechanism *mech);

/* The mechanism of a spec: NULL (Gaussian) or `buf` filled for the LMO noise. */
const dpzo_audit_mechanism *dpzo_claim_spec_mechanism(dpzo_ctx *ctx, const dpzo_claim_spec *spec,
                                                      dpzo_audit_mechanism *buf);

typedef struct {
    dpzo_audit_result audit;
    dpzo_claim_attack attack_kind;
    dpzo_attack_bound attack;     /* ATTACK_COUNTS */
    double attack_epsilon;        /* the attack's lower bound (NaN: no attack) */
    int attack_exceeds_upper;     /* 1: it exceeds the proven upper bound, so the run that was
                                     attacked is not the mechanism that was accounted (or the
                                     attack's own assumptions failed) */
} dpzo_claim_report;

/* Audits a spec: dpzo_audit_claim with its mechanism, and its attack if it has one. An event
 * claim: upper = the smallest of the certified RDP bound and the PLD and PRV upper ends of
 * epsilon(delta) of the event; lower = the PLD and PRV lower ends where the event's PLD is
 * of a pair of neighbouring datasets that occurs (Gaussian, Laplace, Poisson sampling,
 * compositions of them), else none (DPZO_AUDIT_NO_LOWER); the PLD grid is refined while
 * the claim is undecided, as for the other claims. */
dpzo_status dpzo_claim_spec_audit(dpzo_ctx *ctx, const dpzo_claim_spec *spec,
                                  const dpzo_audit_options *opts, dpzo_claim_report *out);

#ifdef __cplusplus
}
#endif
#endif
