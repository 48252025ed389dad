#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The adversarial campaign of issue 15, re-runnable over the whole dpzo CLI (docs/fuzzing.md).

    python3 scripts/campaign.py [--bin build-asan/bin/dpzo] [--quick | --full]
                                [--timeout 60] [--budget SECONDS] [--jobs N]
                                [--json FILE] [--only CMD] [--keep]

Python 3 standard library only (the bounds phase also imports mpmath). It runs, each with a per-command timeout and all in a
private temporary folder:

  numeric    for every subcommand, every numeric option its --help names, set to extreme
             values (0, -0, 5e-324, 1e-320, 1e-300, 1e-17, 1e18, 1e308, inf, nan, -1,
             huge integers, empty, garbage) on top of a working command line;
  files      every option or argument that reads a file (profiles, configurations,
             claims, grids, schedules, scores, checkpoints) given a malformed one
             (truncated, flipped bytes, huge, empty, /dev/zero, a FIFO, a directory);
  outputs    every output path (-o, --metrics, --checkpoint, --markdown) as a symbolic
             link to a regular file, a FIFO, a directory, with a planted symbolic link at
             the temporary name, then checks what happened to the files around it
             (never real /dev nodes: /dev/null is only checked to still be a character
             device after the run);
  environment  `dpzo train --verbose --json` under bad or odd values of the variables that
             choose the BLAS kernels (OPENBLAS_CORETYPE empty, unknown, lower case, 300
             characters, with a newline; DPZO_BLAS_SELECT empty, "00", "no", 5,000
             characters): the run must finish, and its "blas" object must say that a
             non-empty OPENBLAS_CORETYPE was respected (nothing switched) and that only
             DPZO_BLAS_SELECT=0 kept OpenBLAS's choice (issue 27);
  rehashed   training checkpoints edited and given a correct checksum again (a DP-ZOPO run's
             mask that selects nothing, a negative, NaN or infinite multiplier, theta NaN,
             a step past the plan): `dpzo train --resume` must refuse each with exit 2 and
             leave the metrics file as it was (issue 29: the mask is the step object's,
             restored with its checks);
  unwritable every output that cannot be written (a directory, a missing folder,
             /dev/full, a read-only folder, a FIFO with no reader) refused with exit 2
             before the work (issue 28, item 6);
  exitcodes  the exit-status rule of docs/cli.md across every command (issue 28, item
             11): 0 done, 1 a valid request without an answer, 2 a request that cannot be
             carried out as given, with a message on stderr. For each command line: it
             works; an unknown option, an option twice or without its value, each value
             option left out, set to x, -1 and 0; standard output at /dev/full; then
             writes that fail after the check (RLIMIT_FSIZE), missing inputs, fractional
             --memory-limit values (kept, and named as given when a plan exceeds them),
             options that exclude each other and each command's own "no";
  soundness  targeted cross-checks: the issue's reproducers, sigma doubling at many
             points (epsilon must not rise), the proven epsilon against an independent
             lower bound (one step of the sampled Gaussian: its hockey-stick divergence
             in closed form), audit and PLD intervals (lower <= upper);
  bounds     "delta upper bounds against an exact referee" (issue 28): delta(eps) and
             epsilon(delta) at huge sigma, tiny q and large eps, where the exact delta is
             positive but may be far below the smallest double (1.18e-32104799 at sigma
             1000, q 1e-4, eps 3), from the rdp, pld and prv accountants, through the CLI's
             text and --json and the Python package; every upper bound is checked to be
             >= the truth and every lower bound <= it against an mpmath referee (the exact
             hockey-stick divergence of one Poisson-subsampled Gaussian step, add/remove
             adjacency; for T > 1 steps the one-step value, a lower bound on the truth, so
             only upper bounds are checked). Needs mpmath (python3-mpmath); the Python
             cases need the library beside --bin (../lib/libdpzo.so).
  nul, bigint, pyoverflow  issue 28, items 8 to 10: NUL in strings and paths, integers
             beyond 2^53 (digits only, in every number; and, in the integer fields, written
             with an exponent or a fraction that rounds to another integer), Python numbers
             beyond the double range;
  work       "profiles that ask for unbounded work" (issue 28, item 7): profiles whose
             per-step RDP curve (checksum recomputed) asks verification for more than
             the documented work (one order 1e6, 40 near it, 1000 or 10000 orders) must
             be refused at once with exit 2 by `profile verify`, `profile show`, `train`,
             `lmo info` and dpzo.Profile.load; curves within the limit (dpzo's own, one
             order 99750, 398 orders near 1) must be accepted. 30 s per run at most.

  events     events written as JSON (`--event FILE` of epsilon, delta and rdp, and a claim's
             "event" for `dpzo audit`; issue 30): for each bad-input kind of docs/accountant.md
             section 7 (an unknown key or type, a wrong type, a missing field, a value out
             of range or not finite, a count beyond 2^53 or with a fraction, a repeated key,
             "Unsupported", nesting deeper than 64 events, arrays over 2^20 entries) under
             every accountant: exit 2 with a message naming the JSON path; and each kind of
             event accepted (exit 0);

  tight      the tight accountants at tiny noise (issue 28, item 4): the sampling bound
             delta(eps) <= 1 - (1 - q)^T through rdp, pld and prv (epsilon 0 at or above it at
             sigma 0, 0.0049367 and 0.03; +inf just below it and delta(1) equal to it at sigma
             0; calibrate answering sigma 0 with no tight_to), the PLD at its default grid
             where a fixed grid is refused (sigma 0.01, q 0.004: must bracket the exact
             5274.19572), a memory refusal predicted within 10 s (it took 35 s), and a
             fallback's reason quoting the RDP bound it reports;
  monotone   epsilon(delta) non-increasing (issue 28, item 4): pld and prv on a ladder of 10
             deltas from 1e-14 to 1e-3 for seeded Poisson and fixed-batch cases, and the
             issue's pair (sigma 14.907054457228305, B 111 of 1095118, one step, delta 2.28e-9
             and 4.53e-8).

Each run is classified:
  handled   exit 0 or 2 in time, no sanitizer report, every check passed;
  crashed   killed by a signal, exit 134, or sanitizer / assertion text on stderr;
  hung      past the timeout, or past the memory limit;
  wrong     a soundness or file-safety check failed (the reason is printed);
  bad-exit  exit 1 on bad input (bad input is exit 2; a refusal for lack of memory may
            exit 1), or 0 on input that must be refused (nan, empty, garbage, -1).
It prints counts per category and per command, and the reproducing command line of every
run that was not handled; --json FILE writes every run. Exit status: 0 when every run was
handled, 1 otherwise, 2 on a usage error.
"""
import argparse
import concurrent.futures
import hashlib
import json
import math
import os
import random
import re
import resource
import shlex
import shutil
import signal
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# ---- values ------------------------------------------------------------------------------

FULL_VALUES = ["0", "-0", "5e-324", "1e-320", "1e-300", "1e-17", "1e-4", "1e18", "1e308",
               "inf", "-inf", "nan", "-1", "18446744073709551616", "99999999999999999999999",
               "", "garbage", "1e99999", "0x10"]
QUICK_VALUES = ["0", "5e-324", "1e-300", "1e-17", "1e18", "1e308", "inf", "nan", "-1",
                "18446744073709551616", "", "garbage"]
# Values no numeric option accepts: exit 0 on them is a bad exit.
MUST_REFUSE = {"nan", "", "garbage", "-1", "-inf"}

SANITIZER = re.compile(r"ERROR: AddressSanitizer|ERROR: LeakSanitizer|runtime error:|"
                       r"UndefinedBehaviorSanitizer|Assertion .* failed|assertion failed|"
                       r"SUMMARY: (Address|Undefined|Leak)Sanitizer|\bAborted\b|"
                       r"double free|corrupted size|stack smashing")
RSS_LIMIT = re.compile(r"hard rss limit exhausted|allocator is out of memory|"
                       r"requested allocation size .* exceeds maximum supported size")

# A documented refusal for lack of resources (a memory limit, an allocation that failed
# under the campaign's own limit): exit 1 is right there.
RESOURCE = re.compile(r"memory limit|out of memory|"
                      # and a target no value meets (DPZO_EINFEASIBLE: exit 1 by design); a
                      # target of 0 ("cannot be met") is a value out of range since issue 28,
                      # item 11 (exit 2)
                      r"no grid point meets|already spends|no sampling rate .* reaches")

# ---- an independent lower bound ------------------------------------------------------------


def log_phi_bar(z):
    if z < 37.0:
        v = 0.5 * math.erfc(z / math.sqrt(2.0))
        return math.log(v) if v > 0 else -math.inf
    z2 = z * z
    return (-0.5 * z2 - math.log(z) - 0.5 * math.log(2 * math.pi)
            + math.log1p(-1 / z2 + 3 / z2 ** 2 - 15 / z2 ** 3))


def log_hockey_stick(q, s, eps):
    """log H_eps(P||Q), P = (1-q)N(0,s^2) + qN(1,s^2), Q = N(0,s^2): one step of the
    Poisson-sampled Gaussian (or, at q = B/n, of sampling without replacement under
    replace-one; q = 1: no sampling). A lower bound on delta(eps) of any run containing
    the step. -inf when it proves nothing."""
    try:
        if not (0 < q <= 1 and 0 < s < math.inf and 0 <= eps < math.inf):
            return -math.inf
        L = eps + math.log1p(-(1 - q) * math.exp(-eps)) - math.log(q)
        a, b = s * L - 0.5 / s, s * L + 0.5 / s
        t1 = math.log(q) + log_phi_bar(a)
        t2 = math.log(q) + L + log_phi_bar(b)
        if not t2 < t1:
            return -math.inf
        return t1 + math.log(-math.expm1(t2 - t1))
    except (ValueError, OverflowError, ZeroDivisionError):
        return -math.inf


def one_step_violation(q, s, eps, delta):
    """A reason string when (eps, delta) is claimed although one step spends more."""
    try:
        q, s, eps, delta = float(q), float(s), float(eps), float(delta)
    except (TypeError, ValueError):
        return None
    if not (delta > 0) or not math.isfinite(eps):
        return None
    lh = log_hockey_stick(q, s, eps)
    if lh > math.log(delta) + 0.01:
        return ("epsilon %.17g at delta %.3g claimed proven, but one step (q %.6g, sigma %.6g) "
                "alone has delta(eps) >= %.3g" % (eps, delta, q, s, math.exp(lh)))
    return None


# ---- a run -------------------------------------------------------------------------------


class Campaign:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.tmp = tempfile.mkdtemp(prefix="dpzo-campaign-")
        self.results = []
        self.lock = threading.Lock()
        self.t0 = time.time()
        self.skipped = 0
        with open(self.bin, "rb") as f:
            # clang links the runtime in (its strings are there); gcc links libasan.so, and
            # only the instrumentation's entry point names it
            data = f.read()
            self.asan = b"AddressSanitizer" in data or b"__asan_init" in data
        self.env = dict(os.environ)
        self.env["ASAN_OPTIONS"] = ("detect_leaks=1:abort_on_error=0:hard_rss_limit_mb=%d:"
                                    "allocator_may_return_null=1" % args.memory_mb)
        self.env["UBSAN_OPTIONS"] = "print_stacktrace=1:halt_on_error=1"
        self.counter = 0

    # -- running --

    def over_budget(self):
        return self.args.budget and time.time() - self.t0 > self.args.budget

    def run(self, cmd, argv, *, refuse=False, allow1=False, check=None, timeout=None,
            stdin_fifo_reader=None, setup=None, after=None, kind="numeric", cwd=None,
            env=None, prog=None, stdout_path=None, fsize=None):
        """Runs dpzo argv (a list, without the program; prog: another program, a list),
        classifies and records it. stdout_path: its standard output goes there (/dev/full)
        instead of a pipe; fsize: files it writes are limited to that many bytes
        (RLIMIT_FSIZE, SIGXFSZ ignored, so that the write fails with EFBIG)."""
        if self.over_budget():
            with self.lock:
                self.skipped += 1
            return None
        timeout = timeout or self.args.timeout
        if setup:
            setup()
        full = (prog or [self.bin]) + argv

        def limit():
            os.setsid()
            if not self.asan:  # ASan reserves terabytes of address space: hard_rss_limit_mb
                lim = self.args.memory_mb << 20
                resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
            if fsize is not None:  # the soft limit only: a gnuplot wrapper may lift it
                hard = resource.getrlimit(resource.RLIMIT_FSIZE)[1]
                resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, hard))
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)

        t = time.time()
        sink = open(stdout_path, "wb") if stdout_path else None
        try:
            p = subprocess.Popen(full, stdin=subprocess.DEVNULL,
                                 stdout=sink if sink else subprocess.PIPE,
                                 stderr=subprocess.PIPE, env=env if env is not None else self.env,
                                 cwd=cwd or self.tmp,
                                 preexec_fn=limit)
        except OSError as e:
            self.record(cmd, kind, argv, "crashed", None, 0.0, "cannot start: %s" % e, "")
            return None
        finally:
            if sink:
                sink.close()
        try:
            out, err = p.communicate(timeout=timeout)
            rc = p.returncode
        except subprocess.TimeoutExpired:
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            out, err = p.communicate()
            rc = None
        secs = time.time() - t
        out = (out or b"").decode("utf-8", "replace")
        err = err.decode("utf-8", "replace")
        reason = ""
        if rc is None:
            cat, reason = "hung", "no answer within %g s" % timeout
        elif RSS_LIMIT.search(err):
            cat, reason = "hung", "memory beyond %d MiB" % self.args.memory_mb
        elif rc < 0 or rc == 134 or rc >= 128 or SANITIZER.search(err):
            m = SANITIZER.search(err)
            cat = "crashed"
            reason = ("signal %d" % -rc if rc is not None and rc < 0 else
                      "exit %s" % rc) + (": " + first_line_with(err, m.group(0)) if m else "")
        elif rc == 1 and not allow1 and not RESOURCE.search(err):
            cat, reason = "bad-exit", "exit 1: " + last_line(err)
        elif rc == 0 and refuse:
            cat, reason = "bad-exit", "exit 0 on input that must be refused"
        elif rc not in (0, 1, 2):
            cat, reason = "bad-exit", "exit %d" % rc
        else:
            cat = "handled"
        if cat == "handled" and check is not None:
            try:
                why = check(rc, out, err)
            except Exception as e:  # a check that cannot parse the output is not a finding
                why = None
                reason = "check skipped: %s" % e
            if why:
                cat, reason = "wrong", why
        if after is not None:
            try:
                why = after(rc)
            except OSError as e:
                why = "cannot inspect the files around it: %s" % e
            if why and cat in ("handled", "bad-exit"):
                cat, reason = "wrong", why
        self.record(cmd, kind, argv, cat, rc, secs, reason, err, prog)
        return rc, out, err

    def record(self, cmd, kind, argv, cat, rc, secs, reason, err, prog=None):
        line = " ".join(shlex.quote(a) for a in (prog or [self.bin]) + argv)
        with self.lock:
            self.results.append({"command": cmd, "kind": kind, "argv": argv, "line": line,
                                 "category": cat, "exit": rc, "seconds": round(secs, 3),
                                 "reason": reason, "stderr_tail": err[-600:] if cat != "handled" else ""})
            self.counter += 1
            if self.args.verbose or (cat != "handled" and not self.args.quiet):
                print("[%5d %6.0fs] %-9s %-16s %s%s" % (self.counter, time.time() - self.t0, cat,
                                                      cmd, line[:200],
                                                      ("\n                 " + reason[:300]) if reason else ""),
                      flush=True)

    # -- files --

    def path(self, name):
        return os.path.join(self.tmp, name)

    def write(self, name, data):
        p = self.path(name)
        mode = "wb" if isinstance(data, bytes) else "w"
        with open(p, mode) as f:
            f.write(data)
        return p

    def fifo(self, name):
        p = self.path(name)
        if os.path.lexists(p):
            os.unlink(p)
        os.mkfifo(p)
        return p


def first_line_with(text, needle):
    for line in text.splitlines():
        if needle in line:
            return line.strip()[:200]
    return needle


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else ""


def parse_json(out):
    out = out.strip()
    if not out:
        return None
    try:
        return json.loads(out)
    except ValueError:
        # one object per line (several claims) or trailing text
        objs = []
        for line in out.splitlines():
            line = line.strip()
            if line.startswith("{") or line.startswith("["):
                try:
                    objs.append(json.loads(line))
                except ValueError:
                    pass
        return objs or None


def num(x):
    if isinstance(x, (int, float)):
        return float(x)
    if isinstance(x, str):
        try:
            return float(x)
        except ValueError:
            return None
    return None


# ---- the command lines --------------------------------------------------------------------

LMO = ["--gamma-weight", "0.9", "--gamma-shape", "1", "--gamma-scale", "2", "--exp-weight", "0.1",
       "--exp-rate", "5", "--uniform-weight", "0.5", "--uniform-low", "1", "--uniform-high", "2"]


def bases(c):
    """Working command lines, one per (sub)command: (name, argv, options not numeric)."""
    claim = ["--noise-multiplier", "1.1", "--sampling-rate", "0.004", "--steps", "1000",
             "--epsilon", "3", "--delta", "1e-5"]
    return [
        ("epsilon", ["epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "0.004",
                     "--steps", "1000", "--delta", "1e-5", "--json"]),
        ("epsilon-wor", ["epsilon", "--noise-multiplier", "1.1", "--batch-size", "256",
                         "--dataset-size", "60000", "--steps", "1000", "--delta", "1e-5", "--json"]),
        ("epsilon-pld", ["epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "0.004",
                         "--steps", "1000", "--delta", "1e-5", "--accountant", "pld", "--grid",
                         "1e-3", "--memory-limit", "512", "--json"]),
        ("epsilon-prv", ["epsilon", "--noise-multiplier", "1.1", "--sampling-rate", "0.004",
                         "--steps", "1000", "--delta", "1e-5", "--accountant", "prv",
                         "--memory-limit", "512", "--json"]),
        ("delta", ["delta", "--noise-multiplier", "1.1", "--sampling-rate", "0.004", "--steps",
                   "1000", "--epsilon", "2", "--json"]),
        ("rdp", ["rdp", "--noise-multiplier", "1.1", "--sampling-rate", "0.004", "--orders",
                 "1.5,2,8,32", "--steps", "10", "--json"]),
        ("calibrate", ["calibrate", "--epsilon", "3", "--delta", "1e-5", "--sampling-rate",
                       "0.004", "--steps", "1000", "--json"]),
        ("calibrate-steps", ["calibrate", "--solve-for", "steps", "--epsilon", "3", "--delta",
                             "1e-5", "--sampling-rate", "0.004", "--noise-multiplier", "1.1",
                             "--json"]),
        ("calibrate-rate", ["calibrate", "--solve-for", "sampling-rate", "--epsilon", "3",
                            "--delta", "1e-5", "--steps", "1000", "--noise-multiplier", "1.1",
                            "--json"]),
        ("calibrate-pld", ["calibrate", "--epsilon", "3", "--delta", "1e-5", "--sampling-rate",
                           "0.004", "--steps", "1000", "--accountant", "pld", "--grid", "1e-3",
                           "--memory-limit", "512", "--json"]),
        ("profile-gaussian", ["profile", "gaussian", "--epsilon", "3", "--delta", "1e-5",
                              "--steps", "1000", "--sampling-rate", "0.004", "--json"]),
        ("lmo-info", ["lmo", "info"] + LMO + ["--json"]),
        ("lmo-rdp", ["lmo", "rdp"] + LMO + ["--orders", "2,8", "--bound", "mgf", "--json"]),
        ("lmo-epsilon", ["lmo", "epsilon"] + LMO + ["--delta", "1e-5", "--steps", "100",
                                                    "--sampling-rate", "0.01", "--bound", "mgf",
                                                    "--json"]),
        ("lmo-epsilon-pld", ["lmo", "epsilon"] + LMO + ["--delta", "1e-5", "--steps", "10",
                                                        "--accountant", "pld", "--pld-grid",
                                                        "1e-2", "--json"]),
        ("lmo-sample", ["lmo", "sample"] + LMO + ["-n", "5", "--seed", "1"]),
        ("lmo-search", ["lmo", "search", "--epsilon", "3", "--delta", "1e-5", "--grid",
                        "@GRID", "--steps", "10", "--sampling-rate", "0.01", "--bound", "mgf",
                        "--threads", "1", "--json"]),
        ("audit", ["audit"] + claim + ["--grid", "1e-3", "--no-calibrate", "--json"]),
        ("audit-attack", ["audit", "attack", "--tp", "90", "--fp", "10", "--tn", "90", "--fn",
                          "10", "--json"]),
        ("audit-one-run", ["audit", "one-run", "--canaries", "1000", "--guesses", "100",
                           "--correct", "90", "--json"]),
        ("plot-noise", ["plot", "noise"] + LMO + ["-o", "@OUT.svg"]),
        ("plot-epsilon-steps", ["plot", "epsilon-steps"] + claim + ["--grid", "1e-2", "--points",
                                                                   "4", "-o", "@OUT.svg"]),
    ]


# options that are not numbers (enumerations, names, files): not in the numeric sweep
NOT_NUMERIC = {"orders", "conversion", "accountant", "bound", "clip", "objective", "sampling",
               "adjacency", "pipeline", "name", "created", "solve-for", "config", "resume",
               "metrics", "checkpoint", "schedule", "scores", "profile", "markdown", "json",
               "help", "o", "output", "full-batch", "no-prv", "no-calibrate", "no-plots", "brief"}


def help_options(c, argv):
    """Value options named in the command's --help (two words of the subcommand at most)."""
    words = [a for a in argv[:2] if not a.startswith("-")]
    rc = subprocess.run([c.bin] + words + ["--help"], capture_output=True, text=True,
                        env=c.env, timeout=60)
    text = rc.stdout + rc.stderr
    opts = set(re.findall(r"--([a-z][a-z0-9-]+)[ =](?:[A-Za-z][A-Za-z0-9.]*)", text))
    if "-n N" in text:
        opts.add("n")
    return sorted(o for o in opts if o not in NOT_NUMERIC)


def with_option(argv, opt, value):
    """argv with --opt set to value (replaced when present, else appended)."""
    flag = ("-" if len(opt) == 1 else "--") + opt
    out = list(argv)
    if flag in out:
        i = out.index(flag)
        out[i + 1] = value
    else:
        out += [flag, value]
    return out


# ---- checks on outputs ----------------------------------------------------------------------


def opt(argv, name, default=None):
    flag = "--" + name
    return argv[argv.index(flag) + 1] if flag in argv else default


def check_epsilon(argv):
    def check(rc, out, err):
        if rc != 0 or "--json" not in argv:
            return None
        j = parse_json(out)
        if not isinstance(j, dict):
            return None
        eps = num(j.get("epsilon_upper", j.get("epsilon")))
        lo = num(j.get("epsilon_lower"))
        if eps is None or math.isnan(eps) or eps < 0:
            return "proven epsilon %r is NaN or negative" % j.get("epsilon")
        if lo is not None and not math.isnan(lo) and lo > eps:
            return "lower end %r above the proven upper bound %r" % (lo, eps)
        s = num(opt(argv, "noise-multiplier"))
        d = num(opt(argv, "delta"))
        if opt(argv, "batch-size") and opt(argv, "dataset-size"):
            b, n = num(opt(argv, "batch-size")), num(opt(argv, "dataset-size"))
            q = b / n if b and n else None
        else:
            q = num(opt(argv, "sampling-rate"))
        if None in (s, d, q) or opt(argv, "schedule") or num(opt(argv, "steps", "1")) in (None, 0):
            return None
        return one_step_violation(q, s, eps, d)
    return check


def check_delta(argv):
    def check(rc, out, err):
        if rc != 0:
            return None
        j = parse_json(out)
        if not isinstance(j, dict):
            return None
        dl = num(j.get("delta_upper", j.get("delta")))
        if dl is None or not (0 <= dl <= 1):
            return "proven delta %r outside [0, 1]" % j.get("delta")
        s, e, q = (num(opt(argv, k)) for k in ("noise-multiplier", "epsilon", "sampling-rate"))
        T = num(opt(argv, "steps", "1"))
        if None in (s, e, q, T) or dl >= 1 or T < 1 or opt(argv, "schedule"):
            return None
        lh = log_hockey_stick(q, s, e)
        if lh > math.log(dl) + 0.01 if dl > 0 else lh > -math.inf:
            return "delta %.3g at epsilon %g is below one step's %.3g" % (dl, e, math.exp(lh))
        return None
    return check


def check_calibrate(argv):
    def check(rc, out, err):
        if rc != 0:
            return None
        j = parse_json(out)
        if not isinstance(j, dict):
            return None
        e = num(j.get("epsilon"))
        target = num(opt(argv, "epsilon"))
        if e is None or math.isnan(e) or e < 0:
            return "certified epsilon %r" % j.get("epsilon")
        if target is not None and e > target * (1 + 1e-12):
            return "certified epsilon %r above the target %r" % (e, target)
        s = num(j.get("noise_multiplier", opt(argv, "noise-multiplier")))
        q = num(j.get("sampling_rate", opt(argv, "sampling-rate")))
        d = num(opt(argv, "delta"))
        T = num(j.get("steps", opt(argv, "steps", "1")))
        if None in (s, q, d, target, T) or T < 1:
            return None
        return one_step_violation(q, s, target, d)
    return check


def check_audit(argv):
    def check(rc, out, err):
        if rc != 0:
            return None
        j = parse_json(out)
        items = j if isinstance(j, list) else [j]
        found = []
        for it in items:
            if isinstance(it, dict):
                found += [it] + [c for c in it.get("claims", []) if isinstance(c, dict)]
        for c in found:
            lo, up = num(c.get("lower", c.get("epsilon_lower"))), num(c.get("upper", c.get("epsilon_upper")))
            b = c.get("bounds")
            if isinstance(b, dict):
                lo, up = num(b.get("lower")), num(b.get("upper"))
            if lo is not None and up is not None and (math.isnan(up) or lo > up):
                return "audit interval [%r, %r]: lower above upper (or NaN)" % (lo, up)
        return None
    return check


def check_lmo_pld(argv):
    def check(rc, out, err):
        if rc != 0:
            return None
        j = parse_json(out)
        if not isinstance(j, dict):
            return None
        lo, up, rdp = num(j.get("pld_lower", j.get("epsilon_lower"))), num(j.get("epsilon")), num(j.get("rdp_epsilon"))
        if up is None or math.isnan(up) or up < 0:
            return "proven epsilon %r" % j.get("epsilon")
        if lo is not None and lo > up:
            return "lower end %r above the proven %r" % (lo, up)
        if lo is not None and rdp is not None and lo > rdp * (1 + 1e-9):
            return "PLD lower end %r above the RDP accountant's proven %r" % (lo, rdp)
        return None
    return check


def checker(name, argv):
    if name.startswith("epsilon"):
        return check_epsilon(argv)
    if name == "delta":
        return check_delta(argv)
    if name.startswith("calibrate"):
        return check_calibrate(argv)
    if name == "audit":
        return check_audit(argv)
    if name.startswith("lmo-epsilon"):
        return check_lmo_pld(argv)
    return None


# ---- the phases --------------------------------------------------------------------------------


def prepare(c):
    grid = c.write("grid.json", '{"gamma_weight": [0.9, 0.3], "exp_weight": [0.1], '
                   '"uniform_weight": [0.5, 0.25], "gamma": [[1, 2], [3, 2]], "exp_rate": [5], '
                   '"uniform": [[1, 2], [2, 4]]}')
    c.files = {"grid": grid}
    rc = subprocess.run([c.bin, "profile", "gaussian", "--epsilon", "3", "--delta", "1e-5",
                         "--steps", "100", "--sampling-rate", "0.01", "-o", c.path("profile.json")],
                        capture_output=True, env=c.env, timeout=300, cwd=c.tmp)
    c.files["profile"] = c.path("profile.json") if rc.returncode == 0 else None
    for src, name in (("docs/examples/claim-lmo-sst2.json", "claim.json"),
                      ("docs/audits/tf-privacy-mnist.json", "claims.json"),
                      ("docs/examples/schedule.json", "schedule.json")):
        p = os.path.join(ROOT, src)
        if os.path.exists(p):
            shutil.copy(p, c.path(name))
            c.files[name.split(".")[0]] = c.path(name)
    # a small private run (DPZero on 512 rows of Fashion-MNIST, logistic regression)
    if c.files["profile"]:
        c.write("train.json", json.dumps({
            "algorithm": "dpzero", "model": "mlp:", "steps": 100, "batch_size": 5.12,
            "lr": 0.001, "clip": 1.0, "seed": 1, "eval_every": 100, "data": {"train_subset": 512},
            "profile": "profile.json"}))
        c.files["train"] = c.path("train.json")
    c.write("scores.json", '{"in": [0.9, 0.8, 0.7, 0.95], "out": [0.1, 0.2, 0.3, 0.4]}')
    c.files["scores"] = c.path("scores.json")
    c.files["event"] = c.write("event.json", json.dumps(EVENT_OK))


def subst(c, argv):
    out = []
    for a in argv:
        if a == "@GRID":
            a = c.files["grid"]
        elif a.startswith("@OUT"):
            a = c.path("out" + a[4:])
        out.append(a)
    return out


# OPENBLAS_CORETYPE values that any x86-64 CPU can run (no kernels wider than SSE4.2: a
# user's choice is respected, so AVX-512 kernels here would stop an AVX2-only machine)
BLAS_CORETYPES = [None, "", "bogus", "prescott", "Nehalem", "x" * 300, "Prescott\n"]
BLAS_SELECTS = [None, "0", "", "1", "00", "no", "y" * 5000]


def check_blas(coretype, select):
    """The "blas" object of `dpzo train --verbose --json` against the rules of dpzo/blas.h."""
    def check(rc, out, err):
        if rc != 0:
            return None
        b = parse_json(out).get("blas")
        if not isinstance(b, dict):
            return "no \"blas\" object in --verbose --json"
        for k in ("library", "kernels", "chosen_by_openblas", "cpu", "reason"):
            if not isinstance(b.get(k), str) or not b[k]:
                return "blas.%s missing or empty" % k
        user = coretype is not None and coretype != ""
        if user and (b["switched"] or not b["reason"].startswith("OPENBLAS_CORETYPE=")):
            return "OPENBLAS_CORETYPE=%r set, but: %s" % (coretype[:20], b["reason"])
        if not user and select == "0" and (b["switched"] or "DPZO_BLAS_SELECT=0" not in b["reason"]):
            return "DPZO_BLAS_SELECT=0 set, but: %s" % b["reason"]
        if select not in (None, "0") and "DPZO_BLAS_SELECT" in b["reason"]:
            return "DPZO_BLAS_SELECT=%r is not 0, but it kept OpenBLAS's choice" % select[:20]
        if b["switched"] and b["kernels"] == b["chosen_by_openblas"]:
            return "switched, yet the same kernels: %s" % b["reason"]
        return None
    return check


def phase_environment(c, pool):
    futs = []
    if not c.files.get("train"):
        return futs
    argv = ["train", "--config", c.files["train"], "--steps", "2", "--verbose", "--json"]
    for coretype in BLAS_CORETYPES:
        for select in BLAS_SELECTS:
            env = {k: v for k, v in c.env.items()
                   if k not in ("OPENBLAS_CORETYPE", "DPZO_BLAS_SELECT")}
            if coretype is not None:
                env["OPENBLAS_CORETYPE"] = coretype
            if select is not None:
                env["DPZO_BLAS_SELECT"] = select
            futs.append(pool.submit(c.run, "train-blas-env", argv, env=env, kind="environment",
                                    check=check_blas(coretype, select)))
    return futs


def phase_numeric(c, pool, values):
    futs = []
    for name, argv in bases(c):
        argv = subst(c, argv)
        futs.append(pool.submit(c.run, name, argv, check=checker(name, argv), kind="base"))
        for o in help_options(c, argv):
            used = ("--" + o) in argv or ("-" + o) in argv
            for v in values:
                a = with_option(argv, o, v)
                # an option the command line does not use may be ignored: only crashes, hangs
                # and wrong answers count there, not exit 0 on a bad value
                futs.append(pool.submit(c.run, name, a, refuse=used and v in MUST_REFUSE,
                                        check=checker(name, a)))
    return futs


def malformed_variants(c, name, src, quick):
    """(label, path, timeout) of malformed versions of the file src."""
    data = open(src, "rb").read() if src and os.path.exists(src) else b"{}"
    rnd = random.Random(name)
    out = [("truncated", c.write(name + ".trunc", data[: len(data) // 2]), None),
           ("empty", c.write(name + ".empty", b""), None)]
    for k in range(2 if quick else 8):
        b = bytearray(data)
        for _ in range(1 + k):
            if b:
                b[rnd.randrange(len(b))] = rnd.randrange(256)
        out.append(("flipped%d" % k, c.write("%s.flip%d" % (name, k), bytes(b)), None))
    out.append(("not-json", c.write(name + ".bin", bytes(range(256)) * 4), None))
    out.append(("deep", c.write(name + ".deep", b"[" * 200000 + b"]" * 200000), None))
    huge = c.path(name + ".huge")
    if not os.path.exists(huge):
        with open(huge, "wb") as f:  # 80 MiB of JSON whitespace: over every reader's cap
            f.write(data[:1] if data[:1] == b"{" else b"{")
            f.write(b" " * (80 << 20))
            f.write(b"}")
    out.append(("huge", huge, None))
    out.append(("dev-zero", "/dev/zero", None))
    out.append(("fifo", c.fifo(name + ".fifo"), c.args.fifo_timeout))
    d = c.path(name + ".dir")
    os.makedirs(d, exist_ok=True)
    out.append(("directory", d, None))
    out.append(("missing", c.path(name + ".missing"), None))
    return out


def phase_files(c, pool, quick):
    F = c.files
    mk = []  # (command name, file kind, source file, argv with @F)
    claim = ["--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps", "10",
             "--epsilon", "3", "--delta", "1e-5"]
    mk.append(("profile-show", "profile", F.get("profile"), ["profile", "show", "@F"]))
    mk.append(("profile-verify", "profile", F.get("profile"), ["profile", "verify", "@F"]))
    mk.append(("lmo-info", "profile", F.get("profile"), ["lmo", "info", "--profile", "@F"]))
    mk.append(("audit-file", "claim", F.get("claim"), ["audit", "@F", "--grid", "1e-2",
                                                       "--no-calibrate", "--no-prv"]))
    mk.append(("audit-file", "claims", F.get("claims"), ["audit", "@F", "--grid", "1e-2",
                                                         "--no-calibrate", "--no-prv", "--only", "1"]))
    mk.append(("epsilon-schedule", "schedule", F.get("schedule"),
               ["epsilon", "--schedule", "@F", "--delta", "1e-5"]))
    mk.append(("epsilon-event", "event", F.get("event"),
               ["epsilon", "--event", "@F", "--delta", "1e-5"]))
    mk.append(("rdp-event", "event", F.get("event"), ["rdp", "--event", "@F", "--orders", "2,8"]))
    mk.append(("lmo-search", "grid", F.get("grid"),
               ["lmo", "search", "--epsilon", "3", "--delta", "1e-5", "--grid", "@F", "--steps",
                "10", "--sampling-rate", "0.01", "--bound", "mgf", "--threads", "1"]))
    mk.append(("lmo-search-ckpt", "search-checkpoint", None,
               ["lmo", "search", "--epsilon", "3", "--delta", "1e-5", "--grid", F["grid"],
                "--steps", "10", "--sampling-rate", "0.01", "--bound", "mgf", "--threads", "1",
                "--checkpoint", "@F"]))
    mk.append(("audit-attack", "scores", F.get("scores"), ["audit", "attack", "--scores", "@F"]))
    mk.append(("audit-one-run", "scores", F.get("scores"),
               ["audit", "one-run", "--scores", "@F", "--positive", "2"]))
    mk.append(("train", "config", F.get("train"), ["train", "--config", "@F", "--steps", "1"]))
    if F.get("train"):
        mk.append(("train-resume", "train-checkpoint", None,
                   ["train", "--config", F["train"], "--until", "2", "--resume", "@F"]))
    mk.append(("plot-file", "claim", F.get("claim"), ["plot", "epsilon-steps", "@F", "--points",
                                                      "3", "--grid", "1e-2", "-o",
                                                      c.path("plot-file.svg")]))
    futs = []
    for name, kind, src, argv in mk:
        if src is None and kind not in ("search-checkpoint", "train-checkpoint"):
            continue
        if kind == "train-checkpoint":
            ck = c.path("train.ckpt")
            subprocess.run([c.bin, "train", "--config", F["train"], "--until", "1",
                            "--checkpoint", ck], env=c.env, capture_output=True, timeout=600,
                           cwd=c.tmp)
            src = ck if os.path.exists(ck) else None
        if kind == "search-checkpoint":
            # a valid checkpoint first, then malformed ones (the search resumes or refuses)
            ck = c.path("search.ckpt")
            subprocess.run([c.bin] + [a if a != "@F" else ck for a in argv], env=c.env,
                           capture_output=True, timeout=600, cwd=c.tmp)
            src = ck if os.path.exists(ck) else None
        for label, path, to in malformed_variants(c, kind.replace("-", "_"), src, quick):
            if label == "dev-zero" and kind.endswith("checkpoint"):
                continue  # a resumed run also writes checkpoints: never at a real device
            a = [path if x == "@F" else x for x in argv]
            # copy so that a writer (the search checkpoint) cannot change the shared variant
            futs.append(pool.submit(c.run, name, a, kind="file:" + label, timeout=to,
                                    allow1=name in ("profile-verify",)))
    return futs


# ---- issue 30: events written as JSON ----------------------------------------------------------

def _ev_gauss(s=1.1):
    return {"type": "Gaussian", "noise_multiplier": s}


EVENT_OK = {"type": "SelfComposed", "count": 100,
            "event": {"type": "PoissonSampled", "sampling_probability": 0.01,
                      "event": _ev_gauss()}}


def _nested(depth):
    e = _ev_gauss(8.0)
    for _ in range(depth - 1):
        e = {"type": "SelfComposed", "count": 1, "event": e}
    return e


def event_cases():
    """(label, JSON text, needle of the message) of events every command must refuse with
    exit 2; the needle is the JSON path the message must name."""
    j = json.dumps
    sgm = lambda inner: {"type": "SelfComposed", "count": 10,
                         "event": {"type": "PoissonSampled", "sampling_probability": 0.01,
                                   "event": inner}}
    cases = [
        ("unknown-key", j(sgm({"type": "Gaussian", "noise_multiplier": 1, "sigma": 1})),
         'event.event.event: unknown key "sigma"'),
        ("inner-not-event", j({"type": "SelfComposed", "count": 3, "inner": _ev_gauss()}),
         'unknown key "inner"'),
        ("unknown-type", j(sgm({"type": "Gauss", "noise_multiplier": 1})),
         'unknown event type "Gauss"'),
        ("no-type", j(sgm({"noise_multiplier": 1})), 'event.event.event: missing "type"'),
        ("missing-field", j(sgm({"type": "Gaussian"})), 'needs "noise_multiplier"'),
        ("string-number", j(sgm({"type": "Gaussian", "noise_multiplier": "1.1"})),
         "event.event.event.noise_multiplier must be a number"),
        ("bool-number", j(sgm({"type": "Gaussian", "noise_multiplier": True})),
         "event.event.event.noise_multiplier must be a number"),
        ("negative", j(sgm(_ev_gauss(-1))), "event.event.event.noise_multiplier must be >= 0"),
        ("infinite", j(sgm(_ev_gauss(1))).replace('"noise_multiplier": 1', '"noise_multiplier": 1e999'),
         "must be finite"),
        ("nan-literal", j(sgm(_ev_gauss(1))).replace('"noise_multiplier": 1', '"noise_multiplier": NaN'),
         "not valid JSON"),
        # numbers JSON's grammar refuses and cJSON's strtod took (the fuzzer's 03, issue 30)
        ("leading-zero", j(sgm(_ev_gauss(1))).replace('"noise_multiplier": 1', '"noise_multiplier": 01'),
         "not written as JSON writes numbers"),
        ("bare-point", j(sgm(_ev_gauss(1))).replace('"noise_multiplier": 1', '"noise_multiplier": 1.'),
         "not written as JSON writes numbers"),
        ("q-above-1", j({"type": "PoissonSampled", "sampling_probability": 1.5, "event": _ev_gauss()}),
         "event.sampling_probability must be in [0, 1]"),
        ("count-fraction", j({"type": "SelfComposed", "count": 2.5, "event": _ev_gauss()}),
         "event.count must be a whole number"),
        ("count-negative", j({"type": "SelfComposed", "count": -3, "event": _ev_gauss()}),
         "event.count must be a whole number in [0, 2^53]"),
        ("count-beyond-2^53", j({"type": "SelfComposed", "count": 9007199254740993,
                                 "event": _ev_gauss()}), "9007199254740993"),
        ("count-inexact", '{"type": "SelfComposed", "count": 9.007199254740993e15, '
                          '"event": {"type": "Gaussian", "noise_multiplier": 1}}',
         "event.count must be a whole number"),
        ("repeated-key", '{"type": "Gaussian", "noise_multiplier": 1, "noise_multiplier": 2}',
         'key "noise_multiplier" appears twice'),
        ("unsupported", j({"type": "Composed", "events": [_ev_gauss(), {"type": "Unsupported"}]}),
         "event.events[1]: a Unsupported event"),
        ("wor-batch-above-n", j({"type": "SampledWithoutReplacement", "source_dataset_size": 10,
                                 "sample_size": 11, "event": _ev_gauss()}), "event:"),
        ("rr-no-buckets", j({"type": "RandomizedResponse", "noise_parameter": 0.5,
                             "num_buckets": 0}), "event.num_buckets"),
        ("tree-empty", j({"type": "SingleEpochTreeAggregation", "noise_multiplier": 1,
                          "step_counts": []}), "event.step_counts must not be empty"),
        # issue 30: one tree without restarts whose sensitivity program would need tables
        # beyond dpzo's limits (refused at once, no allocation), a missing field, a negative
        ("tree-multi-limits", j({"type": "MultiEpochTreeAggregation", "noise_multiplier": 1,
                                 "total_steps": 1e9, "max_participation": 10,
                                 "min_separation": 1e6}), "beyond dpzo's limits"),
        ("tree-multi-wide", j({"type": "MultiEpochTreeAggregation", "noise_multiplier": 1,
                               "total_steps": 9007199254740992, "max_participation": 9007199254740992,
                               "min_separation": 0}), "beyond dpzo's limits"),
        ("tree-multi-missing", j({"type": "MultiEpochTreeAggregation", "noise_multiplier": 1,
                                  "total_steps": 100, "max_participation": 2}),
         "min_separation"),
        ("tree-multi-negative", j({"type": "MultiEpochTreeAggregation", "noise_multiplier": 1,
                                   "total_steps": 100, "max_participation": -2,
                                   "min_separation": 3}), "event.max_participation"),
        ("depth-bomb", j(_nested(65)), "events nested deeper than 64"),
        ("json-depth-bomb", "[" * 200000 + "]" * 200000, "not valid JSON"),
        ("huge-array", '{"type": "SingleEpochTreeAggregation", "noise_multiplier": 1, '
                       '"step_counts": [' + ",".join(["1"] * ((1 << 20) + 1)) + "]}",
         "event.step_counts: more than 1048576 entries"),
        ("huge-composition", '{"type": "Composed", "events": [' +
         ",".join(['{"type": "NoOp"}'] * ((1 << 20) + 1)) + "]}",
         "more than 1048576"),
        ("not-an-object", "[1, 2, 3]", "event must be an event object"),
    ]
    return cases


def event_good():
    """(label, event) that every command must account (exit 0)."""
    return [
        ("sgm", EVENT_OK),
        ("laplace", {"type": "Laplace", "noise_multiplier": 2}),
        ("zcdp", {"type": "SelfComposed", "count": 10, "event": {"type": "ZCDp", "rho": 0.01}}),
        ("tree", {"type": "SingleEpochTreeAggregation", "noise_multiplier": 5,
                  "step_counts": [1000, 10]}),
        ("tree-multi", {"type": "MultiEpochTreeAggregation", "noise_multiplier": 7,
                        "total_steps": 2000, "max_participation": 6, "min_separation": 313}),
        # the fuzzer's: 10^13 steps, xi 3 (the trace once walked every empty block: a hang)
        ("tree-multi-huge-T", {"type": "MultiEpochTreeAggregation", "noise_multiplier": 7,
                               "total_steps": 10000000000998, "max_participation": 6,
                               "min_separation": 3}),
        ("tree-multi-one", {"type": "MultiEpochTreeAggregation", "noise_multiplier": 3,
                            "total_steps": 10**15, "max_participation": 5,
                            "min_separation": 10**15}),
        ("rr", {"type": "RandomizedResponseDpEvent", "noise_parameter": 0.5, "num_buckets": 3}),
        ("dlap", {"type": "DiscreteLaplace", "noise_parameter": 0.5, "sensitivity": 1}),
        # a component of sensitivity 1e-300: the loss is almost flat, its root beyond any
        # double (the PRV refused until the root search stepped past y's rounding)
        ("mog-flat", {"type": "SelfComposed", "count": 3, "event": {
            "type": "MixtureOfGaussians", "standard_deviation": 1,
            "sensitivities": [5, 1e-300], "sampling_probs": [0.5, 0.5]}}),
        ("mog", {"type": "SelfComposed", "count": 20, "event": {
            "type": "MixtureOfGaussians", "standard_deviation": 1.5,
            "sensitivities": [0, 0.5, 1], "sampling_probs": [0.9, 0.07, 0.03]}}),
        ("wor", {"type": "SelfComposed", "count": 10, "event": {
            "type": "SampledWithoutReplacement", "source_dataset_size": 1000, "sample_size": 10,
            "event": _ev_gauss()}}),
        ("composed", {"type": "Composed", "events": [EVENT_OK, {"type": "NoOp"},
                                                     {"type": "Laplace", "noise_multiplier": 5}]}),
        ("deep-64", _nested(64)),
    ]


def phase_events(c, pool, quick):
    futs = []
    accountants = [["--accountant", "rdp"], ["--accountant", "pld", "--grid", "1e-3"],
                   ["--accountant", "prv"]]
    commands = [("epsilon", ["epsilon", "--event", "@F", "--delta", "1e-5"]),
                ("delta", ["delta", "--event", "@F", "--epsilon", "1"])]
    for label, text, needle in event_cases():
        path = c.write("event-%s.json" % label, text)
        runs = [(n, a + acc) for n, a in commands for acc in (accountants[:1] if quick else accountants)]
        runs.append(("rdp", ["rdp", "--event", "@F", "--orders", "2,8"]))
        for name, argv in runs:
            a = [path if x == "@F" else x for x in argv]
            futs.append(pool.submit(c.run, name + "-event", a, kind="event:" + label,
                                    check=exit_rule({2}, needle)))
        # the same event as a claim's "event" (docs/audit.md 2.2): refused with its path
        # (text that is not JSON makes the whole claim file not JSON)
        claim = c.write("event-claim-%s.json" % label,
                        '{"format": "dpzo-claim", "epsilon": 1, "delta": 1e-5, "event": '
                        + text + "}")
        cneedle = "claim file" if needle == "not valid JSON" else needle
        futs.append(pool.submit(c.run, "audit-event", ["audit", claim, "--no-prv"],
                                kind="event-claim:" + label, check=exit_rule({2}, cneedle)))
    for label, ev in event_good():
        path = c.write("event-ok-%s.json" % label, json.dumps(ev))
        claim = c.write("event-claim-ok-%s.json" % label, json.dumps(
            {"format": "dpzo-claim", "event": ev, "epsilon": 1, "delta": 1e-5}))
        futs.append(pool.submit(c.run, "audit-event", ["audit", claim, "--no-prv"],
                                kind="event-claim-ok:" + label, check=exit_rule({0})))
        for acc in (accountants[:1] if quick else accountants):
            a = ["epsilon", "--event", path, "--delta", "1e-5"] + acc
            futs.append(pool.submit(c.run, "epsilon-event", a, kind="event-ok:" + label,
                                    check=exit_rule({0})))
    # finite privacy loss distributions at coarse grids (issue 30): one randomized response
    # or discrete Laplace release has a closed-form epsilon; every grid's upper end must stay
    # at or above it, lower end below (grid 0.5 at tilt 200 read 2e-11 below before the
    # read-off bounded its exponents' rounding)
    for label, ev, exact in finite_pld_cases():
        path = c.write("event-exact-%s.json" % label, json.dumps(ev))
        for grid in (["--grid", "1"], ["--grid", "0.5"], ["--grid", "0.1"], []):
            for acc in (["--accountant", "pld"] + grid, ["--accountant", "prv"]):
                for delta, truth in exact:
                    a = ["epsilon", "--event", path, "--delta", repr(delta), "--json"] + acc
                    futs.append(pool.submit(c.run, "epsilon-event", a, kind="event-exact:" + label,
                                            check=check_exact_epsilon(truth)))
    return futs


def finite_pld_cases():
    """(label, event, [(delta, exact epsilon)]) of single releases with closed forms: randomized
    response, epsilon = L + log(1 - delta / a) (a = 1 - p + p/k, L = log(a k / p)); the discrete
    Laplace mechanism of sensitivity 1, epsilon = t + log(1 - delta (1 + e^-t))."""
    out = []
    for p, k in ((0.3, 10), (0.5, 2), (0.9, 3)):
        a = 1 - p + p / k
        big_l = math.log(a * k / p)
        out.append(("rr-%g-%d" % (p, k),
                    {"type": "RandomizedResponse", "noise_parameter": p, "num_buckets": k},
                    [(d, max(0.0, big_l + math.log1p(-d / a))) for d in (0.5, 0.1, 1e-3) if d < a]))
    for t in (0.2, 1.0, 3.0):
        out.append(("dlap-%g" % t, {"type": "DiscreteLaplace", "noise_parameter": t, "sensitivity": 1},
                    [(d, max(0.0, t + math.log1p(-d * (1 + math.exp(-t))))) for d in (0.4, 0.1, 1e-3)
                     if d * (1 + math.exp(-t)) < 1]))
    return out


def check_exact_epsilon(truth):
    """An epsilon query's proven ends around a closed-form truth (1e-13 relative and 1e-15
    absolute for the truth's own rounding)."""
    def check(rc, out, err):
        if rc != 0:
            return "exit %d: %s" % (rc, last_line(err))
        j = parse_json(out)
        if not isinstance(j, dict):
            return "no JSON object on stdout"
        hi = num(j.get("epsilon_upper", j.get("epsilon")))
        lo = num(j.get("epsilon_lower"))
        if hi is None or not hi >= truth * (1 - 1e-13) - 1e-15:
            return "proven epsilon %r below the exact %r" % (hi, truth)
        if lo is not None and not lo <= truth * (1 + 1e-13) + 1e-15:
            return "lower end %r above the exact %r" % (lo, truth)
        return None
    return check


# ---- issue 29: training checkpoints edited with their checksum redone ----------------------

CKPT_HEADER = 208  # trainer/train_internal.h DPZO_CKPT_HEADER: bytes before theta


def phase_rehashed(c, pool):
    """A DP-ZOPO run's checkpoint (theta, the stage's anchor, the mask: P floats each) edited,
    its SHA-256 (the last 32 bytes, over everything before) recomputed: every variant must be
    refused by `train --resume` with exit 2, the metrics file untouched."""
    if not c.files.get("profile"):
        return []
    cfg = json.loads(open(c.files["train"]).read())
    cfg.update({"algorithm": "dpzopo", "metrics": "rehashed.jsonl"})
    conf = c.write("rehashed.train.json", json.dumps(cfg))
    ck = c.path("rehashed.ckpt")
    subprocess.run([c.bin, "train", "--config", conf, "--until", "3", "--checkpoint", ck],
                   env=c.env, capture_output=True, timeout=600, cwd=c.tmp)
    if not os.path.exists(ck):
        c.record("train-resume-rehashed", "rehashed", ["train"], "wrong", None, 0.0,
                 "no DP-ZOPO checkpoint to edit", "")
        return []
    good = open(ck, "rb").read()
    P = (len(good) - CKPT_HEADER - 32) // 4 // 3
    mask = CKPT_HEADER + 8 * P
    f32 = lambda x: struct.pack("<f", x)
    edits = {
        "mask-zero": [(mask, b"\0" * 4 * P)],
        "mask-negative": [(mask + 4 * (P - 1), f32(-1.0))],
        "mask-nan": [(mask, f32(float("nan")))],
        "mask-inf": [(mask, f32(float("inf")))],
        "theta-nan": [(CKPT_HEADER, f32(float("nan")))],
        "step-past-plan": [(56, struct.pack("<Q", 10 ** 6))],  # magic, version, algorithm,
        # fingerprint, n_params, then the step (trainer/checkpoint.c's header_codec)
    }
    metrics = c.path("rehashed.jsonl")
    futs = []
    for label, changes in edits.items():
        b = bytearray(good)
        for off, data in changes:
            b[off:off + len(data)] = data
        body = bytes(b[:-32])
        path = c.write("rehashed.%s.ckpt" % label, body + hashlib.sha256(body).digest())
        mlen = os.path.getsize(metrics) if os.path.exists(metrics) else -1

        def kept(rc, out, err, mlen=mlen):
            now = os.path.getsize(metrics) if os.path.exists(metrics) else -1
            return None if now == mlen else "the metrics file went from %d to %d bytes" % (
                mlen, now)
        futs.append(pool.submit(c.run, "train-resume-rehashed",
                                ["train", "--config", conf, "--until", "5", "--resume", path],
                                kind="rehashed:" + label, refuse=True, check=kept))
    return futs


# ---- issue 28, items 8 to 10: NUL in strings and paths, integers beyond 2^53, Python values
# that overflow. Every case must be refused (exit 2, or dpzo.Error in Python).

def _json_readers(c):
    """(command name, file kind, source file, argv with @F) of every JSON reader."""
    F = c.files
    out = [("profile-verify", "profile", F.get("profile"), ["profile", "verify", "@F"]),
           ("audit-file", "claim", F.get("claim"), ["audit", "@F", "--grid", "1e-2",
                                                    "--no-calibrate", "--no-prv"]),
           ("audit-file", "claims", F.get("claims"), ["audit", "@F", "--grid", "1e-2",
                                                      "--no-calibrate", "--no-prv", "--only",
                                                      "1"]),
           ("epsilon-schedule", "schedule", F.get("schedule"),
            ["epsilon", "--schedule", "@F", "--delta", "1e-5"]),
           ("lmo-search", "grid", F.get("grid"),
            ["lmo", "search", "--epsilon", "3", "--delta", "1e-5", "--grid", "@F", "--steps",
             "10", "--sampling-rate", "0.01", "--bound", "mgf", "--threads", "1"]),
           ("audit-one-run", "scores", F.get("scores"),
            ["audit", "one-run", "--scores", "@F", "--positive", "2"]),
           ("train", "config", F.get("train"), ["train", "--config", "@F", "--steps", "1"])]
    return [m for m in out if m[2] is not None]


def phase_nul(c, pool, quick):
    """NUL in strings and paths: the escape \u0000 at the end of each string (key or value)
    of each reader's file, a raw NUL byte in a string, NUL and bytes after the value."""
    futs = []
    for name, kind, src, argv in _json_readers(c):
        data = open(src, "rb").read()
        ends = [m.end(1) for m in re.finditer(rb'"((?:[^"\\]|\\.)*)"', data)]
        picks = ends[:4] if quick else ends
        variants = []
        for k, e in enumerate(picks):
            variants.append(("escape%d" % k, data[:e] + b"\\u0000 && x" + data[e:]))
        if ends:
            variants.append(("raw-nul", data[:ends[0]] + b"\0x" + data[ends[0]:]))
        variants.append(("nul-after", data.rstrip() + b"\n\0garbage"))
        variants.append(("bytes-after", data.rstrip() + b" x"))
        for label, b in variants:
            path = c.write("%s.%s.%s.json" % (kind, name, label), b)
            a = [path if x == "@F" else x for x in argv]
            futs.append(pool.submit(c.run, name, a, kind="nul:" + label, refuse=True,
                                    allow1=name == "profile-verify"))
    # a path with NUL cannot reach the CLI (execve); the Python package's paths are checked in
    # phase_pyoverflow's sibling below
    futs += _python_cases(c, pool, "nul-path", [
        "dpzo.Profile.load(P + '\\0x')",
        "dpzo.Profile.load(P).save(T + '/out.json\\0x')",
        "dpzo.audit([P + '\\0x'])",
        "dpzo.lmo.lmo_grid(G + '\\0x')",
        "dpzo.Profile.from_json(open(P).read() + '\\0junk')",
    ])
    return futs


# The integer fields of each reader's file (docs/files.md): there, and only there, a number
# written with an exponent or a fraction whose double is another whole number is refused (a
# double field takes the nearest double).
INTEGER_KEYS = {
    "profile": {"schema_version", "queries_per_step", "steps", "batch_size", "dataset_size",
                "grid_index"},
    "config": {"steps", "seed", "eval_every", "train_subset", "public_size", "validation_size",
               "queries",
               "threads", "checkpoint_every", "first_steps", "count", "k"},
    "claim": {"steps", "batch_size", "dataset_size", "effective_batch_size", "tp", "fp", "tn",
              "fn", "canaries", "guesses", "correct"},
    "schedule": {"steps"},
}
INTEGER_KEYS["claims"] = INTEGER_KEYS["claim"]


def _rehash_profile(data):
    """A profile's text (bytes) with its sha256 recomputed from its content by the documented
    rule, the numbers' spelling kept: only the edit is wrong, as a forger would make it."""
    import hashlib
    obj = json.loads(data)
    old = obj.pop("sha256", None)
    if not isinstance(old, str):
        return data
    new = hashlib.sha256(_reference_rule().canonical(obj).encode("utf-8")).hexdigest()
    return data.replace(old.encode(), new.encode())


def _check_inexact_integer(rc, out, err):
    if rc == 2 and "not exactly an integer" in err:
        return None
    return "exit %s, not refused as an inexact integer: %s" % (rc, last_line(err))


def phase_bigint(c, pool, quick):
    """Integers beyond 2^53: each integer literal of each reader's file, one at a time, set
    to 9007199254740993 (2^53 + 1, which a double reads as 2^53) or its negative; and each
    integer field's literal written with an exponent, 9.007199254740993e15 (read as 2^53),
    or with a fraction that rounds away, N.00000000000000001 (read as N); profiles
    re-checksummed."""
    futs = []
    for name, kind, src, argv in _json_readers(c):
        data = open(src, "rb").read()
        spans = [m.span(1) for m in re.finditer(rb'[:\[,]\s*(-?\d+)\s*(?=[,}\]\n])', data)]
        for k, (a0, a1) in enumerate(spans[:6] if quick else spans):
            for label, lit in (("p", b"9007199254740993"), ("m", b"-9007199254740993")):
                path = c.write("%s.%s.big%d%s.json" % (kind, name, k, label),
                               data[:a0] + lit + data[a1:])
                a = [path if x == "@F" else x for x in argv]
                futs.append(pool.submit(c.run, name, a, kind="bigint:%d%s" % (k, label),
                                        refuse=True, allow1=name == "profile-verify"))
        keys = INTEGER_KEYS.get(kind, set())
        fields = [(m.group(1).decode(), m.span(2), m.group(2)) for m in
                  re.finditer(rb'"(\w+)"\s*:\s*(-?\d+)\s*(?=[,}\]\n])', data)
                  if m.group(1).decode() in keys]
        for k, (key, (a0, a1), digits) in enumerate(fields):
            for label, lit in (("e", b"9.007199254740993e15"),
                               ("f", digits + b".00000000000000001")):
                b = data[:a0] + lit + data[a1:]
                if kind == "profile":
                    b = _rehash_profile(b)
                path = c.write("%s.%s.%s%d%s.json" % (kind, name, key, k, label), b)
                a = [path if x == "@F" else x for x in argv]
                futs.append(pool.submit(c.run, name, a, kind="bigint:%s-%s" % (key, label),
                                        refuse=True, allow1=name == "profile-verify",
                                        check=_check_inexact_integer))
    return futs


# ---- issue 31: the validation hold-out (data.validation_size) beside the public one. Rows
# held out for validation and as public data must leave at least one private row; the count is
# an integer >= 0; the summary says how many rows each part got.

def _holdout_check(want):
    """want: {"train_rows": n, "validation_rows": v} for an accepted run, or a text its
    refusal (exit 2) must contain."""
    def check(rc, out, err):
        if isinstance(want, str):
            if rc == 2 and want in err:
                return None
            return "exit %s, not refused naming %r: %s" % (rc, want, last_line(err))
        if rc != 0:
            return "exit %s on an accepted hold-out: %s" % (rc, last_line(err))
        got = parse_json(out)
        for k, v in want.items():
            if got.get(k) != v:
                return "%s = %r, expected %r" % (k, got.get(k), v)
        acc = got.get("validation_accuracy")
        if not (isinstance(acc, (int, float)) and 0.0 <= acc <= 1.0):
            return "validation_accuracy %r not in [0, 1]" % (acc,)
        return None
    return check


def phase_holdouts(c, pool):
    futs = []
    if not c.files.get("train"):
        return futs
    base = json.loads(open(c.files["train"]).read())  # 512 rows
    cases = [  # (label, data, expected)
        ("all", {"validation_size": 512}, "data.validation_size 512"),
        ("with-public", {"validation_size": 500, "public_size": 12}, "leave no private rows"),
        ("negative", {"validation_size": -1}, "data.validation_size"),
        ("fraction", {"validation_size": 1.5}, "data.validation_size"),
        ("text", {"validation_size": "10"}, "data.validation_size"),
        ("huge", {"validation_size": 1e300}, "data.validation_size"),
        ("one-private", {"validation_size": 500, "public_size": 11},
         {"train_rows": 1, "validation_rows": 500}),
        ("some", {"validation_size": 100}, {"train_rows": 412, "validation_rows": 100}),
    ]
    for label, data, want in cases:
        cfg = dict(base, data=dict(base["data"], **data))
        if not isinstance(want, str):  # accepted: non-private (the profile's rate is n's)
            cfg = {k: v for k, v in cfg.items() if k not in ("profile", "clip")}
            cfg.update(algorithm="mezo", batch_size=1)
        path = c.write("train.holdout-%s.json" % label, json.dumps(cfg))
        futs.append(pool.submit(c.run, "train-holdout", ["train", "--config", path, "--steps",
                                                         "1", "--json"],
                                kind="holdout:" + label, refuse=isinstance(want, str),
                                check=_holdout_check(want)))
    return futs


# ---- issue 28, item 7: profiles that ask for unbounded work. A profile's per-step RDP curve
# may hold any number of orders up to 1e6, and verification certifies each (14.5 s of CPU at
# order 1e6): every reader must refuse a curve that asks for more than the documented work
# (docs/profile.md, 2.2) at once, with exit 2 naming accounting.rdp.orders, and accept one
# within it.

WORK_LIMIT, ORDER_WORK = 100000.0, 250.0  # dpzo/profile.h


def _reference_rule():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "make_profile_reference", os.path.join(ROOT, "tests", "ref", "make_profile_reference.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _forged(obj, orders):
    """The profile object with its curve replaced (per-step values "inf", never below a
    bound) and its checksum recomputed by the documented rule, as a forger would."""
    import hashlib
    o = json.loads(json.dumps(obj))
    if orders is not None:
        o["accounting"]["rdp"] = {"orders": orders, "per_step": ["inf"] * len(orders)}
    o.pop("sha256", None)
    o["sha256"] = hashlib.sha256(_reference_rule().canonical(o).encode("utf-8")).hexdigest()
    return json.dumps(o, indent="\t") + "\n"


def _lmo_unsampled(gauss):
    """An lmo profile without sampling (its curve is recomputed with the exact bound) built
    from the campaign's Gaussian profile."""
    o = json.loads(json.dumps(gauss))
    o["noise"] = {"kind": "lmo", "lmo": {
        "gamma_weight": 0.5, "gamma_shape": 2, "gamma_scale": 1 / 3, "exp_weight": 0.3,
        "exp_rate": 2.5, "uniform_weight": 0.2, "uniform_low": 5, "uniform_high": 6},
        "sensitivity": 0.1, "clip": "scalar", "queries_per_step": 1}
    o["accounting"].update({"accountant": "rdp", "bound": "exact", "sampling": "none",
                            "sampling_rate": 1, "batch_size": None, "dataset_size": None,
                            "steps": 1, "delta": 1e-5, "adjacency": "add-remove",
                            "epsilon": 100, "order": None, "eps0": None, "rdp": None})
    o["objective"] = None
    return o


def work_curves():
    """(label, base, orders, refused): curves that verification recomputes, beyond the
    limit (refused) and within it (accepted); base "gauss" (Poisson-sampled Gaussian, the
    costliest certification per unit of order), "lmo" (unsampled, exact bound: the costliest
    per order near 1) or "lmo-wor" (a sampled lmo step: its curve is not recomputed)."""
    near1 = [1 + 1e-4 * (i + 1) for i in range(398)]
    return [
        ("one-1e6", "gauss", [1e6], True),
        ("one-999999.5", "gauss", [999999.5], True),
        ("forty-near-1e6", "gauss", [1e6 - 39 + i for i in range(40)], True),
        ("one-100000.5", "gauss", [100000.5], True),
        ("one-99750.5", "gauss", [99750.5], True),
        ("two-at-limit", "gauss", [49750.0, 49750.0 + 1e-9], True),
        ("1000-to-1000.5", "gauss", [1.5 + i for i in range(1000)], True),
        ("10000-near-1", "gauss", [1 + 1e-5 * (i + 1) for i in range(10000)], True),
        ("399-near-1", "gauss", near1 + [1.1], True),
        ("lmo-one-1e6", "lmo", [1e6], True),
        ("lmo-1000-near-1", "lmo", [1 + 1e-4 * (i + 1) for i in range(1000)], True),
        # within the limit: read, verified, trained with
        ("dpzo-28", "gauss", None, False),
        ("one-99750", "gauss", [99750.0], False),
        ("398-near-1", "gauss", near1, False),
        ("lmo-398-near-1", "lmo", near1, False),
        ("lmo-wor-one-1e6", "lmo-wor", [1e6], False),
    ]


def _check_work(refused):
    def check(rc, out, err):
        if refused and (rc != 2 or "accounting.rdp.orders" not in err
                        or "limit of 100000" not in err):
            return "exit %s, not refused with the work limit: %s" % (rc, last_line(err))
        if not refused and rc != 0:
            return "a curve within the limit refused (exit %s): %s" % (rc, last_line(err))
        return None
    return check


def work_claims():
    """(label, orders, refused): a claim's own RDP orders (the stated accountant), which
    dpzo audit evaluates the claim under; each order alpha counts alpha + 250 units and the
    orders at most 1e6 (dpzo/audit.h)."""
    return [
        ("claim-two-orders-near-1e6", [999999.5, 999998.5], True),
        ("claim-one-order-1e6", [1e6], True),
        ("claim-20000-small-orders", [2 + 0.01 * i for i in range(20000)], True),
        ("claim-arange-1e6-orders", {"from": 1.5, "to": 1000000.5, "step": 1.0}, True),
        ("claim-one-order-within", [99749.5], False),
        ("claim-tf-like-list", [1 + x / 10.0 for x in range(1, 100)] + list(range(12, 64)),
         False),
    ]


def _check_claim_work(refused):
    def check(rc, out, err):
        if refused and (rc != 2 or "units of work" not in err or "limit of 1000000" not in err):
            return "exit %s, not refused with the work limit: %s" % (rc, last_line(err))
        if not refused and rc != 0:
            return "orders within the limit refused (exit %s): %s" % (rc, last_line(err))
        return None
    return check


def phase_work(c, pool, quick):
    """Profiles and claims that ask for unbounded work: each curve of work_curves() through
    `profile verify`, `profile show`, `train` (Gaussian) or `lmo info` (lmo), and
    dpzo.Profile.load; each claim of work_claims() through `dpzo audit FILE`, `dpzo audit
    --orders` and dpzo.audit."""
    futs = []
    lib = os.path.join(os.path.dirname(os.path.dirname(c.bin)), "lib", "libdpzo.so")
    env = dict(c.env, PYTHONPATH=os.path.join(ROOT, "python"), DPZO_LIBRARY=lib,
               DPZO_CLI=c.bin)
    py = os.environ.get("DPZO_PYTHON", sys.executable)
    timeout = min(c.args.timeout, 30.0)
    for label, orders, refused in work_claims():
        claim = {"name": label, "mechanism": {"noise": "gaussian", "noise_multiplier": 1.1},
                 "sampling": {"scheme": "poisson", "rate": 0.01}, "steps": 100,
                 "epsilon": 1, "delta": 1e-5, "accountant": {"orders": orders}}
        path = c.write("work.%s.json" % label,
                       json.dumps({"format": "dpzo-claims", "claims": [claim]}))
        runs = [("audit-file", ["audit", path, "--brief"])]
        if isinstance(orders, list) and len(orders) < 200:
            runs.append(("audit-flags", ["audit", "--noise-multiplier", "1.1", "--sampling-rate",
                                         "0.01", "--steps", "100", "--epsilon", "1", "--delta",
                                         "1e-5", "--orders", ",".join(repr(float(a))
                                                                      for a in orders),
                                         "--brief"]))
        for name, argv in runs:
            futs.append(pool.submit(c.run, name, argv, kind="work:" + label, timeout=timeout,
                                    refuse=refused, allow1=True,
                                    check=_check_claim_work(refused)))
        code = ("import sys, dpzo\ntry:\n    dpzo.audit(%r, calibrate=False)\n"
                "except dpzo.Error as e:\n    print(e, file=sys.stderr)\n    sys.exit(2)\n"
                % path)
        futs.append(pool.submit(c.run, "python-audit", ["-c", code], kind="work:" + label,
                                prog=[py], env=env, timeout=timeout, refuse=refused,
                                allow1=True, check=_check_claim_work(refused)))
    if not c.files.get("profile"):
        return futs
    gauss = json.loads(open(c.files["profile"]).read())
    lmo = _lmo_unsampled(gauss)
    lmo_wor = json.loads(json.dumps(lmo))
    lmo_wor["accounting"].update({"sampling": "wor", "batch_size": 10, "dataset_size": 1000,
                                  "sampling_rate": 0.01, "adjacency": "replace-one"})
    for label, base, orders, refused in work_curves():
        obj = {"gauss": gauss, "lmo": lmo, "lmo-wor": lmo_wor}[base]
        path = c.write("work.%s.json" % label, _forged(obj, orders))
        runs = [("profile-verify", ["profile", "verify", path]),
                ("profile-show", ["profile", "show", path])]
        if base == "gauss" and c.files.get("train"):
            cfg = json.loads(open(c.files["train"]).read())
            cfg["profile"] = path
            runs.append(("train", ["train", "--config",
                                   c.write("work.%s.train.json" % label, json.dumps(cfg)),
                                   "--steps", "1"]))
        elif base != "gauss":
            runs.append(("lmo-info", ["lmo", "info", "--profile", path]))
        for name, argv in runs:
            futs.append(pool.submit(c.run, name, argv, kind="work:" + label, timeout=timeout,
                                    refuse=refused, allow1=True, check=_check_work(refused)))
        code = ("import sys, dpzo\ntry:\n    dpzo.Profile.load(%r)\n"
                "except dpzo.Error as e:\n    print(e, file=sys.stderr)\n    sys.exit(2)\n"
                % path)
        futs.append(pool.submit(c.run, "python-load", ["-c", code], kind="work:" + label,
                                prog=[py], env=env, timeout=timeout, refuse=refused,
                                allow1=True, check=_check_work(refused)))
    return futs


def _python_cases(c, pool, kind, exprs):
    """Each expression runs in a fresh Python with the campaign's library; it must raise
    dpzo.Error (exit 0 of the script). Anything else exits 3 (a bad exit): accepted, or
    another exception (OverflowError)."""
    lib = os.path.join(os.path.dirname(os.path.dirname(c.bin)), "lib", "libdpzo.so")
    env = dict(c.env, PYTHONPATH=os.path.join(ROOT, "python"), DPZO_LIBRARY=lib,
               DPZO_CLI=c.bin)
    py = os.environ.get("DPZO_PYTHON", sys.executable)
    futs = []
    for expr in exprs:
        code = ("import sys, dpzo, dpzo.lmo\nfrom fractions import Fraction\n"
                "P, G, T = %r, %r, %r\nB = 10**400\n"
                "try:\n    %s\nexcept dpzo.Error:\n    sys.exit(0)\n"
                "except BaseException as e:\n    print(type(e).__name__, e, file=sys.stderr)\n"
                "    sys.exit(3)\nprint('accepted', file=sys.stderr)\nsys.exit(3)\n"
                % (c.files.get("profile") or "", c.files.get("grid") or "", c.tmp, expr))
        futs.append(pool.submit(c.run, "python-" + kind, ["-c", code], kind=kind, prog=[py],
                                env=env))
    return futs


def phase_pyoverflow(c, pool, quick):
    """Python values that overflow: 10**400 and Fraction(10**400) (and their negatives) for
    every real argument of epsilon, calibrate, the accountants and the events."""
    calls = [
        "dpzo.epsilon(noise_multiplier=X, sampling_rate=0.01, steps=100, delta=1e-5)",
        "dpzo.epsilon(noise_multiplier=1.1, sampling_rate=X, steps=100, delta=1e-5)",
        "dpzo.epsilon(noise_multiplier=1.1, sampling_rate=0.01, steps=100, delta=X)",
        "dpzo.epsilon(noise_multiplier=1.1, batch_size=10, dataset_size=1000, epochs=X, "
        "delta=1e-5)",
        "dpzo.epsilon(noise_multiplier=1.1, sampling_rate=0.01, steps=100, delta=1e-5, "
        "accountant='pld', grid=X)",
        "dpzo.epsilon(noise_multiplier=1.1, sampling_rate=0.01, steps=100, delta=1e-5, "
        "accountant='prv', eps_error=X)",
        "dpzo.calibrate(epsilon=X, delta=1e-5, sampling_rate=0.01, steps=100)",
        "dpzo.calibrate(epsilon=1, delta=X, sampling_rate=0.01, steps=100)",
        "dpzo.calibrate(epsilon=1, delta=1e-5, sampling_rate=X, steps=100)",
        "dpzo.GaussianEvent(X)", "dpzo.LaplaceEvent(X)",
        "dpzo.PoissonSampledEvent(X, dpzo.GaussianEvent(1.0))",
        "dpzo.SampledWithoutReplacementEvent(100, X, dpzo.GaussianEvent(1.0))",
        "dpzo.RdpAccountant().epsilon(X)", "dpzo.RdpAccountant().delta(X)",
        "dpzo.PldAccountant().epsilon(X)", "dpzo.PldAccountant().delta(X)",
        "dpzo.PrvAccountant().epsilon(X)", "dpzo.PrvAccountant().delta(X)",
        "dpzo.RdpAccountant(orders=[X])", "dpzo.PldAccountant(grid=X)",
        "dpzo.PrvAccountant(eps_error=X)",
        "dpzo.Lmo(gamma_weight=X, gamma_shape=1, gamma_scale=1, exp_weight=0, exp_rate=1, "
        "uniform_weight=0, uniform_low=0, uniform_high=1).pdf(0.5)",
    ]
    values = ["B", "Fraction(B)"] if quick else ["B", "Fraction(B)", "-B", "-Fraction(B)"]
    return _python_cases(c, pool, "pyoverflow",
                         [call.replace("X", v) for call in calls for v in values])


def file_output_cases():
    """The commands whose one output is a file (@O): name and argv, for the output phases."""
    return [
        ("profile-gaussian", ["profile", "gaussian", "--epsilon", "3", "--delta", "1e-5",
                              "--steps", "100", "--sampling-rate", "0.01", "-o", "@O"]),
        ("audit-markdown", ["audit", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                            "--steps", "10", "--epsilon", "3", "--delta", "1e-5", "--grid",
                            "1e-2", "--no-calibrate", "--no-prv", "--no-plots", "--markdown", "@O"]),
        ("plot-noise", ["plot", "noise"] + LMO + ["-o", "@O.svg"]),
    ]


def lmo_search_argv(c):
    """A small LMO search over the campaign's grid (outputs added by the caller)."""
    return ["lmo", "search", "--epsilon", "3", "--delta", "1e-5", "--grid", c.files["grid"],
            "--steps", "10", "--sampling-rate", "0.01", "--bound", "mgf", "--threads", "1"]


def phase_outputs(c, pool):
    """Output paths: a symlink to a regular file, a FIFO (drained), a directory, and a
    symbolic link planted at the temporary name."""
    futs = []
    cases = [
        *file_output_cases(),
        ("lmo-search-out", lmo_search_argv(c) + ["-o", "@O"]),
        ("lmo-search-ckpt-out", lmo_search_argv(c) + ["--checkpoint", "@O"]),
    ]
    if c.files.get("train"):
        cases.append(("train-metrics", ["train", "--config", c.files["train"], "--steps", "1",
                                        "--metrics", "@O"]))
        cases.append(("train-checkpoint", ["train", "--config", c.files["train"], "--steps", "1",
                                           "--checkpoint", "@O"]))
    for name, argv in cases:
        for kind in ("symlink", "fifo", "directory", "tmp-symlink"):
            futs.append(pool.submit(output_case, c, name, argv, kind))
    return futs


def phase_unwritable(c, pool):
    """Issue 28, item 6: an output that cannot be written (a directory, a path in a missing
    folder, a FIFO with no reader, /dev/full, a folder of a read-only filesystem) must be
    refused with exit 2 and the path named BEFORE the command's work: no training step (a
    second output, the evidence, stays unmade), no search (its checkpoint stays unmade), no
    report on stdout. Kinds: before-work:* (directory, missing folder), full-readonly:*
    (/dev/full, a read-only folder) and fifo-no-reader."""
    futs = []
    grid = lmo_search_argv(c)
    # (name, argv with @O the output and @E the evidence of work, direct: devices allowed)
    cases = [
        *file_output_cases(),
        ("lmo-search-out", grid + ["--checkpoint", "@E", "-o", "@O"]),
        ("lmo-search-ckpt", grid + ["--checkpoint", "@O"]),
    ]
    if c.files.get("train"):
        cases.append(("train-checkpoint", ["train", "--config", c.files["train"], "--steps",
                                           "3", "--metrics", "@E", "--checkpoint", "@O"]))
        cases.append(("train-metrics", ["train", "--config", c.files["train"], "--steps", "3",
                                        "--checkpoint", "@E", "--metrics", "@O"]))
    ro = "/sys/kernel" if os.geteuid() == 0 and os.path.isdir("/sys/kernel") else None
    kinds = ["before-work:directory", "before-work:missing-folder", "full-readonly:dev-full",
             "full-readonly:proc-self", "fifo-no-reader"]
    if ro:
        kinds.append("full-readonly:sysfs")
    for name, argv in cases:
        for kind in kinds:
            futs.append(pool.submit(unwritable_case, c, name, argv, kind))
    return futs


def unwritable_case(c, name, argv, kind):
    d = tempfile.mkdtemp(prefix="unw-", dir=c.tmp)
    ext = ".svg" if "@O.svg" in argv else ""
    if kind.endswith("directory"):
        dest = os.path.join(d, "dest" + ext)
        os.mkdir(dest)
    elif kind.endswith("missing-folder"):
        dest = os.path.join(d, "missing", "dest" + ext)
    elif kind.endswith("dev-full"):
        dest = "/dev/full"
    elif kind.endswith("proc-self"):
        dest = "/proc/self/dest" + ext
    elif kind.endswith("sysfs"):
        dest = "/sys/kernel/dpzo-dest" + ext
    else:
        dest = os.path.join(d, "dest" + ext)
        os.mkfifo(dest)
    evidence = os.path.join(d, "evidence")
    a = [dest if x in ("@O", "@O.svg") else evidence if x == "@E" else x for x in argv]
    if ext and dest == "/dev/full":
        return  # plot wants a .png or .svg name; /dev/full has none
    state = {}

    def check(rc, out, err):
        state["out"] = out
        return None

    def after(rc):
        problems = []
        if rc != 2:
            problems.append("exit %s, not 2 (an output that cannot be written is bad input)" % rc)
        if os.path.lexists(evidence):
            problems.append("the work ran before the output was refused (%s was written)" %
                            ("the search checkpoint" if "lmo" in name else
                             "the metrics" if "checkpoint" in name else "the checkpoint"))
        if name == "audit-markdown" and state.get("out", "").strip():
            problems.append("the audit ran and printed its report before the output was "
                            "refused")
        if kind == "fifo-no-reader" and not stat.S_ISFIFO(os.lstat(dest).st_mode):
            problems.append("the FIFO was replaced")
        if not stat.S_ISCHR(os.stat("/dev/full").st_mode):
            problems.append("/dev/full IS NO LONGER A CHARACTER DEVICE")
        return "; ".join(problems) or None

    c.run(name, a, kind="unwritable:" + kind, check=check, after=after, allow1=True,
          timeout=c.args.fifo_timeout * 3 if kind == "fifo-no-reader" else None)


# ---- issue 28, item 11: the exit-status rule (docs/cli.md) ------------------------------------

# The messages of a valid request without an answer (exit 1): a memory limit, an allocation
# that failed, a target no value meets, a profile that does not hold, gnuplot missing.
# Narrower than RESOURCE: a value out of range never exits 1 (calibrate --epsilon 0 did,
# "target epsilon 0 cannot be met", before issue 28, item 11).
NO_ANSWER = re.compile(r"memory limit|out of memory|no grid point meets|already spends|"
                       r"no sampling rate .* reaches|does not hold|gnuplot")
MESSAGE = re.compile(r"(?m)^(dpzo|usage:)")


def exit_rule(want, *needles):
    """The check of one exit-code case: the status is in `want`; 1 only with a NO_ANSWER
    message; any other status but 0 with a message on stderr that names one of `needles`
    (when given)."""
    def check(rc, out, err):
        if rc not in want:
            return "exit %s, the rule says %s" % (rc, " or ".join(str(w) for w in sorted(want)))
        if rc != 0 and not MESSAGE.search(err):
            return "exit %d with no message on stderr" % rc
        if rc == 1 and not NO_ANSWER.search(err):
            return "exit 1, but not a valid request without an answer: " + last_line(err)
        if rc != 0 and needles and not any(n in err for n in needles):
            return "exit %d, stderr names none of %s: %s" % (rc, ", ".join(needles),
                                                           last_line(err))
        return None
    return check


def value_options(argv):
    """(index, option) of the options of argv that take a value (the next word is not an
    option)."""
    out = []
    for i, a in enumerate(argv[:-1]):
        if a.startswith("-") and len(a) > 1 and not argv[i + 1].startswith("-"):
            out.append((i, a))
    return out


def exit_bases(c):
    """bases() and the commands it leaves out: profile show and verify, demo, train, plot
    epsilon-delta and curves."""
    claim = ["--noise-multiplier", "1.1", "--sampling-rate", "0.004", "--steps", "1000",
             "--epsilon", "3", "--delta", "1e-5"]
    out = [(n, subst(c, a)) for n, a in bases(c)]
    if c.files.get("profile"):
        out.append(("profile-show", ["profile", "show", c.files["profile"]]))
        out.append(("profile-verify", ["profile", "verify", c.files["profile"]]))
    out.append(("demo", ["demo"]))
    if c.files.get("train"):
        out.append(("train", ["train", "--config", c.files["train"], "--steps", "2"]))
    out.append(("plot-epsilon-delta", ["plot", "epsilon-delta"] + claim +
                ["--grid", "1e-2", "--points", "4", "-o", c.path("out-ed.svg")]))
    out.append(("plot-curves", ["plot", "curves"] + claim +
                ["--grid", "1e-2", "--points", "4", "-o", c.path("out-curves.svg")]))
    return out


def phase_exitcodes(c, pool):
    """The exit-status rule of docs/cli.md across every command: 0 done; 1 a valid request
    without an answer (NO_ANSWER); 2 a request that cannot be carried out as given, with a
    message on stderr. Kinds: exit:success, unknown-option, twice, no-value, removed (each
    value option left out: 0, or 2 when it was needed, or 1 without an answer), text and
    minus-one (each value option set to x or -1: 2), zero (0 or 2, 1 only without an
    answer), stdout-full (standard output at /dev/full: 2), write-fails (RLIMIT_FSIZE, the
    write failing after the check: 2), input-missing (2), memory-limit (a fraction of a MiB
    kept and named as given, or refused with 2 out of [1, 1048576]), exclusive (options
    that exclude each other: 2), answer-no (1)."""
    futs = []

    def add(name, kind, argv, check, **kw):
        futs.append(pool.submit(c.run, name, argv, kind="exit:" + kind, allow1=True,
                                check=check, **kw))

    for name, argv in exit_bases(c):
        add(name, "success", argv, exit_rule({0}))
        add(name, "unknown-option", argv + ["--no-such-option"],
            exit_rule({2}, "--no-such-option"))
        opts = value_options(argv)
        if opts:
            i, o = opts[0]
            add(name, "twice", argv + [o, argv[i + 1]], exit_rule({2}, o))
            add(name, "no-value", argv[:i] + argv[i + 2:] + [o], exit_rule({2}, o))
        for i, o in opts:
            if not (name == "lmo-search" and o == "--grid"):  # the paper grid: an hour
                add(name, "removed", argv[:i] + argv[i + 2:], exit_rule({0, 1, 2}))
            for kind, v in (("text", "x"), ("minus-one", "-1")):
                a = list(argv)
                a[i + 1] = v
                # the message names the option (or the quantity: "gamma weight") or the value
                add(name, kind, a, exit_rule({2}, o, o.lstrip("-").replace("-", " "),
                                             "'%s'" % v, "got %s" % v))
            a = list(argv)
            a[i + 1] = "0"
            add(name, "zero", a, exit_rule({0, 1, 2}))
        add(name, "stdout-full", argv, exit_rule({2}, "standard output"),
            stdout_path="/dev/full")

    # a write that fails after the output was checked (a disk filling between the two):
    # files limited to `size` bytes; gnuplot draws under a wrapper that lifts the soft limit
    gp = c.write("gnuplot-unlimited.sh", "#!/bin/sh\nulimit -S -f unlimited\n"
                 "exec gnuplot \"$@\"\n")
    os.chmod(gp, 0o755)
    gp_env = dict(c.env, DPZO_GNUPLOT=gp)
    cases = [(n, a, 256, None) for n, a in file_output_cases() if not n.startswith("plot")]
    cases.append(("plot-noise", ["plot", "noise"] + LMO + ["-o", "@O.svg"], 32768, gp_env))
    cases.append(("plot-epsilon-delta", ["plot", "epsilon-delta", "--noise-multiplier", "1.1",
                                         "--sampling-rate", "0.004", "--steps", "1000",
                                         "--epsilon", "3", "--delta", "1e-5", "--grid", "1e-2",
                                         "--points", "4", "-o", "@O.svg"], 8192, gp_env))
    cases.append(("lmo-search-out", lmo_search_argv(c) + ["-o", "@O"], 256, None))
    if c.files.get("train"):
        cases.append(("train-metrics", ["train", "--config", c.files["train"], "--steps", "3",
                                        "--metrics", "@O"], 256, None))
        cases.append(("train-checkpoint", ["train", "--config", c.files["train"], "--steps",
                                           "1", "--checkpoint", "@O"], 256, None))
    for k, (name, argv, size, env) in enumerate(cases):
        dest = c.path("fsize-%d-%s" % (k, name)) + (".svg" if "@O.svg" in argv else "")
        a = [dest if x in ("@O", "@O.svg") else x for x in argv]
        add(name, "write-fails", a, exit_rule({2}, os.path.basename(dest)), fsize=size,
            env=env)

    # inputs that cannot be read
    missing = c.path("missing.json")
    for name, argv in [
            ("profile-show", ["profile", "show", missing]),
            ("profile-verify", ["profile", "verify", missing]),
            ("epsilon-schedule", ["epsilon", "--schedule", missing, "--delta", "1e-5"]),
            ("lmo-info", ["lmo", "info", "--profile", missing]),
            ("lmo-search", ["lmo", "search", "--epsilon", "3", "--delta", "1e-5", "--grid",
                            missing]),
            ("audit-file", ["audit", missing]),
            ("audit-attack", ["audit", "attack", "--scores", missing]),
            ("audit-one-run", ["audit", "one-run", "--scores", missing, "--positive", "2"]),
            ("plot-noise", ["plot", "noise", "--profile", missing, "-o", c.path("m.svg")]),
            ("plot-file", ["plot", "epsilon-steps", missing, "-o", c.path("m.svg")]),
            ("train", ["train", "--config", missing])] + (
            [("train-resume", ["train", "--config", c.files["train"], "--resume", missing])]
            if c.files.get("train") else []):
        add(name, "input-missing", argv, exit_rule({2}, missing))

    # --memory-limit: in [1, 1048576] a fraction is kept and a refusal names it as given
    # (six significant digits); outside, exit 2
    queries = [("epsilon-pld", ["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                                "--steps", "1000", "--delta", "1e-5", "--accountant", "pld"]),
               ("epsilon-pld", ["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                                "--steps", "1000", "--delta", "1e-5", "--accountant", "pld",
                                "--grid", "1e-3"]),
               ("delta-pld", ["delta", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                              "--steps", "100", "--epsilon", "1", "--accountant", "pld",
                              "--grid", "1e-3"]),
               ("calibrate-pld", ["calibrate", "--epsilon", "3", "--delta", "1e-5",
                                  "--sampling-rate", "0.01", "--steps", "1000", "--accountant",
                                  "pld", "--grid", "1e-3"]),
               ("epsilon-prv", ["epsilon", "--noise-multiplier", "1", "--sampling-rate",
                                "0.01", "--steps", "1000", "--delta", "1e-5", "--accountant",
                                "prv"])]
    for name, argv in queries:
        for v in ("1.5", "1.25", "1.1", "1.75", "2.5", "3.75", "7.2", "1.0000001"):
            add(name, "memory-limit", argv + ["--memory-limit", v],
                exit_rule({0, 1}, "memory limit of %.6g MiB" % float(v)))
        for v in ("0.999", "0.5", "1048576.5", "1e-300", "1.5MiB"):
            add(name, "memory-limit", argv + ["--memory-limit", v],
                exit_rule({2}, "--memory-limit"))

    # options that exclude each other
    for name, argv in [
            ("lmo-epsilon", ["lmo", "epsilon"] + LMO + ["--delta", "1e-5", "--clip", "l1",
                                                        "--bound", "exact"]),
            ("lmo-epsilon", ["lmo", "epsilon"] + LMO + ["--delta", "1e-5", "--clip", "l1",
                                                        "--accountant", "pld"]),
            ("lmo-search", lmo_search_argv(c)[:-4] + ["--clip", "l1", "--bound", "exact",
                                                      "--threads", "1"]),
            ("lmo-search", lmo_search_argv(c) + ["--clip", "l1", "--accountant", "pld"]),
            ("epsilon", ["epsilon", "--noise-multiplier", "1", "--sampling-rate", "0.01",
                         "--steps", "10", "--epochs", "1", "--delta", "1e-5"]),
            ("audit", ["audit", "--noise-multiplier", "1", "--sampling-rate", "0.01", "--steps",
                       "10", "--epsilon", "1", "--delta", "1e-5", "--adjacency",
                       "replace-one"])]:
        add(name, "exclusive", argv, exit_rule({2}))

    # the commands' own "no"
    understated = os.path.join(ROOT, "docs/examples/profile-gaussian-understated.json")
    negatives = [
        ("profile-verify", ["profile", "verify", understated], None),
        ("profile-verify", ["profile", "verify", understated, "--json"], None),
        ("calibrate-steps", ["calibrate", "--solve-for", "steps", "--epsilon", "0.01",
                             "--delta", "1e-5", "--sampling-rate", "1", "--noise-multiplier",
                             "0.5"], None),
        # (solving for the rate always has an answer: delta <= 1 - (1 - q)^T, issue 28 item 4)
        ("calibrate-steps", ["calibrate", "--solve-for", "steps", "--epsilon", "0.001",
                             "--delta", "1e-5", "--sampling-rate", "0.5", "--noise-multiplier",
                             "0.1"], None),
        ("lmo-search", [a if a != "3" else "0.001" for a in lmo_search_argv(c)], None),
        ("plot-noise", ["plot", "noise"] + LMO + ["-o", c.path("nogp.svg")],
         dict(c.env, DPZO_GNUPLOT="/nonexistent/gnuplot")),
        ("plot-epsilon-steps", ["plot", "epsilon-steps", "--noise-multiplier", "1.1",
                                "--sampling-rate", "0.004", "--steps", "1000", "--epsilon",
                                "3", "--delta", "1e-5", "-o", c.path("nogp.svg")],
         dict(c.env, DPZO_GNUPLOT="/nonexistent/gnuplot"))]
    for name, argv, env in negatives:
        add(name, "answer-no", argv, exit_rule({1}), env=env)
    return futs


def output_case(c, name, argv, kind):
    d = tempfile.mkdtemp(prefix="out-", dir=c.tmp)
    ext = ".svg" if any(a == "@O.svg" for a in argv) else ""
    dest = os.path.join(d, "dest" + ext)
    victim = os.path.join(d, "victim" + ext)
    with open(victim, "w") as f:
        f.write("VICTIM\n")
    drain = None
    if kind == "symlink":
        os.symlink(victim, dest)
    elif kind == "fifo":
        os.mkfifo(dest)
        fd = os.open(dest, os.O_RDONLY | os.O_NONBLOCK)
        stop = threading.Event()

        def drainer():
            while not stop.is_set():
                try:
                    if not os.read(fd, 65536):
                        time.sleep(0.05)
                except BlockingIOError:
                    time.sleep(0.05)
                except OSError:
                    return
        drain = (threading.Thread(target=drainer, daemon=True), stop, fd)
        drain[0].start()
    elif kind == "directory":
        os.mkdir(dest)
    elif kind == "tmp-symlink":
        for t in (".tmp", ".tmp%d" % os.getpid()):
            os.symlink(victim, dest + t)
    a = [dest if x in ("@O", "@O.svg") else x for x in argv]

    def after(rc):
        problems = []
        if kind == "symlink":
            if not os.path.islink(dest):
                problems.append("the symbolic link at the destination was replaced")
        if kind == "fifo" and not stat.S_ISFIFO(os.lstat(dest).st_mode):
            problems.append("the FIFO at the destination was replaced by a %s" %
                            ("regular file" if os.path.isfile(dest) else "non-FIFO"))
        if kind == "directory" and not os.path.isdir(dest):
            problems.append("the directory at the destination was replaced")
        if kind == "tmp-symlink":
            with open(victim, "rb") as f:
                if f.read() != b"VICTIM\n":
                    problems.append("a symbolic link planted at the temporary name was "
                                    "followed: its target was overwritten")
        left = [n for n in os.listdir(d) if ".tmp" in n and not (kind == "tmp-symlink" and
                                                                  os.path.islink(os.path.join(d, n)))]
        if left:
            problems.append("temporary files left behind: %s" % ", ".join(left))
        if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
            problems.append("/dev/null IS NO LONGER A CHARACTER DEVICE")
        return "; ".join(problems) or None

    try:
        # exit 1 is right for an output that cannot be written (a directory)
        c.run(name, a, kind="output:" + kind, after=after, allow1=True,
              timeout=c.args.fifo_timeout * 3 if kind == "fifo" else None)
    finally:
        if drain:
            drain[1].set()
            drain[0].join(1)
            os.close(drain[2])


def phase_soundness(c, pool, quick):
    """The issue's reproducers and monotonicity pairs."""
    futs = []
    targeted = [
        ("epsilon-wor", ["epsilon", "--noise-multiplier", s, "--batch-size", "256",
                         "--dataset-size", "60000", "--steps", "1", "--delta", "1e-5", "--json"])
        for s in ("1e-5", "1e-4", "2e-4", "3e-4", "1e-300", "1e-320", "1e308")
    ] + [
        ("epsilon-pld", ["epsilon", "--noise-multiplier", s, "--sampling-rate", "0.004",
                         "--steps", "1", "--delta", "1e-5", "--accountant", "pld", "--json"])
        for s in ("0.005", "0.01", "0.02", "1e308")
    ] + [
        ("epsilon-pld", ["epsilon", "--noise-multiplier", s, "--sampling-rate", "0.004",
                         "--steps", "1000", "--delta", "1e-5", "--accountant", acc, "--grid",
                         "0.05", "--json"])
        for s in ("0.005", "0.01", "0.015", "0.02") for acc in ("pld", "prv")
    ] + [
        ("epsilon", ["epsilon", "--noise-multiplier", "0.01", "--sampling-rate", "0.004",
                     "--steps", "1", "--delta", "1e-5", "--json"]),
        ("rdp", ["rdp", "--noise-multiplier", "1e4", "--sampling-rate", "0.004", "--orders",
                 "1.3", "--json"]),
        ("delta", ["delta", "--noise-multiplier", "1e5", "--sampling-rate", "0.004", "--steps",
                   "1000", "--epsilon", "1", "--json"]),
        ("calibrate", ["calibrate", "--epsilon", "1e-10", "--delta", "1e-5", "--sampling-rate",
                       "0.004", "--steps", "1000", "--json"]),
        ("calibrate", ["calibrate", "--epsilon", "3", "--delta", "1e-5", "--sampling-rate",
                       "0.004", "--steps", "1000", "--tolerance", "1e-17", "--json"]),
        ("calibrate", ["calibrate", "--epsilon", "1e18", "--delta", "1e-5", "--sampling-rate",
                       "0.004", "--steps", "1000", "--json"]),
        ("calibrate-steps", ["calibrate", "--solve-for", "steps", "--epsilon", "3", "--delta",
                             "1e-5", "--sampling-rate", "0.004", "--noise-multiplier", "1e-300",
                             "--json"]),
        ("audit", ["audit", "--noise-multiplier", "1e-4", "--batch-size", "256",
                   "--dataset-size", "60000", "--steps", "1", "--epsilon", "1", "--delta",
                   "1e-5", "--json"]),
        ("audit", ["audit", "--noise-multiplier", "0.01", "--sampling-rate", "0.004", "--steps",
                   "1000", "--epsilon", "11000", "--delta", "1e-5", "--grid", "0.05", "--json"]),
        ("audit", ["audit", "--noise-multiplier", "1.1", "--sampling-rate", "0.004", "--steps",
                   "1000", "--epsilon", "3", "--delta", "1e-300", "--json"]),
        ("lmo-epsilon", ["lmo", "epsilon"] + LMO + ["--delta", "1e-320", "--json"]),
        ("lmo-epsilon", ["lmo", "epsilon"] + LMO + ["--delta", "1e-5", "--paper-step-epsilon",
                                                    "1e-320", "--json"]),
        ("plot-epsilon-steps", ["plot", "epsilon-steps", "--noise-multiplier", "1",
                                "--sampling-rate", "0.01", "--steps", "10", "--epsilon", "3",
                                "--delta", "1e-5", "--steps-max", "1e308", "-o",
                                c.path("steps-max.svg")]),
    ]
    for cmd, argv in targeted:
        futs.append(pool.submit(c.run, cmd, argv, kind="targeted", check=checker(cmd, argv)))
    # monotonicity: doubling sigma never raises the proven epsilon
    sigmas = ["1e-300", "1e-5", "1e-3", "0.01", "0.1", "0.5", "1", "3", "100", "1e4", "8.5e4",
              "1e5", "1e100", "1e300"]
    if quick:
        sigmas = sigmas[::2] + ["1e5"]
    settings = [("rdp", ["--sampling-rate", "0.004", "--steps", "1000"]),
                ("rdp-wor", ["--batch-size", "256", "--dataset-size", "60000", "--steps", "100"]),
                ("pld", ["--sampling-rate", "0.004", "--steps", "100", "--accountant", "pld",
                         "--grid", "1e-2", "--memory-limit", "512"])]
    for label, extra in settings:
        for s in sigmas:
            futs.append(pool.submit(monotone_pair, c, label, s, extra))
    return futs


def monotone_pair(c, label, s, extra):
    vals = []
    for sig in (s, repr(2 * float(s))):
        argv = ["epsilon", "--noise-multiplier", sig, "--delta", "1e-5", "--json"] + extra
        r = c.run("monotone-" + label, argv, kind="monotone", check=check_epsilon(argv))
        if r is None or r[0] != 0:
            return
        j = parse_json(r[1])
        if not isinstance(j, dict):
            return
        vals.append(num(j.get("epsilon_upper", j.get("epsilon"))))
    if None not in vals and vals[1] > vals[0] * (1 + 1e-6) + 1e-12:
        argv = ["epsilon", "--noise-multiplier", repr(2 * float(s)), "--delta", "1e-5",
                "--json"] + extra
        c.record("monotone-" + label, "monotone", argv, "wrong", 0, 0.0,
                 "epsilon %.17g at sigma %s rises to %.17g at sigma %s" %
                 (vals[0], s, vals[1], repr(2 * float(s))), "")


# ---- bounds: delta upper bounds against an exact referee (issue 28) --------------------------


class Referee:
    """The exact delta(eps) of one Poisson-subsampled Gaussian step (noise multiplier s, rate
    q, sensitivity 1) under add/remove adjacency, by mpmath: with mu = (1 - q) N(0, s^2) +
    q N(1, s^2), delta = max(H_{e^eps}(mu || N(0, s^2)), H_{e^eps}(N(0, s^2) || mu)), each
    in closed form (docs/accountant.md 6.1; tests/ref/make_bound_rounding_reference.py):
      remove: q Phibar((x-1)/s) + (1-q) Phibar(x/s) - e^eps Phibar(x/s),
              x = s^2 log((e^eps - 1 + q)/q) + 1/2;
      add:    Phi(x/s) - e^eps ((1-q) Phi(x/s) + q Phi((x-1)/s)),
              x = s^2 log((e^-eps - 1 + q)/q) + 1/2 (0 for eps >= -log(1-q)).
    The two terms of each cancel to about 1/x relative, so the precision is 50 + 2 log10(x)
    digits; Phibar beyond 1e6 is the Mills-ratio series (mpmath's erfc overflows there)."""

    def __init__(self):
        import mpmath  # python3-mpmath; imported here so that the other phases need none
        self.mp = mpmath
        self.cache = {}
        self.lock = threading.Lock()

    def _phibar(self, z):
        m = self.mp
        if z <= 10:
            return m.erfc(z / m.sqrt(2)) / 2
        if z < 10 ** 6:
            r = m.erfc(z / m.sqrt(2)) / 2 * m.sqrt(2 * m.pi) * m.exp(z * z / 2)
        else:
            r, t, k, z2 = m.mpf(1), m.mpf(1), 1, z * z
            tol = m.mpf(10) ** (-m.mp.dps - 5)
            while abs(t) > tol:
                t = -t * (2 * k - 1) / z2
                r += t
                k += 1
            r /= z
        return r * m.exp(-z * z / 2) / m.sqrt(2 * m.pi)

    def delta1(self, eps, s, q):
        """The exact one-step delta at the double eps (an mpf)."""
        key = (eps if isinstance(eps, str) else repr(float(eps)), float(s), float(q))
        with self.lock:
            if key in self.cache:
                return self.cache[key]
            m = self.mp
            with m.workdps(30):
                e0, s0, q0 = m.mpf(eps), m.mpf(s), m.mpf(q)
                x0 = s0 * s0 * abs(m.log((m.exp(abs(e0)) - 1 + q0) / q0)) + 1 + s0
                dps = 50 + int(2 * m.log10(x0))
            with m.workdps(dps):
                e, s, q = m.mpf(eps), m.mpf(s), m.mpf(q)
                if e <= m.log(1 - q):
                    rem = 1 - m.exp(e)
                else:
                    x = s * s * m.log((m.exp(e) - 1 + q) / q) + m.mpf(1) / 2
                    rem = (q * self._phibar((x - 1) / s) + (1 - q) * self._phibar(x / s)
                           - m.exp(e) * self._phibar(x / s))
                add = m.mpf(0)
                if q < 1 and e < -m.log(1 - q):
                    v = (m.exp(-e) - 1 + q) / q
                    x = s * s * m.log(v) + m.mpf(1) / 2
                    add = (self._phibar(-x / s) - m.exp(e) * ((1 - q) * self._phibar(-x / s)
                                                             + q * self._phibar(-(x - 1) / s)))
                r = +max(rem, add)
            self.cache[key] = r
            return r

    def check_delta(self, s, q, T, eps, upper, lower):
        m = self.mp
        t = self.delta1(eps, s, q)
        if upper is None or m.mpf(upper) < t:
            return ("upper bound %r on delta(%g) below the exact %s (sigma %g, q %g, %d steps)"
                    % (upper, eps, m.nstr(t, 6), s, q, T))
        if T == 1 and lower is not None and m.mpf(lower) > t:
            return ("lower bound %r on delta(%g) above the exact %s (sigma %g, q %g)"
                    % (lower, eps, m.nstr(t, 6), s, q))
        return None

    def check_epsilon(self, s, q, T, delta, upper, lower):
        """upper >= eps(delta) iff delta1(upper) <= delta (for T steps: delta_T >= delta1)"""
        m = self.mp
        if upper is None or not m.mpf(upper) >= 0:
            return "upper bound %r on epsilon" % (upper,)
        if m.isfinite(m.mpf(upper)):
            t = self.delta1(upper, s, q)
            if t > m.mpf(delta):
                return ("upper bound %r on epsilon(%g) below the exact epsilon: one step's "
                        "delta there is %s (sigma %g, q %g, %d steps)"
                        % (upper, delta, m.nstr(t, 6), s, q, T))
        if T == 1 and lower is not None and m.mpf(lower) > 0:
            t = self.delta1(lower, s, q)
            if t < m.mpf(delta):
                return ("lower bound %r on epsilon(%g) above the exact epsilon: delta there "
                        "is %s (sigma %g, q %g)" % (lower, delta, m.nstr(t, 6), s, q))
        return None


TEXT_BOUND = re.compile(r"^\s*(delta|epsilon)( lower)?\s+(\S+)\s+\((?:proven|certified) "
                        r"(upper|lower) bound")


def text_bounds(out, what):
    """(upper, lower) as printed (decimal strings; the text rounds them outward)"""
    up = lo = None
    for line in out.splitlines():
        m_ = TEXT_BOUND.match(line)
        if m_ and m_.group(1) == what:
            if m_.group(4) == "upper" and not m_.group(2):
                up = m_.group(3)
            elif m_.group(4) == "lower":
                lo = m_.group(3)
    return up, lo


def bound_value(v):
    if v is None:
        return None
    if isinstance(v, str):
        return float("inf") if v == "inf" else v  # a decimal string: exact in mpmath
    return float(v)


def bounds_cases(quick):
    """(kind, sigma, q, steps, target): delta queries at eps, epsilon queries at delta"""
    sig = ["30", "1000", "1e5", "1e8"]
    qs = ["1e-6", "1e-4", "0.01", "1"]
    epss = ["0.5", "3", "20"] if not quick else ["3", "20"]
    cases = [("delta", s, q, "1", e) for s in sig for q in qs for e in epss]
    # representable truths near and below DBL_MIN, and compositions (upper bounds only)
    cases += [("delta", "1", "0.01", "1", e) for e in ("30", "33", "34", "35")]
    cases += [("delta", "2", "1e-3", "1", "100"), ("delta", "1000", "1e-4", "10", "3"),
              ("delta", "30", "1e-4", "100", "0.5")]
    cases += [("epsilon", s, q, "1", d) for s in ("1000", "1e5", "1e8") for q in ("1e-4", "1")
              for d in ("1e-10", "1e-300")]
    return cases


def bounds_check(ref, kind, s, q, T, target, upper, lower):
    if kind == "delta":
        return ref.check_delta(float(s), float(q), int(T), float(target), upper, lower)
    return ref.check_epsilon(float(s), float(q), int(T), float(target), upper, lower)


PY_BOUNDS = r"""
import json, sys
import dpzo
kind, acc, s, q, T, target = sys.argv[1:7]
s, q, T, target = float(s), float(q), int(T), float(target)
a = {"rdp": dpzo.RdpAccountant, "pld": dpzo.PldAccountant, "prv": dpzo.PrvAccountant}[acc]()
g = dpzo.GaussianEvent(s)
a.compose(dpzo.PoissonSampledEvent(q, g) if q < 1 else g, T)
r = a.delta(target) if kind == "delta" else a.epsilon(target)
up = r.delta if kind == "delta" else r.epsilon
print(json.dumps({"upper": repr(up), "lower": None if r.lower is None else repr(r.lower)}))
"""


def phase_bounds(c, pool, quick):
    """delta upper bounds against an exact referee (issue 28): CLI text, --json, Python."""
    try:
        ref = Referee()
    except ImportError:
        print("campaign: the bounds phase needs mpmath (python3-mpmath); skipped",
              file=sys.stderr)
        return []
    lib = os.path.join(os.path.dirname(os.path.dirname(c.bin)), "lib", "libdpzo.so")
    py_env = dict(c.env)
    py_env["PYTHONPATH"] = os.path.join(ROOT, "python")
    py_env["DPZO_LIBRARY"] = lib
    futs = []
    for kind, s, q, T, target in bounds_cases(quick):
        opt_t = "--epsilon" if kind == "delta" else "--delta"
        for acc in ("rdp", "pld", "prv"):
            argv = [kind, "--noise-multiplier", s, "--sampling-rate", q, "--steps", T, opt_t,
                    target, "--accountant", acc]

            def check_json(rc, out, err, kind=kind, s=s, q=q, T=T, target=target):
                if rc != 0:
                    return None
                j = parse_json(out)
                up = bound_value(j.get(kind + "_upper", j.get(kind)))
                lo = bound_value(j.get(kind + "_lower"))
                return bounds_check(ref, kind, s, q, T, target, up, lo)

            def check_text(rc, out, err, kind=kind, s=s, q=q, T=T, target=target):
                if rc != 0:
                    return None
                up, lo = text_bounds(out, kind)
                if up is None:
                    return "no upper bound line in the text output"
                return bounds_check(ref, kind, s, q, T, target, bound_value(up),
                                    bound_value(lo))

            def check_py(rc, out, err, kind=kind, s=s, q=q, T=T, target=target):
                if rc != 0:
                    return "exit %d: %s" % (rc, last_line(err))
                j = json.loads(out.strip().splitlines()[-1])
                up = float(j["upper"])
                lo = None if j["lower"] is None else float(j["lower"])
                return bounds_check(ref, kind, s, q, T, target, up, lo)

            futs.append(pool.submit(c.run, "bounds-" + kind, argv + ["--json"], kind="bounds",
                                    check=check_json))
            futs.append(pool.submit(c.run, "bounds-" + kind + "-text", argv, kind="bounds",
                                    check=check_text))
            if os.path.exists(lib):
                futs.append(pool.submit(c.run, "bounds-" + kind + "-python",
                                        [kind, acc, s, q, T, target], kind="bounds",
                                        check=check_py, env=py_env,
                                        prog=[sys.executable, "-c", PY_BOUNDS]))
    return futs


# ---- tight: the tight accountants at tiny noise (issue 28, item 4) ---------------------------


def sampling_bound(q, T):
    """1 - (1 - q)^T, the sampling bound on delta(eps) at every eps >= 0 (docs/accountant.md
    section 4), in double precision (relative error a few 1e-16)."""
    return -math.expm1(T * math.log1p(-q)) if q < 1 else 1.0


def tight_cases(quick):
    """(label, sampling options, q, T) for the sampling-bound checks: the issue's case and
    seeded ones, Poisson and fixed batches"""
    rng = random.Random(284)
    cases = [("issue", ["--sampling-rate", "2.076e-5"], 2.076e-5, 1)]
    for _ in range(3 if quick else 8):
        T = rng.choice([1, 3, 100])
        if rng.random() < 0.5:
            q = math.exp(rng.uniform(math.log(1e-6), math.log(1e-2)))
            cases.append(("poisson", ["--sampling-rate", repr(q)], q, T))
        else:
            n = rng.choice([60000, 1095118])
            b = max(1, int(n * math.exp(rng.uniform(math.log(1e-5), math.log(1e-2)))))
            cases.append(("batches", ["--batch-size", str(b), "--dataset-size", str(n)], b / n, T))
    return cases


def check_zero_epsilon(what):
    def check(rc, out, err):
        if rc != 0:
            return "exit %d where delta is at least the sampling bound (%s): %s" % (
                rc, what, last_line(err))
        j = parse_json(out)
        up = num(j.get("epsilon_upper", j.get("epsilon")))
        if up != 0:
            return "epsilon %r where delta is at least the sampling bound (%s): the exact " \
                   "epsilon is 0" % (up, what)
        return None
    return check


def check_positive_epsilon(what):
    def check(rc, out, err):
        if rc != 0:
            return None
        j = parse_json(out)
        up = num(j.get("epsilon_upper", j.get("epsilon")))
        if up is None or not up > 0:
            return "epsilon %r below the sampling bound with no noise (%s): the exact " \
                   "epsilon is +inf" % (up, what)
        return None
    return check


def check_delta_is_bound(truth):
    def check(rc, out, err):
        if rc != 0:
            return "exit %d: %s" % (rc, last_line(err))
        j = parse_json(out)
        up = num(j.get("delta_upper", j.get("delta")))
        if up is None or up < truth * (1 - 1e-12):
            return "delta upper end %r below the exact delta %.17g (no noise)" % (up, truth)
        if up > truth * (1 + 1e-9):
            return "delta upper end %r above the exact %.17g (no noise: the sampling bound)" % (
                up, truth)
        return None
    return check


def check_calibrate_zero(rc, out, err):
    if rc != 0:
        return "exit %d: %s" % (rc, last_line(err))
    j = parse_json(out)
    s = num(j.get("noise_multiplier"))
    if s != 0 or j.get("tight_to") is not None:
        return "noise_multiplier %r, tight_to %r where sigma 0 meets the target (delta at least " \
               "the sampling bound)" % (s, j.get("tight_to"))
    return None


def check_brackets(truth):
    def check(rc, out, err):
        if rc != 0:
            return "exit %d at the default grid: %s" % (rc, last_line(err))
        j = parse_json(out)
        lo, up = num(j.get("epsilon_lower")), num(j.get("epsilon_upper"))
        if lo is None or up is None or not lo <= truth <= up:
            return "[%r, %r] does not contain the exact %r" % (lo, up, truth)
        return None
    return check


QUOTED = re.compile(r"RDP accountant's (?:certified )?([0-9.eE+-]+)")


def check_fallback_quote(rc, out, err):
    if rc != 0:
        return None
    j = parse_json(out)
    if not j.get("fallback"):
        return None
    m_ = QUOTED.search(j.get("fallback_reason", ""))
    rb = num(j.get("rdp_bound"))
    if m_ and rb is not None and not rb <= float(m_.group(1)) <= rb * (1 + 1e-9):
        return "the reason quotes %s for the RDP bound, rdp_bound is %r" % (m_.group(1), rb)
    return None


def phase_tight(c, pool, quick):
    """The tight accountants at tiny noise (issue 28, item 4): the sampling bound through every
    accountant (epsilon 0 at delta >= 1 - (1 - q)^T, whatever the noise; +inf just below it
    without noise; delta(eps) = the bound without noise), calibration answering sigma 0 there,
    the PLD's default grid answering where a fixed grid is refused, the refusal predicted
    before the work, and a fallback's reason quoting the bound it reports."""
    futs = []
    for label, samp, q, T in tight_cases(quick):
        b = sampling_bound(q, T)
        above, below = repr(min(b * (1 + 1e-9), 0.999)), repr(b * (1 - 1e-9))
        what = "%s q %.6g, %d steps, bound %.6g" % (label, q, T, b)
        for acc in ("rdp", "pld", "prv"):
            base = ["--steps", str(T), "--accountant", acc, "--json"] + samp
            for sig in ("0.0049367", "0") if label == "issue" else ("0.0049367", "0", "0.03"):
                argv = ["epsilon", "--noise-multiplier", sig, "--delta",
                        "0.018754" if label == "issue" else above] + base
                futs.append(pool.submit(c.run, "tight-zero", argv, kind="tight",
                                        check=check_zero_epsilon(what)))
            argv = ["epsilon", "--noise-multiplier", "0", "--delta", below] + base
            futs.append(pool.submit(c.run, "tight-below", argv, kind="tight",
                                    check=check_positive_epsilon(what)))
            argv = ["delta", "--noise-multiplier", "0", "--epsilon", "1"] + base
            futs.append(pool.submit(c.run, "tight-delta", argv, kind="tight",
                                    check=check_delta_is_bound(b)))
            cal = ["calibrate", "--epsilon", "1", "--delta",
                   "0.018754" if label == "issue" else above, "--steps", str(T), "--json"] + samp
            if acc != "rdp":
                cal += ["--accountant", acc]
            futs.append(pool.submit(c.run, "tight-calibrate", cal, kind="tight",
                                    check=check_calibrate_zero))
    # the PLD's default grid at tiny noise (refused before: "discretising the steps needs more
    # than the memory limit ... at grid 0.0001"); exact 5274.19572483 (mpmath,
    # tests/ref/pld_soundness_values.h)
    argv = ["epsilon", "--noise-multiplier", "0.01", "--sampling-rate", "0.004", "--steps", "1",
            "--delta", "1e-5", "--accountant", "pld", "--json"]
    futs.append(pool.submit(c.run, "tight-default-grid", argv, kind="tight",
                            check=check_brackets(5274.19572483048196)))
    # a refusal predicted before the work: 35 s and 1.8 GB before it, 10 s allowed
    argv = ["epsilon", "--noise-multiplier", "0.0243", "--sampling-rate", "1", "--steps", "9",
            "--delta", "4.5e-206", "--accountant", "pld", "--grid", "1e-4", "--json"]
    futs.append(pool.submit(c.run, "tight-refusal", argv, kind="tight", timeout=10))
    # fallbacks' reasons (sigma 100, q 1e-4, 1000 steps, delta 3e-5 quoted 0.0001542 beside
    # rdp_bound 0)
    for s_, q_, T_, d_ in (("100", "1e-4", "1000", "3e-5"), ("100", "1e-3", "10", "3e-5"),
                           ("100", "0.01", "1", "3e-5"), ("30", "1e-4", "1000", "1e-5")):
        for acc in ("pld", "prv"):
            argv = ["epsilon", "--noise-multiplier", s_, "--sampling-rate", q_, "--steps", T_,
                    "--delta", d_, "--accountant", acc, "--json"]
            futs.append(pool.submit(c.run, "tight-fallback", argv, kind="tight",
                                    check=check_fallback_quote))
    return futs


# ---- tinynoise: many sampled steps at tiny noise (issue 30) ------------------------------------


def hits_epsilon(s, q, T, delta):
    """eps(delta) of T Poisson-sampled Gaussian steps at sigma s <= 0.03, rate q, by mpmath:
    tests/ref/sampled_hits.py (a closed form over the number of sampled steps)."""
    sys.path.insert(0, os.path.join(ROOT, "tests", "ref"))
    import sampled_hits
    return sampled_hits.hits_epsilon(s, q, T, delta)


def tinynoise_cases(quick):
    """(sigma, q, steps): the audit input that took 60 s, and seeded ones"""
    rng = random.Random(30)
    cases = [(0.01, 0.004, 1000)]
    for _ in range(2 if quick else 6):
        cases.append((rng.choice([0.005, 0.01, 0.02, 0.03]), rng.choice([0.001, 0.004, 0.01]),
                      rng.choice([30, 100, 300, 1000])))
    return cases


def check_tiny(truth, acc, tight):
    """pld/prv: no fallback, the interval holds the truth, the upper end within 1e-3 of it
    (tight: the default grid) or the interval within 1e-4 of it (grid 0.05 given);
    rdp: an upper bound within 2x the truth (60x with the search stopped at order 1.01),
    at an order below 1.01"""
    def check(rc, out, err):
        if rc != 0:
            return "exit %d: %s" % (rc, last_line(err))
        j = parse_json(out)
        up = num(j.get("epsilon_upper", j.get("epsilon")))
        if acc == "rdp":
            o = num(j.get("order"))
            if up is None or not truth <= up <= 2.0 * truth or o is None or not o < 1.01:
                return "RDP epsilon %r at order %r for a truth of %r (the order search stopped " \
                       "at 1.01: 60x the truth)" % (up, o, truth)
            return None
        if j.get("fallback"):
            return "fallback: %s" % j.get("fallback_reason")
        lo = num(j.get("epsilon_lower"))
        if lo is None or up is None or not lo <= truth <= up:
            return "[%r, %r] does not hold the truth %r" % (lo, up, truth)
        if tight and up - truth > 1e-3 * truth:
            return "upper end %r more than 1e-3 above the truth %r" % (up, truth)
        if not tight and up - lo > 1e-4 * truth:
            return "interval [%r, %r] wider than 1e-4 of the truth %r" % (lo, up, truth)
        return None
    return check


def phase_tinynoise(c, pool, quick):
    """Many Poisson-sampled Gaussian steps at sigma 0.005 to 0.03 (issue 30): `dpzo audit
    --noise-multiplier 0.01 --sampling-rate 0.004 --steps 1000 --epsilon 11000` took 60 s
    and answered UNDETERMINED in [5450, 4.49e6], the RDP order search having stopped at 1.01 and the PLD's
    optimistic side having dropped the pile at log(1 - q). Each case against its mpmath
    truth: RDP, PLD and PRV at their defaults (memory limit 256 MiB), the PLD at grid 0.05,
    and the audit of the 60 s input within 30 s."""
    try:
        import mpmath  # noqa: F401
    except ImportError:
        print("campaign: the tinynoise phase needs mpmath (python3-mpmath); skipped",
              file=sys.stderr)
        return []
    futs = []
    for s, q, T in tinynoise_cases(quick):
        truth = hits_epsilon(s, q, T, 1e-5)
        base = ["epsilon", "--noise-multiplier", repr(s), "--sampling-rate", repr(q), "--steps",
                str(T), "--delta", "1e-5", "--json"]
        futs.append(pool.submit(c.run, "tinynoise-rdp", base, kind="tinynoise",
                                check=check_tiny(truth, "rdp", True)))
        for acc in ("pld", "prv"):
            argv = base + ["--accountant", acc, "--memory-limit", "256"]
            futs.append(pool.submit(c.run, "tinynoise-" + acc, argv, kind="tinynoise",
                                    check=check_tiny(truth, acc, True)))
        argv = base + ["--accountant", "pld", "--grid", "0.05", "--memory-limit", "1024"]
        futs.append(pool.submit(c.run, "tinynoise-pld-grid", argv, kind="tinynoise",
                                check=check_tiny(truth, "pld", False)))
    argv = ["audit", "--noise-multiplier", "0.01", "--sampling-rate", "0.004", "--steps", "1000",
            "--epsilon", "11000", "--delta", "1e-5", "--grid", "0.05", "--json"]
    truth = hits_epsilon(0.01, 0.004, 1000, 1e-5)

    def check_audit(rc, out, err):
        if rc != 0:
            return "exit %d: %s" % (rc, last_line(err))
        r = parse_json(out)["claims"][0]
        lo, up = num(r.get("lower")), num(r.get("upper"))
        if r.get("verdict") != "VIOLATED" or not lo <= truth <= up or up > truth * (1 + 1e-4):
            return "verdict %s, [%r, %r] for a truth of %r" % (r.get("verdict"), lo, up, truth)
        return None

    futs.append(pool.submit(c.run, "tinynoise-audit", argv, kind="tinynoise", timeout=30,
                            check=check_audit))
    return futs


# ---- monotone: epsilon(delta) never rises with delta (issue 28, item 4) ------------------------

LADDER = ["1e-14", "1e-11", "3e-10", "2.28e-9", "4.53e-8", "1e-7", "1e-6", "1e-5", "1e-4", "1e-3"]


def monotone_cases(quick):
    """(label, options) for the ladders: the issue's pair and seeded cases"""
    cases = [("issue", ["--noise-multiplier", "14.907054457228305", "--batch-size", "111",
                        "--dataset-size", "1095118", "--steps", "1"])]
    rng = random.Random(2804)
    for _ in range(4 if quick else 12):
        sigma = math.exp(rng.uniform(math.log(0.5), math.log(60)))
        T = int(math.exp(rng.uniform(0, math.log(300))))
        if rng.random() < 0.5:
            n = rng.choice([60000, 219784, 1095118])
            b = max(1, int(n * math.exp(rng.uniform(math.log(1e-5), math.log(0.05)))))
            samp = ["--batch-size", str(b), "--dataset-size", str(n)]
        else:
            samp = ["--sampling-rate", repr(math.exp(rng.uniform(math.log(1e-5), math.log(0.1))))]
        cases.append(("seeded", ["--noise-multiplier", repr(sigma), "--steps", str(T)] + samp))
    return cases


def monotone_ladder(c, acc, opts, deltas):
    prev = None
    for d in deltas:
        argv = ["epsilon", "--delta", d, "--accountant", acc, "--json"] + opts
        r = c.run("monotone-delta-" + acc, argv, kind="monotone", check=check_epsilon(argv))
        if r is None or r[0] != 0:
            prev = None
            continue
        j = parse_json(r[1])
        v = num(j.get("epsilon_upper")) if isinstance(j, dict) else None
        if v is None:
            prev = None
            continue
        if prev is not None and v > prev[1]:
            c.record("monotone-delta-" + acc, "monotone", argv, "wrong", 0, 0.0,
                     "epsilon %.17g at delta %s rises above %.17g at delta %s" %
                     (v, d, prev[1], prev[0]), "")
        prev = (d, v)


def phase_monotone(c, pool, quick):
    """epsilon(delta) must not rise as delta does (issue 28, item 4): PLD and PRV on a ladder of
    deltas from 1e-14 to 1e-3, for the issue's pair (PRV gave 0.0027289 at 2.28e-9 and
    0.0028491 at 4.53e-8) and seeded Poisson and fixed-batch cases."""
    futs = []
    for label, opts in monotone_cases(quick):
        deltas = ["2.28e-9", "4.53e-8"] if label == "issue" else LADDER
        for acc in ("pld", "prv"):
            futs.append(pool.submit(monotone_ladder, c, acc, opts, deltas))
    return futs


# ---- report ---------------------------------------------------------------------------------

CATS = ["handled", "crashed", "hung", "wrong", "bad-exit"]


def report(c):
    res = c.results
    total = {k: 0 for k in CATS}
    per = {}
    for r in res:
        total[r["category"]] += 1
        per.setdefault(r["command"], {k: 0 for k in CATS})[r["category"]] += 1
    print()
    print("dpzo campaign: %s (%s), %d runs in %.0f s%s" %
          (c.bin, "ASan+UBSan" if c.asan else "no sanitizer", len(res), time.time() - c.t0,
           ", %d not run (budget)" % c.skipped if c.skipped else ""))
    print("  " + "  ".join("%s %d" % (k, total[k]) for k in CATS))
    print()
    print("  %-22s %8s %8s %8s %8s %8s" % (("command",) + tuple(CATS)))
    for cmd in sorted(per):
        print("  %-22s %8d %8d %8d %8d %8d" % ((cmd,) + tuple(per[cmd][k] for k in CATS)))
    bad = [r for r in res if r["category"] != "handled"]
    if bad:
        print()
        print("Runs not handled (reproduce with the command line; temporary files were in %s):"
              % c.tmp)
        for cat in CATS[1:]:
            for r in (x for x in bad if x["category"] == cat):
                print("  [%s] %s  (%s)" % (cat, r["line"], r["reason"][:240]))
    if c.args.json:
        write_json_atomic(c.args.json,
                          {"bin": c.bin, "asan": c.asan, "seconds": round(time.time() - c.t0, 1),
                           "totals": total, "per_command": per, "not_run": c.skipped,
                           "runs": res})
        print("\nJSON: %s" % c.args.json)
    return 0 if not bad else 1


def write_json_atomic(path, obj):
    """Write OBJ as JSON to PATH through a temporary file in the same folder and a rename, so
    that a reader never sees half a report; refuse to replace anything but a regular file."""
    if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
        sys.exit("campaign: --json %s exists and is not a regular file" % path)
    fd, tmp = tempfile.mkstemp(prefix=".campaign-", suffix=".json",
                               dir=os.path.dirname(os.path.abspath(path)))
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp's 0600 would make the report private
        with os.fdopen(fd, "w") as f:
            json.dump(obj, f, indent=1)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", default=None,
                    help="the dpzo binary (default: build-asan/bin/dpzo, else build/bin/dpzo)")
    g = ap.add_mutually_exclusive_group()
    g.add_argument("--quick", action="store_true", help="12 values, fewer files (minutes)")
    g.add_argument("--full", action="store_true", help="every value and variant (default)")
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per run (60)")
    ap.add_argument("--fifo-timeout", type=float, default=10.0,
                    help="seconds a run reading a FIFO may block (10)")
    ap.add_argument("--budget", type=float, default=0.0,
                    help="stop starting runs after this many seconds (0: none; --quick: 900)")
    ap.add_argument("--jobs", type=int, default=2, help="runs at once (2)")
    ap.add_argument("--memory-mb", type=int, default=3072,
                    help="memory per run (3072 MiB: above the tight accountants' 2 GiB default)")
    ap.add_argument("--only", action="append", default=[],
                    help="phases: environment, numeric, files, outputs, unwritable, "
                         "exitcodes, soundness, bounds, tight, monotone, nul, bigint, "
                         "pyoverflow, work, events, rehashed, holdouts (repeatable)")
    ap.add_argument("--json", help="write every run to this file")
    ap.add_argument("--keep", action="store_true", help="keep the temporary folder")
    ap.add_argument("--verbose", action="store_true", help="print every run")
    ap.add_argument("--quiet", action="store_true", help="print only the summary")
    args = ap.parse_args()
    if args.bin is None:
        for cand in ("build-asan/bin/dpzo", "build/bin/dpzo"):
            if os.path.exists(os.path.join(ROOT, cand)):
                args.bin = os.path.join(ROOT, cand)
                break
    if not args.bin or not os.access(args.bin, os.X_OK):
        print("campaign: no dpzo binary (use --bin)", file=sys.stderr)
        return 2
    if args.quick and not args.budget:
        args.budget = 900.0
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        print("campaign: /dev/null is not a character device before the run", file=sys.stderr)
        return 2
    c = Campaign(args)
    # the largest phase last, so that a budget cuts it rather than the others
    phases = args.only or ["environment", "soundness", "bounds", "tight", "tinynoise",
                           "monotone", "nul",
                           "bigint", "pyoverflow", "work", "events", "rehashed", "holdouts",
                           "files",
                           "outputs",
                           "unwritable",
                           "exitcodes", "numeric"]
    print("campaign: %s, %s mode, phases %s, temporary folder %s" %
          (c.bin, "quick" if args.quick else "full", ",".join(phases), c.tmp), flush=True)
    prepare(c)
    values = QUICK_VALUES if args.quick else FULL_VALUES
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futs = []
        for ph in phases:
            if ph == "numeric":
                futs += phase_numeric(c, pool, values)
            elif ph == "files":
                futs += phase_files(c, pool, args.quick)
            elif ph == "outputs":
                futs += phase_outputs(c, pool)
            elif ph == "unwritable":
                futs += phase_unwritable(c, pool)
            elif ph == "exitcodes":
                futs += phase_exitcodes(c, pool)
            elif ph == "soundness":
                futs += phase_soundness(c, pool, args.quick)
            elif ph == "environment":
                futs += phase_environment(c, pool)
            elif ph == "bounds":
                futs += phase_bounds(c, pool, args.quick)
            elif ph == "tight":
                futs += phase_tight(c, pool, args.quick)
            elif ph == "tinynoise":
                futs += phase_tinynoise(c, pool, args.quick)
            elif ph == "monotone":
                futs += phase_monotone(c, pool, args.quick)
            elif ph == "nul":
                futs += phase_nul(c, pool, args.quick)
            elif ph == "bigint":
                futs += phase_bigint(c, pool, args.quick)
            elif ph == "work":
                futs += phase_work(c, pool, args.quick)
            elif ph == "pyoverflow":
                futs += phase_pyoverflow(c, pool, args.quick)
            elif ph == "rehashed":
                futs += phase_rehashed(c, pool)
            elif ph == "holdouts":
                futs += phase_holdouts(c, pool)
            elif ph == "events":
                futs += phase_events(c, pool, args.quick)
            else:
                print("campaign: unknown phase %s" % ph, file=sys.stderr)
                return 2
        for f in futs:
            f.result()
    rc = report(c)
    if not stat.S_ISCHR(os.stat("/dev/null").st_mode):
        print("campaign: /dev/null IS NO LONGER A CHARACTER DEVICE after the run")
        rc = 1
    if not args.keep:
        shutil.rmtree(c.tmp, ignore_errors=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
