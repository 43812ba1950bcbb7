#!/usr/bin/python3
"""Extracts real English text from Debian dictionaries for the
gcide-fasttext and dicts-fasttext data sets (bench/data/gcide-fasttext.sh):

  corpus.txt     every definition paragraph of GCIDE (dict-gcide) and every
                 WordNet 3.0 gloss (wordnet-base), lower-cased and tokenised:
                 the text fastText is trained on;
  sentences.txt  the distinct sentences of that text with 4 to 60 tokens,
                 in a fixed pseudo-random order (seed 1): the texts embedded.

With --foldoc, the entries of the Free On-line Dictionary of Computing
(dict-foldoc) are read too, after the other two: the text of the larger
dicts-fasttext sets.

    dict_sentences.py OUTDIR [--foldoc]
"""
import gzip
import random
import re
import sys

out = sys.argv[1]
foldoc = "--foldoc" in sys.argv[2:]
TAG = re.compile(r"\[(?:1913 Webster|Webster 1913[^\]]*|PJC|WordNet[^\]]*|MW10|RH|Century[^\]]*|Chambers[^\]]*|[A-Z][A-Za-z. ]{0,20}Dict\.?[^\]]*)\]")
PRON = re.compile(r"\\[^\\]*\\")
CITE = re.compile(r"--\s*[A-Z][\w. ,&']{0,40}\.?")
FOLDOC_META = re.compile(r"<[a-z ,/-]+>|\(\d{4}-\d{2}-\d{2}\)|\(\S+://\S+\)")
TOKEN = re.compile(r"[a-z0-9]+(?:['-][a-z0-9]+)*")
SPLIT = re.compile(r"(?<=[.;?!])\s+")


def tokens(text):
    return TOKEN.findall(text.lower())


def dict_paragraphs(path):
    """The indented body of every entry of a dictd file, paragraph by
    paragraph."""
    para = []
    with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
        for line in f:
            if not line.strip() or not line[0].isspace():
                if para:
                    yield " ".join(para)
                para = []
                continue
            para.append(line.strip())
    if para:
        yield " ".join(para)


def wordnet_glosses():
    """Each WordNet gloss: the definition and each quoted example."""
    for pos in ("noun", "verb", "adj", "adv"):
        with open(f"/usr/share/wordnet/data.{pos}", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("  ") or "|" not in line:
                    continue  # the licence header
                for part in line.split("|", 1)[1].split(";"):
                    yield part.strip().strip('"')


corpus = open(f"{out}/corpus.txt", "w")
seen = set()
sentences = []
sources = [dict_paragraphs("/usr/share/dictd/gcide.dict.dz"), wordnet_glosses()]
if foldoc:
    sources.append(FOLDOC_META.sub(" ", p) for p in dict_paragraphs("/usr/share/dictd/foldoc.dict.dz"))
for source in sources:
    for para in source:
        para = CITE.sub(" ", PRON.sub(" ", TAG.sub(" ", para))).replace("{", "").replace("}", "")
        toks = tokens(para)
        if not toks:
            continue
        corpus.write(" ".join(toks) + "\n")
        for s in SPLIT.split(para):
            t = tokens(s)
            if 4 <= len(t) <= 60:
                key = " ".join(t)
                if key not in seen:
                    seen.add(key)
                    sentences.append(key)
corpus.close()
random.Random(1).shuffle(sentences)
with open(f"{out}/sentences.txt", "w") as f:
    for s in sentences:
        f.write(s + "\n")
print(f"{len(sentences)} distinct sentences", file=sys.stderr)
