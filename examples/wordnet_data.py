# SPDX-License-Identifier: Apache-2.0
"""WordNet 3.0 noun glosses labelled with their lexicographer file: a real text classification set.

The data come from Debian's ``wordnet-base`` package (``apt install wordnet-base``), which installs
the WordNet 3.0 database in /usr/share/wordnet (``DPZO_WORDNET_DIR`` overrides the folder).  Each
line of ``data.noun`` is one synset (wndb(5WN)):

    offset lex_filenum ss_type w_cnt word lex_id [word lex_id ...] p_cnt [pointer...] | gloss

``lex_filenum`` (two decimal digits) names the lexicographer file the synset was written in
(noun.animal, noun.food, ...; the numbers are listed in lexnames(5WN), which the package ships as a
manual page only, so the table is written out below).  The file is the label; the text is the
gloss's definition.

Choices (docs/minilm_wordnet.md gives the numbers):

* Text: the definition part of the gloss only.  A gloss is ``definition; "example"; "example"``;
  the example sentences (the ``;``-separated parts that start with a double quote) are removed,
  since they often use the word itself and vary in number.  The lemma is not included: the task is
  to read a definition and name its semantic field, not to recognise a word.
* Synsets whose definition text occurs more than once among the noun synsets are dropped, so that
  no text can sit in two splits (or twice in one) with possibly different labels.
* Labels: the ``NUM_CLASSES`` = 10 most frequent noun lexicographer files after the
  de-duplication (noun.artifact ... noun.cognition, each with at least 2,962 synsets), class
  balanced: ``PER_CLASS`` = 2,700 synsets of each (200 public, 2,000 private train, 500 test).
  The other 16 noun files are left out: the smallest (noun.Tops, noun.motive) have about 50
  synsets.
* Split: within a class, synsets are ordered by SHA-256 of ``"<seed>:<offset>"`` (seed
  ``SPLIT_SEED`` = 17, the issue's number) and cut in that order: first the public part, then test,
  then private train.  A hash order, unlike a seeded ``random.shuffle``, does not depend on the
  Python or NumPy version.  Each split is then put in hash order too, so classes are mixed.

Sizes: public 2,000, private train 20,000, test 5,000; 200 / 2,000 / 500 per class.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import NamedTuple

DEFAULT_WORDNET_DIR = "/usr/share/wordnet"
SPLIT_SEED = 17
NUM_CLASSES = 10
PER_CLASS = {"public": 200, "test": 500, "train": 2000}

# lexnames(5WN): the noun lexicographer files (numbers 03..28).  Verb files are 29..43.
NOUN_LEXNAMES = {
    3: "noun.Tops", 4: "noun.act", 5: "noun.animal", 6: "noun.artifact", 7: "noun.attribute",
    8: "noun.body", 9: "noun.cognition", 10: "noun.communication", 11: "noun.event",
    12: "noun.feeling", 13: "noun.food", 14: "noun.group", 15: "noun.location", 16: "noun.motive",
    17: "noun.object", 18: "noun.person", 19: "noun.phenomenon", 20: "noun.plant",
    21: "noun.possession", 22: "noun.process", 23: "noun.quantity", 24: "noun.relation",
    25: "noun.shape", 26: "noun.state", 27: "noun.substance", 28: "noun.time",
}
VERB_LEXNAMES = {
    29: "verb.body", 30: "verb.change", 31: "verb.cognition", 32: "verb.communication",
    33: "verb.competition", 34: "verb.consumption", 35: "verb.contact", 36: "verb.creation",
    37: "verb.emotion", 38: "verb.motion", 39: "verb.perception", 40: "verb.possession",
    41: "verb.social", 42: "verb.stative", 43: "verb.weather",
}
LEXNAMES = {**NOUN_LEXNAMES, **VERB_LEXNAMES}

# Short descriptions of the noun files for zero-shot classification (after lexnames(5WN)'s
# "Contents" column, reduced to the head words).
LABEL_DESCRIPTIONS = {
    "noun.Tops": "a unique beginner", "noun.act": "an act or action",
    "noun.animal": "an animal", "noun.artifact": "a man-made object",
    "noun.attribute": "an attribute of people and objects", "noun.body": "a body part",
    "noun.cognition": "a cognitive process or content",
    "noun.communication": "communication", "noun.event": "a natural event",
    "noun.feeling": "a feeling or emotion", "noun.food": "a food or drink",
    "noun.group": "a group of people or objects", "noun.location": "a spatial position or place",
    "noun.motive": "a goal", "noun.object": "a natural object", "noun.person": "a person",
    "noun.phenomenon": "a natural phenomenon", "noun.plant": "a plant",
    "noun.possession": "possession and transfer of possession",
    "noun.process": "a natural process", "noun.quantity": "a quantity or unit of measure",
    "noun.relation": "a relation between people or things or ideas",
    "noun.shape": "a two or three dimensional shape", "noun.state": "a stable state of affairs",
    "noun.substance": "a substance", "noun.time": "time and temporal relations",
}


class WordnetMissing(RuntimeError):
    """The WordNet database files are not installed."""


class Synset(NamedTuple):
    offset: int            # byte offset of the line in data.<pos>: the synset's identifier
    lexname: str           # lexicographer file, e.g. "noun.animal"
    words: tuple           # the synset's words, underscores replaced by spaces
    gloss: str             # the whole gloss (definition and examples)
    definition: str        # the gloss without its quoted example sentences


class Splits(NamedTuple):
    public: list           # [(text, label)]
    train: list            # private train [(text, label)]
    test: list             # [(text, label)]
    label_names: list      # label i is label_names[i] (a lexicographer file name)
    offsets: dict          # split name -> [synset offset], in the order of that split's list


def wordnet_dir(path: str | os.PathLike | None = None) -> Path:
    """The folder holding data.noun: ``path``, else $DPZO_WORDNET_DIR, else /usr/share/wordnet."""
    folder = Path(path or os.environ.get("DPZO_WORDNET_DIR") or DEFAULT_WORDNET_DIR)
    if not (folder / "data.noun").is_file():
        raise WordnetMissing(
            f"WordNet 3.0 database not found: {folder / 'data.noun'} does not exist; install it "
            "with `apt install wordnet-base` (Debian/Ubuntu) or set DPZO_WORDNET_DIR to the folder "
            "that holds data.noun")
    return folder


def definition_of(gloss: str) -> str:
    """The gloss without its example sentences: drop the ';'-separated parts that start with '"'."""
    parts = [p.strip() for p in gloss.split(";")]
    return "; ".join(p for p in parts if p and not p.startswith('"'))


def parse_data_line(line: str, lexnames: dict = LEXNAMES) -> Synset:
    """One synset line of a data.<pos> file (wndb(5WN)); raises ValueError on a malformed line."""
    head, sep, gloss = line.partition(" | ")
    if not sep:
        raise ValueError(f"no gloss separator ' | ' in line: {line[:60]!r}")
    fields = head.split()
    if len(fields) < 6:
        raise ValueError(f"too few fields in line: {line[:60]!r}")
    offset = int(fields[0])
    filenum = int(fields[1], 10)
    if filenum not in lexnames:
        raise ValueError(f"unknown lexicographer file number {fields[1]} at offset {offset}")
    w_cnt = int(fields[3], 16)
    words = tuple(fields[4 + 2 * i].replace("_", " ") for i in range(w_cnt))
    gloss = gloss.strip()
    return Synset(offset, lexnames[filenum], words, gloss, definition_of(gloss))


def read_synsets(path: str | os.PathLike | None = None, pos: str = "noun") -> list:
    """All synsets of data.<pos> (pos "noun" or "verb") in file order; license lines are skipped."""
    lexnames = NOUN_LEXNAMES if pos == "noun" else VERB_LEXNAMES
    out = []
    with open(wordnet_dir(path) / f"data.{pos}", encoding="utf-8") as f:
        for line in f:
            if line.startswith("  "):    # the license header's lines start with two spaces
                continue
            out.append(parse_data_line(line.rstrip("\n"), lexnames))
    return out


def _key(seed: int, offset: int) -> bytes:
    return hashlib.sha256(f"{seed}:{offset}".encode()).digest()


def load_splits(seed: int = SPLIT_SEED, num_classes: int = NUM_CLASSES,
                per_class: dict | None = None, path: str | os.PathLike | None = None) -> Splits:
    """Public, private train and test splits of (definition text, label index).

    Labels are the ``num_classes`` most frequent noun lexicographer files after de-duplication
    (ties by name), numbered in that order; every split is class balanced with ``per_class[split]``
    synsets of each class.  Deterministic in (seed, num_classes, per_class) and the database.
    """
    per_class = dict(PER_CLASS if per_class is None else per_class)
    synsets = read_synsets(path, "noun")
    count = {}
    for s in synsets:
        count[s.definition] = count.get(s.definition, 0) + 1
    unique = [s for s in synsets if count[s.definition] == 1 and s.definition]
    by_class = {}
    for s in unique:
        by_class.setdefault(s.lexname, []).append(s)
    ranked = sorted(by_class, key=lambda name: (-len(by_class[name]), name))
    label_names = ranked[:num_classes]
    need = sum(per_class.values())
    parts = {name: [] for name in ("public", "test", "train")}
    for label, name in enumerate(label_names):
        members = sorted(by_class[name], key=lambda s: _key(seed, s.offset))
        if len(members) < need:
            raise ValueError(f"{name} has {len(members)} unique synsets, fewer than {need}")
        start = 0
        for split in ("public", "test", "train"):
            take = members[start:start + per_class[split]]
            parts[split].extend((s, label) for s in take)
            start += per_class[split]
    result = {}
    offsets = {}
    for split, items in parts.items():
        items.sort(key=lambda item: _key(seed + 1, item[0].offset))
        result[split] = [(s.definition, label) for s, label in items]
        offsets[split] = [s.offset for s, _ in items]
    return Splits(result["public"], result["train"], result["test"], label_names, offsets)


def fingerprint(splits: Splits) -> str:
    """First 16 hex digits of the SHA-256 of the splits' synset offsets (public, train, test, in
    each split's order, comma-separated): cf243a64798aea67 for the default splits."""
    text = ",".join(str(o) for name in ("public", "train", "test") for o in splits.offsets[name])
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def class_counts(examples: list, num_classes: int) -> list:
    """How many examples of each label."""
    counts = [0] * num_classes
    for _, label in examples:
        counts[label] += 1
    return counts


if __name__ == "__main__":
    sp = load_splits()
    print("labels:", ", ".join(sp.label_names))
    for name in ("public", "train", "test"):
        data = getattr(sp, name)
        print(f"{name}: {len(data)} examples, per class {class_counts(data, len(sp.label_names))}")
    print("example:", sp.train[0])
