#!/usr/bin/env python3
"""Builds the demo model's training corpus from Debian packages: the King James Bible and
WordNet 3.0's glosses as plain text, plus short chat transcripts made from them and rendered in
the DeepSeek-V4 prompt format by our own CLI (`deepinfer render --encoding dsv4 --messages`), so
the model sees exactly the tokens the recipe will send it, answer and closing tokens included.

Debian packages (install with apt-get; nothing else is needed, python3 stdlib only):
    bible-kjv-text  the KJV text (public domain; the data file is /usr/lib/bible.data)
    bible-kjv       the `bible` program that decodes that file (GPL-2+; only run, not shipped)
    wordnet-base    /usr/share/wordnet/data.{noun,verb,adj,adv} (WordNet 3.0 licence)

Usage (from the repository root, after building the CLI with DI_CUDA=OFF):
    python3 tools/demo_model/build_corpus.py [--out .demo-corpus] [--cli build/bin/deepinfer]

Output (deterministic for a given package version and seed):
    train.txt, heldout.txt            plain-text documents
    chats_train.txt, chats_heldout.txt  rendered V4 transcripts (BOS, turns, EOS as text)
    manifest.json                     sources, package versions, counts, seed
    wordnet_license.txt               WordNet's licence, for the model's README
Documents are separated by a line holding only a form feed ("\\f\\n"), which neither source
contains. The held-out split is by source unit (every 40th Bible chapter, every 40th WordNet
synset) and its chats are made only from held-out units.
"""
import argparse
import concurrent.futures
import json
import os
import random
import re
import subprocess
import sys

SEP = "\f\n"
HELDOUT_EVERY = 40
WORDNET = "/usr/share/wordnet"
POS_NAMES = {"n": "noun", "v": "verb", "a": "adjective", "s": "adjective", "r": "adverb"}


def package_version(pkg):
    out = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"build_corpus: Debian package {pkg} is not installed (apt-get install {pkg})")
    return out.stdout


def wordnet_license():
    """The WordNet 3.0 licence text as Debian ships it (it must accompany every copy)."""
    with open("/usr/share/doc/wordnet-base/copyright", encoding="utf-8") as f:
        text = f.read()
    start = text.index("License: WordNet3.0")
    body = text[start:].split("\n", 1)[1]
    lines = []
    for line in body.splitlines():
        if not line.startswith(" "):  # the next stanza
            break
        lines.append("" if line.strip() == "." else line[1:])
    if not any("Princeton" in l for l in lines):
        raise RuntimeError("unexpected layout of /usr/share/doc/wordnet-base/copyright")
    return "\n".join(lines).strip() + "\n"


def read_bible():
    """[(book, chapter, [verse text, ...])] in canonical order, from the `bible` program."""
    out = subprocess.run(["bible", "-l0", "gen1:1-rev22:21"], capture_output=True, text=True, check=True)
    chapters = []
    header = re.compile(r"^(\S.*) (\d+)$")
    verse = re.compile(r"^\s+(\d+) (.*)$")
    for line in out.stdout.splitlines():
        if not line.strip():
            continue
        m = header.match(line)
        if m:
            chapters.append((m.group(1), int(m.group(2)), []))
            continue
        m = verse.match(line)
        if not m or not chapters:
            raise RuntimeError(f"unexpected line from bible: {line!r}")
        if int(m.group(1)) != len(chapters[-1][2]) + 1:
            raise RuntimeError(f"verse numbering gap at {chapters[-1][0]} {chapters[-1][1]}: {line!r}")
        chapters[-1][2].append(m.group(2).strip())
    if len(chapters) != 1189:
        raise RuntimeError(f"expected the 1189 chapters of the KJV, got {len(chapters)}")
    return chapters


def read_wordnet():
    """[(pos, [words], gloss, [examples])] for every synset of the four data files."""
    synsets = []
    for part in ("noun", "verb", "adj", "adv"):
        with open(os.path.join(WORDNET, "data." + part), encoding="latin-1") as f:
            for line in f:
                if line.startswith("  "):  # the licence header
                    continue
                head, _, gloss = line.partition(" | ")
                fields = head.split()
                pos = fields[2]
                n = int(fields[3], 16)
                words = [fields[4 + 2 * i].replace("_", " ") for i in range(n)]
                words = [re.sub(r"\((a|p|ip)\)$", "", w) for w in words]  # adjective markers
                parts = [p.strip() for p in gloss.strip().split(";")]
                definition = "; ".join(p for p in parts if not p.startswith('"')).strip()
                examples = [p.strip('"') for p in parts if p.startswith('"') and p.endswith('"') and len(p) > 2]
                if definition:
                    synsets.append((pos, words, definition, examples))
    return synsets


def bible_document(book, chapter, verses):
    return f"{book} {chapter}\n" + "\n".join(verses) + "\n"


def wordnet_line(pos, words, definition, examples):
    line = f"{', '.join(words)} ({POS_NAMES[pos]}): {definition}"
    if examples:
        line += "; for example, \"" + "\"; \"".join(examples) + "\""
    return line + ".\n" if not line.endswith(".") else line + "\n"


def article(word):
    return "an" if word[:1].lower() in "aeiou" else "a"


# --- chat turns: (user, reasoning, answer) -----------------------------------------------------

GREETINGS = ["Hello", "Hi", "Hello!", "Hi there", "Good morning", "Hey", "Who are you?",
             "What can you do?", "Hello, who are you?", "Hi! What do you know?"]


def greeting_turn(rng, user=None):
    user = user or rng.choice(GREETINGS)
    reasoning = rng.choice([
        "The user greets me. I should introduce myself briefly and say what I can help with.",
        "A greeting. I will answer politely and explain what I know.",
        "The user wants to know who I am. I am a small demo model, so I will say so.",
    ])
    answer = rng.choice([
        "Hello! I am a small demo model trained on the King James Bible and the WordNet dictionary. "
        "Ask me what a word means, or ask me to recite a verse.",
        "Hi! I am a tiny language model. I know the words of WordNet and the verses of the King James "
        "Bible, so I can define a word or recite a verse for you.",
        "Hello. I am a small model made for a demonstration. I can explain English words and quote "
        "the King James Bible.",
    ])
    return user, reasoning, answer


def define_turn(rng, synset):
    pos, words, definition, examples = synset
    word = rng.choice(words)
    user = rng.choice([
        f"What does \"{word}\" mean?", f"Define {word}.", f"What is the meaning of the word {word}?",
        f"Can you tell me what {word} means?", f"What does the word \"{word}\" mean?",
        f"Explain the word {word}.",
    ])
    reasoning = f"The user asks about the word \"{word}\". It is {article(POS_NAMES[pos])} {POS_NAMES[pos]}"
    reasoning += (f" with the same sense as {', '.join(w for w in words if w != word)}." if len(words) > 1
                  else ".")
    reasoning += " I will give its definition" + (" and an example." if examples else ".")
    answer = f"\"{word}\" ({POS_NAMES[pos]}) means {definition}."
    if examples:
        answer += f" For example: \"{examples[0]}\"."
    return user, reasoning, answer


def synonym_turn(rng, synset):
    pos, words, definition, _ = synset
    word = rng.choice(words)
    others = [w for w in words if w != word]
    user = rng.choice([f"Give me a synonym for \"{word}\".", f"What is another word for {word}?",
                       f"Which words mean the same as {word}?"])
    reasoning = (f"The user wants words with the same meaning as \"{word}\", which means {definition}. "
                 f"WordNet lists {', '.join(others)}.")
    answer = (f"Another word for \"{word}\" is \"{others[0]}\"." if len(others) == 1 else
              f"Words that mean the same as \"{word}\" are " + ", ".join(f"\"{w}\"" for w in others) + ".")
    return user, reasoning, answer


def recite_turn(rng, chapter):
    book, number, verses = chapter
    v = rng.randrange(len(verses))
    ref = f"{book} {number}:{v + 1}"
    user = rng.choice([f"Recite {ref}.", f"What does {ref} say?", f"Quote {ref} from the King James Bible.",
                       f"Please recite {ref}."])
    reasoning = (f"The user asks for {book}, chapter {number}, verse {v + 1} of the King James Bible. "
                 f"I will quote it.")
    answer = f"{ref}: {verses[v]}"
    return user, reasoning, answer


def continue_turn(rng, chapter):
    book, number, verses = chapter
    v = rng.randrange(len(verses))
    words = verses[v].split()
    if len(words) < 6:
        return recite_turn(rng, chapter)
    cut = rng.randrange(2, len(words) - 2)
    head, tail = " ".join(words[:cut]), " ".join(words[cut:])
    user = rng.choice([f"Continue this verse: \"{head}\"", f"Finish the verse that begins \"{head}\".",
                       f"How does this verse go on? \"{head}\""])
    reasoning = f"The words \"{head}\" begin {book} {number}:{v + 1}. I will complete the verse."
    answer = f"{head} {tail} ({book} {number}:{v + 1})"
    return user, reasoning, answer


def make_turn(rng, chapters, synsets):
    r = rng.random()
    if r < 0.08:
        return greeting_turn(rng)
    if r < 0.48:
        return define_turn(rng, rng.choice(synsets))
    if r < 0.58:
        multi = [s for s in (rng.choice(synsets) for _ in range(8)) if len(s[1]) > 1]
        if multi:
            return synonym_turn(rng, multi[0])
        return define_turn(rng, rng.choice(synsets))
    if r < 0.85:
        return recite_turn(rng, rng.choice(chapters))
    return continue_turn(rng, rng.choice(chapters))


def make_conversation(rng, chapters, synsets):
    """{"messages", "kwargs"} for `deepinfer render --messages`: 1-3 turns, thinking mode most of
    the time (the last assistant turn carries its reasoning), chat mode otherwise."""
    turns = 1 if rng.random() < 0.7 else rng.choice([2, 3])
    thinking = rng.random() < 0.75
    messages = []
    if rng.random() < 0.1:
        messages.append({"role": "system", "content": "You are a helpful assistant."})
    for _ in range(turns):
        user, reasoning, answer = make_turn(rng, chapters, synsets)
        messages.append({"role": "user", "content": user})
        msg = {"role": "assistant", "content": answer}
        if thinking:
            msg["reasoning_content"] = reasoning
        messages.append(msg)
    return {"messages": messages, "kwargs": {"thinking_mode": "thinking" if thinking else "chat"}}


def render(cli, conversation):
    out = subprocess.run([cli, "render", "--encoding", "dsv4", "--messages"], input=json.dumps(conversation),
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"deepinfer render failed ({out.returncode}): {out.stdout}{out.stderr}")
    prompt = json.loads(out.stdout)["prompt"]
    if not prompt.endswith("<｜end▁of▁sentence｜>"):
        raise RuntimeError(f"rendered transcript does not end with the end-of-sentence token: {prompt!r}")
    return prompt


def render_all(cli, conversations, jobs):
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda c: render(cli, c), conversations))


def write_docs(path, docs):
    with open(path, "w", encoding="utf-8") as f:
        for d in docs:
            if "\f" in d:
                raise RuntimeError("a document contains the separator")
            f.write(d if d.endswith("\n") else d + "\n")
            f.write(SEP)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", default=".demo-corpus")
    ap.add_argument("--cli", default="build/bin/deepinfer")
    ap.add_argument("--seed", type=int, default=22)
    ap.add_argument("--chats", type=int, default=9000, help="training conversations (held-out: 1/20 of it)")
    ap.add_argument("--jobs", type=int, default=4)
    args = ap.parse_args()
    if not os.access(args.cli, os.X_OK):
        sys.exit(f"build_corpus: {args.cli} not found; build the CLI first (cmake -DDI_CUDA=OFF)")
    versions = {p: package_version(p) for p in ("bible-kjv-text", "bible-kjv", "wordnet-base")}

    chapters = read_bible()
    synsets = read_wordnet()
    ch_train = [c for i, c in enumerate(chapters) if i % HELDOUT_EVERY != HELDOUT_EVERY - 1]
    ch_held = [c for i, c in enumerate(chapters) if i % HELDOUT_EVERY == HELDOUT_EVERY - 1]
    ss_train = [s for i, s in enumerate(synsets) if i % HELDOUT_EVERY != HELDOUT_EVERY - 1]
    ss_held = [s for i, s in enumerate(synsets) if i % HELDOUT_EVERY == HELDOUT_EVERY - 1]

    rng = random.Random(args.seed)

    def wordnet_docs(items):
        # Shuffled into documents of 40 entries, so a sequence mixes parts of speech and topics.
        items = list(items)
        rng.shuffle(items)
        return ["".join(wordnet_line(*s) for s in items[i:i + 40]) for i in range(0, len(items), 40)]

    train_docs = [bible_document(*c) for c in ch_train] + wordnet_docs(ss_train)
    held_docs = [bible_document(*c) for c in ch_held] + wordnet_docs(ss_held)
    rng.shuffle(train_docs)

    # Every greeting once in each mode, so the main job's "Hello" / "Hi" are in the training set.
    convs_train = []
    for g in GREETINGS:
        for mode in ("thinking", "chat"):
            user, reasoning, answer = greeting_turn(rng, g)
            msg = {"role": "assistant", "content": answer}
            if mode == "thinking":
                msg["reasoning_content"] = reasoning
            convs_train.append({"messages": [{"role": "user", "content": user}, msg],
                                "kwargs": {"thinking_mode": mode}})
    convs_train += [make_conversation(rng, ch_train, ss_train) for _ in range(args.chats)]
    convs_held = [make_conversation(rng, ch_held, ss_held) for _ in range(max(1, args.chats // 20))]
    chats_train = render_all(args.cli, convs_train, args.jobs)
    chats_held = render_all(args.cli, convs_held, args.jobs)

    os.makedirs(args.out, exist_ok=True)
    files = {"train.txt": train_docs, "heldout.txt": held_docs,
             "chats_train.txt": chats_train, "chats_heldout.txt": chats_held}
    for name, docs in files.items():
        write_docs(os.path.join(args.out, name), docs)
    sizes = {name: os.path.getsize(os.path.join(args.out, name)) for name in files}
    manifest = {
        "seed": args.seed,
        "packages": versions,
        "sources": {
            "kjv": "King James Version (1611), public domain; text from bible-kjv-text via `bible -l0`",
            "wordnet": "WordNet 3.0, Princeton University, WordNet 3.0 licence "
                       "(/usr/share/doc/wordnet-base/copyright); glosses and examples of data.*",
            "chats": "generated from the two sources above, rendered by `deepinfer render --encoding "
                     "dsv4 --messages`",
        },
        "heldout": f"every {HELDOUT_EVERY}th Bible chapter and WordNet synset; held-out chats use only those",
        "counts": {"bible_chapters_train": len(ch_train), "bible_chapters_heldout": len(ch_held),
                   "synsets_train": len(ss_train), "synsets_heldout": len(ss_held),
                   "chats_train": len(chats_train), "chats_heldout": len(chats_held)},
        "documents": {name: len(docs) for name, docs in files.items()},
        "bytes": sizes,
        "separator": "a line holding only a form feed",
    }
    with open(os.path.join(args.out, "wordnet_license.txt"), "w", encoding="utf-8") as f:
        f.write(wordnet_license())
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    print(json.dumps({"out": args.out, "bytes": sizes, "total_mb": round(sum(sizes.values()) / 1e6, 2)}))


if __name__ == "__main__":
    main()
